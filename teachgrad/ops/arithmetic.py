"""+ - * / and negation (`**` is in teachgrad/ops/power.py).

A gradient for a broadcast input (`b` of shape (3,) in `x + b` with x (4, 3)) comes back here with the
output's shape; the engine sums it back to the input's shape, as torch's engine does for every node.
"""
import torch

from ..core.function import Function
from ..rules.broadcast import conj, numbers_or_none, times, total


class Add(Function, node="AddBackward0", numbers_are_inputs=True, batching="pointwise"):
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


class Sub(Function, node="SubBackward0", numbers_are_inputs=True, batching="pointwise"):
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


class Rsub(Function, node="RsubBackward1", batching="pointwise"):
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


class RsubTensor(Function, node="RsubBackward0", numbers_are_inputs=True, batching="pointwise"):
    """torch.rsub(a, b) = b - a, for a tensor b (x.__rsub__(y)): a's gradient negated, b's passed through."""

    @staticmethod
    def forward(ctx, a, b):
        return b - a

    @staticmethod
    def backward(ctx, grad):
        needs_a, needs_b = ctx.needs_input_grad
        return -grad if needs_a else None, grad if needs_b else None

    @staticmethod
    def jvp(ctx, ta, tb):
        return total(times(ta, -1), tb)


# pack_order: torch packs other before self (its saved inputs by name, then outputs)
class Mul(Function, node="MulBackward0", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0),
          batching="pointwise"):
    """a * b: each input's gradient is the gradient times the other input, conjugated (for complex tensors:
    torch's convention, teachgrad/ops/complex.py; a real tensor's conj is itself)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.numbers = numbers_or_none(a, b)
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b and ctx.numbers[0] is None else None,
                              b if needs_a and ctx.numbers[1] is None else None)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a = a if ctx.numbers[0] is None else ctx.numbers[0]
        b = b if ctx.numbers[1] is None else ctx.numbers[1]
        grad_a = grad * conj(b) if ctx.needs_input_grad[0] else None
        grad_b = grad * conj(a) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return total(times(ta, b), times(tb, a))


# pack_order: torch packs other before self (its saved inputs by name, then outputs)
class Div(Function, node="DivBackward0", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0),
          batching="pointwise"):
    """a / b: d/da = 1/b, d/db = -a/b², conjugated for complex tensors."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.numbers = numbers_or_none(a, b)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] and ctx.numbers[0] is None else None,
                              b if ctx.numbers[1] is None else None)
        return _true_div(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a = a if ctx.numbers[0] is None else ctx.numbers[0]
        b = b if ctx.numbers[1] is None else ctx.numbers[1]
        grad_a = grad / conj(b) if ctx.needs_input_grad[0] else None
        grad_b = -grad * conj(_true_div(a, b) / b) if ctx.needs_input_grad[1] else None   # torch's order: its bits
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return total(times(ta, 1 / b), times(tb, -ctx._result / b))


def _true_div(a, b):
    """a / b, also for a number `a` (tg.div(0.1, x)): Python's `0.1 / x` is torch's 0.1 * x.reciprocal(), whose
    last bit may differ from the division torch.div does."""
    return torch.div(a, b) if isinstance(a, (int, float)) else a / b


class DivRounding(Function, node="DivBackward2", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0),
                  batching="pointwise"):
    """div(a, b, rounding_mode=...): torch records DivBackward2 whenever rounding_mode is given (a number `b`
    is an input too, an empty edge). With 'trunc' or 'floor' the result is a step function of a and b, and
    torch's derivative is zero for both inputs (zeros, even where the incoming gradient is inf or nan);
    with rounding_mode=None it is a / b's."""

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        ctx.rounding_mode = rounding_mode
        if rounding_mode is None:
            return Div.forward(ctx, a, b)
        ctx.save_for_backward(None, None)
        return torch.div(a, b, rounding_mode=rounding_mode)   # a mode other than these two: torch's error

    @staticmethod
    def backward(ctx, grad):
        if ctx.rounding_mode is None:
            return (*Div.backward(ctx, grad), None)
        needs_a, needs_b = ctx.needs_input_grad[:2]
        zero = torch.zeros_like(grad)
        return zero if needs_a else None, zero if needs_b else None, None

    @staticmethod
    def jvp(ctx, ta, tb, _rounding_mode):
        if ctx.rounding_mode is None:
            b = ctx._primals[1]
            return total(times(ta, 1 / b), times(tb, -ctx._result / b))
        return torch.zeros_like(ctx._result)


class DivByNumber(Div, node="DivBackward1", numbers_are_inputs=False, batching="pointwise"):
    """a / number, as torch's own kernels (not Python's `/`) record it."""


class AddByNumber(Add, node="AddBackward1", numbers_are_inputs=False, batching="pointwise"):
    """a + number, as torch's own kernels (C++'s `a + 0.5`, not Python's) record it: one input."""


class SubByNumber(Sub, node="SubBackward1", numbers_are_inputs=False, batching="pointwise"):
    """a - number, as torch's own kernels record it: one input."""


class MulByNumber(Mul, node="MulBackward1", saves=(), numbers_are_inputs=False, batching="pointwise"):
    """a * number, as torch's own kernels record it: one input, nothing saved but the number."""


class Neg(Function, node="NegBackward0", batching="pointwise", linear=True):
    """-a."""

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Reciprocal(Function, node="ReciprocalBackward0", saves=("result",), batching="pointwise", function="reciprocal"):
    """1 / a: d/da = -1/a² = -result² (conjugated for a complex a)."""

    @staticmethod
    def forward(ctx, a):
        result = a.reciprocal()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return -grad * conj(result * result)   # in torch's order, so its bits

    @staticmethod
    def jvp(ctx, ta):
        result = ctx._result
        return -ta * result * result
