"""`tg.func`: torch.func's function transforms, rebuilt on teachgrad's engine.

    from teachgrad.func import grad, jvp, vjp, functional_call
    grad(lambda x: (x ** 3).sum())(x)                  # 3 x², a Variable
    jvp(f, (x,), (v,))                                 # (f(x), J v): one forward pass, forward_ad underneath
    vjp(f, x)[1](u)                                    # (uᵀ J,): one backward pass, autograd.grad underneath
    functional_call(model, {"weight": w}, (x,))        # model(x) with w in place of model.weight

torch.func runs each transform at a "level" of its own and unwraps the results when it leaves it. teachgrad has
one graph, so a transform stands in for a level this way: each input it differentiates becomes a fresh node of
that graph (a view of the input when the input already requires grad, so an outer transform still reaches it;
else a new leaf), the gradients are computed with `create_graph=True` (so an outer transform can differentiate
them: `grad(grad(f))`), and a result that depends on nothing outside the transform is detached on the way out
(so `grad(f)(x)` does not require grad unless x, or something f reads, did). Forward mode has one dual level
in teachgrad, so `jvp` inside `jvp` (and `jacfwd` of `jacfwd`) is refused; `hessian` is forward-over-reverse,
as torch's. Under vmap, `jvp` makes batched duals (teachgrad/features/vmap.py's `batched_dual`), so `vmap(jvp)`,
`vmap(jacfwd)` and `vmap(hessian)` run as torch.func's.

`vmap` is teachgrad/features/vmap.py (batching rules beside the ops in teachgrad/features/batching_rules.py);
`linearize` gives (f(x), jvp_fn), and `linear_transpose` turns forward mode's linear map into reverse mode's.

The transforms torch.func has and teachgrad does not rebuild (functionalize, stack_module_state, ...) raise a NotImplementedError when asked for: torch's own would run on the data, where
teachgrad's graph is not.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence, TypeAlias

import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten, treespec_pprint

from .features import forward_ad
from .features.batched_variable import levels_of
from .features.vmap import batched_dual, batched_zeros_like, expand_to_open_levels, physical_grad, vmap
from .rules import batching, grad_mode, torch_leaves
from .core.engine import grad as autograd_grad
from .api.torch_functions import stack as _stack_variables
from .core.variable import Variable
from .ops import Alias
from .rules import tangents

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor

# torch's own: it switches a model's batch norm modules (torch's classes, as tg.nn's) to no running stats, so that
# vmap may run them in training (teachgrad/features/batching_rules.py's batch norm rule refuses to update them)
replace_all_batch_norm_modules_ = torch.func.replace_all_batch_norm_modules_

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linear_transpose",
           "linearize", "replace_all_batch_norm_modules_", "vjp", "vmap"]


# --- functional_call ------------------------------------------------------------------------------------------

_MISSING = object()


def functional_call(module: torch.nn.Module,
                    parameter_and_buffer_dicts: dict[str, TensorLike] | Sequence[dict[str, TensorLike]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """`module(*args, **kwargs)` with its parameters and buffers replaced, for this call only, by the given tensors
    (Variables, duals included; torch tensors too). Names are dotted paths as in `named_parameters()`."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
                         f"but got {type(parameter_and_buffer_dicts)}")
    if isinstance(module, torch.nn.DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    replacements = _tie(module, given) if tie_weights else given
    if strict:
        _check_keys(module, replacements)
    originals = {}
    try:
        for name, value in replacements.items():
            originals[name] = _swap(module, name, value)
        return module(*args, **kwargs)
    finally:
        now = {name: _swap(module, name, original) for name, original in reversed(originals.items())}
        # a module that reassigned one of its tensors during the call: the new one goes back to the caller's dict,
        # as torch does
        given.update({k: now[k] for k in given if k in now})


def _all_tensors(module):
    return [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]


def _tie(module, given):
    """Names that share one tensor in the module (tied weights) all get the value given for any of them."""
    names_of = {}
    for name, tensor in _all_tensors(module):
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    result = dict(given)
    for name in [n for n in given if n in tied]:
        given_for_it = tied[name] & given.keys()
        if len(given_for_it) > 1 and len({id(given[n]) for n in given_for_it}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied[name])}, which are tied. "
                             "Consider using tie_weights=False")
        for other in tied[name]:
            result[other] = given[name]
    return result


