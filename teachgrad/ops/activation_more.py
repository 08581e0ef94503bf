"""More activations, each as torch records it: hardtanh (relu6 is hardtanh from 0 to 6), hardshrink, softshrink,
threshold, hardsigmoid, hardswish, glu, prelu, celu, mish, rrelu (selu is elu with torch's constants). The element-wise ones are `_Elementwise` ops
(teachgrad/ops/activation.py): the function, its derivative written with methods tensors and Variables share
(so a second derivative is recorded), and torch's backward kernel for plain tensors. Derivatives from torch's
tools/autograd/derivatives.yaml; a comparison that fails at nan (nan > 0 is false) fails there as in torch.

Guarded by tests/test_op_families.py (each op against torch) and tests/test_op_db.py (torch's own samples).
"""
import torch

from ..core.function import Function
from ..rules import variable_class
from .activation import _Elementwise, _MaskBackward, elu_backward
from . import aten


def _plain(x):
    return x.data if isinstance(x, variable_class.Variable) else x


class _Mask(_Elementwise):
    """A piecewise-linear activation: its derivative is a constant mask, the one torch's own backward kernel gives
    (kernel(1, x)), so it is torch's at every element, nan included (where torch's vectorized and scalar loops
    can disagree), and its second derivative is zero."""

    @classmethod
    def derivative(cls, x, *options):
        x = _plain(x)
        return cls.kernel(torch.ones_like(x), x, *options)


# Each one's gradient, recorded under create_graph as an op of its own, as torch records it (see _MaskBackward).

class HardtanhBackward(_MaskBackward, node="HardtanhBackwardBackward0", batching="pointwise"):
    kernel = staticmethod(aten.hardtanh_backward)


class HardshrinkBackward(_MaskBackward, node="HardshrinkBackwardBackward0", batching="pointwise"):
    kernel = staticmethod(aten.hardshrink_backward)


class SoftshrinkBackward(_MaskBackward, node="SoftshrinkBackwardBackward0", batching="pointwise"):
    kernel = staticmethod(aten.softshrink_backward)


class ThresholdBackward(_MaskBackward, node="ThresholdBackwardBackward0", batching="pointwise"):
    kernel = staticmethod(lambda grad, a, threshold, value: aten.threshold_backward(grad, a, threshold))


class HardsigmoidBackward(_MaskBackward, node="NotImplemented", batching="pointwise"):
    """torch records hardsigmoid's gradient, but has no derivative for it: differentiating it again is refused."""
    kernel = staticmethod(aten.hardsigmoid_backward)

    @classmethod
    def backward(cls, ctx, gg):
        raise RuntimeError("derivative for aten::hardsigmoid_backward is not implemented")


class Hardtanh(_Mask, node="HardtanhBackward0", batching="pointwise"):
    """x clipped to [min_val, max_val]: the gradient passes strictly inside."""
    function = staticmethod(lambda a, low, high: aten.hardtanh(a, low, high))
    kernel = HardtanhBackward.kernel
    gradient_op = HardtanhBackward


class Hardshrink(_Mask, node="HardshrinkBackward0", batching="pointwise"):
    """x where |x| > lambd, else 0: the gradient passes where x is kept."""
    function = staticmethod(lambda a, lambd: aten.hardshrink(a, lambd))
    kernel = HardshrinkBackward.kernel
    gradient_op = HardshrinkBackward


class Softshrink(_Mask, node="SoftshrinkBackward0", batching="pointwise"):
    """x - lambd above lambd, x + lambd below -lambd, else 0: the gradient passes outside [-lambd, lambd]."""
    function = staticmethod(lambda a, lambd: aten.softshrink(a, lambd))
    kernel = SoftshrinkBackward.kernel
    gradient_op = SoftshrinkBackward


class Threshold(_Mask, node="ThresholdBackward0", batching="pointwise"):
    """x where x > threshold, else value: the gradient passes where x > threshold."""
    function = staticmethod(lambda a, threshold, value: torch.threshold(a, threshold, value))
    kernel = ThresholdBackward.kernel
    gradient_op = ThresholdBackward


