"""More element-wise functions: log10, log2, log1p, expm1 (formulas from torch's derivatives.yaml, the derivative
conjugated for a complex input as there)."""
import math

from ..core.function import Function
from ..rules.broadcast import conj


class Log10(Function, node="Log10Backward0", saves=("self",), batching="pointwise", function="log10", method="log10"):
    """log10(a): d/da = 1 / (a ln 10)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.log10()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (conj(a) * math.log(10.0))

    @staticmethod
    def jvp(ctx, ta):
        return ta / (ctx._primals[0] * math.log(10.0))


class Log2(Function, node="Log2Backward0", saves=("self",), batching="pointwise", function="log2", method="log2"):
    """log2(a): d/da = 1 / (a ln 2)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.log2()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (conj(a) * math.log(2.0))

    @staticmethod
    def jvp(ctx, ta):
        return ta / (ctx._primals[0] * math.log(2.0))


class Log1p(Function, node="Log1PBackward0", saves=("self",), batching="pointwise", function="log1p", method="log1p",
            special="log1p"):
    """log(1 + a), accurate for small a: d/da = 1 / (1 + a)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.log1p()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / conj(a + 1)

    @staticmethod
    def jvp(ctx, ta):
        return ta / (ctx._primals[0] + 1)


class Expm1(Function, node="Expm1Backward0", saves=("result",), batching="pointwise", function="expm1", method="expm1",
            special="expm1"):
    """exp(a) - 1, accurate for small a: d/da = exp(a) = result + 1."""

    @staticmethod
    def forward(ctx, a):
        result = a.expm1()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * (conj(result) + 1)

    @staticmethod
    def jvp(ctx, ta):
        return ta * (ctx._result + 1)


class Rsqrt(Function, node="RsqrtBackward0", saves=("result",), batching="pointwise", function="rsqrt", method="rsqrt"):
    """1 / sqrt(a): d/da = -1/2 a^(-3/2) = -result³ / 2."""

    @staticmethod
    def forward(ctx, a):
        result = a.rsqrt()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return -0.5 * grad * conj(result.pow(3))

    @staticmethod
    def jvp(ctx, ta):
        return -0.5 * ta * ctx._result.pow(3)