def _check_keys(module, replacements):
    valid = {name for name, _ in _all_tensors(module)}
    missing, unexpected = sorted(valid - replacements.keys()), sorted(replacements.keys() - valid)
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors)))


def _swap(module, name, value):
    """Put `value` where the module's tensor `name` is (or as a plain attribute); return what was there.
    A parameter's place is its slot in `_parameters`, so `module.weight` reads the value (torch does the same)."""
    path, _, leaf = name.rpartition(".")
    owner = module.get_submodule(path) if path else module
    for slots in (owner._parameters, owner._buffers):
        if leaf in slots:
            old = slots[leaf]
            if value is _MISSING:
                del slots[leaf]
            else:
                slots[leaf] = value
            return old
    old = getattr(owner, leaf, _MISSING)
    if value is not _MISSING:
        setattr(owner, leaf, value)
    elif hasattr(owner, leaf):
        delattr(owner, leaf)
    return old


# --- standing in for a transform's level ----------------------------------------------------------------------

class _Level:
    """The inputs one grad/vjp transform made (fresh nodes of the graph), and whether grad mode was on outside."""

    def __init__(self):
        self.inputs = []
        self.grad_enabled_outside = grad_mode.is_grad_enabled()

    def fresh(self, x):
        """An input to differentiate with respect to: a node of its own, so that only paths through it count."""
        if not isinstance(x, (Variable, torch.Tensor)):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not isinstance(x, Variable):
            x = torch_leaves.as_variable(x) if x.requires_grad else Variable(x)
        if batching.vmap_depth:                       # under vmap: one gradient per example (features/vmap.py)
            x = expand_to_open_levels(x)
        if x.requires_grad:
            inner = x.view_as(x)                      # an outer transform (or the caller's graph) still reaches x
        else:
            inner = Variable.requires_grad_(x.detach())   # (Variable's: a batched one refuses the user)
            tangent = tangents.tangent_of(x) if tangents.is_dual(x) else None
            if tangent is not None:                   # inside jvp: the tangent rides along (forward-over-reverse)
                tangents.set_tangent(inner, tangent)
        self.inputs.append(inner)
        return inner

    def unwrap(self, value):
        """Leaving the level: a Variable that depends on nothing but this level's inputs is detached."""
        def one(v):
            if not isinstance(v, Variable) or not v.requires_grad:
                return v
            if self.grad_enabled_outside and self._reaches_outside(v):
                return v
            out = v.detach()
            if tangents.is_dual(v):
                tangents.set_tangent(out, tangents.tangent_of(v))
            return out
        return tree_map(one, value)

    def _reaches_outside(self, v):
        """Whether v's graph reaches a leaf that requires grad other than this level's inputs."""
        ours = {id(x) for x in self.inputs}
        if v.grad_fn is None:
            return id(v) not in ours
        seen, stack = set(), [v.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            leaf = getattr(node, "variable", None)      # an AccumulateGrad
            if leaf is not None:
                if id(leaf) not in ours:
                    return True
                continue
            stack.extend(n for n, _ in node.next_functions)
        return False


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=False, create_graph=True):
    """autograd.grad over the outputs that require grad; zeros for an input no output depends on."""
    if batching.vmap_depth:   # under vmap: on the physical graph, the batch dims in front (features/vmap.py)
        return physical_grad(_autograd_grad, outputs, inputs, grad_outputs, retain_graph=retain_graph,
                             create_graph=create_graph)
    if grad_outputs is None:
        kept = [(o, None) for o in outputs if o.requires_grad]
    else:
        kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not kept:
        return tuple(Variable._make(torch.zeros_like(x._data)) for x in inputs)
    outs, grads = zip(*kept)
    result = autograd_grad(outs, inputs, None if grad_outputs is None else grads, retain_graph=retain_graph,
                           create_graph=create_graph, allow_unused=True)
    return tuple(Variable._make(torch.zeros_like(x._data)) if g is None else g for g, x in zip(result, inputs))


def _is_tensor(x):
    return isinstance(x, (Variable, torch.Tensor))


# --- argnums --------------------------------------------------------------------------------------------------

