"""More element-wise math, by family: inverse and hyperbolic trigonometry, gamma functions, rounding, and
functions of two tensors (atan2, hypot, fmod, logaddexp, lerp, addcmul, ...). Each derivative is the formula of
torch's tools/autograd/derivatives.yaml; each op's node is torch's.

Most of them are `grad * f'(a)`: a class names its function and its derivative `f'(a, result)` (written with
methods tensors and Variables share, so a second derivative is recorded too), and `_Unary` gives backward
(`grad * conj(f')`: conjugated for a complex input, teachgrad/ops/complex.py) and jvp (`tangent * f'`) from it,
side by side. The rounding functions are flat: their gradient
is zero.

Guarded by tests/test_op_families.py (each op against torch: values, node names, gradients, second derivatives,
tangents) and tests/test_op_db.py (torch's own samples).
"""
import math

import torch

from ..core.function import Function
from ..rules.broadcast import conj, numbers_or_none, times, total


class _Unary(Function, saves=("self", "result")):
    """f(a) element by element: backward is grad * conj(f'(a)), jvp is tangent * f'(a)."""

    @classmethod
    def forward(cls, ctx, a):
        result = cls.function(a)
        ctx.save_for_backward(a, result)
        return result

    @classmethod
    def backward(cls, ctx, grad):
        a, result = ctx.saved_tensors
        return grad * conj(cls.derivative(a, result))

    @classmethod
    def jvp(cls, ctx, ta):
        return ta * cls.derivative(ctx._primals[0], ctx._result)


# --- trigonometry and its inverses ---

class Tan(_Unary, node="TanBackward0", batching="pointwise", function="tan", method="tan"):
    """tan(a): d/da = 1 + tan(a)²."""
    function = staticmethod(torch.tan)
    derivative = staticmethod(lambda a, result: 1 + result * result)


class Asin(_Unary, node="AsinBackward0", batching="pointwise", function=("asin", "arcsin"), method=("asin", "arcsin")):
    """asin(a): d/da = 1 / sqrt(1 - a²)."""
    function = staticmethod(torch.asin)
    derivative = staticmethod(lambda a, result: (-a * a + 1).rsqrt())


class Acos(_Unary, node="AcosBackward0", batching="pointwise", function=("acos", "arccos"), method=("acos", "arccos")):
    """acos(a): d/da = -1 / sqrt(1 - a²)."""
    function = staticmethod(torch.acos)
    derivative = staticmethod(lambda a, result: -((-a * a + 1).rsqrt()))


class Atan(_Unary, node="AtanBackward0", batching="pointwise", function=("atan", "arctan"), method=("atan", "arctan")):
    """atan(a): d/da = 1 / (1 + a²)."""
    function = staticmethod(torch.atan)
    derivative = staticmethod(lambda a, result: 1 / (a * a + 1))


class Sinh(_Unary, node="SinhBackward0", batching="pointwise", function="sinh", method="sinh"):
    """sinh(a): d/da = cosh(a)."""
    function = staticmethod(torch.sinh)
    derivative = staticmethod(lambda a, result: a.cosh())


class Cosh(_Unary, node="CoshBackward0", batching="pointwise", function="cosh", method="cosh"):
    """cosh(a): d/da = sinh(a)."""
    function = staticmethod(torch.cosh)
    derivative = staticmethod(lambda a, result: a.sinh())


class Asinh(_Unary, node="AsinhBackward0", batching="pointwise",
            function=("asinh", "arcsinh"), method=("asinh", "arcsinh"), in_place_derivative=False):
    """asinh(a): d/da = 1 / sqrt(a² + 1)."""
    function = staticmethod(torch.asinh)
    derivative = staticmethod(lambda a, result: (a * a + 1).rsqrt())


