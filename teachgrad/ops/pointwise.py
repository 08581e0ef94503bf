"""Element-wise functions: each gradient is the incoming gradient times the local derivative."""
import torch

from ..function import Function
from .broadcast import shape_of, unbroadcast
from ..forward_ad import times, total


class Exp(Function):
    """exp(a): its own derivative, so the result is saved."""

    node_name = "ExpBackward0"
    saved_names = ("result",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        result = a.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * result

    @staticmethod
    def jvp(ctx, ta):
        return ta * ctx._result


class Log(Function):
    """log(a): d/da = 1/a."""

    node_name = "LogBackward0"
    saved_names = ("self",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.log()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / a

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta / a


class Sqrt(Function):
    """sqrt(a): d/da = 1 / (2 sqrt(a))."""

    node_name = "SqrtBackward0"
    saved_names = ("result",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        result = a.sqrt()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad / (2 * result)

    @staticmethod
    def jvp(ctx, ta):
        return ta / (2 * ctx._result)


class Sin(Function):
    """sin(a): d/da = cos(a)."""

    node_name = "SinBackward0"
    saved_names = ("self",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.sin()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.cos()

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta * a.cos()


class Cos(Function):
    """cos(a): d/da = -sin(a)."""

    node_name = "CosBackward0"
    saved_names = ("self",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.cos()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * -a.sin()

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta * -a.sin()


class Tanh(Function):
    """tanh(a): d/da = 1 - tanh(a)²."""

    node_name = "TanhBackward0"
    saved_names = ("result",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        result = a.tanh()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * (1 - result * result)

    @staticmethod
    def jvp(ctx, ta):
        result = ctx._result
        return ta * (1 - result * result)


class Sigmoid(Function):
    """sigmoid(a) = 1 / (1 + exp(-a)): d/da = s (1 - s)."""

    node_name = "SigmoidBackward0"
    saved_names = ("result",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        result = a.sigmoid()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * result * (1 - result)

    @staticmethod
    def jvp(ctx, ta):
        result = ctx._result
        return ta * result * (1 - result)


class Relu(Function):
    """max(a, 0): the gradient passes where the result is positive."""

    node_name = "ReluBackward0"
    saved_names = ("result",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        result = a.relu()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * (result > 0)

    @staticmethod
    def jvp(ctx, ta):
        return ta.where(ctx._result > 0, 0.0)


class Sign(Function):
    """sign(a): flat almost everywhere, so its gradient is zero."""

    node_name = "SignBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        return a.sign()

    @staticmethod
    def backward(ctx, grad):
        return grad * 0

    @staticmethod
    def jvp(ctx, ta):
        return torch.zeros_like(ta)


class Abs(Function):
    """|a|: d/da = sign(a) (0 at 0, as in torch)."""

    node_name = "AbsBackward0"
    saved_names = ("self",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.abs()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.sign()

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta * a.sign()


class Clamp(Function):
    """a limited to [min, max]: the gradient passes where a is inside the range."""

    node_name = "ClampBackward1"
    saved_names = ("self",)
    check_gradients = False

    @staticmethod
    def forward(ctx, a, min, max):
        ctx.bounds = min, max
        ctx.save_for_backward(a)
        return a.clamp(min, max)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        low, high = ctx.bounds
        inside = (a >= low) if low is not None else None
        if high is not None:
            inside = (a <= high) if inside is None else inside & (a <= high)
        return grad * inside, None, None

    @staticmethod
    def jvp(ctx, ta, _min, _max):
        a, low, high = ctx._primals
        inside = torch.ones_like(a, dtype=torch.bool)
        if low is not None:
            inside &= a >= low
        if high is not None:
            inside &= a <= high
        return ta.where(inside, 0.0)


class _Pick(Function):
    """Element-wise max or min of a and b: the gradient goes to the one picked; split in half on ties."""

    saved_names = ("self", "other")
    check_gradients = False

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.shapes = shape_of(a), shape_of(b)
        ctx.save_for_backward(a, b)
        return cls.pick(a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        share = cls.picks_a(a, b) + (a == b) * 0.5
        return unbroadcast(grad * share, ctx.shapes[0]), unbroadcast(grad * (1 - share), ctx.shapes[1])

    @classmethod
    def jvp(cls, ctx, ta, tb):
        a, b = ctx._primals
        share = cls.picks_a(a, b) + (a == b) * 0.5
        return total(times(ta, share), times(tb, 1 - share))


class Maximum(_Pick):
    node_name = "MaximumBackward0"
    pick = staticmethod(torch.maximum)
    picks_a = staticmethod(lambda a, b: a > b)


class Minimum(_Pick):
    node_name = "MinimumBackward0"
    pick = staticmethod(torch.minimum)
    picks_a = staticmethod(lambda a, b: a < b)


class Where(Function):
    """where(condition, a, b): the gradient goes to a where the condition holds, else to b."""

    node_name = "WhereBackward0"
    check_gradients = False
    nondifferentiable_args = (0,)

    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.shapes = shape_of(a), shape_of(b)
        ctx.condition = condition
        return torch.where(condition, a, b)

    @staticmethod
    def backward(ctx, grad):
        c = ctx.condition
        return None, unbroadcast(grad.where(c, 0.0), ctx.shapes[0]), unbroadcast(grad.where(~c, 0.0), ctx.shapes[1])

    @staticmethod
    def jvp(ctx, _condition, ta, tb):
        condition = ctx._primals[0]
        return torch.where(condition, 0.0 if ta is None else ta, 0.0 if tb is None else tb)
