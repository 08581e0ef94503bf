"""Activation functions: gelu, silu, softplus, elu, leaky_relu (and erf, which gelu's derivative needs);
softmax and log_softmax along a dim.

Each derivative is written once, in `*_derivative(x, ...)`, with operations torch tensors and
Variables share: backward multiplies it by the gradient (and records a graph under create_graph),
jvp by the tangent. A first-order backward on plain tensors calls torch's own backward kernel where
there is one (`kernel`), so the gradient is torch's to the bit, not only to round-off. Formulas from torch's derivatives.yaml and its gelu/silu/softplus/elu/leaky_relu
backward kernels. Elu's gradient is torch's kernel at every order: under create_graph it is a node of its own
(EluBackwardBackward0, as torch's), differentiated by torch's formulas for elu_backward, because at nan the
kernel's answer depends on where the element falls (tests/test_op_db_fixes.py). Softmax and log_softmax, last,
are written out in full.
"""
import math

import torch
import torch.nn.functional as F

from ..core.function import Function
from . import aten


class _Elementwise(Function, saves=("self",)):
    """f(a, *options) element by element: the gradient is grad * f'(a); f' comes from `derivative`."""

    options = 0   # how many non-tensor arguments follow a
    kernel = None  # torch's backward kernel, kernel(grad, a, *options), for plain tensors
    gradient_op = None   # the kernel as an op of its own (a _MaskBackward), which records the gradient under
                         # create_graph as torch does, where torch records it so

    @classmethod
    def forward(cls, ctx, a, *options):
        ctx.options = options
        ctx.save_for_backward(a)
        return cls.function(a, *options)

    @classmethod
    def backward(cls, ctx, grad):
        a, = ctx.saved_tensors
        if cls.kernel is not None and isinstance(grad, torch.Tensor) and isinstance(a, torch.Tensor):
            return (cls.kernel(grad, a, *ctx.options),) + (None,) * len(ctx.options)
        if cls.gradient_op is not None:
            return (cls.gradient_op.apply(grad, a, *ctx.options),) + (None,) * len(ctx.options)
        return (grad * cls.derivative(a, *ctx.options),) + (None,) * len(ctx.options)

    @classmethod
    def jvp(cls, ctx, ta, *_):
        return ta * cls.derivative(ctx._primals[0], *ctx.options)


class _MaskBackward(Function, saves=("self",)):
    """The gradient of a piecewise-linear activation as an op of its own, recorded under create_graph as torch
    records it (HardtanhBackwardBackward0, LeakyReluBackwardBackward0, ...): `kernel(grad, self, *options)`, torch's
    backward kernel. It is linear in grad, with the same mask; it is flat in self, whose gradient is zeros, not None
    (derivatives.yaml: `self: zeros_like(grad)`), so a second derivative is zeros, as torch's."""

    kernel = None   # torch's backward kernel, kernel(grad, a, *options)

    @classmethod
    def forward(cls, ctx, grad, a, *options):
        ctx.options = options
        ctx.save_for_backward(a)
        return cls.kernel(grad, a, *options)

    @classmethod
    def backward(cls, ctx, gg):
        a, = ctx.saved_tensors
        return (cls.masked(gg, a, ctx.options), gg.new_zeros(gg.shape)) + (None,) * len(ctx.options)

    @classmethod
    def jvp(cls, ctx, t_grad, *_):
        return cls.masked(t_grad, ctx._primals[1], ctx.options)

    @classmethod
    def masked(cls, grad, a, options):
        """kernel(grad, a, *options): torch's kernel on plain tensors, recorded as this op on Variables."""
        if isinstance(grad, torch.Tensor) and isinstance(a, torch.Tensor):
            return cls.kernel(grad, a, *options)
        return cls.apply(grad, a, *options)


def erf_derivative(x):
    return (-x * x).exp() * (2 / math.sqrt(math.pi))


class Erf(_Elementwise, node="ErfBackward0", batching="pointwise", function="erf", method="erf", special="erf"):
    """erf(a): d/da = 2/sqrt(pi) exp(-a²)."""

    function = staticmethod(torch.erf)
    derivative = staticmethod(erf_derivative)