class Hardsigmoid(_Mask, node="HardsigmoidBackward0", batching="pointwise"):
    """x / 6 + 1/2 clipped to [0, 1]: d/dx = 1/6 strictly inside (-3, 3)."""
    function = staticmethod(lambda a: aten.hardsigmoid(a))
    kernel = HardsigmoidBackward.kernel
    gradient_op = HardsigmoidBackward


class _NanAsKernel(_Elementwise):
    """A smooth activation whose derivative is its formula (`slope`, recorded, for second derivatives), except at
    nan elements, where it is what torch's backward kernel gives there (nan or not, depending on torch's loop)."""

    @classmethod
    def derivative(cls, x, *options):
        slope = cls.slope(x, *options)
        data = _plain(x)
        nan = data.isnan()
        if not bool(nan.any()):
            return slope
        return slope.where(~nan, cls.kernel(torch.ones_like(data), data, *options))


def hardswish_slope(x):
    """0 up to -3, x / 3 + 1/2 strictly between -3 and 3, 1 from 3 on (torch's kernel)."""
    return (x / 3 + 0.5).where((x > -3) & (x < 3), 0.0) + (x >= 3).to(x.dtype)


class HardswishBackward(Function, node="HardswishBackwardBackward0", saves=("grad_output", "self"),
                        batching="pointwise"):
    """hardswish's gradient as an op of its own, recorded under create_graph as torch records it: torch's kernel
    hardswish_backward(grad, self), linear in grad; its derivative for self is grad * grad_output / 3 strictly inside
    (-3, 3), else 0 (derivatives.yaml)."""

    @staticmethod
    def forward(ctx, grad, a):
        ctx.save_for_backward(grad, a)
        return aten.hardswish_backward(grad, a)

    @staticmethod
    def backward(ctx, gg):
        grad, a = ctx.saved_tensors
        inside = (a > -3) & (a < 3)
        return HardswishBackward.masked(gg, a), (gg * grad / 3).where(inside, 0.0)

    @staticmethod
    def jvp(ctx, t_grad, t_a):
        grad, a = ctx._primals
        inside = (a > -3) & (a < 3)
        tangent = None if t_grad is None else HardswishBackward.masked(t_grad, a)
        if t_a is not None:
            from_a = (t_a * grad / 3).where(inside, 0.0)
            tangent = from_a if tangent is None else tangent + from_a
        return tangent

    @staticmethod
    def masked(grad, a):
        """hardswish_backward(grad, a): torch's kernel on plain tensors, recorded as this op on Variables."""
        if isinstance(grad, torch.Tensor) and isinstance(a, torch.Tensor):
            return aten.hardswish_backward(grad, a)
        return HardswishBackward.apply(grad, a)


class Hardswish(_NanAsKernel, node="HardswishBackward0", batching="pointwise"):
    """x * hardsigmoid(x)."""
    function = staticmethod(lambda a: aten.hardswish(a))
    slope = staticmethod(hardswish_slope)
    kernel = staticmethod(aten.hardswish_backward)
    gradient_op = HardswishBackward


class Glu(Function, node="GluBackward0", saves=("self",), batching=("along", 1)):
    """a * sigmoid(b), a and b the two halves of the input along dim."""

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        ctx.save_for_backward(input)
        return torch.nn.functional.glu(input, dim)

    @staticmethod
    def backward(ctx, grad):
        input, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor) and isinstance(input, torch.Tensor):   # plain: torch's kernel, its bits
            return aten.glu_backward(grad, input, ctx.dim), None
        a, b = input.chunk(2, ctx.dim)
        gate = b.sigmoid()
        return torch.cat([grad * gate, grad * a * gate * (1 - gate)], ctx.dim), None

    @staticmethod
    def jvp(ctx, t_input, _dim):
        a, b = ctx._primals[0].chunk(2, ctx.dim)
        ta, tb = t_input.chunk(2, ctx.dim)
        gate = b.sigmoid()
        return ta * gate + a * gate * (1 - gate) * tb


