"""Reductions: sum, mean, max, min. Backward spreads the gradient back over the reduced elements."""
import torch

from ..function import Function


def _restore_dims(grad, dims, ndim, keepdim):
    """Put back the reduced dimensions as size 1, so `grad` broadcasts against the input."""
    if keepdim:
        return grad
    for d in sorted(d % ndim for d in dims):
        grad = grad.unsqueeze(d)
    return grad


def _dims(dim):
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


class Sum(Function):
    """Sum of all elements: each element gets the whole gradient."""

    node_name = "SumBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        return a.sum()

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape)

    @staticmethod
    def jvp(ctx, ta):
        return ta.sum()


class SumDim(Function):
    """Sum over `dim`: the gradient is copied along the summed dimensions."""

    node_name = "SumBackward1"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, _dims(dim), keepdim
        return a.sum(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad):
        grad = _restore_dims(grad, ctx.dims, len(ctx.shape), ctx.keepdim)
        return grad.expand(ctx.shape), None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _keepdim):
        return ta.sum(ctx.dims, keepdim=ctx.keepdim)


class Mean(Function):
    """Mean of all elements: each element gets gradient / count."""

    node_name = "MeanBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.shape, ctx.count = a.shape, a.numel()
        return a.mean()

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape) / ctx.count

    @staticmethod
    def jvp(ctx, ta):
        return ta.mean()


class MeanDim(Function):
    """Mean over `dim`: the gradient divided by the count, copied along those dimensions."""

    node_name = "MeanBackward1"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, _dims(dim), keepdim
        result = a.mean(dim, keepdim=keepdim)
        ctx.count = a.numel() // max(result.numel(), 1)
        return result

    @staticmethod
    def backward(ctx, grad):
        grad = _restore_dims(grad, ctx.dims, len(ctx.shape), ctx.keepdim)
        return grad.expand(ctx.shape) / ctx.count, None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _keepdim):
        return ta.mean(ctx.dims, keepdim=ctx.keepdim)


class _Extreme(Function):
    """max/min of all elements: the gradient is shared evenly among the elements that reach it."""

    check_gradients = False
    saved_names = ("self", "result")
    reduce = None

    @classmethod
    def forward(cls, ctx, a):
        result = cls.reduce(a)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        hits = a == result
        return grad * hits / hits.sum()

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        hits = a == ctx._result
        return (ta * hits).sum() / hits.sum()


class Max(_Extreme):
    node_name = "MaxBackward1"
    reduce = staticmethod(torch.max)


class Min(_Extreme):
    node_name = "MinBackward1"
    reduce = staticmethod(torch.min)


class _ExtremeDim(Function):
    """max/min along `dim`: returns (values, indices); the gradient goes to the chosen index."""

    check_gradients = False
    reduce = None

    @classmethod
    def forward(cls, ctx, a, dim, keepdim):
        values, indices = cls.reduce(a, dim, keepdim=keepdim)
        ctx.mark_non_differentiable(indices)
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.chosen = torch.zeros_like(a).scatter_(dim, indices if keepdim else indices.unsqueeze(dim), 1)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        grad = _restore_dims(grad, (ctx.dim,), ctx.chosen.dim(), ctx.keepdim)
        return grad * ctx.chosen, None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _keepdim):
        return (ta * ctx.chosen).sum(ctx.dim, keepdim=ctx.keepdim), None


class MaxDim(_ExtremeDim):
    node_name = "MaxBackward0"
    reduce = staticmethod(torch.max)


class MinDim(_ExtremeDim):
    node_name = "MinBackward0"
    reduce = staticmethod(torch.min)
