"""More of torch's ops, by family, with torch's signatures: element-wise math (`tg.asin`, `tg.atan2`, `tg.lerp`,
...), reductions (`tg.amax`, `tg.nansum`, `tg.prod`, ...), shapes (`tg.narrow`, `tg.hstack`, ...) and matrix
products (`tg.addmm`, `tg.outer`, ...). Each function reads its arguments as torch does and calls one op of
teachgrad.ops, or, where torch records a composition of other ops, that composition; the same functions serve
as Variable methods (the block "more ops" in teachgrad/api/tensor_methods.py), where torch has the method.
An op that needs no reading (`tg.tan(input)`, `tg.hypot(input, other)`) has no function here: its class line
declares torch's names, and teachgrad/api/declared.py makes the function and the method.

Guarded by tests/test_op_families.py (each op against torch) and tests/test_op_db.py (torch's own samples).
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Sequence, TypeAlias

import torch

from .. import ops
from ..rules import torch_leaves, variable_class
from .arguments import check_tensor_list
from .torch_signatures import _var_arguments   # var's three forms, read once

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    Variable = variable_class.Variable
    Number: TypeAlias = int | float | bool           # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor
    Operand: TypeAlias = Variable | torch.Tensor | Number


# --- element-wise: what needs more than `input` (tan, asin, ..., the one-tensor ops, are declared in their class
# lines and made by teachgrad/api/declared.py) ------------------------------------------------------------------------

def polygamma(n: int, input: TensorLike) -> Variable:
    """torch.polygamma(n, input): the order first (the method takes it alone: x.polygamma(n))."""
    return ops.Polygamma.apply(input, n)


def _polygamma_method(self: Variable, n: int) -> Variable:
    return ops.Polygamma.apply(self, n)


def logit(input: TensorLike, eps: float | None = None) -> Variable:
    return ops.Logit.apply(input, eps)


def nan_to_num(input: TensorLike, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Variable:
    return ops.NanToNum.apply(input, nan, posinf, neginf)


def round(input: TensorLike, *, decimals: int | None = None) -> Variable:
    """To the nearest integer (half to even), or to `decimals` places: given decimals (even 0), torch records
    RoundBackward1."""
    return ops.Round.apply(input) if decimals is None else ops.RoundDecimals.apply(input, decimals)


def positive(input: TensorLike) -> Variable:
    """The input itself, as torch's (no node is recorded)."""
    return input


# --- element-wise, two tensors (atan2, hypot, logaddexp(2), fmax, fmin, ldexp: declared in their class lines) ---------

def fmod(input: TensorLike, other: Operand) -> Variable:
    return ops.FmodScalar.apply(input, other) if isinstance(other, numbers.Number) else ops.Fmod.apply(input, other)


def remainder(input: Operand, other: Operand) -> Variable:
    if isinstance(input, numbers.Number):
        raise NotImplementedError("teachgrad's remainder takes a tensor as input (torch records no derivative for "
                                  "remainder(number, tensor))")
    if isinstance(other, numbers.Number):
        return ops.RemainderScalar.apply(input, other)
    return ops.Remainder.apply(input, other)


def copysign(input: TensorLike, other: Operand) -> Variable:
    if isinstance(other, numbers.Number):
        return ops.CopysignScalar.apply(input, other)
    return ops.Copysign.apply(input, other)


def xlogy(input: Operand, other: Operand) -> Variable:
    """input * log(other); a number on either side records another node (XlogyBackward1, XlogyBackward2)."""
    if isinstance(input, numbers.Number):
        return ops.XlogyScalarSelf.apply(float(input), other)
    if isinstance(other, numbers.Number):
        return ops.XlogyScalarOther.apply(input, float(other))
    return ops.Xlogy.apply(input, other)


def lerp(input: TensorLike, end: TensorLike, weight: Number | TensorLike) -> Variable:
    """input + weight * (end - input); a number weight records LerpBackward0, a tensor weight LerpBackward1."""
    if isinstance(weight, numbers.Number):
        return ops.Lerp.apply(input, end, weight)
    return ops.LerpTensor.apply(input, end, weight)


