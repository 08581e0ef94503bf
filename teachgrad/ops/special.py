"""torch.special's ops that teachgrad's other families do not have: the Bessel functions i0, i0e, i1, i1e, the normal
distribution's ndtri and log_ndtr, entr, erfcx, xlog1py, zeta, the incomplete gamma functions and the multivariate
log-gamma; and the functions torch records no derivative for (the other Bessel functions, Airy's, the orthogonal
polynomials). teachgrad/special.py puts them at torch's path, `tg.special`, beside the ops of other families that
torch.special also names (erf in activation.py, expm1 in unary.py, sigmoid as `expit` in pointwise.py, gammaln and
digamma in pointwise_math.py: their class lines declare `special=`).

Each derivative is the formula of torch's tools/autograd/derivatives.yaml (and, for i1 and i1e, i1_backward and
i1e_backward in torch/csrc/autograd/FunctionsManual.cpp). Where a formula needs another special function of the
input (i1 in i0's), it calls torch's (`torch.special.i1(a)`): on a tensor torch computes it; on a Variable torch
hands the call to teachgrad's op of that name (teachgrad/api/interop.py), so under create_graph the second
derivative is recorded too, as torch's is.

Guarded by tests/test_special.py (each function against torch: values, node names, gradients, second derivatives,
tangents, torch's errors, vmap, and whole programs) and tests/test_op_db.py (torch's own samples).
"""
import math

import torch

from ..core.function import Function
from ..rules.broadcast import numbers_or_none
from .pointwise_math import _Binary, _Unary

SQRT_2PI = math.sqrt(2 * math.pi)


class _Special(_Unary):
    """f(a) element by element, as _Unary (backward grad * f'(a, result), jvp tangent * f'), saving only what torch
    saves: the class line's `saves=` ("self", "result" or both); what is not saved reaches f' as None."""

    @classmethod
    def forward(cls, ctx, a):
        result = cls.function(a)
        ctx.save_for_backward(*(a if name == "self" else result for name in cls.saved_names))
        return result

    @classmethod
    def backward(cls, ctx, grad):
        saved = dict(zip(cls.saved_names, ctx.saved_tensors))
        return grad * cls.derivative(saved.get("self"), saved.get("result"))


# --- modified Bessel functions of the first kind, and their exponentially scaled forms ---

class I0(_Special, node="I0Backward0", saves=("self",), batching="pointwise", function="i0", method="i0",
         special="i0"):
    """I0(a): d/da = I1(a)."""
    function = staticmethod(torch.i0)
    derivative = staticmethod(lambda a, result: torch.special.i1(a))


class SpecialI0e(_Special, node="SpecialI0EBackward0", saves=("self", "result"), batching="pointwise", special="i0e"):
    """exp(-|a|) I0(a): d/da = i1e(a) - sgn(a) i0e(a)."""
    function = staticmethod(torch.special.i0e)
    derivative = staticmethod(lambda a, result: torch.special.i1e(a) - a.sgn() * result)


def _away_from_zero(a, slope, limit):
    """torch's i1_backward and i1e_backward: the slope read at a, except where |a| <= eps (the dtype's), where its
    terms would divide by 0: there the slope is its limit. `slope(safe)` is evaluated at a with those points moved
    to eps, so no nan is made, not even in a part the result does not use (whose gradient would still be nan)."""
    not_tiny = a.abs() > torch.finfo(a.dtype).eps
    safe = a.where(not_tiny, torch.finfo(a.dtype).eps)
    return slope(safe).where(not_tiny, limit)


class SpecialI1(_Special, node="SpecialI1Backward0", saves=("self", "result"), batching="pointwise", special="i1"):
    """I1(a): d/da = I0(a) - I1(a) / a, and 1/2 at 0."""
    function = staticmethod(torch.special.i1)
    derivative = staticmethod(lambda a, result: _away_from_zero(a, lambda x: x.i0() - result * x.reciprocal(), 0.5))


