"""Writes: the ops behind `zero_`, `fill_`, `copy_` and `index_put_`, in their out-of-place form.

An in-place op records the node of its out-of-place twin (see `write_in_place` in teachgrad/ops/in_place.py). What was
overwritten gets no gradient; what was written gets the gradient of the places it landed in.
"""
import torch

from ..core.function import Function
from .shape import plain_index, python_index
from . import aten


class Zero(Function, node="ZeroBackward0"):
    """x.zero_(): every element overwritten, so none of the old values gets a gradient."""

    @staticmethod
    def forward(ctx, a):
        return torch.zeros_like(a)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad)

    @staticmethod
    def jvp(ctx, ta):
        return torch.zeros_like(ta)


class Fill(Function, node="FillBackward2"):
    """x.fill_(number): like zero_, with another number."""

    @staticmethod
    def forward(ctx, a, value):
        return torch.full_like(a, value)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), None

    @staticmethod
    def jvp(ctx, ta, _value):
        return torch.zeros_like(ta)


class FillTensor(Function, node="FillBackward3"):
    """x.fill_(t) with a 0-dim tensor t: every element is t, so t's gradient is the sum of all."""

    @staticmethod
    def forward(ctx, a, value):
        return a.new_empty(a.shape).fill_(value)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), grad.sum()

    @staticmethod
    def jvp(ctx, ta, tvalue):
        return tvalue.expand(ta.shape).clone()


class Copy(Function, node="CopyBackwards", qualified_name="torch::autograd::CopyBackwards"):
    """x.copy_(src): src (broadcast, cast to x's dtype) replaces x; its gradient flows back to src."""

    @staticmethod
    def forward(ctx, a, src):
        ctx.src_dtype, ctx.src_device = src.dtype, src.device
        return torch.empty_like(a).copy_(src)

    @staticmethod
    def backward(ctx, grad):
        grad_a = _zeros(grad) if ctx.needs_input_grad[0] else None
        grad_src = grad.to(dtype=ctx.src_dtype, device=ctx.src_device) if ctx.needs_input_grad[1] else None
        return grad_a, grad_src   # (a broadcast src's gradient is summed back by the engine, as torch's)

    @staticmethod
    def jvp(ctx, ta, tsrc):
        return torch.empty_like(ta).copy_(tsrc)


class IndexPut(Function, node="IndexPutBackward0", saves=("indices[]",)):
    """x.index_put_(indices, values): values land at the indexed places, which lose their old gradient.

    `indices` holds one index tensor per dimension it indexes (None for a dimension taken whole).
    """

    @staticmethod
    def forward(ctx, a, indices, values, accumulate):
        ctx.accumulate = accumulate
        ctx.save_for_backward(*indices)
        return aten.index_put_(a.clone(), list(indices), values, accumulate)

    @staticmethod
    def backward(ctx, grad):
        indices = tuple(plain_index(i) for i in ctx.saved_tensors)
        grad_self = None
        if ctx.needs_input_grad[0]:
            grad_self = grad if ctx.accumulate else grad.where(_kept(grad, indices), 0.0)
        grad_values = grad[python_index(indices)] if ctx.needs_input_grad[2] else None
        return grad_self, None, grad_values, None

    @staticmethod
    def jvp(ctx, ta, _indices, tvalues, _accumulate):
        indices = ctx._primals[1]
        return aten.index_put_(ta.clone(), list(indices), tvalues, ctx.accumulate)


def _zeros(grad):
    """The gradient of values that were overwritten: zeros (never `grad * 0`, which turns inf into nan)."""
    return grad.new_zeros(grad.shape)


def _kept(grad, indices):
    """True where index_put_ left the old values alone, False where it wrote."""
    data = getattr(grad, "data", grad)
    kept = torch.ones(data.shape, dtype=torch.bool, device=data.device)
    return aten.index_put_(kept, list(indices), kept.new_zeros(()), False)