class Acosh(_Unary, node="AcoshBackward0", batching="pointwise",
            function=("acosh", "arccosh"), method=("acosh", "arccosh"), in_place_derivative=False):
    """acosh(a): d/da = 1 / sqrt(a² - 1), written 1 / (sqrt(a + 1) sqrt(a - 1)) for a complex a (the square
    root's branch: sqrt(xy) = sqrt(x) sqrt(y) holds only for real positive x, y)."""
    function = staticmethod(torch.acosh)
    derivative = staticmethod(lambda a, result: (a + 1).rsqrt() * (a - 1).rsqrt() if a.is_complex()
                              else (a * a - 1).rsqrt())


class Atanh(_Unary, node="AtanhBackward0", batching="pointwise",
            function=("atanh", "arctanh"), method=("atanh", "arctanh"), in_place_derivative=False):
    """atanh(a): d/da = 1 / (1 - a²)."""
    function = staticmethod(torch.atanh)
    derivative = staticmethod(lambda a, result: 1 / (1 - a * a))


class Deg2rad(_Unary, node="Deg2RadBackward0", batching="pointwise", function="deg2rad", method="deg2rad"):
    """a * pi / 180 (real only, as torch's): its derivative is a number."""
    function = staticmethod(torch.deg2rad)
    derivative = staticmethod(lambda a, result: math.pi / 180)

    @staticmethod
    def backward(ctx, grad):
        return grad * (math.pi / 180)


class Rad2deg(_Unary, node="Rad2DegBackward0", batching="pointwise", function="rad2deg", method="rad2deg"):
    """a * 180 / pi (real only, as torch's): its derivative is a number."""
    function = staticmethod(torch.rad2deg)
    derivative = staticmethod(lambda a, result: 180 / math.pi)

    @staticmethod
    def backward(ctx, grad):
        return grad * (180 / math.pi)