class SpecialI1e(_Special, node="SpecialI1EBackward0", saves=("self", "result"), batching="pointwise", special="i1e"):
    """exp(-|a|) I1(a): d/da = i0e(a) - i1e(a) (sgn(a) + 1 / a), and 1/2 at 0."""
    function = staticmethod(torch.special.i1e)
    derivative = staticmethod(lambda a, result: _away_from_zero(
        a, lambda x: torch.special.i0e(x) - result * (x.sgn() + x.reciprocal()), 0.5))


# --- the normal distribution, the error function, entropy ---

class SpecialNdtri(_Special, node="SpecialNdtriBackward0", saves=("result",), batching="pointwise", special="ndtri"):
    """The standard normal's quantile, ndtr's inverse: d/dp = sqrt(2 pi) exp(ndtri(p)² / 2)."""
    function = staticmethod(torch.special.ndtri)
    derivative = staticmethod(lambda a, result: SQRT_2PI * (result.square() / 2).exp())


class SpecialLogNdtr(_Special, node="SpecialLogNdtrBackward0", saves=("self", "result"), batching="pointwise",
                     special="log_ndtr"):
    """log of the standard normal's CDF: d/da = exp(-a²/2) / sqrt(2 pi) / ndtr(a) = exp(-(log_ndtr(a) + a²/2)) /
    sqrt(2 pi), stable far in the left tail."""
    function = staticmethod(torch.special.log_ndtr)
    derivative = staticmethod(lambda a, result: (result + a.pow(2) / 2).neg().exp() / SQRT_2PI)


class SpecialEntr(_Special, node="SpecialEntrBackward0", saves=("self",), batching="pointwise", special="entr"):
    """-a log(a) (0 at 0, -inf below): d/da = -(1 + log a)."""
    function = staticmethod(torch.special.entr)
    derivative = staticmethod(lambda a, result: -(1 + a.log()))


class SpecialErfcx(_Special, node="SpecialErfcxBackward0", saves=("self", "result"), batching="pointwise",
                   special="erfcx"):
    """exp(a²) erfc(a): d/da = 2 a erfcx(a) - 2 / sqrt(pi)."""
    function = staticmethod(torch.special.erfcx)
    derivative = staticmethod(lambda a, result: 2.0 * a * result - 2.0 / math.sqrt(math.pi))


# --- the gamma family: incomplete gamma functions, multivariate log-gamma ---

def _no_derivative_in_self(name):
    """torch's `not_implemented(name)` for the first input: raised when its gradient is asked for."""
    def d_a(a, b, result):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return staticmethod(d_a)


def _no_forward_mode(name):
    """torch has no tangent formula for the op: forward mode is refused with torch's message."""
    def jvp(ctx, *tangents):
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has not been implemented "
            "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
            "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
            "implementation to derivatives.yaml")
    return staticmethod(jvp)


class Igamma(_Binary, node="IgammaBackward0", batching="pointwise", function="igamma", method="igamma",
             special="gammainc"):
    """The regularized lower incomplete gamma function P(a, x): d/dx = x^(a-1) exp(-x) / Gamma(a); torch has no
    derivative in a, nor forward mode."""
    function = staticmethod(torch.igamma)
    d_a = _no_derivative_in_self("igamma: input")
    d_b = staticmethod(lambda a, b, result: ((a - 1) * b.log() - b - a.lgamma()).exp())
    jvp = _no_forward_mode("igamma")


class Igammac(_Binary, node="IgammacBackward0", batching="pointwise", function="igammac", method="igammac",
              special="gammaincc"):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x): d/dx = -x^(a-1) exp(-x) / Gamma(a)."""
    function = staticmethod(torch.igammac)
    d_a = _no_derivative_in_self("igammac: input")
    d_b = staticmethod(lambda a, b, result: -((a - 1) * b.log() - b - a.lgamma()).exp())
    jvp = _no_forward_mode("igammac")


class Mvlgamma(Function, node="MvlgammaBackward0", saves=("self",), batching="pointwise"):
    """The multivariate log-gamma function of dimension p, sum over j < p of lgamma(a - j/2) (plus a constant):
    d/da = sum over j of digamma(a - j/2)."""

    @staticmethod
    def forward(ctx, a, p):
        ctx.p = p
        ctx.save_for_backward(a)
        return torch.mvlgamma(a, p)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * _mvlgamma_slope(a, ctx.p), None

    @staticmethod
    def jvp(ctx, ta, _p):
        return ta * _mvlgamma_slope(ctx._primals[0], ctx.p)


def _mvlgamma_slope(a, p):
    """torch's mvlgamma_backward: digamma at a + (-(p-1)/2, ..., -1/2, 0), on a new last dim, summed."""
    shifts = torch.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=a.dtype, device=a.device)
    return (a.unsqueeze(-1) + shifts).digamma().sum(-1)


