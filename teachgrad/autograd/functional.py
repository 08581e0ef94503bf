"""`tg.autograd.functional`: Jacobian-vector products, vector-Jacobian products, Jacobians, Hessians.

Each takes a function and its inputs (a tensor or a tuple of tensors) and returns what torch's
`torch.autograd.functional` returns, in the same structure:

- `vjp(f, x, v)`: vᵀ J, one backward pass (reverse mode);
- `jvp(f, x, v)`: J v, by the double-backward trick, as torch computes it (for J v in one
  forward pass, see `tg.autograd.forward_ad`);
- `jacobian(f, x)`: J itself, row by row from VJPs ("reverse-mode": one backward per output
  element) or column by column from JVPs ("forward-mode": one forward pass per input element);
- `hessian`, `hvp`, `vhp`: the same for the gradient of a scalar function.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence, TypeAlias

import torch

from ..features import forward_ad
from ..rules import grad_mode
from ..core.engine import grad as autograd_grad
from ..api.torch_functions import stack as _stack_variables
from ..core.variable import Variable
from .. import func as tg_func
from ..features.vmap import physical_grad
from ..rules import batching

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    TensorLike: TypeAlias = Variable | torch.Tensor                   # a teachgrad Variable or a torch tensor
    TensorOrTensors: TypeAlias = TensorLike | tuple[TensorLike, ...]  # one tensor, or a tuple of them
    Variables: TypeAlias = Variable | tuple[Variable, ...]            # a result: a tuple where a tuple came in
    # a Jacobian: one block (for one output and one input), a row of blocks, or rows of them
    Jacobian: TypeAlias = Variable | Sequence[Variable] | Sequence[Sequence[Variable]]

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --- turning arguments into tuples and back ---------------------------------------------------

def _as_tuple(value, arg_name=None, fn_name=None):
    """(was it a tuple, the tuple), refusing anything but tensors, with torch's message."""
    if arg_name is None:
        return value if isinstance(value, tuple) else tuple(value) if isinstance(value, list) else (value,)
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, (Variable, torch.Tensor)):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"{where} has type {type(item)}.")
    return is_tuple, tuple(item if isinstance(item, Variable) else Variable(item) for item in items)


def _untuple(result, was_tuple):
    """Undo `_as_tuple`: `was_tuple` is one flag, or (outputs flag, inputs flag) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _prepare(inputs, create_graph, need_graph):
    """Fresh inputs to differentiate with respect to (a view, to keep the user's graph when recording)."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
                 for x in inputs)


def _finish(values, create_graph):
    """Detach the results unless the caller asked for a graph (nested tuples too)."""
    if values and isinstance(values[0], tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return values if create_graph else tuple(v.detach() for v in values)


def _check_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.shape} but got {a.shape}.")


_STRICT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect "
                "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this would "
                "be violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
}


def _check_requires_grad(values, kind, strict):
    """In strict mode, refuse a result that does not depend on the inputs."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_STRICT[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """tg.grad over the outputs that require grad; None for every input when none does."""
    if batching.vmap_depth:   # under vmap (vectorize=True): on the physical graph (teachgrad/features/vmap.py)
        return physical_grad(_grad, outputs, inputs, grad_outputs, create_graph=create_graph,
                             retain_graph=retain_graph)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outs, grads = zip(*kept)
    if all(g is None for g in grads):
        grads = None
    return autograd_grad(outs, inputs, grads, retain_graph=retain_graph, create_graph=create_graph,
                         allow_unused=True)


_ZERO_STRICT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros where an input got no gradient (its mathematical value); an error instead in strict mode."""
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_STRICT[stage].format(i=i))
            g = Variable._make(torch.zeros_like(ref.data))
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        result.append(g)
    return tuple(result)


def _default_v(v, values, values_tuple, create_graph, fn_name, what):
    """v as a tuple, prepared and checked against `values`; None when `values` is one single-element tensor."""
    if v is None:
        if len(values) != 1 or values[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if {what} a single Tensor with a single element.")
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepare(v, create_graph, need_graph=False)
    _check_v(v, values, values_tuple)
    return v


# --- products ---------------------------------------------------------------------------------

def _last_backward(of, wrt, v, like, create_graph, strict, stage):
    """The last backward pass of a product, recorded only under create_graph; a gradient that did not
    arrive becomes zeros shaped like `like` (or an error with strict)."""
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        return _fill_in_zeros(_grad(of, wrt, v, create_graph=create_graph), like, strict, create_graph, stage)


def _results(outputs, outputs_tuple, result, result_tuple, create_graph):
    """(outputs, result), each detached unless create_graph, and untupled where its input was not a tuple."""
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(result, create_graph), result_tuple))


