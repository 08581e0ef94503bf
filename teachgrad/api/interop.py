"""torch's own functions called with Variables: `torch.sigmoid(x)`, `torch.cat([t, x])`, `t * x`.

torch asks any argument that is not a tensor but has `__torch_function__` to run the call. Where
nothing is recorded (grad mode off, as in a custom Function's first-order backward, or no argument
requiring grad: a Variable, or a torch tensor, which is a leaf of teachgrad's graph) and no argument carries a
forward-mode tangent, torch's function runs on the data and its tensors come back as Variables. Where a
graph must be recorded, the call goes to teachgrad's op of the same name (`torch.cat` -> `tg.cat`,
`torch.nn.functional.relu` -> `tg.nn.functional.relu`, `t * x` -> `Variable.mul`), and is refused,
with a TypeError naming the function, when teachgrad has none.

torch's own autograd entry points, `torch.autograd.grad` and `torch.autograd.backward`, ask the same way when
handed Variables: they run teachgrad's engine (`tg.autograd.grad`, `tg.autograd.backward`). (torch's
`gradcheck` of a teachgrad function is refused: see teachgrad/rules/torch_gradcheck.py).

Guarded by tests/test_interop.py (torch's functions and operators on Variables, and refusals),
tests/test_torch_autograd_entry_points.py (torch.autograd.grad / backward / gradcheck given Variables) and
tests/test_torchs_attention_modules.py (torch's own attention modules given Variable masks).
"""

import functools

import torch

from ..rules import batching, grad_mode, torch_leaves
from ..rules import variable_class
from ..rules import tangents, torch_gradcheck


# The public namespaces whose functions stand for torch's of the same name (torch.cat(x) -> tg.cat(x)), handed over
# by teachgrad/__init__.py once they exist: they are above this module, which looks in them at call time.
namespaces = {}


def hand_over_namespaces(*modules):
    """Called once by teachgrad/__init__.py with `teachgrad`, `teachgrad.nn.functional`, `teachgrad.special` and
    `teachgrad.linalg`."""
    namespaces.update((module.__name__, module) for module in modules)


_delegated = set()   # torch functions handed to teachgrad's version under vmap, while it runs


def handle(func, args, kwargs):
    """Run `func(*args, **kwargs)` for arguments that include Variables (see the module's docstring)."""
    if func in AUTOGRAD_ENTRY_POINTS:
        return AUTOGRAD_ENTRY_POINTS[func](*args, **kwargs)
    Variable = variable_class.Variable
    if batching.vmap_depth and _any((args, kwargs), lambda v: getattr(v, "_levels", None)):   # under vmap: only
        ours, _ = _teachgrad_version(func, Variable)                         # teachgrad's ops have batching rules
        name = getattr(func, "__name__", "")
        if name.endswith("_") and not name.endswith("__"):   # writing a batch into an unbatched tensor
            raise NotImplementedError(f"vmap: teachgrad has no batching rules for in-place ops ({_name(func)} "
                                      "with a batched argument); write them out of place (x = x + ...)")
        if ours is None or func in _delegated:   # (teachgrad's version runs torch's on the data: no rule either)
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {_name(func)}")
        _delegated.add(func)
        try:
            return ours(*args, **kwargs)
        finally:
            _delegated.discard(func)
    recording = grad_mode.is_grad_enabled() and _any_requires_grad((args, kwargs), Variable)
    if not (recording or (grad_mode.forward_level >= 0 and _any_dual((args, kwargs)))):
        return _wrap(func(*_unwrap(args, Variable), **_unwrap(kwargs, Variable)), Variable)
    ours, self_first = _teachgrad_version(func, Variable)
    if ours is None:
        return _unrecorded(func, args, kwargs)
    if self_first and not isinstance(args[0], Variable):   # t * x: a torch tensor as self (a leaf if it requires grad)
        args = (torch_leaves.as_variable(args[0]), *args[1:])
    return ours(*args, **kwargs)


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
                   allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad given Variables (torch passes every argument): teachgrad's `tg.autograd.grad`."""
    torch_gradcheck.refuse_inside_torchs_gradcheck()   # (torch's gradcheck would read our gradients as zeros)
    return namespaces["teachgrad"].autograd.grad(
        outputs, inputs, grad_outputs=grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
        only_inputs=only_inputs, allow_unused=allow_unused, is_grads_batched=is_grads_batched,
        materialize_grads=materialize_grads)


def _autograd_backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward given Variables: teachgrad's `tg.autograd.backward`."""
    return namespaces["teachgrad"].autograd.backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


# torch's own attention modules (torch.nn.MultiheadAttention, the Transformer layers) read a mask's dtype in their
# forward with a helper of torch's, F._none_or_dtype, which takes torch tensors only and is not dispatched through
# __torch_function__; a mask made with teachgrad is a Variable. So that helper is given a Variable's dtype too;
# for anything else it is torch's, with torch's error.
_torchs_none_or_dtype = torch.nn.functional._none_or_dtype