def addcmul(input: TensorLike, tensor1: TensorLike, tensor2: TensorLike, *, value: Number = 1) -> Variable:
    return ops.Addcmul.apply(input, tensor1, tensor2, value)


def addcdiv(input: TensorLike, tensor1: TensorLike, tensor2: TensorLike, *, value: Number = 1) -> Variable:
    return ops.Addcdiv.apply(input, tensor1, tensor2, value)


def float_power(input: Operand, exponent: Operand) -> Variable:
    """input ** exponent in float64, as torch computes it: both cast to float64 (ToCopyBackward0 where they are
    not), then pow."""
    if isinstance(input, numbers.Number):
        return exponent.to(torch.float64).__rpow__(float(input))
    input = input.to(torch.float64)
    if isinstance(exponent, numbers.Number):
        return input.pow(float(exponent))
    return input.pow(exponent.to(torch.float64))


def true_divide(input: Operand, other: Operand) -> Variable:
    """torch's alias of div (of two numbers, a 0-d tensor, as torch's)."""
    if not isinstance(input, (variable_class.Variable, torch.Tensor)) and \
            not isinstance(other, (variable_class.Variable, torch.Tensor)):
        return variable_class.Variable._make(torch.true_divide(input, other))
    if isinstance(input, (variable_class.Variable, torch.Tensor)):
        return _variable(input).div(other)
    return ops.Div.apply(input, _variable(other))   # a number divided by a tensor: DivBackward0, as torch


def rsub(input: TensorLike, other: Operand, alpha: Number = 1) -> Variable:
    """other - alpha * input (torch.rsub: the arguments of sub, swapped)."""
    if isinstance(other, numbers.Number):
        return ops.Rsub.apply(input if alpha == 1 else input * alpha, other)
    return ops.RsubTensor.apply(input if alpha == 1 else input * alpha, other)


def clamp_min(input: TensorLike, min: Number | TensorLike) -> Variable:
    return input.clamp_min(min)


def clamp_max(input: TensorLike, max: Number | TensorLike) -> Variable:
    return input.clamp_max(max)


# --- reductions that pick or skip elements --------------------------------------------------------------------------

def amax(input: TensorLike, dim: int | Sequence[int] = (), keepdim: bool = False) -> Variable:
    """The largest element along dim (all of them for ()): ties share the gradient evenly (max(dim) picks one)."""
    return ops.Amax.apply(input, dim, keepdim)


def amin(input: TensorLike, dim: int | Sequence[int] = (), keepdim: bool = False) -> Variable:
    """The smallest element along dim (all of them for ()): ties share the gradient evenly."""
    return ops.Amin.apply(input, dim, keepdim)


def aminmax(input: TensorLike, *, dim: int | None = None, keepdim: bool = False) -> torch.return_types.aminmax:
    """(min, max) along dim, or of all elements, as torch.return_types.aminmax."""
    return torch.return_types.aminmax(ops.Aminmax.apply(input, dim, keepdim))


def nansum(input: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
           dtype: torch.dtype | None = None) -> Variable:
    """The sum of the elements that are not nan."""
    if dtype is not None:
        input = input.to(dtype)
    return ops.Nansum.apply(input, dim, keepdim)


def nanmean(input: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
            dtype: torch.dtype | None = None) -> Variable:
    """The mean of the elements that are not nan, as torch computes it: nansum / the count of them (DivBackward0)."""
    if dtype is not None:
        input = input.to(dtype)
    data = input.data if isinstance(input, variable_class.Variable) else input
    count = (~data.isnan()).sum(() if dim is None else dim, keepdim=keepdim)
    return ops.Nansum.apply(input, dim, keepdim).div(count)


