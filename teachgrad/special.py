"""`tg.special` mirrors `torch.special`: every function of it, with torch's arguments, node names and derivatives.

Most are one op each, whose class line declares its torch.special names (`special="i0e"`): those functions are made
from the declarations (teachgrad/api/declared.py's SPECIAL) and are the very functions of `tg.` where torch has the
same op at its top level (`tg.special.erf is tg.erf`; `tg.special.expit` runs sigmoid's op, as torch's does). The
functions written out below read arguments as torch does (a dim, a number on either side, `eps=`, `decimals=`), or
compose ops as torch composes them (ndtr). The ops are in teachgrad/ops/special.py and their own families.

torch records no derivative for the Bessel functions j0, j1, y0, y1, the modified ones and their scaled forms,
Airy's Ai and the orthogonal polynomials (derivatives.yaml: `non_differentiable`): their results never require
grad, as torch's. torch has no derivative of gammainc, gammaincc and zeta in their first input, and no forward mode
for them: teachgrad raises torch's errors there (NotImplementedError).

Guarded by tests/test_special.py and tests/test_op_db.py.
"""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Sequence, TypeAlias

import torch

from . import ops
from .api import op_families, torch_signatures
from .api.declared import SPECIAL as _DECLARED

if TYPE_CHECKING:
    from .core.variable import Variable
    Number: TypeAlias = int | float | bool
    TensorLike: TypeAlias = Variable | torch.Tensor
    Operand: TypeAlias = Variable | torch.Tensor | Number

__all__ = [
    # declared by their ops (see _DECLARED below)
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "ndtri", "psi", "sinc",
    # written out here
    "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma", "round", "softmax", "xlog1py", "xlogy",
    "zeta",
    # no derivative in torch
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "spherical_bessel_j0",
]


# --- functions whose arguments are read as torch reads them ----------------------------------------------------------

def logit(input: TensorLike, eps: float | None = None) -> Variable:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given (torch.logit)."""
    return op_families.logit(input, eps)


def polygamma(n: int, input: TensorLike) -> Variable:
    """The n-th derivative of digamma (torch.polygamma)."""
    return op_families.polygamma(n, input)


def multigammaln(input: TensorLike, p: int) -> Variable:
    """The multivariate log-gamma function of dimension p (torch.mvlgamma)."""
    return op_families.mvlgamma(input, p)


def softmax(input: TensorLike, dim: int | None = None, *, dtype: torch.dtype | None = None) -> Variable:
    """exp(x) / sum(exp(x)) along dim (torch.softmax; dtype casts the input first)."""
    _require("special_softmax", dim)
    return torch_signatures.softmax(input, dim, dtype=dtype)


def log_softmax(input: TensorLike, dim: int | None = None, *, dtype: torch.dtype | None = None) -> Variable:
    """x - logsumexp(x) along dim (torch.log_softmax)."""
    _require("special_log_softmax", dim)
    return torch_signatures.log_softmax(input, dim, dtype=dtype)


def logsumexp(input: TensorLike, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Variable:
    """log(sum(exp(x))) along dim, computed stably (torch.logsumexp)."""
    _require("special_logsumexp", dim)
    return torch_signatures.logsumexp(input, dim, keepdim)


def _require(name, dim):
    """torch.special's softmax, log_softmax and logsumexp have no default dim: torch's message."""
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


def round(input: TensorLike, *, decimals: int = 0) -> Variable:
    """To `decimals` places, half to even: torch.special.round always passes decimals, so torch records
    RoundBackward1 (torch.round without it records RoundBackward0)."""
    return ops.RoundDecimals.apply(input, decimals)


def xlogy(input: Operand, other: Operand) -> Variable:
    """input * log(other), and 0 where input is 0 (torch.xlogy)."""
    return op_families.xlogy(input, other)


def xlog1py(input: Operand, other: Operand) -> Variable:
    """input * log1p(other), and 0 where input is 0; a number on either side records another node."""
    if isinstance(input, numbers.Number):
        return ops.SpecialXlog1pyScalarSelf.apply(float(input), other)
    if isinstance(other, numbers.Number):
        return ops.SpecialXlog1pyScalarOther.apply(input, float(other))
    return ops.SpecialXlog1py.apply(input, other)


def zeta(input: Operand, other: Operand) -> Variable:
    """The Hurwitz zeta function zeta(s, q), sum over k >= 0 of (q + k)^-s; a number on either side records another
    node. torch has a derivative in q only."""
    if isinstance(input, numbers.Number):
        return ops.SpecialZetaScalarSelf.apply(float(input), other)
    if isinstance(other, numbers.Number):
        return ops.SpecialZetaScalarOther.apply(input, float(other))
    return ops.SpecialZeta.apply(input, other)


def ndtr(input: TensorLike) -> Variable:
    """The standard normal's CDF, (1 + erf(x / sqrt 2)) / 2, recorded as torch composes it: x * (1 / sqrt 2)
    (MulBackward1), erf, + 1 (AddBackward1), * 0.5 (MulBackward1)."""
    scaled = ops.MulByNumber.apply(input, math.sqrt(0.5))   # (C's M_SQRT1_2, which 1 / math.sqrt(2) misses by a bit)
    return ops.MulByNumber.apply(ops.AddByNumber.apply(ops.Erf.apply(scaled), 1), 0.5)


# --- no derivative in torch: torch's function, on the data; the result never requires grad -------------------------

def airy_ai(x: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.airy_ai, x)


def bessel_j0(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.bessel_j0, input)


def bessel_j1(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.bessel_j1, input)


def bessel_y0(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.bessel_y0, input)


def bessel_y1(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.bessel_y1, input)


def modified_bessel_i0(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.modified_bessel_i0, input)


def modified_bessel_i1(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.modified_bessel_i1, input)


def modified_bessel_k0(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.modified_bessel_k0, input)


def modified_bessel_k1(input: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.modified_bessel_k1, input)


def scaled_modified_bessel_k0(x: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.scaled_modified_bessel_k0, x)


def scaled_modified_bessel_k1(x: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.scaled_modified_bessel_k1, x)


def spherical_bessel_j0(x: TensorLike) -> Variable:
    return ops.NoDerivative.apply(torch.special.spherical_bessel_j0, x)


def chebyshev_polynomial_t(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.chebyshev_polynomial_t, x, n)


def chebyshev_polynomial_u(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.chebyshev_polynomial_u, x, n)


def chebyshev_polynomial_v(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.chebyshev_polynomial_v, x, n)


def chebyshev_polynomial_w(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.chebyshev_polynomial_w, x, n)


def shifted_chebyshev_polynomial_t(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.shifted_chebyshev_polynomial_t, x, n)


def shifted_chebyshev_polynomial_u(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.shifted_chebyshev_polynomial_u, x, n)


def shifted_chebyshev_polynomial_v(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.shifted_chebyshev_polynomial_v, x, n)


def shifted_chebyshev_polynomial_w(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.shifted_chebyshev_polynomial_w, x, n)


def hermite_polynomial_h(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.hermite_polynomial_h, x, n)


def hermite_polynomial_he(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.hermite_polynomial_he, x, n)


def laguerre_polynomial_l(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.laguerre_polynomial_l, x, n)


def legendre_polynomial_p(x: Operand, n: Operand) -> Variable:
    return ops.NoDerivative.apply(torch.special.legendre_polynomial_p, x, n)


# the ops whose class line declares their torch.special names: i0e, ndtri, log_ndtr, entr, ..., and erf, expit,
# gammaln, psi, ... (the same functions as tg.erf, tg.lgamma, ... where torch has the op at its top level too)
globals().update(_DECLARED)
