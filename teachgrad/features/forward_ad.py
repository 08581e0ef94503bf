"""Forward-mode AD: a tangent rides along with each value, as torch.autograd.forward_ad does it.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(x0, v)           # x0, with the direction v attached
        y = f(x)                                  # every op also computes its output's tangent
        y0, jvp = forward_ad.unpack_dual(y)       # jvp = J(x0) @ v, in the same single pass

Each op carries a `jvp(ctx, *tangents)` beside its forward and backward: the tangents of its inputs
in, the tangent of its output out. `Function.apply` calls it only while a dual level is open and
an input has a tangent; otherwise the only cost is the check `grad_mode.forward_level >= 0`. A user's
Function keeps what its jvp needs with `ctx.save_for_forward`, as in torch; a built-in's jvp reads
the forward's inputs and output as `ctx._primals` and `ctx._result`, as the formulas of torch's
derivatives.yaml read `self_p` and `result`.

A Variable keeps its tangent in the slot `_fw_grad` as `(level, tangent, shown)`: `shown` is the object
`unpack_dual` hands out for it (the one given to `make_dual`, as torch keeps it), made once and kept. A view with no tangent
of its own sees its base's tangent through the same view, and an in-place op writes the new
tangent into its base's tangent where it wrote the value.

Guarded by tests/test_forward_ad.py (every op's jvp against torch's, views, in-place, custom Functions'
jvp and save_for_forward), tests/test_func.py (jvp, jacfwd), tests/test_new_ops.py and tests/test_vmap_forward.py
(under vmap: make_dual of a batched tensor refused as torch refuses it, unpack_dual of a batched dual).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, TypeAlias

import torch

from .. import ops
from ..rules import grad_mode, torch_leaves, variable_class
from .batched_variable import BatchedVariable, levels_of
from ..rules.tangents import _no_tangents, _own_tangent, enter_dual_level, exit_dual_level, set_tangent, tangent_of

if TYPE_CHECKING:   # names for the hints only
    from ..core.variable import Variable
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]


class dual_level:
    """`with dual_level():` opens a level for dual tensors and closes it on the way out."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the value and its tangent (None when it has none)."""

    primal: object
    tangent: object


def make_dual(tensor: TensorLike, tangent: TensorLike, *, level: Optional[int] = None) -> Variable:
    """A new Variable aliasing `tensor`'s data, with `tangent` attached at the open level."""
    Variable = variable_class.Variable
    if level is None:
        level = grad_mode.forward_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first.")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != grad_mode.forward_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if isinstance(tensor, Variable):
        primal = tensor
    elif tensor.requires_grad:                      # an nn.Parameter: a leaf of teachgrad's graph, as in torch's
        primal = torch_leaves.as_variable(tensor)
    else:
        primal = Variable(tensor)
    if _own_tangent(primal) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level "
            f"{level} is not supported.")
    shown = tangent
    tangent = tangent.data if isinstance(tangent, Variable) else tangent
    if tangent.shape != primal.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(primal.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}.")
    if levels_of(primal) or levels_of(shown):       # (tg.func.jvp under vmap makes its batched duals itself)
        raise RuntimeError("Batching rule not implemented for aten::_make_dual; the fallback path doesn't work on "
                           "out= or view ops.")
    dual = ops.View.apply(primal, tuple(primal.shape))      # torch's make_dual is a view of the primal
    if not _same_layout(tangent, primal.data):   # torch copies such a tangent into the primal's layout
        tangent = torch.empty_strided(primal.shape, primal.stride(), dtype=tangent.dtype,
                                      device=tangent.device).copy_(tangent)
        shown = None
    set_tangent(dual, tangent, shown)
    return dual



def _same_layout(tangent, primal):
    """torch keeps the tangent it is given only if it lies in memory as the primal does: same sizes,
    strides, offset and storage size (autograd's has_same_meta)."""
    return (tangent.stride() == primal.stride() and tangent.storage_offset() == primal.storage_offset()
            and tangent.untyped_storage().nbytes() // tangent.element_size()
            == primal.untyped_storage().nbytes() // primal.element_size())


def unpack_dual(tensor: TensorLike, *, level: Optional[int] = None) -> UnpackedDualTensor:
    """(primal, tangent): a view of the value with no tangent, and the tangent (None outside a level)."""
    Variable = variable_class.Variable
    if level is None:
        level = grad_mode.forward_level
    if level < 0 or not isinstance(tensor, Variable):
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor)
    primal = view_without_tangent(ops.FwPrimal, tensor)
    if tangent is not None and levels_of(tensor):   # under vmap: the tangent batched as the dual
        return UnpackedDualTensor(primal, BatchedVariable.of(variable_class.Variable._make(tangent), levels_of(tensor)))
    return UnpackedDualTensor(primal, None if tangent is None else _shown_tangent(tensor, tangent))


def view_without_tangent(view_op, tensor):
    """`view_op` of a dual tensor: a view of its value, yet not a dual itself."""
    with _no_tangents():
        view = view_op.apply(tensor)
    set_tangent(view, None)
    return view


def _shown_tangent(variable, tangent):
    """The object unpack_dual gives for a tangent: the same one each time (the one make_dual was given)."""
    fw = variable._fw_grad
    if fw is None or fw[1] is not tangent:   # a view's tangent, read through its base's
        return variable_class.Variable._make(tangent)
    if fw[2] is None:
        variable._fw_grad = (fw[0], fw[1], variable_class.Variable._make(tangent))
    return variable._fw_grad[2]