# --- functions of two tensors: xlog1py and the Hurwitz zeta function (either may be a Python number) ---

class SpecialXlog1py(Function, node="SpecialXlog1PyBackward0", saves=("self", "other"), batching="pointwise"):
    """x log(1 + y), and 0 where x is 0 (even where y <= -1): d/dx = log1p(y) (0 where x == 0 and y <= -1),
    d/dy = x / (1 + y)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.numbers = numbers_or_none(a, b)   # (the scalar forms: a number on one side)
        ctx.save_for_backward(*(x if n is None else None for x, n in zip((a, b), ctx.numbers)))
        return torch.special.xlog1py(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = (n if x is None else x for x, n in zip(ctx.saved_tensors, ctx.numbers))
        needs_a, needs_b = ctx.needs_input_grad
        return (_xlog1py_self(grad, a, b) if needs_a else None,
                grad * a / (b + 1) if needs_b else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        tangent = None if ta is None else _xlog1py_self(ta, a, b)
        if tb is not None:
            tangent = tb * a / (b + 1) if tangent is None else tangent + tb * a / (b + 1)
        return tangent


def _xlog1py_self(grad, a, b):
    """xlog1py(grad, b), 0 where a == 0 and b <= -1 (b a number above -1: nothing to mask, as torch's)."""
    slope = torch.special.xlog1py(grad, b)
    if isinstance(b, (int, float)) and b > -1:
        return slope
    return slope.masked_fill((a == 0) & (b <= -1), 0.0)


class SpecialXlog1pyScalarSelf(SpecialXlog1py, node="SpecialXlog1PyBackward1", batching="pointwise"):
    """xlog1py(number, y): torch records another node, with one edge (the number has none)."""


class SpecialXlog1pyScalarOther(SpecialXlog1py, node="SpecialXlog1PyBackward2", batching="pointwise"):
    """xlog1py(x, number): likewise."""


class SpecialZeta(_Binary, node="SpecialZetaBackward0", batching="pointwise"):
    """The Hurwitz zeta function, sum over k >= 0 of (q + k)^-s: d/dq = -s zeta(s + 1, q); torch has no derivative
    in s, nor forward mode."""
    function = staticmethod(torch.special.zeta)
    d_a = _no_derivative_in_self("zeta")
    d_b = staticmethod(lambda a, b, result: -a * torch.special.zeta(a + 1.0, b))
    jvp = _no_forward_mode("special_zeta")


class SpecialZetaScalarSelf(SpecialZeta, node="SpecialZetaBackward1", batching="pointwise"):
    """zeta(number, q): torch records another node, with one edge."""


class SpecialZetaScalarOther(SpecialZeta, node="SpecialZetaBackward2", batching="pointwise"):
    """zeta(s, number): likewise (and its only edge has no derivative)."""


# --- the functions torch records no derivative for ---

class NoDerivative(Function, batching="pointwise"):
    """A function of torch.special that torch marks `non_differentiable` in derivatives.yaml (the Bessel functions
    j0, j1, y0, y1, the modified ones i0, i1, k0, k1 and their scaled forms, Airy's Ai, the orthogonal polynomials):
    its result never requires grad and carries no tangent, as torch's. `function` is torch's, run on the data."""

    @staticmethod
    def forward(ctx, function, *args):
        result = function(*args)
        ctx.mark_non_differentiable(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("a result torch records no derivative for has no gradient")   # (never reached: the
                                                                                            # result has no node)

    @staticmethod
    def jvp(ctx, *tangents):
        return None
