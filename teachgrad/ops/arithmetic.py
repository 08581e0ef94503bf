"""+ - * / ** and negation.

A gradient for a broadcast input (`b` of shape (3,) in `x + b` with x (4, 3)) comes back here with the
output's shape; the engine sums it back to the input's shape, as torch's engine does for every node.
"""
import math

import torch

from ..function import Builtin
from .broadcast import number_or_none, shape_of, times, total, unbroadcast


class Add(Builtin, node="AddBackward0", numbers_are_inputs=True):
    """a + b: the gradient passes through unchanged to both."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return grad if needs_a else None, grad if needs_b else None

    @staticmethod
    def jvp(ctx, ta, tb):
        return total(ta, tb)


class Sub(Builtin, node="SubBackward0", numbers_are_inputs=True):
    """a - b: the gradient passes to a, negated to b."""

    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return grad if needs_a else None, -grad if needs_b else None

    @staticmethod
    def jvp(ctx, ta, tb):
        return total(ta, times(tb, -1))


class Rsub(Builtin, node="RsubBackward1"):
    """number - a, as torch records it: one input, gradient negated."""

    @staticmethod
    def forward(ctx, a, number):
        return number - a

    @staticmethod
    def backward(ctx, grad):
        return -grad, None

    @staticmethod
    def jvp(ctx, ta, _number):
        return -ta


# pack_order: torch packs other before self (its saved inputs by name, then outputs)
class Mul(Builtin, node="MulBackward0", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0)):
    """a * b: each input's gradient is the gradient times the other input."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.numbers = number_or_none(a), number_or_none(b)
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b and ctx.numbers[0] is None else None,
                              b if needs_a and ctx.numbers[1] is None else None)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a = a if ctx.numbers[0] is None else ctx.numbers[0]
        b = b if ctx.numbers[1] is None else ctx.numbers[1]
        grad_a = grad * b if ctx.needs_input_grad[0] else None
        grad_b = grad * a if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return total(times(ta, b), times(tb, a))


# pack_order: torch packs other before self (its saved inputs by name, then outputs)
class Div(Builtin, node="DivBackward0", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0)):
    """a / b: d/da = 1/b, d/db = -a/b²."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.numbers = number_or_none(a), number_or_none(b)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] and ctx.numbers[0] is None else None,
                              b if ctx.numbers[1] is None else None)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a = a if ctx.numbers[0] is None else ctx.numbers[0]
        b = b if ctx.numbers[1] is None else ctx.numbers[1]
        grad_a = grad / b if ctx.needs_input_grad[0] else None
        grad_b = -grad * ((a / b) / b) if ctx.needs_input_grad[1] else None   # in torch's order, so its bits
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return total(times(ta, 1 / b), times(tb, -ctx._result / b))


class DivByNumber(Div, node="DivBackward1", numbers_are_inputs=False):
    """a / number, as torch's own kernels (not Python's `/`) record it."""


class Neg(Builtin, node="NegBackward0"):
    """-a."""

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad):
        return -grad

    @staticmethod
    def jvp(ctx, ta):
        return -ta


class Reciprocal(Builtin, node="ReciprocalBackward0", saves=("result",)):
    """1 / a: d/da = -1/a² = -result²."""

    @staticmethod
    def forward(ctx, a):
        result = a.reciprocal()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return -grad * (result * result)   # in torch's order, so its bits

    @staticmethod
    def jvp(ctx, ta):
        result = ctx._result
        return -ta * result * result


class Pow(Builtin, node="PowBackward0", saves=("self",)):
    """a ** n for a number n: d/da = n * a**(n-1)."""

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.exponent = exponent
        ctx.save_for_backward(a)
        return a.pow(exponent)   # (a ** exponent would go through torch's Python wrapper first: twice the time)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        n = ctx.exponent
        if n == 0:
            return a.new_zeros(a.shape), None   # zeros, as torch: even where the gradient is inf
        return grad * (n * a.pow(n - 1)), None   # in torch's order, so its bits

    @staticmethod
    def jvp(ctx, ta, _exponent):
        a, n = ctx._primals
        if n == 0:
            return torch.zeros_like(ta)
        return ta * n * a ** (n - 1)


# pack_order: torch packs exponent, self, result (its saved inputs by name, then outputs)
class PowTensor(Builtin, node="PowBackward1", saves=("self", "exponent", "result"), pack_order=(1, 0, 2)):
    """a ** b for tensors: d/da = b * a**(b-1), d/db = a**b * log(a)."""

    @staticmethod
    def forward(ctx, a, b):
        result = a ** b
        ctx.shapes = shape_of(a), shape_of(b)
        ctx.save_for_backward(a, b, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, b, result = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            # b == 0 gives 0 (a ** -1 would be inf at a == 0)
            grad_a = unbroadcast((grad * (b * a ** (b - 1))).where(b != 0, 0.0), ctx.shapes[0])
        if ctx.needs_input_grad[1]:
            # where a == 0 and b >= 0 the derivative is 0, not 0 * log(0) = nan
            grad_b = unbroadcast(grad * (result * a.log()).where(~((a == 0) & (b >= 0)), 0.0), ctx.shapes[1])
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        # where a == 0 and b >= 0 the derivative in b is 0, not 0 * log(0) = nan
        d_b = (ctx._result * a.log()).where(~((a == 0) & (b >= 0)), 0.0)
        return total(ta * b * a ** (b - 1), tb * d_b)


class PowScalarBase(Builtin, node="PowBackward2", saves=("exponent", "result")):
    """number ** b: d/db = number**b * log(number)."""

    @staticmethod
    def forward(ctx, base, b):
        result = base ** b
        ctx.base = base
        ctx.log_base = math.log(base) if base > 0 else (float("-inf") if base == 0 else float("nan"))
        ctx.save_for_backward(b, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        b, result = ctx.saved_tensors
        if ctx.base == 0:   # 0 ** b is flat (0) for b > 0 and 1 at b == 0: derivative 0, not 0 * -inf
            return None, grad * (result * ctx.log_base).where(~(b >= 0), 0.0)   # (NaN stays NaN, as torch's)
        return None, grad * (result * ctx.log_base)

    @staticmethod
    def jvp(ctx, _number, tb):
        return tb * ctx._result * ctx.log_base
