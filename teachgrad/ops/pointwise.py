"""Element-wise functions: each gradient is the incoming gradient times the local derivative, conjugated for a
complex input (torch's convention, teachgrad/ops/complex.py; a real tensor's conj is itself)."""
import torch

from ..core.function import Function
from ..rules.broadcast import conj, numbers_or_none, times, total
from . import aten
from .activation_more import ThresholdBackward


class Exp(Function, node="ExpBackward0", saves=("result",), batching="pointwise"):
    """exp(a): its own derivative, so the result is saved."""

    @staticmethod
    def forward(ctx, a):
        result = a.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * conj(result)

    @staticmethod
    def jvp(ctx, ta):
        return ta * ctx._result


class Log(Function, node="LogBackward0", saves=("self",), batching="pointwise"):
    """log(a): d/da = 1/a."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.log()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / conj(a)

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta / a


class Sqrt(Function, node="SqrtBackward0", saves=("result",), batching="pointwise"):
    """sqrt(a): d/da = 1 / (2 sqrt(a))."""

    @staticmethod
    def forward(ctx, a):
        result = a.sqrt()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad / (2 * conj(result))

    @staticmethod
    def jvp(ctx, ta):
        return ta / (2 * ctx._result)


class Sin(Function, node="SinBackward0", saves=("self",), batching="pointwise"):
    """sin(a): d/da = cos(a)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.sin()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * conj(a.cos())

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta * a.cos()


class Cos(Function, node="CosBackward0", saves=("self",), batching="pointwise"):
    """cos(a): d/da = -sin(a)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.cos()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * -conj(a.sin())

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        return ta * -a.sin()


# torch's own backward kernels, used on plain tensors (first-order backward) so the bits are torch's
_tanh_backward = aten.tanh_backward
_sigmoid_backward = aten.sigmoid_backward


class Tanh(Function, node="TanhBackward0", saves=("result",), batching="pointwise"):
    """tanh(a): d/da = 1 - tanh(a)²."""

    @staticmethod
    def forward(ctx, a):
        result = a.tanh()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor) and isinstance(result, torch.Tensor):   # plain: torch's kernel, its bits
            return _tanh_backward(grad, result)
        return grad * conj(1 - result * result)

    @staticmethod
    def jvp(ctx, ta):
        result = ctx._result
        return ta * (1 - result * result)


class Sigmoid(Function, node="SigmoidBackward0", saves=("result",), batching="pointwise", special="expit"):
    """sigmoid(a) = 1 / (1 + exp(-a)): d/da = s (1 - s)."""

    @staticmethod
    def forward(ctx, a):
        result = a.sigmoid()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor) and isinstance(result, torch.Tensor):   # plain: torch's kernel, its bits
            return _sigmoid_backward(grad, result)
        return grad * conj(result) * conj(1 - result)

    @staticmethod
    def jvp(ctx, ta):
        result = ctx._result
        return ta * result * (1 - result)


_threshold_backward = aten.threshold_backward


def threshold_backward(grad, result):
    """grad, zeroed where result <= 0: a mask, not a product (inf * 0 would be nan). A nan result is not <= 0,
    so there the gradient passes, as in torch's kernel.

    On plain tensors, torch's own kernel for ReluBackward0 (one pass instead of a compare and a where).
    """
    if isinstance(grad, torch.Tensor) and isinstance(result, torch.Tensor):
        return _threshold_backward(grad, result, 0)
    return ThresholdBackward.apply(grad, result, 0, 0)   # recording (create_graph): an op of its own, as torch's


class Relu(Function, node="ReluBackward0", saves=("result",), batching="pointwise"):
    """max(a, 0): the gradient passes where the result is positive."""

    @staticmethod
    def forward(ctx, a):
        result = a.relu()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return threshold_backward(grad, result)

    @staticmethod
    def jvp(ctx, ta):
        return threshold_backward(ta, ctx._result)


class Sign(Function, node="SignBackward0", batching="pointwise", function="sign"):
    """sign(a): flat almost everywhere, so its gradient is zero."""

    @staticmethod
    def forward(ctx, a):
        return a.sign()

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape)   # zeros, as torch: even an inf or nan gradient gives 0

    @staticmethod
    def jvp(ctx, ta):
        return torch.zeros_like(ta)


class Abs(Function, node="AbsBackward0", saves=("self",), batching="pointwise"):
    """|a|: d/da = sgn(a): sign(a) for a real a (0 at 0, as in torch), z / |z| for a complex z (the direction
    in which |z| grows fastest)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.abs()

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.sgn()

    @staticmethod
    def jvp(ctx, ta):
        a, = ctx._primals
        tangent = ta.conj() * a.sgn()
        return tangent.real if tangent.is_complex() else tangent   # |z| is real: it moves by Re(conj(dz) sgn(z))


