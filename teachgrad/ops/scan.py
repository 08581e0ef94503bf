"""Running sums and products (cumsum, cumprod, logcumsumexp) and the ops that reorder values (sort, topk).

Formulas from torch's derivatives.yaml: cumsum_backward (a reversed cumsum), cumprod_backward
(with its care for zeros), value_selecting_reduction_backward (sort, topk: the gradient goes back to
the position each value came from; the indices get none), logcumsumexp_backward (a reversed
logcumsumexp, in log space) and its jvp.
"""
import torch

from ..core.function import Function
from ..rules.broadcast import conj
from .shape import Cat


def reversed_cumsum(x, dim):
    """Sums from the end: out[i] = x[i] + x[i+1] + ... along dim."""
    return x.flip(dim).cumsum(dim).flip(dim)


class Cumsum(Function, node="CumsumBackward0", batching=("along", 1)):
    """a.cumsum(dim): out[i] = a[0] + ... + a[i]. Each a[k] reaches every out[i] with i >= k."""

    @staticmethod
    def forward(ctx, a, dim, dtype):
        ctx.dim = dim
        return a.cumsum(dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        if grad.numel() <= 1 or grad.shape[ctx.dim] == 1:
            return grad, None, None
        return reversed_cumsum(grad, ctx.dim), None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _dtype):
        return ta.cumsum(ctx.dim, dtype=ctx._primals[2])


def _without(a, dim, k):
    """a with its k-th slice along dim replaced by ones: the product leaving a[k] out."""
    position = torch.arange(a.shape[dim], device=a.device).view([-1] + [1] * (a.dim() - 1 - dim))
    return a.where(position != k, 1.0)


class Cumprod(Function, node="CumprodBackward0", saves=("self", "result"), batching=("along", 1)):
    """a.cumprod(dim): out[i] = a[0] * ... * a[i].

    d out[i] / d a[k] = product of a[j], j <= i, j != k (for i >= k). Without zeros that is out[i] / a[k],
    so the gradient is a reversed cumsum of grad * out, divided by a. With zeros in a, the products
    leaving each a[k] out are formed one k at a time (exact, if slower; torch has a cleverer O(n) way).
    """

    @staticmethod
    def forward(ctx, a, dim, dtype):
        ctx.dim = dim % max(a.dim(), 1)
        result = a.cumprod(dim, dtype=dtype)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        a, result = conj(a), conj(result)   # (a complex input's: torch's convention; a real one is itself)
        dim = ctx.dim
        if a.numel() <= 1 or a.shape[dim] == 1:
            return grad, None, None
        if a.device.type == "meta" or not bool((a.data == 0).any()):   # (meta tensors have shapes, no values)
            return reversed_cumsum(grad * result, dim) / a, None, None
        slices = []
        for k in range(a.shape[dim]):
            picked = grad * _without(a, dim, k).cumprod(dim)
            slices.append(picked.narrow(dim, k, a.shape[dim] - k).sum(dim, keepdim=True))
        return _cat(slices, dim), None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _dtype):
        a, dim = ctx._primals[0], ctx.dim
        if a.numel() <= 1 or a.shape[dim] == 1:
            return ta.clone()
        if not bool((a == 0).any()):
            return ctx._result * (ta / a).cumsum(dim)
        total = torch.zeros_like(ctx._result)
        size = a.shape[dim]
        for k in range(size):
            after = (torch.arange(size, device=a.device) >= k).view([-1] + [1] * (a.dim() - 1 - dim))
            total = total + (ta.narrow(dim, k, 1) * _without(a, dim, k).cumprod(dim)).where(after, 0.0)
        return total


def _cat(pieces, dim):
    if all(isinstance(p, torch.Tensor) for p in pieces):
        return torch.cat(pieces, dim)
    return Cat.apply(dim, *pieces)