def gelu_derivative(x, approximate):
    """d/dx of x Φ(x) (Φ the normal CDF), or of its tanh approximation, as torch's GeluBackward kernel."""
    if approximate == "tanh":
        beta, kappa = math.sqrt(2 / math.pi), 0.044715
        inner = (x + kappa * x * x * x) * beta
        t = inner.tanh()
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * beta * (1 + 3 * kappa * x * x)
    cdf = 0.5 * (1 + (x * math.sqrt(0.5)).erf())
    pdf = (-0.5 * x * x).exp() / math.sqrt(2 * math.pi)
    return cdf + x * pdf


class Gelu(_Elementwise, node="GeluBackward0", batching="pointwise"):
    """gelu(a) = a Φ(a) (approximate='none'), or with Φ approximated by tanh (approximate='tanh')."""

    function = staticmethod(lambda a, approximate: F.gelu(a, approximate=approximate))
    derivative = staticmethod(gelu_derivative)
    kernel = staticmethod(lambda grad, a, approximate: aten.gelu_backward(grad, a, approximate=approximate))


def silu_derivative(x):
    s = x.sigmoid()
    return s * (1 + x * (1 - s))


class Silu(_Elementwise, node="SiluBackward0", batching="pointwise"):
    """silu(a) = a sigmoid(a): d/da = s (1 + a (1 - s))."""

    function = staticmethod(F.silu)
    derivative = staticmethod(silu_derivative)
    kernel = staticmethod(aten.silu_backward)


def softplus_derivative(x, beta, threshold):
    """sigmoid(beta x), and 1 where beta x > threshold (there softplus is x itself); nan at nan, as torch's."""
    return (x * beta).sigmoid().masked_fill(x * beta > threshold, 1.0)


class Softplus(_Elementwise, node="SoftplusBackward0", batching="pointwise"):
    """softplus(a) = log(1 + exp(beta a)) / beta, and a itself where beta a > threshold."""

    function = staticmethod(lambda a, beta, threshold: F.softplus(a, beta, threshold))
    derivative = staticmethod(softplus_derivative)
    kernel = staticmethod(aten.softplus_backward)


def elu_backward(grad, x, alpha, scale, input_scale):
    """grad * elu'(x): torch's elu_backward kernel on plain tensors; recorded as EluBackwardBackward0 otherwise.

    elu'(x) is scale for x > 0, else input_scale * scale * alpha * exp(x * input_scale). At nan the kernel gives
    nan in its vectorized loop and grad * scale in its scalar loop (the tail of the tensor): only calling the
    kernel itself gives torch's numbers there, at every order.
    """
    if isinstance(grad, torch.Tensor) and isinstance(x, torch.Tensor):
        return aten.elu_backward(grad, alpha, scale, input_scale, False, x)
    return EluBackward.apply(grad, x, alpha, scale, input_scale)


def elu_double_backward(grad, grad_output, x, alpha, scale, input_scale):
    """The derivative of elu_backward in x (torch's elu_double_backward, for a saved input): elu_backward of
    grad * grad_output * input_scale, kept only where x < 0 (elsewhere the slope is the constant scale; at nan
    the kernel's value times 0, so nan where the kernel gave nan)."""
    negative = (getattr(x, "data", x) < 0).to(getattr(grad, "data", grad).dtype)
    return elu_backward(grad * grad_output * input_scale, x, alpha, scale, input_scale) * negative


class Elu(Function, node="EluBackward0", saves=("self",), batching="pointwise"):
    """elu(a) = a for a > 0, alpha (exp(a) - 1) otherwise (scale and input_scale as torch's selu/celu use them).

    Its gradient is elu_backward(grad, a), torch's kernel; under create_graph that is a node of its own
    (EluBackward below), whose derivatives are torch's formulas for elu_backward."""

    @staticmethod
    def forward(ctx, a, alpha, scale, input_scale):
        ctx.options = (alpha, scale, input_scale)
        ctx.save_for_backward(a)
        return aten.elu(a, alpha, scale, input_scale)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return elu_backward(grad, a, *ctx.options), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return elu_backward(ta, ctx._primals[0], *ctx.options)


