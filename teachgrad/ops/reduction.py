"""Reductions: sum, mean, max, min. Backward spreads the gradient back over the reduced elements."""
import torch

from ..core.function import Function


def _restore_dims(grad, dims, ndim, keepdim):
    """Put back the reduced dimensions as size 1, so `grad` broadcasts against the input."""
    if keepdim or ndim == 0:
        return grad
    for d in sorted(d % ndim for d in dims):
        grad = grad.unsqueeze(d)
    return grad


def _dims(dim):
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


class Sum(Function, node="SumBackward0"):
    """Sum of all elements: each element gets the whole gradient."""

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


class SumDim(Function, node="SumBackward1", batching=("along", 1)):
    """Sum over `dim`: the gradient is copied along the summed dimensions."""

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


class Mean(Function, node="MeanBackward0"):
    """Mean of all elements: each element gets gradient / count."""

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


class MeanDim(Function, node="MeanBackward1", batching=("along", 1)):
    """Mean over `dim`: the gradient divided by the count, copied along those dimensions."""

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


class _Extreme(Function, saves=("self", "result")):
    """max/min (and median, teachgrad/ops/selection.py) of all elements: the gradient is shared evenly among the
    elements that reach it.

    Those elements are the ones equal to the result, or the NaNs when the result is NaN
    (torch's evenly_distribute_backward); the others get exactly 0, whatever the gradient.
    """

    reduce = None

    @classmethod
    def forward(cls, ctx, a):
        result = cls.reduce(a)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        a, result = a.data, result.data   # only where they are equal matters: plain tensors
        hits = (a == result) | (a.isnan() & result.isnan())
        return (grad / hits.sum()).expand(a.shape).where(hits, 0.0)

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        hits = a == ctx._result
        return (ta * hits).sum() / hits.sum()


class Max(_Extreme, node="MaxBackward1"):
    reduce = staticmethod(torch.max)


class Min(_Extreme, node="MinBackward1"):
    reduce = staticmethod(torch.min)


class _ExtremeDim(Function, saves=("indices",)):
    """max/min along `dim`: returns (values, indices); the gradient goes to the chosen index."""

    reduce = None

    @classmethod
    def forward(cls, ctx, a, dim, keepdim):
        values, indices = cls.reduce(a, dim, keepdim=keepdim)
        ctx.mark_non_differentiable(indices)
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, dim, keepdim
        ctx.save_for_backward(indices)   # saved, so it is freed with the graph, as torch's
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        indices = indices.data
        if not ctx.keepdim and len(ctx.shape):
            indices = indices.unsqueeze(ctx.dim)
        chosen = torch.zeros(ctx.shape, dtype=torch.bool, device=indices.device).scatter_(ctx.dim, indices, True)
        grad = _restore_dims(grad, (ctx.dim,), len(ctx.shape), ctx.keepdim)
        return grad.expand(ctx.shape).where(chosen, 0.0), None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _keepdim):
        indices = ctx._result[1]   # the tangent of each value is the tangent at its index
        picked = ta.gather(ctx.dim, indices if ctx.keepdim or not len(ctx.shape) else indices.unsqueeze(ctx.dim))
        return (picked if ctx.keepdim or not len(ctx.shape) else picked.squeeze(ctx.dim)), None


class MaxDim(_ExtremeDim, node="MaxBackward0", batching=("along", 1)):
    reduce = staticmethod(torch.max)


class MinDim(_ExtremeDim, node="MinBackward0", batching=("along", 1)):
    reduce = staticmethod(torch.min)