def prod(input: TensorLike, dim: int | None = None, keepdim: bool = False, *,
         dtype: torch.dtype | None = None) -> Variable:
    """The product of all elements (ProdBackward0), or along dim (ProdBackward1)."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return ops.Prod.apply(input)
    return ops.ProdDim.apply(input, dim, keepdim)


def _spread_and_mean(name, op, input, dim, unbiased, keepdim, correction):
    dim, correction, keepdim = _var_arguments(name, dim, unbiased, keepdim, correction, None)
    dims = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))
    return op.apply(input, dims, correction, keepdim)


def var_mean(input: TensorLike, dim: int | Sequence[int] | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> tuple[Variable, Variable]:
    """(var, mean) in one node, with var's arguments."""
    return _spread_and_mean("var_mean", ops.VarMean, input, dim, unbiased, keepdim, correction)


def std_mean(input: TensorLike, dim: int | Sequence[int] | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> tuple[Variable, Variable]:
    """(std, mean) in one node, with var's arguments."""
    return _spread_and_mean("std_mean", ops.StdMean, input, dim, unbiased, keepdim, correction)


def median(input: TensorLike, dim: int | None = None, keepdim: bool = False) -> Variable | torch.return_types.median:
    """The lower median of all elements (ties share the gradient), or (values, indices) along dim."""
    if dim is None:
        return ops.Median.apply(input)
    return torch.return_types.median(ops.MedianDim.apply(input, dim, keepdim))


def nanmedian(input: TensorLike, dim: int | None = None,
              keepdim: bool = False) -> Variable | torch.return_types.nanmedian:
    """median, skipping nan."""
    if dim is None:
        return ops.Nanmedian.apply(input)
    return torch.return_types.nanmedian(ops.NanmedianDim.apply(input, dim, keepdim))


def mode(input: TensorLike, dim: int = -1, keepdim: bool = False) -> torch.return_types.mode:
    return torch.return_types.mode(ops.Mode.apply(input, dim, keepdim))


def kthvalue(input: TensorLike, k: int, dim: int = -1, keepdim: bool = False) -> torch.return_types.kthvalue:
    return torch.return_types.kthvalue(ops.Kthvalue.apply(input, k, dim, keepdim))


def cummax(input: TensorLike, dim: int) -> torch.return_types.cummax:
    return torch.return_types.cummax(ops.Cummax.apply(input, dim))


def cummin(input: TensorLike, dim: int) -> torch.return_types.cummin:
    return torch.return_types.cummin(ops.Cummin.apply(input, dim))


def msort(input: TensorLike) -> Variable:
    """Sorted along the first dimension: torch.sort(input, 0)'s values (SortBackward0)."""
    return ops.Sort.apply(input, 0, False, False)[0]


# --- shapes: torch's functions for Variable's methods, and torch's compositions of them -----------------------------

def _variable(x):
    """x as a Variable: a torch tensor that requires grad becomes a leaf of teachgrad's graph."""
    if isinstance(x, variable_class.Variable):
        return x
    return torch_leaves.as_variable(x) if isinstance(x, torch.Tensor) else variable_class.Variable(x)


def clone(input: TensorLike, *, memory_format: torch.memory_format = torch.preserve_format) -> Variable:
    return _variable(input).clone(memory_format)


def narrow(input: TensorLike, dim: int, start: int | TensorLike, length: int) -> Variable:
    return _variable(input).narrow(dim, int(start), length)


def select(input: TensorLike, dim: int, index: int) -> Variable:
    return _variable(input).select(dim, index)


def permute(input: TensorLike, dims: Sequence[int]) -> Variable:
    return _variable(input).permute(dims)


def unbind(input: TensorLike, dim: int = 0) -> tuple[Variable, ...]:
    return _variable(input).unbind(dim)


def diagonal(input: TensorLike, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Variable:
    return _variable(input).diagonal(offset, dim1, dim2)


def split_with_sizes(input: TensorLike, split_sizes: Sequence[int], dim: int = 0) -> tuple[Variable, ...]:
    return _variable(input).split_with_sizes(split_sizes, dim)


def mv(input: TensorLike, vec: TensorLike) -> Variable:
    return _variable(input).mv(vec)


def ravel(input: TensorLike) -> Variable:
    """One dimension, as torch computes it: contiguous, then a view (ViewBackward0)."""
    return _variable(input).contiguous().view(-1)


def reshape_as(input: TensorLike, other: TensorLike) -> Variable:
    return _variable(input).reshape(other.shape)


def broadcast_to(input: TensorLike, size: Sequence[int]) -> Variable:
    return _variable(input).expand(size)


def broadcast_tensors(*tensors: TensorLike) -> tuple[Variable, ...]:
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(_variable(t).expand(shape) for t in tensors)


def fliplr(input: TensorLike) -> Variable:
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return ops.Flip.apply(input, (1,))


def flipud(input: TensorLike) -> Variable:
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return ops.Flip.apply(input, (0,))


def _atleast(n, tensors):
    """torch's atleast_1d/2d/3d: each tensor with at least n dims, as torch adds them (reshape for 0-d, unsqueeze
    for the others); one tensor in, one out; several (or a sequence) in, a tuple out."""
    single = len(tensors) == 1 and isinstance(tensors[0], (variable_class.Variable, torch.Tensor))
    if len(tensors) == 1 and not single:
        tensors = tuple(tensors[0])
        check_tensor_list(tensors)
    out = []
    for t in tensors:
        t = _variable(t)
        if t.dim() == 0:
            t = t.reshape((1,) * n)
        elif n >= 2 and t.dim() == 1:
            t = t.unsqueeze(0) if n == 2 else t.unsqueeze(0).unsqueeze(-1)
        elif n == 3 and t.dim() == 2:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if single else tuple(out)


def atleast_1d(*tensors: TensorLike | Sequence[TensorLike]) -> Variable | tuple[Variable, ...]:
    return _atleast(1, tensors)


def atleast_2d(*tensors: TensorLike | Sequence[TensorLike]) -> Variable | tuple[Variable, ...]:
    return _atleast(2, tensors)


def atleast_3d(*tensors: TensorLike | Sequence[TensorLike]) -> Variable | tuple[Variable, ...]:
    return _atleast(3, tensors)


def _cat(tensors, dim):
    return torch.cat(list(tensors), dim)   # (Variables among them: teachgrad's cat, through interop)


def hstack(tensors: Sequence[TensorLike]) -> Variable:
    tensors = _atleast(1, (tensors,))
    return _cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors: Sequence[TensorLike]) -> Variable:
    return _cat(_atleast(2, (tensors,)), 0)


def dstack(tensors: Sequence[TensorLike]) -> Variable:
    return _cat(_atleast(3, (tensors,)), 2)


def column_stack(tensors: Sequence[TensorLike]) -> Variable:
    columns = [_variable(t).reshape(t.numel(), 1) if t.dim() <= 1 else _variable(t) for t in tensors]
    return _cat(columns, 1)


def tensor_split(input: TensorLike, indices_or_sections: int | Sequence[int] | TensorLike,
                 dim: int = 0) -> tuple[Variable, ...]:
    """Pieces along dim (each a view, SliceBackward0): n sections as even as they go (the first ones one longer),
    or the pieces between the given indices."""
    input = _variable(input)
    dim = dim % input.dim()
    size = input.shape[dim]
    if isinstance(indices_or_sections, (variable_class.Variable, torch.Tensor)):
        data = indices_or_sections.data if isinstance(indices_or_sections, variable_class.Variable) \
            else indices_or_sections
        indices_or_sections = data.item() if data.dim() == 0 else data.tolist()
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(size, sections)
        bounds, start = [], 0
        for i in range(sections):
            start += small + (1 if i < extra else 0)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = list(indices_or_sections)
    pieces, start = [], 0
    for end in bounds + [size]:
        end = min(max(end, start), size)
        pieces.append(input.narrow(dim, start, end - start) if start <= size else input.narrow(dim, size, 0))
        start = end
    return tuple(pieces)


def _split_by(name, dim_needed, dim, input, indices_or_sections):
    if input.dim() < dim_needed:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {dim_needed} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if isinstance(indices_or_sections, int) and input.shape[dim] % indices_or_sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{input.shape[dim]} is not divisible by the split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: TensorLike, indices_or_sections: int | Sequence[int]) -> tuple[Variable, ...]:
    return _split_by("hsplit", 1, 1 if input.dim() > 1 else 0, input, indices_or_sections)