def vjp(func: Callable[..., TensorOrTensors], inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Variables, Variables]:
    """(func(inputs), vᵀ J): the vector-Jacobian product, one backward pass."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _default_v(v, outputs, outputs_tuple, create_graph, "vjp", "the user-provided function returns")
    result = _last_backward(outputs, inputs, v, inputs, create_graph, strict, "back")
    return _results(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def jvp(func: Callable[..., TensorOrTensors], inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Variables, Variables]:
    """(func(inputs), J v), by the double-backward trick: J v is the gradient of (uᵀ J) v with respect to u."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _default_v(v, inputs, inputs_tuple, create_graph, "jvp", "the input to the user-provided function is")
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        u = tuple(Variable(torch.zeros_like(o.data), requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    result = _last_backward(grad_inputs, u, v, outputs, create_graph, strict, "back_trick")
    return _results(outputs, outputs_tuple, result, outputs_tuple, create_graph)


# --- Jacobians --------------------------------------------------------------------------------

def jacobian(func: Callable[..., TensorOrTensors], inputs: TensorOrTensors, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False, strategy: str = "reverse-mode") -> Jacobian:
    """J, one block per (output, input): a tensor of shape output.shape + input.shape.

    "reverse-mode" fills it row by row (a VJP with each output element's one-hot vector);
    "forward-mode" column by column (a JVP with each input element's one-hot vector).
    `vectorize=True` computes them all at once under `tg.func.vmap`, as torch's does: the rows as the VJPs of a
    batch of one-hot cotangents, the columns as the JVPs of a batch of one-hot tangents.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize)
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        if vectorize:
            blocks = _vectorized(func, inputs, outputs, reverse=True)
            return _untuple(_finish(blocks, create_graph), (outputs_tuple, inputs_tuple))
        blocks = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]                   # rows[j]: d out[k] / d inputs[j], for each k
            flat = out.reshape(-1)
            for k in range(out.numel()):
                row = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(row, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = Variable._make(torch.zeros_like(x.data))
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            blocks.append(tuple(_stack(r, out.shape + x.shape, out.dtype, x) for r, x in zip(rows, inputs)))
        return _untuple(_finish(tuple(blocks), create_graph), (outputs_tuple, inputs_tuple))


def _stack(pieces, shape, dtype, like):
    if not pieces:                                     # an output with no elements
        return Variable._make(torch.zeros(shape, dtype=like.dtype, device=like.device))
    return _stack_variables(pieces, 0).view(shape)


def _jacobian_forward(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    with grad_mode.no_grad():
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs")
    return _untuple([list(row) for row in _finish(_vectorized(func, inputs, outputs, reverse=False), False)],
                    (outputs_tuple, inputs_tuple))     # lists, not tuples: torch's forward-mode does so


def _vectorized(func, inputs, outputs, reverse):
    """The Jacobian's blocks, all rows (reverse) or all columns (forward) at once, under vmap (as torch's
    vectorize=True): a batch of one-hot vectors, one per output element (a VJP each) or per input element (a JVP
    each). Under teachgrad's vmap, func runs once on the inputs expanded to that batch."""
    sizes = [o.numel() for o in (outputs if reverse else inputs)]
    like = (outputs if reverse else inputs)[0]
    eye = torch.eye(sum(sizes), dtype=like.dtype, device=like.device)
    flat_func = lambda *xs: tuple(o.reshape(-1) for o in _as_tuple(func(*xs), "outputs")[1])   # noqa: E731

    def one(onehot):
        pieces = onehot.split(sizes)
        if reverse:
            return tg_func.vjp(flat_func, *inputs)[1](tuple(p.to(o.dtype) for p, o in zip(pieces, outputs)))
        return tg_func.jvp(flat_func, inputs, tuple(p.to(x.dtype).reshape(x.shape) for p, x in zip(pieces, inputs)))[1]
    if not sum(sizes):                                   # nothing to map over: the blocks are empty
        return tuple(tuple(Variable._make(torch.zeros(o.shape + x.shape, dtype=o.dtype, device=o.device))
                           for x in inputs) for o in outputs)
    stacked = tg_func.vmap(one)(Variable._make(eye))     # reverse: per input (rows, x); forward: per output
    blocks = []
    for i, o in enumerate(outputs):
        row = []
        for j, x in enumerate(inputs):
            if reverse:                                  # rows of output i: d o / d x, o's elements first
                start = sum(sizes[:i])
                block = stacked[j][start:start + sizes[i]]
            else:                                        # columns for input j: d o / d x, x's elements first
                start = sum(sizes[:j])
                block = stacked[i][start:start + sizes[j]].movedim(0, -1)
            row.append(block.reshape(o.shape + x.shape))
        blocks.append(tuple(row))
    return tuple(blocks)


# --- second derivatives -----------------------------------------------------------------------

def hessian(func: Callable[..., TensorLike], inputs: TensorOrTensors, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Jacobian:
    """The Jacobian of the gradient of a scalar function: one block per pair of inputs."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*xs):
        out = func(*xs)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple or not isinstance(out, (Variable, torch.Tensor)):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(Variable.requires_grad_(x, True) for x in xs)   # (Variable's: under vmap too)
        jac = jacobian(scalar_func, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _untuple(result, (inputs_tuple, inputs_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs_tuple, outputs


def vhp(func: Callable[..., TensorLike], inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Variable, Variables]:
    """(func(inputs), vᵀ H): the gradient of (∇f · v), two backward passes."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _default_v(v, inputs, inputs_tuple, create_graph, "vhp", "the input to the user-provided function is")
        outputs_tuple, outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    result = _last_backward(jac, inputs, v, inputs, create_graph, strict, "double_back")
    return _results(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def hvp(func: Callable[..., TensorLike], inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Variable, Variables]:
    """(func(inputs), H v), by the double-backward trick on vᵀ H (H v = (vᵀ H)ᵀ needs no symmetry)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _default_v(v, inputs, inputs_tuple, create_graph, "hvp", "the input to the user-provided function is")
        outputs_tuple, outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        u = tuple(Variable(torch.zeros_like(x.data), requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, u, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    result = _last_backward(double_back, u, v, inputs, create_graph, strict, "double_back_trick")
    return _results(outputs, outputs_tuple, result, inputs_tuple, create_graph)