def _none_or_dtype(input):
    """torch.nn.functional._none_or_dtype, which reads a Variable's dtype too."""
    if isinstance(input, variable_class.Variable):
        return input.dtype
    return _torchs_none_or_dtype(input)


torch.nn.functional._none_or_dtype = _none_or_dtype


# torch's clip_grad_norm_, clip_grad_value_ and get_total_norm (torch/nn/utils/clip_grad.py) group the gradients by
# device and dtype with a C++ helper that takes torch tensors only, before anything asks __torch_function__. So that
# helper, as those functions see it, is given a Variable's tensor itself (its gradient's memory): torch's kernels
# then scale or clamp the Variables' gradients in place, and torch's function returns torch's result.
_torchs_group_tensors = torch.nn.utils.clip_grad._group_tensors_by_device_and_dtype


def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """torch.utils._foreach_utils._group_tensors_by_device_and_dtype, which reads a Variable as its tensor."""
    Variable = variable_class.Variable
    plain = [[t.data if isinstance(t, Variable) else t for t in tensors] for tensors in tensorlistlist]
    return _torchs_group_tensors(plain, with_indices)


torch.nn.utils.clip_grad._group_tensors_by_device_and_dtype = _group_tensors_by_device_and_dtype


def _one_variable_as_a_list(torchs):
    """torch's clip_grad function `torchs`, which reads one Variable given alone as torch reads one tensor: a list
    of it (torch checks `isinstance(parameters, torch.Tensor)`, so it would walk a Variable's rows instead, find
    no `.grad` on them, and clip nothing)."""
    @functools.wraps(torchs)
    def clip_grad_function(parameters, *args, **kwargs):
        if isinstance(parameters, variable_class.Variable):
            parameters = [parameters]
        return torchs(parameters, *args, **kwargs)
    return clip_grad_function


# (torch.nn.utils's name, clip_grad's own)
for _public, _own in [("clip_grad_norm_", "clip_grad_norm_"), ("clip_grad_value_", "clip_grad_value_"),
                      ("get_total_norm", "_get_total_norm"), ("clip_grads_with_norm_", "_clip_grads_with_norm_")]:
    _wrapped = _one_variable_as_a_list(getattr(torch.nn.utils.clip_grad, _own))
    setattr(torch.nn.utils.clip_grad, _own, _wrapped)
    setattr(torch.nn.utils, _public, _wrapped)


# torch's autograd functions that ask Variables to run them (through __torch_function__): teachgrad's engine does
AUTOGRAD_ENTRY_POINTS = {torch.autograd.grad: _autograd_grad, torch.autograd.backward: _autograd_backward}


def module_function(name):
    """`tg.<name>` for a name teachgrad does not define but torch does, as one of its ATen functions
    (torch.argsort, torch.bincount, torch.isclose, torch.logspace, ...): torch's function run through `handle`.

    So it gives torch's result where no gradient is lost (indices, masks, counts, anything under no_grad),
    and the TypeError naming the function where it would compute, from inputs that require grad, a
    floating-point result teachgrad cannot record. Its tensors come back as Variables; `requires_grad=True`
    (a factory's) makes the result a leaf that requires grad. Other torch names (torch.save, torch.compile,
    modules, classes) stay an AttributeError: run on the data they would silently drop the Variables.
    Returns None when `name` is not such a function.
    """
    # torch.<name> is torch's Python function where torch/functional.py defines one (broadcast_tensors(*tensors),
    # tensordot(a, b, dims=...), cdist(x, y, compute_mode='...')): its arguments, not the ATen function's below it
    func = (getattr(torch.functional, name) if name in torch.functional.__all__
            else getattr(torch._C._VariableFunctions, name, None))
    if name.startswith("_") or func is None or not callable(func):
        return None

    def call(*args, **kwargs):
        Variable = variable_class.Variable
        requires_grad = kwargs.pop("requires_grad", False)
        result = handle(func, args, kwargs)
        if requires_grad:
            if not (isinstance(result, Variable) and (result.is_floating_point() or result.is_complex())):
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            result.requires_grad_(True)
        return result
    call.__name__ = call.__qualname__ = name
    call.runs_torchs = True
    call.__doc__ = (f"torch.{name} (see module_function in teachgrad/api/interop.py: recorded only where teachgrad "
                    "has the op).")
    return call


def tensor_method(method):
    def call(self, *args, **kwargs):
        return handle(method, (self, *args), kwargs)
    call.__name__ = call.__qualname__ = method.__name__
    call.runs_torchs = True
    call.__doc__ = f"torch.Tensor.{method.__name__} (see teachgrad/api/interop.py: recorded only where teachgrad has the op)."
    return call


def _unrecorded(func, args, kwargs):
    """A call teachgrad cannot record: fine when its result cannot carry a gradient (indices, masks, sizes,
    a new tensor made from scratch), refused when it is a floating-point tensor computed from the inputs."""
    Variable = variable_class.Variable
    name = func.__name__
    if name.endswith("_") and not name.endswith("__") and _is_tensor_method(func):   # in place: refused before it writes
        raise _refused(func, (args, kwargs), Variable)
    result = func(*_unwrap(args, Variable), **_unwrap(kwargs, Variable))
    if _has_float_tensor(result) and not func.__name__.startswith("new_"):
        raise _refused(func, (args, kwargs), Variable)
    return _wrap(result, Variable)