class _ValueSelecting(Function, saves=("indices",)):
    """Base of sort and topk: (values, indices); a value's gradient goes back to where it was taken from."""

    @classmethod
    def forward(cls, ctx, a, *args):
        values, indices = cls.select(a, *args)
        ctx.mark_non_differentiable(indices)
        ctx.shape, ctx.dim = a.shape, cls.dim_of(*args) % max(a.dim(), 1)
        ctx.save_for_backward(indices)
        return values, indices

    @classmethod
    def backward(cls, ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        indices = indices.data
        if len(ctx.shape) == 0:
            return (grad,) + (None,) * cls.extra_args
        return (grad.new_zeros(ctx.shape).scatter(ctx.dim, indices, grad),) + (None,) * cls.extra_args

    @classmethod
    def jvp(cls, ctx, ta, *_):
        indices = ctx._result[1]
        if ta.dim() == 0:
            return ta.clone(), None
        return ta.gather(ctx.dim, indices), None


class Sort(_ValueSelecting, node="SortBackward0", batching=("along", 1)):
    """a.sort(dim, descending, stable): the values in order, and where each came from."""

    extra_args = 3
    select = staticmethod(lambda a, dim, descending, stable: torch.sort(a, dim=dim, descending=descending, stable=stable))
    dim_of = staticmethod(lambda dim, descending, stable: dim)


class Topk(_ValueSelecting, node="TopkBackward0", batching=("along", 2)):
    """a.topk(k, dim, largest, sorted): the k largest (or smallest) values along dim, and their indices."""

    extra_args = 4
    select = staticmethod(lambda a, k, dim, largest, sorted: torch.topk(a, k, dim, largest, sorted))
    dim_of = staticmethod(lambda k, dim, largest, sorted: dim)


class SortStable(Sort, node="SortBackward1", batching=("along", 1)):
    """a.sort(stable=..., ...): torch records the `stable` overload under its own name."""



def _logcumsumexp(x, dim):
    """logcumsumexp of a plain tensor, or (under create_graph) of a Variable, recorded."""
    return x.logcumsumexp(dim) if isinstance(x, torch.Tensor) else Logcumsumexp.apply(x, dim)


def _reversed_logcumsumexp(x, dim):
    """log(exp(x[i]) + exp(x[i+1]) + ...) along dim: logcumsumexp from the end."""
    return _logcumsumexp(x.flip(dim), dim).flip(dim)


def _log_parts(g):
    """(log g where g > 0, log -g where g < 0), the lowest finite number elsewhere (standing for log 0, as torch:
    -inf would make nan of the second derivative)."""
    lowest = torch.finfo(g.dtype).min
    log_abs = g.abs().log()
    return log_abs.where(g > 0, lowest), log_abs.where(g < 0, lowest)


class Logcumsumexp(Function, node="LogcumsumexpBackward0", saves=("self", "result"), batching=("along", 1)):
    """a.logcumsumexp(dim): out[i] = log(exp(a[0]) + ... + exp(a[i])).

    d out[i] / d a[k] = exp(a[k] - out[i]) for k <= i, so a[k]'s gradient is exp(a[k]) times a reversed
    cumsum of grad * exp(-out). That is formed in log space, as torch does, so nothing overflows: the
    positive and the negative parts of grad each go through a reversed logcumsumexp of log|grad| - out.
    """

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim % max(a.dim(), 1)
        result = a.logcumsumexp(dim)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        dim = ctx.dim
        if a.numel() == 0 or a.dim() == 0:   # (a single element: out = a)
            return grad, None
        log_positive, log_negative = _log_parts(grad)
        positive = (_reversed_logcumsumexp(log_positive - result, dim) + a).exp()
        negative = (_reversed_logcumsumexp(log_negative - result, dim) + a).exp()
        return positive - negative, None

    @staticmethod
    def jvp(ctx, ta, _dim):
        """torch's formula: cumsum(ta exp(a - m)) / (cumsum(exp(a - m)) + 1e-13), m the largest a along dim (the
        1e-13 keeps an element far below the largest from dividing by zero: its tangent then comes out near 0)."""
        a, dim = ctx._primals[0], ctx.dim
        if a.numel() == 0:
            return ta.clone()
        scaled = (a - a.amax(dim, keepdim=True)).exp()
        return (scaled * ta).cumsum(dim) / (scaled.cumsum(dim) + 1e-13)
