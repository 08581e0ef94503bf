"""Module-level functions mirroring torch's: `tg.exp(x)` is `x.exp()`, `tg.matmul(a, b)` is `a @ b`.

The ops whose arguments need reading as torch reads them (`tg.var`, `tg.gather`, `tg.softmax`, ...) are written once,
in teachgrad/api/torch_signatures.py, and serve as both the function and the method.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, TypeAlias

import torch

from .. import ops
from ..rules import torch_leaves, variable_class
from .arguments import NOT_GIVEN, check_tensor_list

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    Variable = variable_class.Variable
    Number: TypeAlias = int | float | bool                 # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor        # a teachgrad Variable or a torch tensor
    Operand: TypeAlias = Variable | torch.Tensor | Number  # a tensor of either kind, or a number: add(x, 1)


def _variable(x):
    """x as a Variable: a torch tensor that requires grad becomes a leaf of teachgrad's graph (teachgrad/rules/torch_leaves.py)."""
    if isinstance(x, variable_class.Variable):
        return x
    return torch_leaves.as_variable(x) if isinstance(x, torch.Tensor) else variable_class.Variable(x)


def _number_first(a, b):
    """True for `tg.add(0.1, x)`: torch reads the number as a scalar of x's kind (exact for a float64 x), so the op
    takes the Python number itself, as `0.1 + x` does (made a float32 Variable first, it would be rounded)."""
    return isinstance(a, (int, float)) and isinstance(b, (variable_class.Variable, torch.Tensor))


def add(a: Operand, b: Operand, alpha: Number = 1) -> Variable:
    if _number_first(a, b):
        return ops.Add.apply(a, _variable(b) if alpha == 1 else _variable(b) * alpha)
    return _variable(a).add(b, alpha=alpha)


def sub(a: Operand, b: Operand, alpha: Number = 1) -> Variable:
    if _number_first(a, b):
        return ops.Sub.apply(a, _variable(b) if alpha == 1 else _variable(b) * alpha)
    return _variable(a).sub(b, alpha=alpha)


def mul(a: Operand, b: Operand) -> Variable:
    if _number_first(a, b):
        return ops.Mul.apply(a, _variable(b))
    return _variable(a) * b


def div(a: Operand, b: Operand, *, rounding_mode: str | None | object = NOT_GIVEN) -> Variable:
    """a / b; given rounding_mode (even None), torch records DivBackward2 (Variable.div says more)."""
    if _number_first(a, b):
        return ops.Div.apply(a, _variable(b)) if rounding_mode is NOT_GIVEN else \
            ops.DivRounding.apply(a, _variable(b), rounding_mode)
    return _variable(a).div(b, rounding_mode=rounding_mode)


def pow(a: Operand, exponent: Operand) -> Variable:
    if not isinstance(a, (variable_class.Variable, torch.Tensor)):
        return exponent.__rpow__(a)
    return _variable(a).pow(exponent)


def matmul(a: TensorLike, b: TensorLike) -> Variable:
    return ops.matmul(a, b)


def mm(a: TensorLike, b: TensorLike) -> Variable:
    return _variable(a).mm(b)


def exp(x: TensorLike) -> Variable:
    return _variable(x).exp()


def log(x: TensorLike) -> Variable:
    return _variable(x).log()


def sqrt(x: TensorLike) -> Variable:
    return _variable(x).sqrt()


def sin(x: TensorLike) -> Variable:
    return _variable(x).sin()


def cos(x: TensorLike) -> Variable:
    return _variable(x).cos()


def tanh(x: TensorLike) -> Variable:
    return _variable(x).tanh()


def sigmoid(x: TensorLike) -> Variable:
    return _variable(x).sigmoid()


def relu(x: TensorLike) -> Variable:
    return _variable(x).relu()


def abs(x: TensorLike) -> Variable:
    return _variable(x).abs()


def neg(x: TensorLike) -> Variable:
    return -_variable(x)


def square(x: TensorLike) -> Variable:
    return _variable(x).square()


def clamp(x: TensorLike, min: Number | TensorLike | None = None, max: Number | TensorLike | None = None) -> Variable:
    return _variable(x).clamp(min, max)


def maximum(a: TensorLike, b: TensorLike) -> Variable:
    return ops.Maximum.apply(a, b)


def minimum(a: TensorLike, b: TensorLike) -> Variable:
    return ops.Minimum.apply(a, b)


def where(condition: TensorLike, a: Operand, b: Operand) -> Variable:
    return ops.Where.apply(condition, a, b)   # (a Variable condition is read as its data: no edge)


def sum(x: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
        keepdims: bool | None = None) -> Variable:
    return _variable(x).sum(dim, keepdim, keepdims=keepdims)


def mean(x: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         keepdims: bool | None = None) -> Variable:
    return _variable(x).mean(dim, keepdim, keepdims=keepdims)


def max(x: TensorLike, dim: int | TensorLike | None = None, keepdim: bool = False, *,
        keepdims: bool | None = None) -> Variable | torch.return_types.max:
    return _variable(x).max(dim, keepdim, keepdims=keepdims)