class Norm(Function, node="LinalgVectorNormBackward0", saves=("self", "result")):
    """The p-norm (sum |a|^p)^(1/p), of all elements or along `dim`; for p = inf the largest |a|, for -inf the
    smallest.

    d/da = a |a|^(p-2) / norm^(p-1): a / norm for p = 2, sign(a) for p = 1; 0 where the norm is 0, and for p < 2
    0 at an element that is 0 (written sign(a) |a|^(p-1), as torch's branches, so no 0 · inf). For p = inf
    and -inf, torch spreads the gradient evenly over the elements whose |a| is the norm (ties share it, and a nan
    counts as one), each times sign(a).
    """

    @staticmethod
    def forward(ctx, a, p, dim, keepdim):
        result = torch.linalg.vector_norm(a, p, dim, keepdim)
        ctx.p, ctx.dims, ctx.keepdim = p, (None if dim is None else _dims(dim)), keepdim
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, norm = ctx.saved_tensors
        if ctx.dims is not None:
            grad = _restore_dims(grad, ctx.dims, a.dim(), ctx.keepdim)
            norm = _restore_dims(norm, ctx.dims, a.dim(), ctx.keepdim)
        p, zero = ctx.p, norm.data == 0
        if p == 0:   # a count of nonzeros: flat, and torch sends no gradient at all
            return None, None, None, None
        if p == 1:
            return a.sign() * grad, None, None, None
        if p == 2:
            return grad * (a / norm).where(~zero, 0.0), None, None, None   # in torch's order, so its bits
        if abs(p) == float("inf"):   # the elements that are the max (inf) or min (-inf) of |a|, or nan
            hits = _norm_hits(a.data, norm.data)
            count = hits.sum(_reduced(ctx.dims, a.dim()), keepdim=True)
            return a.sign() * (grad / count * hits), None, None, None
        if p < 1:   # (torch's branch: no division by the norm, which may be 0)
            return _signed_power(a, p) * (grad * norm.pow(1 - p)), None, None, None
        if p < 2:
            return _signed_power(a, p) * (grad / norm.pow(p - 1)).where(~zero, 0.0), None, None, None
        return a * a.abs().pow(p - 2) * (grad / norm.pow(p - 1)).where(~zero, 0.0), None, None, None

    @staticmethod
    def jvp(ctx, ta, _p, _dim, _keepdim):
        """The tangent of the norm (torch's linalg_vector_norm jvp): sum(a |a|^(p-2) ta) / norm^(p-1), 0 where
        the norm is 0; sum(sign(a) ta) for p = 1; for inf and -inf, the mean of sign(a) ta over the hits."""
        a, p, result = ctx._primals[0], ctx.p, ctx._result
        if a.is_complex():
            raise NotImplementedError("teachgrad's forward mode (jvp) of norm does not take complex tensors; its "
                                      "backward does (torch's convention)")
        dims, keepdim = ctx.dims, ctx.keepdim
        norm = _restore_dims(result, dims, a.dim(), keepdim) if dims is not None else result
        def summed(x):
            return x.sum(_reduced(dims, a.dim()), keepdim=keepdim)
        if p == 0:
            return torch.zeros_like(result)
        if p == 1:
            return summed(a.sgn() * ta)
        if abs(p) == float("inf"):
            hits = _norm_hits(a, norm, nan_only_where_the_norm_is_nan=True).to(result.dtype)
            return summed(a.sgn() * ta * hits) / summed(hits)
        if p == 2:
            return (summed(a * ta) / result).where(result != 0, 0.0)
        if p < 2:
            return (summed(_signed_power(a, p) * ta) / result.pow(p - 1)).where(result != 0, 0.0)
        return (summed(a.abs().pow(p - 2) * a * ta) / result.pow(p - 1)).where(result != 0, 0.0)


def _signed_power(a, p):
    """sign(a) |a|^(p-1), 0 where a is 0: a |a|^(p-2) written so that p < 2 makes no 0 · inf at a zero element."""
    return (a.sign() * a.abs().pow(p - 1)).where(a.data != 0, 0.0)


def _reduced(dims, ndim):
    """The reduced dimensions: `dims`, or every dimension for the norm of all elements."""
    return tuple(range(ndim)) if dims is None else dims


def _norm_hits(a, norm, nan_only_where_the_norm_is_nan=False):
    """Where |a| is the inf (or -inf) norm: the elements its derivative goes to. A nan element counts as one too
    (for the tangent, only where the norm is nan as well, as in torch's formulas)."""
    nan = a.isnan() & norm.isnan() if nan_only_where_the_norm_is_nan else a.isnan()
    return (a.abs() == norm) | nan


class NormDim(Norm, node="NormBackward1"):
    """The p-norm along `dim` as torch's own kernels compute it (at::norm, as in pairwise_distance): torch records it
    under a name of its own; the formula is vector_norm's."""