class Clamp(Function, node="ClampBackward1", saves=("self",), batching="pointwise"):
    """a limited to [min, max] (numbers): the gradient passes where a is inside the range."""

    @staticmethod
    def forward(ctx, a, min, max):
        ctx.bounds = min, max
        ctx.save_for_backward(a)
        return a.clamp(min, max)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad.where(_inside(a, *ctx.bounds), 0.0), None, None

    @staticmethod
    def jvp(ctx, ta, _min, _max):
        a, low, high = ctx._primals
        return ta.where(_inside(a, low, high), 0.0)


class ClampMin(Clamp, node="ClampMinBackward0", batching="pointwise"):
    """a.clamp(min=number) and a.clamp_min(number), as torch records them."""


class ClampMax(Clamp, node="ClampMaxBackward0", batching="pointwise"):
    """a.clamp_max(number), as torch records it."""


# pack_order: torch packs max, min, self (its saved inputs by name, then outputs)
# none_is_input: a bound left out still has its (empty) edge, as torch's Tensor? arguments
class ClampTensor(Function, node="ClampBackward0", saves=("self", "min", "max"), none_is_input=True,
                  pack_order=(2, 1, 0), batching="pointwise"):
    """a limited to [min, max] given as tensors, which may require grad themselves.

    The gradient goes to a where it is inside the range, to min where a is below it and to max
    where a is above it (to max alone where min > max), as torch's derivatives.yaml says.
    """

    @staticmethod
    def forward(ctx, a, min, max):
        ctx.save_for_backward(a, min, max)
        return torch.clamp(a, min, max)

    @staticmethod
    def backward(ctx, grad):
        a, low, high = ctx.saved_tensors
        grad_a = grad.where(_inside(a, low, high), 0.0) if ctx.needs_input_grad[0] else None
        grad_low = grad_high = None
        if low is not None and ctx.needs_input_grad[1]:
            below = (a < low) if high is None else (a < low) & (low < high)
            grad_low = grad.where(below, 0.0)
        if high is not None and ctx.needs_input_grad[2]:
            above = (a > high) if low is None else (a > high) | (high < low)
            grad_high = grad.where(above, 0.0)
        return grad_a, grad_low, grad_high

    @staticmethod
    def jvp(ctx, ta, tlow, thigh):
        a, low, high = ctx._primals
        below = None if low is None else (a < low if high is None else (a < low) & (low < high))
        above = None if high is None else (a > high if low is None else (a > high) | (high < low))
        return total(None if ta is None else ta.where(_inside(a, low, high), 0.0),
                     None if tlow is None else tlow.where(below, 0.0),
                     None if thigh is None else thigh.where(above, 0.0))


def _inside(a, low, high):
    """Where `a` lies within [low, high] (a bound that is None does not limit)."""
    if low is not None and high is not None:
        return (a >= low) & (a <= high)
    return (a >= low) if low is not None else (a <= high)


