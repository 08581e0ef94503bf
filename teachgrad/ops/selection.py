"""Reductions that pick or skip elements: amax and amin (ties share the gradient), aminmax, the median, mode and
k-th value (the gradient goes to the element picked), running maxima and minima (cummax, cummin), sums that
skip nan (nansum), products (prod) and var_mean / std_mean. Formulas from torch's tools/autograd/derivatives.yaml
(scale_grad_by_count, evenly_distribute_backward, value_selecting_reduction_backward, prod_backward).

Guarded by tests/test_op_families.py (each op against torch) and tests/test_op_db.py (torch's own samples).
"""
import torch

from ..core.function import Function
from ..rules.broadcast import conj
from .reduction import _Extreme, _ExtremeDim, _restore_dims
from .statistics import var_backward


def _all_dims(dim, ndim):
    """amax's dim: an int, a sequence, or () / None for every dimension; as a tuple of non-negative dims."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(d % ndim for d in dims) if ndim else ()


class _AmaxAmin(Function, saves=("self", "result")):
    """The largest (smallest) element along dim: ties share the gradient evenly (torch's scale_grad_by_count)."""

    @classmethod
    def forward(cls, ctx, a, dim, keepdim):
        ctx.dims, ctx.keepdim = _all_dims(dim, a.dim()), keepdim
        result = cls.reduce(a, dim, keepdim)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        hits = (a == _restore_dims(result, ctx.dims, a.dim(), ctx.keepdim)).to(a.dtype)
        grad = _restore_dims(grad, ctx.dims, a.dim(), ctx.keepdim)
        return grad / hits.sum(ctx.dims, keepdim=True) * hits, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a = ctx._primals[0]
        hits = (a == _restore_dims(ctx._result, ctx.dims, a.dim(), ctx.keepdim)).to(a.dtype)
        return (ta * hits).sum(ctx.dims, keepdim=ctx.keepdim) / hits.sum(ctx.dims, keepdim=ctx.keepdim)


class Amax(_AmaxAmin, node="AmaxBackward0"):
    reduce = staticmethod(lambda a, dim, keepdim: torch.amax(a, dim, keepdim))


class Amin(_AmaxAmin, node="AminBackward0"):
    reduce = staticmethod(lambda a, dim, keepdim: torch.amin(a, dim, keepdim))


class Aminmax(Function, node="AminmaxBackward0", saves=("self", "min", "max")):
    """(amin, amax) in one pass: each output's gradient spread over its ties, the two added."""

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.dims, ctx.keepdim = _all_dims(dim, a.dim()), keepdim
        low, high = torch.aminmax(a, dim=dim, keepdim=keepdim)
        ctx.save_for_backward(a, low, high)
        return low, high

    @staticmethod
    def backward(ctx, grad_min, grad_max):
        a, low, high = ctx.saved_tensors
        total = None
        for grad, picked in ((grad_min, low), (grad_max, high)):
            if grad is None:
                continue
            hits = (a == _restore_dims(picked, ctx.dims, a.dim(), ctx.keepdim)).to(a.dtype)
            part = _restore_dims(grad, ctx.dims, a.dim(), ctx.keepdim) / hits.sum(ctx.dims, keepdim=True) * hits
            total = part if total is None else total + part
        return total, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a, (low, high) = ctx._primals[0], ctx._result
        tangents = []
        for picked in (low, high):
            hits = (a == _restore_dims(picked, ctx.dims, a.dim(), ctx.keepdim)).to(a.dtype)
            tangents.append((ta * hits).sum(ctx.dims, keepdim=ctx.keepdim) / hits.sum(ctx.dims, keepdim=ctx.keepdim))
        return tuple(tangents)


class Nansum(Function, node="NansumBackward0", saves=("self",)):
    """The sum of the elements that are not nan: each of them gets the gradient, a nan gets 0."""

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.dims, ctx.keepdim = _all_dims(dim, a.dim()), keepdim
        ctx.save_for_backward(a)
        return torch.nansum(a, dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        grad = _restore_dims(grad, ctx.dims, a.dim(), ctx.keepdim)
        return grad.expand(a.shape).masked_fill(a.data.isnan(), 0.0), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a = ctx._primals[0]
        return ta.masked_fill(a.isnan(), 0.0).sum(ctx.dims, keepdim=ctx.keepdim)


def prod_backward(grad, a, dim):
    """d prod / d a_i = the product of all the other elements, computed without dividing by a_i (so exact where
    elements are 0): the running product before i times the running product after it (torch's
    prod_safe_zeros_backward). `grad` has a's shape; dim None: over all elements."""
    if dim is None:
        return prod_backward(grad.reshape(-1), a.reshape(-1), 0).reshape(a.shape)
    if a.shape[dim] == 0 or a.dim() == 0:
        return grad.expand(a.shape) if a.dim() == 0 else grad.new_zeros(a.shape)
    ones = torch.ones_like(a.data.narrow(dim, 0, 1))
    before = torch.cat([ones, a.narrow(dim, 0, a.shape[dim] - 1)], dim).cumprod(dim)
    after = torch.cat([ones, a.flip(dim).narrow(dim, 0, a.shape[dim] - 1)], dim).cumprod(dim).flip(dim)
    return grad * before * after


class Prod(Function, node="ProdBackward0", saves=("self", "result")):
    """The product of all elements: d/da_i = the product of the others."""

    @staticmethod
    def forward(ctx, a):
        result = torch.prod(a)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, _ = ctx.saved_tensors
        return prod_backward(grad.expand(a.shape), conj(a), None)   # (conj: a complex a's, torch's convention)

    @staticmethod
    def jvp(ctx, ta):
        a = ctx._primals[0]
        return (ta * prod_backward(torch.ones_like(a), a, None)).sum()


class ProdDim(Function, node="ProdBackward1", saves=("self", "result"), batching=("along", 1)):
    """The product along `dim`: d/da_i = the product of the others in its row."""

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.dim, ctx.keepdim = dim % max(a.dim(), 1), keepdim
        result = torch.prod(a, dim, keepdim=keepdim)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, _ = ctx.saved_tensors
        if a.dim() == 0:
            return grad, None, None
        grad = _restore_dims(grad, (ctx.dim,), a.dim(), ctx.keepdim).expand(a.shape)
        return prod_backward(grad, conj(a), ctx.dim), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a = ctx._primals[0]
        if a.dim() == 0:
            return ta.clone()
        return (ta * prod_backward(torch.ones_like(a), a, ctx.dim)).sum(ctx.dim, keepdim=ctx.keepdim)


class VarMean(Function, node="VarMeanBackward0", saves=("self",)):
    """(var, mean) in one node: the gradient is var's plus mean's."""

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim):
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        ctx.save_for_backward(a)
        return torch.var_mean(a, dims, correction=correction, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        a, = ctx.saved_tensors
        return _var_mean_backward(ctx, a, grad_var, grad_mean, None), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a = ctx._primals[0]
        dims = tuple(range(a.dim())) if ctx.dims is None else ctx.dims
        var_t = var_backward(ta, a, ctx.dims, ctx.correction, True).sum(dims, keepdim=ctx.keepdim)
        return var_t, ta.mean(dims, keepdim=ctx.keepdim)


class StdMean(Function, node="StdMeanBackward0", saves=("self", "result0")):
    """(std, mean) in one node: the gradient is std's plus mean's."""

    @staticmethod
    def forward(ctx, a, dims, correction, keepdim):
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        std, mean = torch.std_mean(a, dims, correction=correction, keepdim=keepdim)
        ctx.save_for_backward(a, std)
        return std, mean

    @staticmethod
    def backward(ctx, grad_std, grad_mean):
        a, std = ctx.saved_tensors
        return _var_mean_backward(ctx, a, grad_std, grad_mean, std), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a, std = ctx._primals[0], ctx._result[0]
        dims = tuple(range(a.dim())) if ctx.dims is None else ctx.dims
        var_t = var_backward(ta, a, ctx.dims, ctx.correction, True).sum(dims, keepdim=ctx.keepdim)
        return var_t / (2 * std), ta.mean(dims, keepdim=ctx.keepdim)


def _var_mean_backward(ctx, a, grad_spread, grad_mean, std):
    """var's (or, given std, std's: grad / (2 std), 0 where std is 0) gradient plus mean's (grad / n, spread)."""
    total = None
    if grad_spread is not None:
        if std is not None:
            grad_spread = (grad_spread / (std * 2)).masked_fill(std.data == 0, 0.0)
        total = var_backward(grad_spread, a, ctx.dims, ctx.correction, ctx.keepdim)
        if ctx.dims is None and not ctx.keepdim:
            total = total.expand(a.shape)
    if grad_mean is not None:
        dims = tuple(range(a.dim())) if ctx.dims is None else ctx.dims
        count = 1
        for d in dims:
            count *= a.shape[d]
        part = (_restore_dims(grad_mean, dims, a.dim(), ctx.keepdim) / count).expand(a.shape)
        total = part if total is None else total + part
    return total


# --- the element picked: median, nanmedian, mode, kthvalue (along dim), cummax, cummin ---

class MedianDim(_ExtremeDim, node="MedianBackward1", batching=("along", 1)):
    reduce = staticmethod(torch.median)


class NanmedianDim(_ExtremeDim, node="NanmedianBackward1", batching=("along", 1)):
    reduce = staticmethod(torch.nanmedian)


class Mode(_ExtremeDim, node="ModeBackward0", batching=("along", 1)):
    reduce = staticmethod(torch.mode)


class Kthvalue(_ExtremeDim, node="KthvalueBackward0", batching=("along", 2)):
    """The k-th smallest along dim: as max along dim, the gradient goes to the element picked."""

    @staticmethod
    def forward(ctx, a, k, dim, keepdim):
        values, indices = torch.kthvalue(a, k, dim, keepdim)
        ctx.mark_non_differentiable(indices)
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, dim, keepdim
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        return (*_ExtremeDim.backward(ctx, grad, grad_indices), None)

    @staticmethod
    def jvp(ctx, ta, _k, dim, keepdim):
        return _ExtremeDim.jvp(ctx, ta, dim, keepdim)


class Median(_Extreme, node="MedianBackward0"):   # (the gradient shared among ties, as max's)
    reduce = staticmethod(torch.median)


class Nanmedian(_Extreme, node="NanmedianBackward0"):
    reduce = staticmethod(torch.nanmedian)


class _Cumulative(Function, saves=("indices",)):
    """cummax / cummin along dim: (values, indices); each value's gradient goes to the element it came from."""

    @classmethod
    def forward(cls, ctx, a, dim):
        values, indices = cls.reduce(a, dim)
        ctx.mark_non_differentiable(indices)
        ctx.dim = dim
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        indices = indices.data
        if grad.dim() == 0:
            return grad, None
        return torch.zeros_like(grad).scatter_add(ctx.dim, indices, grad), None

    @staticmethod
    def jvp(ctx, ta, _dim):
        indices = ctx._result[1]
        return (ta if ta.dim() == 0 else ta.gather(ctx.dim, indices)), None


class Cummax(_Cumulative, node="CummaxBackward0", batching=("along", 1)):
    reduce = staticmethod(torch.cummax)


class Cummin(_Cumulative, node="CumminBackward0", batching=("along", 1)):
    reduce = staticmethod(torch.cummin)