def _argnum(argnum, n):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -n <= argnum < n:
        return argnum % n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _argnums(argnums, n):
    """argnums checked as torch checks them: an int, or a non-empty tuple of distinct ints."""
    if isinstance(argnums, int):
        return _argnum(argnums, n)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_argnum(a, n) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _pick(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _put(args, argnums, new):
    args = list(args)
    for i, value in ([(argnums, new)] if isinstance(argnums, int) else zip(argnums, new)):
        args[i] = value
    return tuple(args)


# --- grad, grad_and_value, vjp --------------------------------------------------------------------------------

def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (the gradient of func's scalar output with respect to the arguments `argnums`,
    func's output); `(gradient, (output, aux))` with has_aux."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = _Level()
        with grad_mode.enable_grad():        # a transform records whatever grad mode is outside (as torch.func)
            picked = _argnums(argnums, len(args))
            diff_args = tree_map(level.fresh, _pick(args, picked))
            output = func(*_put(args, picked, diff_args), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not _is_tensor(output):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat, spec = tree_flatten(diff_args)
            # the graph is kept: an outer transform may go back through the nodes this one went through
            grads = tree_unflatten(list(_autograd_grad((output,), flat, retain_graph=True, create_graph=True)), spec)
            grads, output, aux = level.unwrap(grads), level.unwrap(output), level.unwrap(aux)
        return (grads, (output, aux)) if has_aux else (grads, output)
    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the gradient of func's scalar output with respect to the arguments `argnums`
    (`(gradient, aux)` with has_aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return wrapper


def vjp(func: Callable[..., Any], *primals: Any,
        has_aux: bool = False) -> tuple[Any, Callable[..., Any]] | tuple[Any, Callable[..., Any], Any]:
    """(func(*primals), vjp_fn) — and aux with has_aux; vjp_fn(cotangents) gives uᵀ J for each primal, as a tuple."""
    return _vjp(func, primals, None, has_aux)


def _vjp(func, primals, argnums, has_aux):
    level = _Level()
    with grad_mode.enable_grad():
        if argnums is None:
            diff_primals = tree_map(level.fresh, primals)
            call_with = diff_primals
        else:
            diff_primals = tree_map(level.fresh, _pick(primals, argnums))
            call_with = _put(primals, argnums, diff_primals)
        output = func(*call_with)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
            aux = level.unwrap(aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out, "vjp(f, *primals)")
        for out in flat_out:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {out.dtype}")
        flat_in, in_spec = tree_flatten(diff_primals)
        results = level.unwrap(output)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = grad_mode.is_grad_enabled()
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(cot_spec)}, "
                               f"primal output: {treespec_pprint(out_spec)}")
        after = _Level()
        after.inputs = level.inputs
        with grad_mode.enable_grad():
            grads = _autograd_grad(flat_out, flat_in, flat_cot, retain_graph=retain_graph, create_graph=create_graph)
        return after.unwrap(tree_unflatten(list(grads), in_spec))

    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def _check_outputs(flat, api):
    if (len(flat) == 1 and flat[0] is None) or len(flat) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat})")
    for out in flat:
        if not _is_tensor(out):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(out)}")


# --- jvp ------------------------------------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"
_in_jvp = False


def jvp(func: Callable[..., Any], primals: tuple[Any, ...], tangents: tuple[Any, ...], *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, Any] | tuple[Any, Any, Any]:
    """(func(*primals), J v) for the tangents v — and aux with has_aux: one forward pass with dual Variables."""
    return _jvp(func, primals, tangents, None, strict, has_aux)


def _jvp(func, primals, tangents, argnums, strict, has_aux):
    global _in_jvp
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff_args = primals if argnums is None else _pick(primals, argnums)
    diff_args = diff_args if argnums is None or not isinstance(argnums, int) else (diff_args,)
    flat_primals, primals_spec = tree_flatten(diff_args)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    for flat, name in ((flat_primals, "primals"), (flat_tangents, "tangents")):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not _is_tensor(x):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got {type(x)}")
    if _in_jvp:
        raise NotImplementedError(
            "teachgrad does not nest jvp (nor jacfwd) inside jvp: its forward mode has one dual level, where "
            "torch.func keeps one per transform. Compute the inner derivative with grad, vjp or jacrev instead")
    _in_jvp = True
    try:
        with forward_ad.dual_level():
            flat_duals = [batched_dual(p, t) if levels_of(p) or levels_of(t) else forward_ad.make_dual(p, t)
                          for p, t in zip(flat_primals, flat_tangents)]   # (under vmap: a batched dual)
            duals = tree_unflatten(flat_duals, primals_spec)
            if argnums is not None:
                duals = _put(primals, argnums, duals[0] if isinstance(argnums, int) else duals)
            result = func(*duals)
            aux = None
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{_JVP}: output of function f should be a tuple: (output, aux) "
                                       "if has_aux is True")
                result, aux = result
                aux = tree_map(_no_tangent, aux)
            flat_out, spec = tree_flatten(result)
            _check_outputs(flat_out, _JVP)
            unpacked = [_unpack(out, strict) for out in flat_out]
    finally:
        _in_jvp = False
    primals_out = tree_unflatten([p for p, _ in unpacked], spec)
    tangents_out = tree_unflatten([t for _, t in unpacked], spec)
    return (primals_out, tangents_out, aux) if has_aux else (primals_out, tangents_out)