class Prelu(Function, node="PreluKernelBackward0", saves=("self", "weight"), batching="pointwise"):
    """x for x > 0, weight * x otherwise (weight broadcast along the channels): d/dx = 1 or weight, d/dweight = 0
    or x."""

    @staticmethod
    def forward(ctx, input, weight):
        ctx.save_for_backward(input, weight)
        return aten._prelu_kernel(input, weight)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        positive = input > 0
        return grad.where(positive, grad * weight), (grad * input).masked_fill(positive, 0.0)

    @staticmethod
    def jvp(ctx, t_input, t_weight):
        """torch's formula: the input's tangent where x >= 0 (at 0 too, where backward uses x > 0), else
        weight * its tangent + the weight's tangent * x."""
        input, weight = ctx._primals
        t_input = torch.zeros_like(input) if t_input is None else t_input
        negative = t_input * weight
        if t_weight is not None:   # (a zero tangent adds nothing, even where x is inf or nan)
            negative = negative + (t_weight * input).masked_fill(t_weight == 0, 0.0)
        return t_input.where(input >= 0, negative)


class Celu(Function, node="CeluBackward0", saves=("self",), batching="pointwise"):
    """celu(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1)): elu with input_scale 1 / alpha, so its gradient is
    elu_backward(grad, x, alpha, 1, 1 / alpha) (derivatives.yaml), recorded under create_graph as
    EluBackwardBackward0, as torch's."""

    @staticmethod
    def forward(ctx, a, alpha):
        ctx.options = (alpha, 1.0, 1.0 / alpha)
        ctx.save_for_backward(a)
        return aten.celu(a, alpha)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return elu_backward(grad, a, *ctx.options), None

    @staticmethod
    def jvp(ctx, ta, _alpha):
        return elu_backward(ta, ctx._primals[0], *ctx.options)


def mish_derivative(x):
    """d/dx x tanh(softplus(x)) = tanh(sp) + x sigmoid(x) (1 - tanh(sp)²), sp = softplus(x) = log1p(exp(x)),
    written as torch's infinitely_differentiable_mish_backward writes it (exp, then log1p: its second derivative
    is nan where exp(x) overflows, as torch's)."""
    tanh_softplus = x.exp().log1p().tanh()
    return tanh_softplus + x * x.sigmoid() * (1.0 - tanh_softplus * tanh_softplus)


class Mish(_Elementwise, node="MishBackward0", batching="pointwise"):
    """mish(x) = x tanh(softplus(x)). Plain first derivative: torch's mish_backward kernel; under create_graph,
    the formula written out (as torch's infinitely_differentiable_mish_backward), so it can be differentiated
    again."""
    function = staticmethod(lambda a: aten.mish(a))
    derivative = staticmethod(mish_derivative)
    kernel = staticmethod(aten.mish_backward)


def _rrelu_backward_kernel(grad, a, noise, lower, upper, training):
    return aten.rrelu_with_noise_backward(grad, a, noise, lower, upper, training, False)


class RreluWithNoiseBackward(_MaskBackward, node="RreluWithNoiseBackwardBackward0"):
    """rrelu's gradient, recorded: grad times the slope rrelu used at each element (linear in grad, flat in x)."""
    kernel = staticmethod(_rrelu_backward_kernel)


class RreluWithNoise(_Mask, node="RreluWithNoiseBackward0", nondifferentiable_args=(1,)):
    """rrelu: x for x >= 0, a * x below, a slope drawn uniformly from [lower, upper] for each element in training
    (torch's own kernel draws them, element by element, from torch's generator, and writes them into `noise`:
    the same seed gives torch's slopes), the mean slope (lower + upper) / 2 otherwise. d/dx: the slope used,
    kept in `noise` (torch's rrelu_with_noise_backward)."""
    function = staticmethod(lambda a, noise, lower, upper, training: aten.rrelu_with_noise(a, noise, lower, upper,
                                                                                            training))
    kernel = staticmethod(_rrelu_backward_kernel)
    gradient_op = RreluWithNoiseBackward