class EluBackward(Function, node="EluBackwardBackward0", saves=("grad_output", "self_or_result")):
    """elu_backward(grad_output, a) = grad_output * elu'(a), recorded: the first gradient of elu under
    create_graph. d/dgrad_output is elu_backward again; d/da is elu_double_backward (derivatives.yaml)."""

    @staticmethod
    def forward(ctx, grad_output, a, alpha, scale, input_scale):
        ctx.options = (alpha, scale, input_scale)
        ctx.save_for_backward(grad_output, a)
        return aten.elu_backward(grad_output, alpha, scale, input_scale, False, a)

    @staticmethod
    def backward(ctx, grad):
        grad_output, a = ctx.saved_tensors
        return (elu_backward(grad, a, *ctx.options), elu_double_backward(grad, grad_output, a, *ctx.options),
                None, None, None)

    @staticmethod
    def jvp(ctx, t_grad_output, t_a, *_):
        """elu_backward(grad_output_t, a) + elu_double_backward(a_t, grad_output, a)."""
        grad_output, a = ctx._primals[:2]
        terms = [] if t_grad_output is None else [elu_backward(t_grad_output, a, *ctx.options)]
        if t_a is not None:
            terms.append(elu_double_backward(t_a, grad_output, a, *ctx.options))
        return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def leaky_relu_derivative(x, negative_slope):
    return (x > 0).to(x.dtype) * (1 - negative_slope) + negative_slope


class LeakyReluBackward(_MaskBackward, node="LeakyReluBackwardBackward0", batching="pointwise"):
    kernel = staticmethod(lambda grad, a, negative_slope: aten.leaky_relu_backward(grad, a, negative_slope, False))


class LeakyRelu(_Elementwise, node="LeakyReluBackward0", batching="pointwise"):
    """leaky_relu(a) = a for a > 0, negative_slope * a otherwise."""

    function = staticmethod(lambda a, negative_slope: F.leaky_relu(a, negative_slope))
    derivative = staticmethod(leaky_relu_derivative)
    kernel = LeakyReluBackward.kernel
    gradient_op = LeakyReluBackward


class LogSigmoid(Function, node="LogSigmoidBackward0", saves=("self", "buffer"), batching="pointwise"):
    """log(sigmoid(a)), computed stably: d/da = 1 - sigmoid(a) = sigmoid(-a).

    torch's kernel also keeps a `buffer` (what it needs to compute the gradient on some devices); it is saved
    here too, and a first-order backward on plain tensors hands it to torch's backward kernel.
    """

    @staticmethod
    def forward(ctx, a):
        result, buffer = aten.log_sigmoid_forward(a)
        ctx.save_for_backward(a, buffer)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, buffer = ctx.saved_tensors
        if isinstance(grad, torch.Tensor) and isinstance(a, torch.Tensor):   # plain: torch's kernel, its bits
            return aten.log_sigmoid_backward(grad, a, buffer)
        return grad * (-a).sigmoid()

    @staticmethod
    def jvp(ctx, ta):
        return ta * (-ctx._primals[0]).sigmoid()


class Softmax(Function, node="SoftmaxBackward0", saves=("result",), batching=("along", 1)):
    """exp(x) / sum(exp(x)) along dim.  Backward: s * (g - sum(g * s))."""

    @staticmethod
    def forward(ctx, input, dim):
        result = input.softmax(dim)
        ctx.dim = dim
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        s, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor) and isinstance(s, torch.Tensor):   # plain: torch's kernel, its bits
            return aten._softmax_backward_data(grad, s, ctx.dim, s.dtype), None
        return s * (grad - (grad * s).sum(ctx.dim, keepdim=True)), None

    @staticmethod
    def jvp(ctx, tx, _dim):
        s = ctx._result
        return s * (tx - (tx * s).sum(ctx.dim, keepdim=True))


class LogSoftmax(Function, node="LogSoftmaxBackward0", saves=("result",), batching=("along", 1)):
    """x - log(sum(exp(x))) along dim.  Backward: g - exp(result) * sum(g)."""

    @staticmethod
    def forward(ctx, input, dim):
        result = input.log_softmax(dim)
        ctx.dim = dim
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor) and isinstance(result, torch.Tensor):   # plain: torch's kernel, its bits
            return aten._log_softmax_backward_data(grad, result, ctx.dim, result.dtype), None
        return grad - result.exp() * grad.sum(ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(ctx, tx, _dim):
        return tx - ctx._result.exp().mul(tx).sum(ctx.dim, keepdim=True)