# pack_order: torch packs other before self (its saved inputs by name, then outputs)
class _Pick(Function, saves=("self", "other"), pack_order=(1, 0)):
    """Element-wise max or min of a and b: the gradient goes to the one picked, halved on ties.

    As torch: where(a == b, grad / 2, grad), zeroed for the input that lost (NaN loses to no one).
    """

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return cls.pick(a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        shared = grad.where(a != b, grad / 2)
        grad_a = shared.where(~cls.loses(a, b), 0.0) if ctx.needs_input_grad[0] else None
        grad_b = shared.where(~cls.loses(b, a), 0.0) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @classmethod
    def jvp(cls, ctx, ta, tb):
        a, b = ctx._primals
        share = cls.loses(b, a) + (a == b) * 0.5
        return total(times(ta, share), times(tb, 1 - share))


class Maximum(_Pick, node="MaximumBackward0", batching="pointwise"):
    pick = staticmethod(torch.maximum)
    loses = staticmethod(lambda x, y: x < y)


class Minimum(_Pick, node="MinimumBackward0", batching="pointwise"):
    pick = staticmethod(torch.minimum)
    loses = staticmethod(lambda x, y: x > y)


class Where(Function, node="WhereBackward0", saves=("condition",), nondifferentiable_args=(0,), batching="pointwise"):
    """where(condition, a, b): the gradient goes to a where the condition holds, else to b."""

    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.save_for_backward(condition)   # saved, so it is freed with the graph
        return torch.where(condition, a, b)

    @staticmethod
    def backward(ctx, grad):
        c, = ctx.saved_tensors
        c = c.data   # a mask: the plain tensor
        needs_a, needs_b = ctx.needs_input_grad[1:]
        return None, grad.where(c, 0.0) if needs_a else None, grad.where(~c, 0.0) if needs_b else None

    @staticmethod
    def jvp(ctx, _condition, ta, tb):
        condition = ctx._primals[0]
        return torch.where(condition, 0.0 if ta is None else ta, 0.0 if tb is None else tb)


# pack_order: min before self (saved: self, min, and None for the missing max)
class ClampMinTensor(ClampTensor, node="ClampMinBackward1", saves=("self", "min"), none_is_input=False,
                     pack_order=(1, 0), batching="pointwise"):
    """a.clamp_min(tensor): torch records it as a node of its own, with two inputs."""

    @staticmethod
    def jvp(ctx, ta, tlow, _thigh):
        """a's tangent where a >= min, else min's (where a or min is nan as well, as torch's formula)."""
        a, low, _ = ctx._primals
        return torch.where(a >= low, 0.0 if ta is None else ta, 0.0 if tlow is None else tlow)


# pack_order: max before self (saved: self, None for the missing min, max)
class ClampMaxTensor(ClampTensor, node="ClampMaxBackward1", saves=("self", "max"), none_is_input=False,
                     pack_order=(2, 0), batching="pointwise"):
    """a.clamp_max(tensor), likewise: the bound is the third argument, with no edge for the missing min."""

    @staticmethod
    def jvp(ctx, ta, _tlow, thigh):
        """a's tangent where a <= max, else max's (where a or max is nan as well, as torch's formula)."""
        a, _, high = ctx._primals
        return torch.where(a <= high, 0.0 if ta is None else ta, 0.0 if thigh is None else thigh)


class MaskedFill(Function, node="MaskedFillBackward0", saves=("mask",), nondifferentiable_args=(1,)):
    """a with `value` written where `mask` holds: the gradient passes where it does not."""

    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save_for_backward(mask)   # saved, so it is freed with the graph
        return a.masked_fill(mask, value)

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        mask = mask.data
        grad_value = grad.where(mask, 0.0).sum() if ctx.needs_input_grad[2] else None
        return grad.where(~mask, 0.0), None, grad_value

    @staticmethod
    def jvp(ctx, ta, _mask, tvalue):
        """x's tangent where the mask is False; where it holds, the tangent of `value` (a 0-dim tensor's; 0 for a
        number)."""
        mask = ctx._primals[1]
        return ta.where(~mask, 0.0) if tvalue is None else ta.masked_fill(mask, tvalue)


class MaskedFillTensor(MaskedFill, node="MaskedFillBackward1"):
    """masked_fill with `value` a 0-dim tensor (torch's masked_fill.Tensor): the same formulas, another name."""


# pack_order: torch packs other before self (its saved inputs by name)
class Xlogy(Function, node="XlogyBackward0", saves=("self", "other"), pack_order=(1, 0), batching="pointwise"):
    """x * log(y), and 0 where x is 0 (even where y is 0 or nan): d/dx = log(y) (0 where x == 0 and y <= 0),
    d/dy = x / y."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.numbers = numbers_or_none(a, b)   # (the scalar forms: a number on one side)
        ctx.save_for_backward(*(x if n is None else None for x, n in zip((a, b), ctx.numbers)))
        return torch.xlogy(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = (n if x is None else x for x, n in zip(ctx.saved_tensors, ctx.numbers))
        # torch's formula: xlogy(grad, b), 0 where a == 0 and b <= 0 (log b where a == 0 and b > 0)
        grad_a = _xlogy(grad, b).masked_fill((a == 0) & (b <= 0), 0.0) if ctx.needs_input_grad[0] else None
        grad_b = grad * a / b if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        """torch's formula: xlogy(ta, b), 0 where a == 0 and b <= 0 (so not 0 wherever a is 0, as the gradient),
        plus tb * a / b."""
        a, b = ctx._primals
        in_a = None if ta is None else torch.xlogy(ta, b).masked_fill((a == 0) & (b <= 0), 0.0)
        return total(in_a, times(tb, a / b))


class XlogyScalarSelf(Xlogy, node="XlogyBackward1", batching="pointwise"):
    """xlogy(number, y): torch records another node, with one edge (the number has none)."""


class XlogyScalarOther(Xlogy, node="XlogyBackward2", batching="pointwise"):
    """xlogy(x, number): likewise."""


def _xlogy(a, b):
    """xlogy for a plain tensor or, under create_graph, a Variable (recorded as Xlogy); b may be a number."""
    if isinstance(a, torch.Tensor) and isinstance(b, (torch.Tensor, int, float)):
        return torch.xlogy(a, b)
    return (XlogyScalarOther if isinstance(b, (int, float)) else Xlogy).apply(a, b)