def vsplit(input: TensorLike, indices_or_sections: int | Sequence[int]) -> tuple[Variable, ...]:
    return _split_by("vsplit", 2, 0, input, indices_or_sections)


def dsplit(input: TensorLike, indices_or_sections: int | Sequence[int]) -> tuple[Variable, ...]:
    return _split_by("dsplit", 3, 2, input, indices_or_sections)


def outer(input: TensorLike, vec2: TensorLike) -> Variable:
    """The outer product, as torch computes it: input as a column times vec2 (MulBackward0)."""
    return _variable(input).reshape(input.shape[0], 1) * vec2


ger = outer   # torch's older name for outer


def diff(input: TensorLike, n: int = 1, dim: int = -1, prepend: TensorLike | None = None,
         append: TensorLike | None = None) -> Variable:
    """Differences of neighbours along dim, n times (torch's composition: narrow, then sub)."""
    input = _variable(input)
    if n == 0:   # torch copies the input (prepend and append left out): CopyBackwards
        copy = variable_class.Variable(torch.empty_like(input.data))
        return copy.copy_(input)
    if prepend is not None or append is not None:
        input = _cat([t for t in (prepend, input, append) if t is not None], dim)
    for _ in range(n):
        length = input.shape[dim]
        if length == 0:
            break
        input = input.narrow(dim, 1, length - 1) - input.narrow(dim, 0, length - 1)
    return input