def min(x: TensorLike, dim: int | TensorLike | None = None, keepdim: bool = False, *,
        keepdims: bool | None = None) -> Variable | torch.return_types.min:
    return _variable(x).min(dim, keepdim, keepdims=keepdims)


def real(x: TensorLike) -> Variable:
    return _variable(x).real


def imag(x: TensorLike) -> Variable:
    return _variable(x).imag


def conj(x: TensorLike) -> Variable:
    return _variable(x).conj()


def conj_physical(x: TensorLike) -> Variable:
    return _variable(x).conj_physical()


def view_as_real(x: TensorLike) -> Variable:
    """A complex tensor as real pairs (a last dimension of 2), a view."""
    return ops.ViewAsReal.apply(_variable(x))


def view_as_complex(x: TensorLike) -> Variable:
    """Real pairs (a last dimension of 2) as a complex tensor, a view."""
    return ops.ViewAsComplex.apply(_variable(x))


def polar(abs: TensorLike, angle: TensorLike) -> Variable:
    """abs * e^{i angle}."""
    return ops.Polar.apply(_variable(abs), _variable(angle))


def complex(real: TensorLike, imag: TensorLike) -> Variable:
    """real + i imag."""
    return ops.Complex.apply(_variable(real), _variable(imag))


def t(x: TensorLike) -> Variable:
    return _variable(x).t()


def transpose(x: TensorLike, dim0: int, dim1: int) -> Variable:
    return _variable(x).transpose(dim0, dim1)


def reshape(x: TensorLike, shape: Sequence[int]) -> Variable:
    return _variable(x).reshape(shape)


def squeeze(x: TensorLike, dim: int | Sequence[int] | None = None) -> Variable:
    return _variable(x).squeeze(dim)


def unsqueeze(x: TensorLike, dim: int) -> Variable:
    return _variable(x).unsqueeze(dim)


def flatten(x: TensorLike, start_dim: int = 0, end_dim: int = -1) -> Variable:
    return _variable(x).flatten(start_dim, end_dim)


def unflatten(x: TensorLike, dim: int, sizes: Sequence[int]) -> Variable:
    return _variable(x).unflatten(dim, sizes)


def dot(a: TensorLike, b: TensorLike) -> Variable:
    return _variable(a).dot(b)


def norm(x: TensorLike, p: Number | str = "fro", dim: int | Sequence[int] | None = None,
         keepdim: bool = False) -> Variable:
    return _variable(x).norm(p, dim, keepdim)


def equal(a: TensorLike, b: TensorLike) -> bool:
    return _variable(a).equal(b)


def chunk(x: TensorLike, chunks: int, dim: int = 0) -> tuple[Variable, ...]:
    return _variable(x).chunk(chunks, dim)


def split(x: TensorLike, split_size: int | Sequence[int], dim: int = 0) -> tuple[Variable, ...]:
    return _variable(x).split(split_size, dim)


def masked_fill(x: TensorLike, mask: TensorLike, value: Number | TensorLike) -> Variable:
    return _variable(x).masked_fill(mask, value)


def eq(a: TensorLike, b: Operand) -> Variable:
    return _variable(a) == b


def cat(tensors: Sequence[TensorLike], dim: int = 0) -> Variable:
    """Join tensors along dimension `dim`."""
    _check_sequence("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for k, x in enumerate(tensors):
        if x.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be concatenated")
    reference = next((x for x in tensors if not ops.shape.skipped_by_cat(x)), tensors[0])   # torch's legacy rule
    return ops.Cat.apply(ops.shape.wrap_dim(dim, reference.dim()), *tensors)


def stack(tensors: Sequence[TensorLike], dim: int = 0) -> Variable:
    """Join tensors along a new dimension `dim`."""
    _check_sequence("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    return ops.Stack.apply(ops.shape.wrap_dim(dim, tensors[0].dim() + 1), *tensors)


def _check_sequence(name, tensors):
    """As torch: a list or tuple of tensors, never one tensor (which would be joined row by row)."""
    if not isinstance(tensors, (list, tuple)):
        kind = "Tensor" if isinstance(tensors, (variable_class.Variable, torch.Tensor)) else type(tensors).__name__
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {kind}")
    check_tensor_list(tensors)


def all(input: TensorLike, *args: Any, **kwargs: Any) -> Variable:
    """Whether all elements are true (or, along `dim`, each row's answer): torch.all on the data, no gradient."""
    data = input.data if isinstance(input, variable_class.Variable) else input
    return variable_class.Variable._make(torch.all(data, *args, **kwargs))


def any(input: TensorLike, *args: Any, **kwargs: Any) -> Variable:
    """Whether any element is true (or, along `dim`, each row's answer): torch.any on the data, no gradient."""
    data = input.data if isinstance(input, variable_class.Variable) else input
    return variable_class.Variable._make(torch.any(data, *args, **kwargs))


def allclose(a: TensorLike, b: TensorLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether two tensors (Variables or torch tensors) are equal up to tolerances."""
    a = a.data if isinstance(a, variable_class.Variable) else a
    b = b.data if isinstance(b, variable_class.Variable) else b
    return torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def is_tensor(x: object) -> bool:
    return isinstance(x, variable_class.Variable)
