"""More of torch's ops, by family, with torch's signatures: element-wise math (`tg.asin`, `tg.atan2`, `tg.lerp`,
...), reductions (`tg.amax`, `tg.nansum`, `tg.prod`, ...), shapes (`tg.narrow`, `tg.hstack`, ...) and matrix
products (`tg.addmm`, `tg.outer`, ...). Each function reads its arguments as torch does and calls one op of
teachgrad.ops, or, where torch records a composition of other ops, that composition; the same functions serve
as Variable methods (the block "more ops" in teachgrad/api/tensor_methods.py), where torch has the method.

Guarded by tests/test_op_families.py (each op against torch) and tests/test_op_db.py (torch's own samples).
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Sequence, TypeAlias

import torch

from .. import ops
from ..rules import variable_class
from .torch_signatures import _var_arguments   # var's three forms, read once

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    Variable = variable_class.Variable
    Number: TypeAlias = int | float | bool           # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor
    Operand: TypeAlias = Variable | torch.Tensor | Number


# --- element-wise: trigonometry, exponentials, the gamma family ---------------------------------------------------

def tan(input: TensorLike) -> Variable:
    return ops.Tan.apply(input)


def asin(input: TensorLike) -> Variable:
    return ops.Asin.apply(input)


def acos(input: TensorLike) -> Variable:
    return ops.Acos.apply(input)


def atan(input: TensorLike) -> Variable:
    return ops.Atan.apply(input)


def sinh(input: TensorLike) -> Variable:
    return ops.Sinh.apply(input)


def cosh(input: TensorLike) -> Variable:
    return ops.Cosh.apply(input)


def asinh(input: TensorLike) -> Variable:
    return ops.Asinh.apply(input)


def acosh(input: TensorLike) -> Variable:
    return ops.Acosh.apply(input)


def atanh(input: TensorLike) -> Variable:
    return ops.Atanh.apply(input)


def deg2rad(input: TensorLike) -> Variable:
    return ops.Deg2rad.apply(input)


def rad2deg(input: TensorLike) -> Variable:
    return ops.Rad2deg.apply(input)


def sinc(input: TensorLike) -> Variable:
    return ops.Sinc.apply(input)


def exp2(input: TensorLike) -> Variable:
    return ops.Exp2.apply(input)


def erfc(input: TensorLike) -> Variable:
    return ops.Erfc.apply(input)


def erfinv(input: TensorLike) -> Variable:
    return ops.Erfinv.apply(input)


def lgamma(input: TensorLike) -> Variable:
    return ops.Lgamma.apply(input)


def digamma(input: TensorLike) -> Variable:
    return ops.Digamma.apply(input)


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


def frac(input: TensorLike) -> Variable:
    return ops.Frac.apply(input)


def ceil(input: TensorLike) -> Variable:
    return ops.Ceil.apply(input)


def floor(input: TensorLike) -> Variable:
    return ops.Floor.apply(input)


def trunc(input: TensorLike) -> Variable:
    return ops.Trunc.apply(input)


def round(input: TensorLike, *, decimals: int | None = None) -> Variable:
    """To the nearest integer (half to even), or to `decimals` places: given decimals (even 0), torch records
    RoundBackward1."""
    return ops.Round.apply(input) if decimals is None else ops.RoundDecimals.apply(input, decimals)


def sgn(input: TensorLike) -> Variable:
    return ops.Sgn.apply(input)


def sign(input: TensorLike) -> Variable:
    return ops.Sign.apply(input)


def reciprocal(input: TensorLike) -> Variable:
    return ops.Reciprocal.apply(input)


def positive(input: TensorLike) -> Variable:
    """The input itself, as torch's (no node is recorded)."""
    return input


# --- element-wise, two tensors --------------------------------------------------------------------------------------

def atan2(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Atan2.apply(input, other)


def hypot(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Hypot.apply(input, other)


def logaddexp(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Logaddexp.apply(input, other)


def logaddexp2(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Logaddexp2.apply(input, other)


def fmod(input: TensorLike, other: Operand) -> Variable:
    return ops.FmodScalar.apply(input, other) if isinstance(other, numbers.Number) else ops.Fmod.apply(input, other)


def remainder(input: Operand, other: Operand) -> Variable:
    if isinstance(input, numbers.Number):
        raise NotImplementedError("teachgrad's remainder takes a tensor as input (torch records no derivative for "
                                  "remainder(number, tensor))")
    if isinstance(other, numbers.Number):
        return ops.RemainderScalar.apply(input, other)
    return ops.Remainder.apply(input, other)


def fmax(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Fmax.apply(input, other)


def fmin(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Fmin.apply(input, other)


def copysign(input: TensorLike, other: Operand) -> Variable:
    if isinstance(other, numbers.Number):
        return ops.CopysignScalar.apply(input, other)
    return ops.Copysign.apply(input, other)


def ldexp(input: TensorLike, other: TensorLike) -> Variable:
    return ops.Ldexp.apply(input, other)


def xlogy(input: Operand, other: Operand) -> Variable:
    if isinstance(input, numbers.Number):   # torch reads a number as a 0-d tensor of the other's dtype
        input = torch.tensor(input, dtype=other.dtype)
    if isinstance(other, numbers.Number):
        other = torch.tensor(other, dtype=input.dtype)
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
    """torch's alias of div."""
    return input.div(other) if isinstance(input, variable_class.Variable) else other.__rtruediv__(input)


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