def take_along_dim(input: TensorLike, indices: TensorLike, dim: int | None = None) -> Variable:
    """input.gather(dim, indices) with input and indices broadcast against each other except along dim; without
    dim, of the flattened input."""
    input = _variable(input)
    indices = indices.data if isinstance(indices, variable_class.Variable) else indices
    if dim is None:
        indices = indices.reshape(-1)
        return input.reshape(-1).gather(0, indices.where(indices >= 0, indices + input.numel()))
    dim = dim % input.dim()
    indices = indices.where(indices >= 0, indices + input.shape[dim])   # negative ones count from the end
    input_shape, index_shape = list(input.shape), list(indices.shape)
    input_shape[dim] = index_shape[dim] = 1
    shape = list(torch.broadcast_shapes(input_shape, index_shape))
    shape_input, shape_index = list(shape), list(shape)
    shape_input[dim], shape_index[dim] = input.shape[dim], indices.shape[dim]
    if list(input.shape) != shape_input:
        input = input.expand(shape_input)
    return input.gather(dim, indices.expand(shape_index))


def rot90(input: TensorLike, k: int = 1, dims: Sequence[int] = (0, 1)) -> Variable:
    return ops.Rot90.apply(input, k, dims)


# --- matrix products with an added term ---------------------------------------------------------------------------

def addmm(input: TensorLike, mat1: TensorLike, mat2: TensorLike, *, beta: Number = 1, alpha: Number = 1) -> Variable:
    return ops.AddmmScaled.apply(input, mat1, mat2, beta, alpha)


def addmv(input: TensorLike, mat: TensorLike, vec: TensorLike, *, beta: Number = 1, alpha: Number = 1) -> Variable:
    return ops.Addmv.apply(input, mat, vec, beta, alpha)


def addr(input: TensorLike, vec1: TensorLike, vec2: TensorLike, *, beta: Number = 1, alpha: Number = 1) -> Variable:
    return ops.Addr.apply(input, vec1, vec2, beta, alpha)


def baddbmm(input: TensorLike, batch1: TensorLike, batch2: TensorLike, *, beta: Number = 1,
            alpha: Number = 1) -> Variable:
    return ops.Baddbmm.apply(input, batch1, batch2, beta, alpha)


def addbmm(input: TensorLike, batch1: TensorLike, batch2: TensorLike, *, beta: Number = 1,
           alpha: Number = 1) -> Variable:
    return ops.Addbmm.apply(input, batch1, batch2, beta, alpha)