def _unpack(dual, strict):
    if not _is_tensor(dual):
        raise RuntimeError(f"{_JVP}: expected f(*args) to return only tensors, got unsupported type {type(dual)}")
    tangent = forward_ad.unpack_dual(dual).tangent
    primal = forward_ad.view_without_tangent(Alias, dual) if isinstance(dual, Variable) else dual   # (torch.func's
    if tangent is None:                                                                          # AliasBackward0)
        if strict:
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                               "This is not allowed with strict=True.")
        tangent = batched_zeros_like(primal) if levels_of(primal) else Variable._make(
            torch.zeros_like(primal.data if isinstance(primal, Variable) else primal))
    return primal, tangent


def _no_tangent(x):
    return forward_ad.unpack_dual(x).primal if isinstance(x, Variable) else x


# --- Jacobians and the Hessian --------------------------------------------------------------------------------

def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """A function returning the Jacobian of func with respect to the arguments `argnums`, row by row
    (one vjp per output element). Blocks are shaped output.shape + input.shape."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _complex("jacrev", args, True)
        picked = _argnums(argnums, len(args))
        out = _vjp(func, args, picked, has_aux)
        output, vjp_fn = out[0], out[1]
        flat_out, out_spec = tree_flatten(output)
        _complex("jacrev", flat_out, False)
        flat_in, in_spec = tree_flatten((args[picked],) if isinstance(picked, int) else _pick(args, picked))
        rows = [[] for _ in flat_out]          # rows[i][k]: the vjp with output i's k-th one-hot
        for i, o in enumerate(flat_out):
            for k in range(o.numel()):
                cot = [torch.zeros(x.shape, dtype=x.dtype, device=x.device) for x in flat_out]   # (per example)
                cot[i].view(-1)[k] = 1
                flat_grads, _ = tree_flatten(vjp_fn(tree_unflatten(cot, out_spec)))
                rows[i].append(flat_grads)
        blocks = []
        for i, o in enumerate(flat_out):
            per_input = [_stack([r[j] for r in rows[i]], o.shape + x.shape, x) for j, x in enumerate(flat_in)]
            per_input = tree_unflatten(per_input, in_spec)
            blocks.append(per_input[0] if isinstance(picked, int) else per_input)
        jac = tree_unflatten(blocks, out_spec)
        return (jac, out[2]) if has_aux else jac
    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """A function returning the Jacobian of func with respect to the arguments `argnums`, column by column
    (one jvp per input element). Blocks are shaped output.shape + input.shape."""
    @functools.wraps(func)
    def wrapper(*args):
        _complex("jacfwd", args, True)
        picked = _argnums(argnums, len(args))
        diff = (args[picked],) if isinstance(picked, int) else _pick(args, picked)
        flat_in, in_spec = tree_flatten(diff)
        for x in flat_in:
            if not _is_tensor(x):
                raise RuntimeError(f"{_JVP}: Expected primals to only contain Tensors, got {type(x)}")
        columns, output, aux = [], None, None      # columns[j][k]: the flat tangents out for input j's k-th one-hot
        for j, x in enumerate(flat_in):
            columns.append([])
            for k in range(x.numel()):
                tangents = [torch.zeros(y.shape, dtype=y.dtype, device=y.device) for y in flat_in]   # (per example)
                tangents[j].view(-1)[k] = 1
                result = _jvp(func, args, tree_unflatten(tangents, in_spec), picked, False, has_aux)
                output, aux = result[0], (result[2] if has_aux else None)
                columns[j].append(tree_flatten(result[1])[0])
        if output is None:                         # no input element at all: one call for the output's shape
            output = func(*args)
            output, aux = output if has_aux else (output, None)
        flat_out, out_spec = tree_flatten(output)
        _complex("jacfwd", flat_out, False)
        blocks = []
        for i, o in enumerate(flat_out):
            per_input = [_stack([c[i] for c in columns[j]], o.shape + x.shape, o, dim=-1)
                         for j, x in enumerate(flat_in)]
            per_input = tree_unflatten(per_input, in_spec)
            blocks.append(per_input[0] if isinstance(picked, int) else per_input)
        jac = tree_unflatten(blocks, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """A function returning the Hessian of func: jacfwd of jacrev (forward-over-reverse), as torch.func's."""
    return jacfwd(jacrev(func, argnums), argnums)