def _refused(func, arguments, Variable):
    what = ("a teachgrad Variable that requires grad" if _any_variable_requires_grad(arguments, Variable)
            else "a torch tensor that requires grad (an nn.Parameter, say: a leaf of teachgrad's graph)")
    return TypeError(f"{_name(func)} was called with {what}, and teachgrad has no op of that name to record it: "
                     "use a teachgrad function or Variable method instead")


def _any_variable_requires_grad(value, Variable):
    return _any(value, lambda v: isinstance(v, Variable) and v.requires_grad)


def _name(func):
    """The function as the user wrote it: torch.cumsum, Tensor.cumsum, torch.nn.functional.softplus."""
    name = getattr(func, "__name__", repr(func))
    if _is_tensor_method(func):
        return f"Tensor.{name}"
    if _is_functional(func):
        return f"torch.nn.functional.{name}"
    return f"torch.{name}"


def _is_tensor_method(func):
    return getattr(func, "__qualname__", "").startswith(("TensorBase.", "Tensor."))


def _is_functional(func):
    return getattr(func, "__module__", None) in ("torch.nn.functional", "torch._C._nn")


def _has_float_tensor(value):
    if isinstance(value, torch.Tensor):
        return value.is_floating_point() or value.is_complex()
    if isinstance(value, (tuple, list)):
        return any(_has_float_tensor(v) for v in value)
    return False


def _teachgrad_version(func, Variable):
    """teachgrad's op of the same name: a Variable method for a Tensor method, else a tg / tg.nn.functional function.
    Returns (op, whether its first argument is the tensor the method was called on)."""
    try:
        where = _where_found[func]
    except KeyError:     # the first call of this torch function: where its name is looked up, kept
        where = _where_found[func] = _where(func)
    except TypeError:    # (an unhashable callable: looked up every time)
        where = _where(func)
    home, name, self_first = where
    op = getattr(Variable if home is None else namespaces[home], name, None)
    return (None if getattr(op, "runs_torchs", False) else op), self_first   # not one of api/torch_methods.py, nor
                                                                            # module_function's stand-in


def _where(func):
    """(the namespace teachgrad's version of `func` is in, None for a Variable method; its name; self first)."""
    name = getattr(func, "__name__", "")
    if _is_tensor_method(func):
        return None, name, True
    if _is_functional(func):
        return "teachgrad.nn.functional", name, False
    if getattr(func, "__module__", None) == "torch._C._special":   # torch.special.i0e is `special_i0e` there
        return "teachgrad.special", name.removeprefix("special_"), False
    if getattr(func, "__module__", None) == "torch._C._linalg":   # torch.linalg.solve is `linalg_solve` there
        return "teachgrad.linalg", name.removeprefix("linalg_"), False
    return "teachgrad", name, False


_where_found = {}   # torch function -> _where(function)


def _any(value, test):
    """Whether `test` holds for an argument, looking inside tuples, lists and dicts."""
    if isinstance(value, (tuple, list)):
        return any(_any(v, test) for v in value)
    if isinstance(value, dict):
        return any(_any(v, test) for v in value.values())
    return test(value)


def _any_dual(value):
    """Whether a Variable with a tangent (forward AD) is among the arguments: its tangent must not be dropped."""
    return _any(value, tangents.is_dual)


def _any_requires_grad(value, Variable):
    """Whether a Variable, or a torch tensor (a leaf of teachgrad's graph, see teachgrad/rules/torch_leaves.py), requires grad."""
    if isinstance(value, (Variable, torch.Tensor)):
        return value.requires_grad
    if isinstance(value, (tuple, list)):   # (a loop of its own, not _any's: this runs for every call torch hands over)
        for v in value:
            if _any_requires_grad(v, Variable):
                return True
        return False
    if isinstance(value, dict):
        for v in value.values():
            if _any_requires_grad(v, Variable):
                return True
    return False


def _unwrap(value, Variable):
    """The arguments with each Variable replaced by its torch tensor (looking inside tuples, lists and dicts)."""
    if isinstance(value, Variable):
        return value.data
    if type(value) is tuple or type(value) is list:   # (a list comprehension: no generator to make and run)
        return type(value)([v.data if isinstance(v, Variable) else _unwrap(v, Variable) for v in value])
    if isinstance(value, (tuple, list)):              # torch.Size, a list subclass: made from the items
        return type(value)(_unwrap(v, Variable) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, Variable) for k, v in value.items()} if value else {}
    return value


def _wrap(value, Variable):
    if isinstance(value, torch.Tensor):
        return Variable._make(value)
    if isinstance(value, list):
        return [_wrap(v, Variable) for v in value]
    if isinstance(value, tuple):
        wrapped = tuple(_wrap(v, Variable) for v in value)
        return wrapped if type(value) is tuple else type(value)(wrapped)   # torch.return_types keep their names
    return value