class Sinc(Function, node="SincBackward0", saves=("self",), batching="pointwise", function="sinc", method="sinc",
           special="sinc"):
    """sin(pi a) / (pi a), and 1 at 0: d/da = (pi a cos(pi a) - sin(pi a)) / (pi a²), and 0 at 0."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return torch.sinc(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return sinc_derivative(grad, a)

    @staticmethod
    def jvp(ctx, ta):
        return conj(sinc_derivative(conj(ta), ctx._primals[0]))   # (tangent * slope: backward's, unconjugated)


def sinc_derivative(grad, a):
    """grad times the slope, as torch's sinc_backward computes it. Near 0 the two terms of the numerator cancel
    (pi a cos(pi a) and sin(pi a) agree to many digits), so the rounding shows, and the order counts twice:

    - the quotient first, then times grad (in the first derivative's last bits);
    - sin(pi a) is recorded before pi a cos(pi a), as torch's compiled kernel records them. Under create_graph
      the second derivative sums three terms into pi a; the engine runs the later-recorded node first, so this
      order gives torch's sum (pi a cos term + cos's term + sin's term, not the two cancelling terms first), in
      the 7th digit near 0.
    """
    pi_a = a * math.pi
    pi_a_squared = a * a * math.pi
    sin_pi_a = pi_a.sin()
    slope = (pi_a * pi_a.cos() - sin_pi_a) / pi_a_squared
    return (grad * conj(slope)).masked_fill(pi_a_squared == 0, 0.0)


# --- exponentials, logarithms, the gamma family, the error function ---

class Exp2(_Unary, node="Exp2Backward0", batching="pointwise", function="exp2", method="exp2", special="exp2"):
    """2 ** a: d/da = 2 ** a * ln 2."""
    function = staticmethod(torch.exp2)
    derivative = staticmethod(lambda a, result: result * math.log(2.0))


class Erfc(_Unary, node="ErfcBackward0", batching="pointwise", function="erfc", method="erfc", special="erfc"):
    """1 - erf(a): d/da = -2/sqrt(pi) exp(-a²)."""
    function = staticmethod(torch.erfc)
    derivative = staticmethod(lambda a, result: (-a * a).exp() * (-2 / math.sqrt(math.pi)))


class Erfinv(_Unary, node="ErfinvBackward0", batching="pointwise", function="erfinv", method="erfinv",
             special="erfinv"):
    """The inverse of erf: d/da = sqrt(pi)/2 exp(erfinv(a)²)."""
    function = staticmethod(torch.erfinv)
    derivative = staticmethod(lambda a, result: (result * result).exp() * (math.sqrt(math.pi) / 2))


class Lgamma(_Unary, node="LgammaBackward0", batching="pointwise", function="lgamma", method="lgamma",
             special="gammaln"):
    """log |gamma(a)|: d/da = digamma(a)."""
    function = staticmethod(torch.lgamma)
    derivative = staticmethod(lambda a, result: a.digamma())


class Digamma(_Unary, node="DigammaBackward0", batching="pointwise", function="digamma", method="digamma",
              special=("digamma", "psi")):
    """digamma(a) = d/da lgamma(a): d/da = polygamma(1, a)."""
    function = staticmethod(torch.digamma)
    derivative = staticmethod(lambda a, result: a.polygamma(1))


class Polygamma(Function, node="PolygammaBackward0", saves=("self",), batching="pointwise"):
    """polygamma(n, a), the n-th derivative of digamma: d/da = polygamma(n + 1, a)."""

    @staticmethod
    def forward(ctx, a, n):
        ctx.n = n
        ctx.save_for_backward(a)
        return torch.polygamma(n, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.polygamma(ctx.n + 1), None

    @staticmethod
    def jvp(ctx, ta, _n):
        return ta * ctx._primals[0].polygamma(ctx.n + 1)


class Logit(Function, node="LogitBackward0", saves=("self",), batching="pointwise"):
    """log(a / (1 - a)), a clamped to [eps, 1 - eps] when eps is given: d/da = 1 / (a (1 - a)); outside [0, 1]
    nan, or outside [eps, 1 - eps] 0 (torch's logit_backward)."""

    @staticmethod
    def forward(ctx, a, eps):
        ctx.eps = eps
        ctx.save_for_backward(a)
        return torch.logit(a, eps)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return logit_derivative(grad, a, ctx.eps), None

    @staticmethod
    def jvp(ctx, ta, _eps):
        return logit_derivative(ta, ctx._primals[0], ctx.eps)


def logit_derivative(grad, a, eps):
    low, high = (0.0, 1.0) if eps is None else (eps, 1 - eps)
    outside = (a < low) | (a > high)
    return (grad / (a * (1 - a))).masked_fill(outside, math.nan if eps is None else 0.0)


class NanToNum(Function, node="NanToNumBackward0", batching="pointwise"):
    """nan, inf and -inf replaced by numbers: the gradient passes where a was finite, else 0."""

    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        ctx.replaced = ~a.isfinite()
        return torch.nan_to_num(a, nan, posinf, neginf)

    @staticmethod
    def backward(ctx, grad):
        return grad.masked_fill(ctx.replaced, 0.0), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return ta.masked_fill(ctx.replaced, 0.0)


class Frac(Function, node="FracBackward0", batching="pointwise", function="frac", method="frac"):
    """a - trunc(a): the gradient passes unchanged."""

    @staticmethod
    def forward(ctx, a):
        return torch.frac(a)

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, ta):
        return ta.clone()


# --- rounding: flat almost everywhere, so the gradient is zero ---

class _Flat(Function):
    """A step function: its gradient and tangent are zeros (even for an inf or nan gradient, as torch)."""

    @classmethod
    def forward(cls, ctx, a, *options):
        ctx.options = len(options)
        return cls.function(a, *options)

    @staticmethod
    def backward(ctx, grad):
        return (grad.new_zeros(grad.shape),) + (None,) * ctx.options

    @staticmethod
    def jvp(ctx, ta, *_):
        return torch.zeros_like(ta)


class Ceil(_Flat, node="CeilBackward0", batching="pointwise", function="ceil", method="ceil"):
    function = staticmethod(torch.ceil)


class Floor(_Flat, node="FloorBackward0", batching="pointwise", function="floor", method="floor"):
    function = staticmethod(torch.floor)


class Trunc(_Flat, node="TruncBackward0", batching="pointwise", function=("trunc", "fix"), method=("trunc", "fix")):
    function = staticmethod(torch.trunc)


class Round(_Flat, node="RoundBackward0", batching="pointwise"):
    function = staticmethod(torch.round)


class RoundDecimals(_Flat, node="RoundBackward1", batching="pointwise"):
    """round(a, decimals=n): torch records another node than round(a)."""
    function = staticmethod(lambda a, decimals: torch.round(a, decimals=decimals))


# --- functions of two tensors (either may be a Python number, which gets no gradient) ---

class _Binary(Function):
    """f(a, b): backward is (grad * df/da, grad * df/db), jvp the sum of the tangents times the same."""

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.numbers = numbers_or_none(a, b)
        result = cls.function(a, b)
        ctx.save_for_backward(a if ctx.numbers[0] is None else None, b if ctx.numbers[1] is None else None, result)
        return result

    @classmethod
    def _operands(cls, ctx, a, b):
        return (ctx.numbers[0] if a is None else a), (ctx.numbers[1] if b is None else b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b, result = ctx.saved_tensors
        a, b = cls._operands(ctx, a, b)
        needs_a, needs_b = ctx.needs_input_grad
        return (grad * cls.d_a(a, b, result) if needs_a else None,
                cls.grad_b(grad, a, b, result) if needs_b else None)

    @classmethod
    def grad_b(cls, grad, a, b, result):
        return grad * cls.d_b(a, b, result)

    @classmethod
    def jvp(cls, ctx, ta, tb):
        a, b = ctx._primals
        result = ctx._result
        return total(times(ta, None if ta is None else cls.d_a(a, b, result)),
                     times(tb, None if tb is None else cls.d_b(a, b, result)))


def _atan2_scale(a, b):
    """1 / (a² + b²), and 0 where that is inf (at the origin, where torch's derivative is 0)."""
    scale = 1 / (a * a + b * b)
    return scale.masked_fill(scale == math.inf, 0.0)


class Atan2(_Binary, node="Atan2Backward0", batching="pointwise",
            function=("atan2", "arctan2"), method=("atan2", "arctan2")):
    """atan2(a, b), the angle of the point (b, a): d/da = b / (a² + b²), d/db = -a / (a² + b²) (0 at the origin)."""
    function = staticmethod(torch.atan2)
    d_a = staticmethod(lambda a, b, result: b * _atan2_scale(a, b))
    d_b = staticmethod(lambda a, b, result: -a * _atan2_scale(a, b))

    @staticmethod
    def jvp(ctx, ta, tb):
        """torch's formula: (b a' - a b') / (a² + b²), nan at the origin (unlike the gradient)."""
        a, b = ctx._primals
        return total(times(ta, b), times(tb, -a)) / (a * a + b * b)


class Hypot(_Binary, node="HypotBackward0", batching="pointwise", function="hypot", method="hypot"):
    """sqrt(a² + b²): d/da = a / result, d/db = b / result."""
    function = staticmethod(torch.hypot)
    d_a = staticmethod(lambda a, b, result: a / result)
    d_b = staticmethod(lambda a, b, result: b / result)


class Logaddexp(_Binary, node="LogaddexpBackward0", batching="pointwise", function="logaddexp", method="logaddexp"):
    """log(exp(a) + exp(b)): d/da = 1 / (1 + exp(b - a)), d/db = 1 / (1 + exp(a - b))."""
    function = staticmethod(torch.logaddexp)
    d_a = staticmethod(lambda a, b, result: 1 / ((b - a).exp() + 1))
    d_b = staticmethod(lambda a, b, result: 1 / ((a - b).exp() + 1))


class Logaddexp2(_Binary, node="Logaddexp2Backward0", batching="pointwise", function="logaddexp2", method="logaddexp2"):
    """log2(2^a + 2^b): d/da = 1 / (1 + 2^(b - a)), d/db = 1 / (1 + 2^(a - b))."""
    function = staticmethod(torch.logaddexp2)
    d_a = staticmethod(lambda a, b, result: 1 / ((b - a).exp2() + 1))
    d_b = staticmethod(lambda a, b, result: 1 / ((a - b).exp2() + 1))


class Fmod(_Binary, node="FmodBackward1", batching="pointwise"):
    """a - trunc(a / b) * b: d/da = 1, d/db = -trunc(a / b) (torch's div with rounding_mode, a step: no second
    derivative)."""
    function = staticmethod(torch.fmod)
    d_a = staticmethod(lambda a, b, result: 1)
    d_b = staticmethod(lambda a, b, result: -a.div(b, rounding_mode="trunc"))


class Remainder(_Binary, node="RemainderBackward1", batching="pointwise"):
    """a - floor(a / b) * b: d/da = 1, d/db = -floor(a / b) (torch's div with rounding_mode, a step: no second
    derivative)."""
    function = staticmethod(torch.remainder)
    d_a = staticmethod(lambda a, b, result: 1)
    d_b = staticmethod(lambda a, b, result: -a.div(b, rounding_mode="floor"))


class FmodScalar(Fmod, node="FmodBackward0", batching="pointwise"):
    """fmod(a, number): torch records another node, with one edge."""


class RemainderScalar(Remainder, node="RemainderBackward0", batching="pointwise"):
    """remainder(a, number): torch records another node, with one edge."""


class Fmax(_Binary, node="FmaxBackward0", batching="pointwise", function="fmax", method="fmax"):
    """The larger of a and b, ignoring nan: the gradient goes to the one picked (a where a >= b or b is nan)."""
    function = staticmethod(torch.fmax)
    d_a = staticmethod(lambda a, b, result: ((a >= b) | b.isnan()).to(result.dtype))
    d_b = staticmethod(lambda a, b, result: ((a >= b) | b.isnan()).logical_not().to(result.dtype))

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return _fmax_fmin_tangent(ta, tb, (a > b) | b.isnan())


def _fmax_fmin_tangent(ta, tb, picks_a):
    """torch's tangent: b's, plus (a's - b's) where a is picked (strictly, or b is nan)."""
    ta = 0.0 if ta is None else ta
    tb = 0.0 if tb is None else tb
    return torch.where(picks_a, ta - tb, 0.0) + tb


class Fmin(_Binary, node="FminBackward0", batching="pointwise", function="fmin", method="fmin"):
    """The smaller of a and b, ignoring nan: the gradient goes to the one picked (a where a <= b or b is nan)."""
    function = staticmethod(torch.fmin)
    d_a = staticmethod(lambda a, b, result: ((a <= b) | b.isnan()).to(result.dtype))
    d_b = staticmethod(lambda a, b, result: ((a <= b) | b.isnan()).logical_not().to(result.dtype))

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return _fmax_fmin_tangent(ta, tb, (a <= b) | b.isnan())


class Copysign(_Binary, node="CopysignBackward0", batching="pointwise"):
    """|a| with b's sign: d/da = result / a (0 where a is 0), d/db = 0."""
    function = staticmethod(torch.copysign)
    d_a = staticmethod(lambda a, b, result: (result / a).masked_fill(a == 0, 0.0))
    d_b = staticmethod(lambda a, b, result: result.new_zeros(result.shape))
    grad_b = staticmethod(lambda grad, a, b, result: grad.new_zeros(grad.shape))   # zeros, even for a nan grad


class CopysignScalar(Copysign, node="CopysignBackward1", batching="pointwise"):
    """copysign(a, number): torch records another node, with one edge."""


class Ldexp(_Binary, node="LdexpBackward0", batching="pointwise", function="ldexp", method="ldexp"):
    """a * 2 ** b: d/da = 2 ** b, d/db = a * 2 ** b * ln 2."""
    function = staticmethod(torch.ldexp)
    d_a = staticmethod(lambda a, b, result: b.exp2())
    d_b = staticmethod(lambda a, b, result: a * b.exp2() * math.log(2.0))


class Lerp(Function, node="LerpBackward0", batching="pointwise"):
    """start + weight (end - start) for a number weight: d/dstart = 1 - weight, d/dend = weight."""

    @staticmethod
    def forward(ctx, start, end, weight):
        ctx.weight = weight
        return torch.lerp(start, end, weight)

    @staticmethod
    def backward(ctx, grad):
        return grad * (1 - ctx.weight), grad * ctx.weight, None

    @staticmethod
    def jvp(ctx, t_start, t_end, _weight):
        return total(times(t_start, 1 - ctx.weight), times(t_end, ctx.weight))


class LerpTensor(Function, node="LerpBackward1", saves=("self", "end", "weight"), batching="pointwise"):
    """start + weight (end - start) for a tensor weight: d/dweight = end - start as well."""

    @staticmethod
    def forward(ctx, start, end, weight):
        ctx.save_for_backward(start, end, weight)
        return torch.lerp(start, end, weight)

    @staticmethod
    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        return grad * (1 - weight), grad * weight, grad * (end - start)

    @staticmethod
    def jvp(ctx, t_start, t_end, t_weight):
        start, end, weight = ctx._primals
        return total(times(t_start, 1 - weight), times(t_end, weight), times(t_weight, end - start))


class Addcmul(Function, node="AddcmulBackward0", saves=("tensor1", "tensor2"), batching="pointwise"):
    """a + value * t1 * t2: d/da = 1, d/dt1 = value t2, d/dt2 = value t1.

    Grouped as torch's derivatives.yaml groups it, as Addcdiv: with a float64 a, a bfloat16 t1 and a float32 t2,
    t1 * value is rounded in bfloat16 before the float64 grad multiplies it.
    """

    @staticmethod
    def forward(ctx, a, t1, t2, value):
        ctx.value = value
        ctx.save_for_backward(t1, t2)
        return torch.addcmul(a, t1, t2, value=value)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        return grad, grad * conj(t2 * ctx.value), grad * conj(t1 * ctx.value), None

    @staticmethod
    def jvp(ctx, ta, t1t, t2t, _value):
        """self_t + t1_t * t2 * value + t2_t * t1 * value (value's product skipped where value is 1)."""
        _, t1, t2, value = ctx._primals
        return total(ta, None if t1t is None else _times_value(t1t * t2, value),
                     None if t2t is None else _times_value(t2t * t1, value))


class Addcdiv(Function, node="AddcdivBackward0", saves=("tensor1", "tensor2"), batching="pointwise"):
    """a + value * t1 / t2: d/da = 1, d/dt1 = value / t2, d/dt2 = -value t1 / t2².

    Each formula is grouped as torch's derivatives.yaml groups it: with inputs of different dtypes (a float64,
    t1 bfloat16, t2 float32) each product is computed in its operands' promoted dtype, so the grouping decides
    the precision, not only the rounding (value * t1 stays bfloat16; times the float64 grad first, it would not).
    """

    @staticmethod
    def forward(ctx, a, t1, t2, value):
        ctx.value = value
        ctx.save_for_backward(t1, t2)
        return torch.addcdiv(a, t1, t2, value=value)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        value = ctx.value
        return grad, grad * conj(_filled(value, t2) / t2), -grad * conj(value * t1 / (t2 * t2)), None

    @staticmethod
    def jvp(ctx, ta, t1t, t2t, _value):
        """self_t + t1_t / t2 * value - t2_t * (t1 / t2) / t2 * value (value's product skipped where value is 1)."""
        _, t1, t2, value = ctx._primals
        tangent = ta
        if t1t is not None:
            term = _times_value(t1t / t2, value)
            tangent = term if tangent is None else tangent + term
        if t2t is not None:
            term = _times_value(t2t * (t1 / t2) / t2, value)
            tangent = -term if tangent is None else tangent - term
        return tangent


def _filled(value, like):
    """A constant tensor of value shaped as `like`: torch's C++ `value / tensor` divides such a tensor (recorded as
    DivBackward0, so its second derivative is div's), where Python's `value / tensor` is a reciprocal times value."""
    return torch.full_like(getattr(like, "data", like), value)


def _times_value(tangent, value):
    """tangent * value, or the tangent itself where value is 1 (torch's maybe_multiply: True counts as 1)."""
    return tangent if value == 1 else tangent * value