def _stack(pieces, shape, like, dim=0):
    """The rows (dim=0) or columns (dim=-1) of a Jacobian block, as one tensor of `shape`."""
    if not pieces:
        return Variable._make(torch.zeros(shape, dtype=like.dtype, device=like.device))
    return _stack_variables(pieces, dim).reshape(shape)


def _complex(name, values, is_input):
    for i, x in enumerate(tree_flatten(values)[0]):
        if _is_tensor(x) and x.dtype.is_complex:
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {i}")


# --- what teachgrad does not rebuild --------------------------------------------------------------------------

_NOT_BUILT = {
    "functionalize": "it rewrites a program's in-place ops, which teachgrad records as they are",
    "stack_module_state": "it stacks modules' parameters for ensembling under vmap; stack them with tg.stack",
    "rearrange": "it is einops under vmap; use reshape and permute",
    "debug_unwrap": "teachgrad's transforms do not wrap tensors, so there is nothing to unwrap",
}


def __getattr__(name: str) -> NoReturn:
    if name in _NOT_BUILT or (not name.startswith("_") and hasattr(torch.func, name)):
        why = _NOT_BUILT.get(name, "it is not one of the transforms teachgrad rebuilds")
        raise NotImplementedError(f"teachgrad does not rebuild torch.func.{name} ({why}); torch's own would run on "
                                  "the tensors' data, where teachgrad's graph is not")
    raise AttributeError(f"module 'teachgrad.func' has no attribute '{name}'")


# --- linearize, and reverse mode as forward mode transposed ---------------------------------------------------

def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the JVP of func at `primals`, J·t, a linear function of t.

    torch.func.linearize traces func once (make_fx) and replays the linear part; here jvp_fn runs `jvp` at the same
    primals (the forward pass again, each call), which gives the same numbers. Under vmap, as torch's, the primals
    may not be batched (torch's make_fx meets make_dual's missing batching rule); the tangents may."""
    if any(levels_of(p) for p in tree_flatten(primals)[0]):
        raise RuntimeError("Batching rule not implemented for aten::_make_dual; the fallback path doesn't work on "
                           "out= or view ops.")
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents: Any) -> Any:
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {treespec_pprint(tangents_spec)} to have the same argspec as "
                               f"the primals {treespec_pprint(primals_spec)}")
        for p, t in zip(flat_primals, flat_tangents):
            if _is_tensor(p) and (not _is_tensor(t) or tuple(p.shape) != tuple(t.shape)):
                raise RuntimeError(f"Expected tangent to have shape {tuple(p.shape)} but got "
                                   f"{tuple(t.shape) if _is_tensor(t) else type(t)}")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def linear_transpose(linear_fn: Callable[..., Any], *primals: Any) -> Callable[..., tuple]:
    """The transpose of a linear function (as JAX's linear_transpose): for `linear_fn(t) = J t`, a function
    `u -> (Jᵀ u,)`, one entry per argument. `primals` give the arguments' shapes (their values are not used).

    This is reverse mode got from forward mode: transposing `linearize(f, x)[1]` gives the VJP of f at x. It is
    computed as the VJP of linear_fn at zeros: for a linear map, its VJP is the transpose everywhere."""
    zeros = tree_map(lambda p: Variable._make(torch.zeros_like(p.data if isinstance(p, Variable) else p)), primals)

    def transposed(*cotangents: Any) -> tuple:
        _, vjp_fn = vjp(linear_fn, *zeros)
        return vjp_fn(cotangents[0] if len(cotangents) == 1 else cotangents)
    return transposed
