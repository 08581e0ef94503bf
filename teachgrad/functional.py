"""Module-level functions mirroring torch's: `tg.exp(x)` is `x.exp()`, `tg.matmul(a, b)` is `a @ b`."""
import torch

from . import ops
from .variable import Variable
# issue 22: the new ops, with torch's signatures (written in teachgrad/functional_ops.py)
from .functional_ops import (bmm, cumprod, cumsum, einsum, erf, expm1, flip, gather, index_select, log10,  # noqa: F401
                             log1p, log2, logsumexp, masked_select, movedim, repeat_interleave, roll, rsqrt, scatter,
                             scatter_add, sort, std, tile, topk, tril, triu, var)


def _variable(x):
    return x if isinstance(x, Variable) else Variable(x)


def add(a, b, alpha=1):
    return _variable(a).add(b, alpha=alpha)


def sub(a, b, alpha=1):
    return _variable(a).sub(b, alpha=alpha)


def mul(a, b):
    return _variable(a) * b


def div(a, b):
    return _variable(a) / b


def pow(a, exponent):
    if not isinstance(a, (Variable, torch.Tensor)):
        return exponent.__rpow__(a)
    return _variable(a).pow(exponent)


def matmul(a, b):
    return ops.matmul(a, b)


def mm(a, b):
    return _variable(a).mm(b)


def exp(x):
    return _variable(x).exp()


def log(x):
    return _variable(x).log()


def sqrt(x):
    return _variable(x).sqrt()


def sin(x):
    return _variable(x).sin()


def cos(x):
    return _variable(x).cos()


def tanh(x):
    return _variable(x).tanh()


def sigmoid(x):
    return _variable(x).sigmoid()


def relu(x):
    return _variable(x).relu()


def abs(x):
    return _variable(x).abs()


def neg(x):
    return -_variable(x)


def square(x):
    return _variable(x).square()


def clamp(x, min=None, max=None):
    return _variable(x).clamp(min, max)


def maximum(a, b):
    return ops.Maximum.apply(a, b)


def minimum(a, b):
    return ops.Minimum.apply(a, b)


def where(condition, a, b):
    condition = condition.data if isinstance(condition, Variable) else condition
    return ops.Where.apply(condition, a, b)


def sum(x, dim=None, keepdim=False, *, keepdims=None):
    return _variable(x).sum(dim, keepdim, keepdims=keepdims)


def mean(x, dim=None, keepdim=False, *, keepdims=None):
    return _variable(x).mean(dim, keepdim, keepdims=keepdims)


def max(x, dim=None, keepdim=False, *, keepdims=None):
    return _variable(x).max(dim, keepdim, keepdims=keepdims)


def min(x, dim=None, keepdim=False, *, keepdims=None):
    return _variable(x).min(dim, keepdim, keepdims=keepdims)


def t(x):
    return _variable(x).t()


def transpose(x, dim0, dim1):
    return _variable(x).transpose(dim0, dim1)


def reshape(x, shape):
    return _variable(x).reshape(shape)


def squeeze(x, dim=None):
    return _variable(x).squeeze(dim)


def unsqueeze(x, dim):
    return _variable(x).unsqueeze(dim)


def flatten(x, start_dim=0, end_dim=-1):
    return _variable(x).flatten(start_dim, end_dim)


def dot(a, b):
    return _variable(a).dot(b)


def norm(x, p="fro", dim=None, keepdim=False):
    return _variable(x).norm(p, dim, keepdim)


def equal(a, b):
    return _variable(a).equal(b)


def chunk(x, chunks, dim=0):
    return _variable(x).chunk(chunks, dim)


def split(x, split_size, dim=0):
    return _variable(x).split(split_size, dim)


def masked_fill(x, mask, value):
    return _variable(x).masked_fill(mask, value)


def eq(a, b):
    return _variable(a) == b


def cat(tensors, dim=0):
    """Join tensors along dimension `dim`."""
    return ops.Cat.apply(dim, *tensors)


def stack(tensors, dim=0):
    """Join tensors along a new dimension `dim`."""
    return ops.Stack.apply(dim, *tensors)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether two tensors (Variables or torch tensors) are equal up to tolerances."""
    a = a.data if isinstance(a, Variable) else a
    b = b.data if isinstance(b, Variable) else b
    return torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def is_tensor(x):
    return isinstance(x, Variable)
