"""Variance, standard deviation and logsumexp: reductions whose gradient depends on every element;
and histogram, which torch gives no derivative.

Formulas from torch's tools/autograd/derivatives.yaml (var_backward, std_backward, logsumexp_backward
in torch/csrc/autograd/FunctionsManual.cpp).
"""
import math

import torch

from ..core.function import Function
from ..rules.broadcast import conj
from .reduction import _restore_dims


def _dims_or_none(dim):
    """`dim` as a tuple of ints, or None for "all of them"."""
    if dim is None:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


def _two_over(dof):
    """2 / dof as C++ divides floats: 2 / 0 is inf (Python would raise)."""
    return 2.0 / dof if dof != 0 else math.inf


def var_backward(grad, a, dims, correction, keepdim):
    """torch's var_backward: 2 / (n - correction) * grad * (a - mean(a)), n the count reduced over.

    Over all elements with n <= correction torch gives inf, or nan where a equals its mean.
    """
    if dims is None or a.dim() == 0:
        dof = a.numel() - correction
        if dof <= 0:
            a_data = a.data
            return grad * torch.where(a_data == a_data.mean(), math.nan, math.inf)
        return _two_over(dof) * grad * (a - a.mean())
    if not keepdim and a.dim() > 1:
        grad = _restore_dims(grad, dims, a.dim(), keepdim)
    count = 1
    for d in dims:
        count *= a.shape[d]
    return _two_over(count - correction) * grad * (a - a.mean(dims, keepdim=True))


def _var_tangent(ta, a, dims, correction, keepdim):
    """The tangent of var: var_backward with the tangent as grad, summed over the reduced dims. For a complex a,
    var = mean |a - mean|² is real: its tangent is Re(conj(gradient) tangent), so a enters conjugated."""
    per_element = var_backward(ta, conj(a), dims, correction, True)
    if per_element.is_complex():
        per_element = per_element.real
    return per_element.sum() if dims is None else per_element.sum(dims, keepdim=keepdim)


class Var(Function, node="VarBackward0", saves=("self",)):
    """a.var(dim, correction=c): sum((a - mean)²) / (n - c)."""

    @staticmethod
    def forward(ctx, a, dim, correction, keepdim):
        ctx.dims, ctx.correction, ctx.keepdim = _dims_or_none(dim), correction, keepdim
        ctx.save_for_backward(a)
        return torch.var(a, dim, correction=correction, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return var_backward(grad, a, ctx.dims, ctx.correction, ctx.keepdim), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return _var_tangent(ta, ctx._primals[0], ctx.dims, ctx.correction, ctx.keepdim)


class Std(Function, node="StdBackward0", saves=("self", "result")):
    """a.std(...) = sqrt(var): the gradient is var's times 1 / (2 std), and 0 where std is 0."""

    @staticmethod
    def forward(ctx, a, dim, correction, keepdim):
        ctx.dims, ctx.correction, ctx.keepdim = _dims_or_none(dim), correction, keepdim
        result = torch.std(a, dim, correction=correction, keepdim=keepdim)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        grad_var = (grad / (result * 2)).where(result != 0, 0.0)
        return var_backward(grad_var, a, ctx.dims, ctx.correction, ctx.keepdim), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        tangent = _var_tangent(ta, ctx._primals[0], ctx.dims, ctx.correction, ctx.keepdim)
        return tangent / (2 * ctx._result)


class Logsumexp(Function, node="LogsumexpBackward0", saves=("self", "result"), batching=("along", 1)):
    """log(sum(exp(a))) along dim: d/da = exp(a - result), the softmax of a."""

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.dims, ctx.keepdim = _dims_or_none(dim), keepdim
        result = torch.logsumexp(a, dim, keepdim=keepdim)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        grad = _restore_dims(grad, ctx.dims, a.dim(), ctx.keepdim)
        result = _restore_dims(result, ctx.dims, a.dim(), ctx.keepdim)
        return grad * conj((a - result).exp()), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a, result = ctx._primals[0], _restore_dims(ctx._result, ctx.dims, ctx._primals[0].dim(), ctx.keepdim)
        weights = (a - result).exp()   # softmax(a): they sum to 1, and to 0 (so 0 / 0 = nan, as torch's) when empty
        return (ta * weights).sum(ctx.dims, keepdim=ctx.keepdim) / weights.sum(ctx.dims, keepdim=ctx.keepdim)


class Histogram(Function, node="NotImplemented", qualified_name="torch::autograd::NotImplemented"):
    """torch.histogram: the count (or density) in each bin, and the bins' edges.

    torch has no derivative for it, yet its outputs require grad when the input does: they hang off a
    node named NotImplemented whose backward raises. teachgrad records the same.
    """

    @staticmethod
    def forward(ctx, a, bins, range, weight, density):
        given_range = {} if range is None else {"range": range}   # torch takes none with bins as a tensor
        hist, bin_edges = torch.histogram(a, bins, **given_range, weight=weight, density=density)
        return hist, bin_edges

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::histogram is not implemented")
