"""The ops of neural-network layers: convolution, pooling, layer and batch norm, fused dropout.

Forward calls torch's kernel (torch.ops.aten.*), so values are torch's to the bit. First-order
backward on plain tensors calls torch's backward kernel (convolution_backward, ...). Under
create_graph=True (Variables), backward is written with Variable ops so second derivatives work,
except for convolution: there teachgrad gives the first derivative and a node that refuses, with a
clear error, to be differentiated again (see NoDoubleBackward).
"""
import torch

from ..core.function import Function
from ..rules import variable_class
from . import aten


class NoDoubleBackward(Function, node="NotImplemented", none_is_input=True):
    """Stands after a backward that teachgrad computes only once: differentiating through it raises.

    Its inputs are what the first derivative was computed from (the incoming gradient, the op's inputs), so a
    second derivative reaches it whichever of them it is taken with respect to, and raises there: never a
    silent None. Its outputs are the first derivative's gradients, handed on unchanged.
    """

    @staticmethod
    def forward(ctx, op, n_grads, *grads_then_involved):
        ctx.op = op
        ctx.set_materialize_grads(False)
        grads = grads_then_involved[:n_grads]
        return grads if n_grads > 1 else grads[0]

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(f"teachgrad does not compute the second derivative of {ctx.op} (the backward of "
                                  "its backward); torch does. Differentiate this op only once, or use torch for this part.")


def first_order_only(op, grads, *involved):
    """The gradients from a backward computed on plain tensors; when recording (create_graph) and any of
    `involved` requires grad, the outputs of a NoDoubleBackward node whose inputs are `involved`, so that a second
    derivative with respect to any of them raises."""
    Variable = variable_class.Variable
    if not any(isinstance(v, Variable) and v.requires_grad for v in involved):
        return tuple(None if g is None else Variable._make(g) for g in grads)
    out = NoDoubleBackward.apply(op, len(grads), *grads, *involved)
    return out if isinstance(out, tuple) else (out,)


def _data(x):
    return x.data if isinstance(x, variable_class.Variable) else x


# --- convolution --------------------------------------------------------------------------------

class Convolution(Function, node="ConvolutionBackward0", saves=("input", "weight"), none_is_input=True):
    """conv1d / conv2d: each output element is a weighted sum over a window of the input (torch's convolution).

    Backward: torch's convolution_backward kernel (the input's gradient is a transposed convolution of
    the gradient with the weight; the weight's, a convolution of the input with the gradient).
    """

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups):
        ctx.args = stride, padding, dilation, groups
        ctx.bias_shape = None if bias is None else list(bias.shape)
        ctx.save_for_backward(input, weight)
        return aten.convolution(input, weight, bias, stride, padding, dilation, False,
                                          [0] * len(stride), groups)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        stride, padding, dilation, groups = ctx.args
        mask = list(ctx.needs_input_grad[:3])   # (input, weight, bias)
        grads = aten.convolution_backward(_data(grad), _data(input), _data(weight), ctx.bias_shape,
                                                    stride, padding, dilation, False, [0] * len(stride), groups, mask)
        if isinstance(grad, torch.Tensor):
            return (*grads, None, None, None, None)
        return (*first_order_only("convolution (ConvolutionBackward0)", grads, grad, input, weight),
                None, None, None, None)

    @staticmethod
    def jvp(ctx, tinput, tweight, tbias, *_):
        input, weight, bias, stride, padding, dilation, groups = ctx._primals
        conv = aten.convolution
        zeros = [0] * len(stride)
        tangent = conv(tinput, weight, tbias, stride, padding, dilation, False, zeros, groups)
        return tangent + conv(input, tweight, None, stride, padding, dilation, False, zeros, groups)


class ConvolutionTranspose(Function, node="ConvolutionBackward0", saves=("input", "weight"), none_is_input=True):
    """conv_transpose1d / conv_transpose2d: the gradient of a convolution with respect to its input, used as a
    layer (each input element spreads a weighted window over the output). torch records the same node as for a
    convolution, with transposed=True; output_padding adds rows to one side of the output.

    Backward: torch's convolution_backward kernel, with transposed=True.
    """

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, output_padding, dilation, groups):
        ctx.args = stride, padding, output_padding, dilation, groups
        ctx.bias_shape = None if bias is None else list(bias.shape)
        ctx.save_for_backward(input, weight)
        return aten.convolution(input, weight, bias, stride, padding, dilation, True, output_padding, groups)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        stride, padding, output_padding, dilation, groups = ctx.args
        mask = list(ctx.needs_input_grad[:3])   # (input, weight, bias)
        grads = aten.convolution_backward(_data(grad), _data(input), _data(weight), ctx.bias_shape,
                                                    stride, padding, dilation, True, output_padding, groups, mask)
        if isinstance(grad, torch.Tensor):
            return (*grads, None, None, None, None, None)
        return (*first_order_only("convolution (ConvolutionBackward0)", grads, grad, input, weight),
                None, None, None, None, None)

    @staticmethod
    def jvp(ctx, tinput, tweight, tbias, *_):
        input, weight, bias, stride, padding, output_padding, dilation, groups = ctx._primals
        conv = aten.convolution
        tangent = conv(tinput, weight, tbias, stride, padding, dilation, True, output_padding, groups)
        return tangent + conv(input, tweight, None, stride, padding, dilation, True, output_padding, groups)


# --- pooling ------------------------------------------------------------------------------------

class MaxPool2d(Function, node="MaxPool2DWithIndicesBackward0", saves=("self", "result1")):
    """max_pool2d: the largest element of each window, and where it was (flat index in its H×W plane).

    Backward: each window's gradient goes to its largest element, added where windows overlap:
    a scatter_add into the flattened planes, which works on Variables too (second derivatives).
    """

    @staticmethod
    def forward(ctx, a, kernel_size, stride, padding, dilation, ceil_mode):
        out, indices = aten.max_pool2d_with_indices(a, kernel_size, stride, padding, dilation, ceil_mode)
        ctx.mark_non_differentiable(indices)
        ctx.shape = a.shape
        ctx.save_for_backward(a, indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        _, indices = ctx.saved_tensors
        indices = _data(indices)
        planes = tuple(ctx.shape[:-2]) + (ctx.shape[-2] * ctx.shape[-1],)
        flat_grad = grad.reshape(tuple(grad.shape[:-2]) + (-1,))
        flat_indices = indices.reshape(tuple(indices.shape[:-2]) + (-1,))
        grad_a = grad.new_zeros(planes).scatter_add(-1, flat_indices, flat_grad).reshape(ctx.shape)
        return grad_a, None, None, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        indices = ctx._result[1]
        flat = ta.reshape(tuple(ta.shape[:-2]) + (-1,))
        picked = flat.gather(-1, indices.reshape(tuple(indices.shape[:-2]) + (-1,)))
        return picked.reshape(indices.shape), None


class AvgPool2d(Function, node="AvgPool2DBackward0", saves=("self",)):
    """avg_pool2d: the mean of each window. Backward spreads each window's gradient evenly over it
    (torch's avg_pool2d_backward kernel); that is linear in the gradient, and its own backward is
    avg_pool2d again, so second derivatives work (AvgPool2dBackward)."""

    @staticmethod
    def forward(ctx, a, *options):
        ctx.options = options
        ctx.save_for_backward(a)
        return aten.avg_pool2d(a, *options)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor):
            grad_a = aten.avg_pool2d_backward(grad, _data(a), *ctx.options)
        else:
            grad_a = AvgPool2dBackward.apply(grad, _data(a), *ctx.options)
        return (grad_a,) + (None,) * len(ctx.options)

    @staticmethod
    def jvp(ctx, ta, *_):
        if isinstance(ta, torch.Tensor):
            return aten.avg_pool2d(ta, *ctx.options)
        return AvgPool2d.apply(ta, *ctx.options)   # a tangent with a graph (forward over reverse): recorded


class AvgPool2dBackward(Function, node="AvgPool2DBackwardBackward0", nondifferentiable_args=(1,)):
    """The gradient of avg_pool2d as an op of its own (for create_graph): its backward is avg_pool2d."""

    @staticmethod
    def forward(ctx, grad, a, *options):
        ctx.options = options
        return aten.avg_pool2d_backward(grad, a, *options)

    @staticmethod
    def backward(ctx, gg):
        return (AvgPool2d.apply(gg, *ctx.options), None) + (None,) * len(ctx.options)

    @staticmethod
    def jvp(ctx, tgrad, *_):
        if isinstance(tgrad, torch.Tensor):
            return aten.avg_pool2d_backward(tgrad, ctx._primals[1], *ctx.options)
        return AvgPool2dBackward.apply(tgrad, ctx._primals[1], *ctx.options)   # (recorded, as above)


# --- normalization ------------------------------------------------------------------------------

def _normalize_backward(grad, x, weight, axes, eps):
    """Gradients of y = (x - mean) / sqrt(var + eps) * weight (mean, biased var over `axes`) for input and
    weight, written with Variable ops (mean and var recomputed from x, so a second derivative sees them)."""
    mean = x.mean(axes, keepdim=True)
    centered = x - mean
    rstd = ((centered * centered).mean(axes, keepdim=True) + eps) ** -0.5
    x_hat = centered * rstd
    g = grad if weight is None else grad * weight
    grad_x = rstd * (g - g.mean(axes, keepdim=True) - x_hat * (g * x_hat).mean(axes, keepdim=True))
    return grad_x, x_hat


def _normalize_tangent(tx, x_hat, rstd, axes):
    """The tangent of (x - mean) * rstd: rstd (dx - mean(dx) - x_hat mean(x_hat (dx - mean(dx))))."""
    centered = tx - tx.mean(axes, keepdim=True)
    return rstd * (centered - x_hat * (x_hat * centered).mean(axes, keepdim=True))


# saves: in the order torch packs them
class NativeLayerNorm(Function, node="NativeLayerNormBackward0",
                      saves=("bias", "input", "weight", "result1", "result2"), none_is_input=True):
    """layer_norm: each sample normalized over its last dims (normalized_shape), then * weight + bias."""

    @staticmethod
    def forward(ctx, input, normalized_shape, weight, bias, eps):
        out, mean, rstd = aten.native_layer_norm(input, normalized_shape, weight, bias, eps)
        ctx.normalized_shape, ctx.eps = list(normalized_shape), eps
        ctx.save_for_backward(bias, input, weight, mean, rstd)
        return out

    @staticmethod
    def backward(ctx, grad):
        bias, input, weight, mean, rstd = ctx.saved_tensors
        needs = ctx.needs_input_grad[0], ctx.needs_input_grad[2], ctx.needs_input_grad[3]   # (input, weight, bias)
        if isinstance(grad, torch.Tensor):
            mask = [needs[0], needs[1] and weight is not None, needs[2] and bias is not None]
            gi, gw, gb = aten.native_layer_norm_backward(grad, input, ctx.normalized_shape, mean, rstd,
                                                                   weight, bias, mask)
            return gi, None, gw, gb, None
        n = len(ctx.normalized_shape)
        axes = tuple(range(input.dim() - n, input.dim()))
        batch = tuple(range(input.dim() - n))
        grad_x, x_hat = _normalize_backward(grad, input, weight, axes, ctx.eps)
        gw = _sum_over(grad * x_hat, batch) if weight is not None and needs[1] else None
        gb = _sum_over(grad, batch) if bias is not None and needs[2] else None
        return grad_x if needs[0] else None, None, gw, gb, None

    @staticmethod
    def jvp(ctx, tinput, _shape, tweight, tbias, _eps):
        input, _, weight, bias, _ = ctx._primals
        n = len(ctx.normalized_shape)
        axes = tuple(range(input.dim() - n, input.dim()))
        mean = input.mean(axes, keepdim=True)
        rstd = ((input - mean).pow(2).mean(axes, keepdim=True) + ctx.eps).rsqrt()
        x_hat = (input - mean) * rstd
        tangent = _normalize_tangent(tinput, x_hat, rstd, axes)
        if weight is not None:
            tangent = tangent * weight + x_hat * tweight
        return tangent if bias is None else tangent + tbias


def _sum_over(x, dims):
    return x.sum(dims) if dims else x


# saves: torch's packing order
class NativeBatchNorm(Function, node="NativeBatchNormBackward0",
                      saves=("input", "running_mean", "running_var", "weight", "result1", "result2"),
                      none_is_input=True, nondifferentiable_args=(3, 4)):
    """batch_norm: each channel (dim 1) normalized over the batch and the other dims, then * weight + bias.

    Training: by the batch's mean and (biased) variance, and the running stats are updated in place by
    torch's kernel (with the unbiased variance), as torch does. Eval: by the running stats.
    """

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps):
        out, save_mean, save_invstd = aten.native_batch_norm(input, weight, bias, running_mean, running_var,
                                                                       training, momentum, eps)
        ctx.training, ctx.eps = training, eps
        ctx.save_for_backward(input, running_mean, running_var, weight, save_mean, save_invstd)
        return out

    @staticmethod
    def backward(ctx, grad):
        input, running_mean, running_var, weight, save_mean, save_invstd = ctx.saved_tensors
        needs = ctx.needs_input_grad   # (input, weight, bias)
        if isinstance(grad, torch.Tensor):
            gi, gw, gb = aten.native_batch_norm_backward(
                grad, input, weight, running_mean, running_var, save_mean, save_invstd, ctx.training, ctx.eps,
                [needs[0], needs[1], needs[2]])
            return gi, gw, gb, None, None, None, None, None
        axes = (0,) + tuple(range(2, input.dim()))
        shape = [1, -1] + [1] * (input.dim() - 2)      # a per-channel tensor, broadcast against the input
        w = None if weight is None else weight.reshape(shape)
        if ctx.training:
            grad_x, x_hat = _normalize_backward(grad, input, w, axes, ctx.eps)
        else:
            invstd = (_data(running_var).reshape(shape) + ctx.eps).rsqrt()
            x_hat = (input - _data(running_mean).reshape(shape)) * invstd
            grad_x = grad * invstd if w is None else grad * (w * invstd)
        gw = (grad * x_hat).sum(axes) if weight is not None and needs[1] else None
        gb = grad.sum(axes) if needs[2] else None
        return grad_x if needs[0] else None, gw, gb, None, None, None, None, None

    @staticmethod
    def jvp(ctx, tinput, tweight, tbias, *_):
        input, weight, bias, running_mean, running_var, training, _, eps = ctx._primals
        axes = (0,) + tuple(range(2, input.dim()))
        shape = [1, -1] + [1] * (input.dim() - 2)
        if training:
            mean = input.mean(axes, keepdim=True)
            rstd = ((input - mean).pow(2).mean(axes, keepdim=True) + eps).rsqrt()
            x_hat = (input - mean) * rstd
            tangent = _normalize_tangent(tinput, x_hat, rstd, axes)
        else:
            rstd = (running_var.reshape(shape) + eps).rsqrt()
            x_hat = (input - running_mean.reshape(shape)) * rstd
            tangent = tinput * rstd
        if weight is not None:
            tangent = tangent * weight.reshape(shape) + x_hat * tweight.reshape(shape)
        return tangent if bias is None else tangent + tbias.reshape(shape)


# --- dropout on accelerators --------------------------------------------------------------------

class NativeDropout(Function, node="NativeDropoutBackward0", saves=("result1",)):
    """torch's fused dropout kernel, which torch uses off the CPU: input * mask / (1 - p)."""

    @staticmethod
    def forward(ctx, input, p, train):
        out, mask = torch.native_dropout(input, p, train)
        ctx.scale = 1.0 / (1.0 - p) if p < 1 else 0.0
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return out, mask

    @staticmethod
    def backward(ctx, grad, grad_mask):
        mask, = ctx.saved_tensors
        return grad * (_data(mask) * ctx.scale), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return ta * (ctx._result[1] * ctx.scale), None


# --- group norm ---------------------------------------------------------------------------------

class NativeGroupNorm(Function, node="NativeGroupNormBackward0", saves=("input", "weight", "result1", "result2"),
                      none_is_input=True):
    """group_norm: the C channels of each sample split into `group` groups, each group normalized over its
    channels and the spatial dims (its own mean and biased variance), then * weight + bias per channel.

    Backward: torch's native_group_norm_backward kernel on plain tensors; under create_graph the formula of
    layer norm over each group (`_normalize_backward`), written with Variable ops, so second derivatives work.
    """

    @staticmethod
    def forward(ctx, input, weight, bias, n, c, hxw, group, eps):
        out, mean, rstd = aten.native_group_norm(input, weight, bias, n, c, hxw, group, eps)
        ctx.sizes, ctx.eps = (n, c, hxw, group), eps
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(input, weight, mean, rstd)
        return out, mean, rstd

    @staticmethod
    def backward(ctx, grad, grad_mean, grad_rstd):
        input, weight, mean, rstd = ctx.saved_tensors
        n, c, hxw, group = ctx.sizes
        needs = ctx.needs_input_grad[:3]   # (input, weight, bias)
        grouped = [n, group, hxw * c // group]
        gi = gw = gb = None
        if grad is None:
            grad = _data(input).new_zeros(input.shape)
        if isinstance(grad, torch.Tensor) and grad_mean is None and grad_rstd is None:
            gi, gw, gb = aten.native_group_norm_backward(grad, input, mean, rstd, weight, n, c, hxw, group,
                                                         [needs[0], needs[1] and weight is not None, needs[2]])
        else:
            channel = [1, c] + [1] * (input.dim() - 2)   # a per-channel tensor, broadcast against the input
            g = grad if weight is None else grad * weight.reshape(channel)
            grad_x, x_hat = _normalize_backward(g.reshape(grouped), input.reshape(grouped), None, (2,), ctx.eps)
            size = grouped[2]
            if grad_mean is not None:   # d mean / dx = 1 / size, over the group
                grad_x = grad_x + grad_mean.unsqueeze(2) / size
            if grad_rstd is not None:   # d rstd / dx = -rstd³ (x - mean) / size
                centered = input.reshape(grouped) - mean.unsqueeze(2)
                grad_x = grad_x - grad_rstd.unsqueeze(2) * rstd.unsqueeze(2).pow(3) * centered / size
            axes = (0,) + tuple(range(2, input.dim()))
            gi = grad_x.reshape(input.shape) if needs[0] else None
            gw = (grad * x_hat.reshape(input.shape)).sum(axes) if weight is not None and needs[1] else None
            gb = grad.sum(axes) if needs[2] else None
        return gi, gw, gb, None, None, None, None, None

    @staticmethod
    def jvp(ctx, tinput, tweight, tbias, *_):
        input, weight, bias, n, c, hxw, group, eps = ctx._primals
        grouped = [n, group, hxw * c // group]
        tinput = torch.zeros_like(input) if tinput is None else tinput
        x = input.reshape(grouped)
        mean = x.mean(2, keepdim=True)
        rstd = ((x - mean).pow(2).mean(2, keepdim=True) + eps).rsqrt()
        x_hat = (x - mean) * rstd
        tangent = _normalize_tangent(tinput.reshape(grouped), x_hat, rstd, (2,)).reshape(input.shape)
        x_hat = x_hat.reshape(input.shape)
        channel = [1, c] + [1] * (input.dim() - 2)
        if weight is not None:
            tangent = tangent * weight.reshape(channel)
            if tweight is not None:
                tangent = tangent + x_hat * tweight.reshape(channel)
        tangent = tangent if tbias is None else tangent + tbias.reshape(channel)
        t_x = tinput.reshape(grouped)   # the statistics' tangents: mean(dx), -rstd³ mean((x - mean) dx)
        t_mean = t_x.mean(2)
        t_rstd = -(rstd.pow(3) * ((x - mean) * (t_x - t_mean.unsqueeze(2))).mean(2, keepdim=True)).squeeze(2)
        return tangent, t_mean, t_rstd


# --- embedding bag ------------------------------------------------------------------------------

class EmbeddingBag(Function, node="EmbeddingBagBackward0", none_is_input=True, nondifferentiable_args=(1, 2),
                   saves=("indices", "offsets", "per_sample_weights", "weight", "result1", "result2", "result3")):
    """embedding_bag: the rows of `weight` at `indices`, reduced bag by bag (bags start at `offsets`): summed
    (mode 0, each row times its per-sample weight if given), averaged (1) or their maximum (2). Returns
    (output, offset2bag, bag_size, max_indices) as torch's _embedding_bag.

    Backward: torch's _embedding_bag_backward kernel (each bag's gradient added to the rows it read, divided by
    the bag's size for the mean, only to the row that was largest for the max) and, for per_sample_weights,
    _embedding_bag_per_sample_weights_backward (the gradient dotted with each row read). torch differentiates
    neither again, nor has a forward mode for it: teachgrad refuses both as torch does.
    """

    @staticmethod
    def forward(ctx, weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                include_last_offset, padding_idx):
        out, offset2bag, bag_size, max_indices = aten._embedding_bag(
            weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
            padding_idx)
        ctx.options = scale_grad_by_freq, mode, sparse, padding_idx
        ctx.num_weights = weight.shape[0]
        ctx.mark_non_differentiable(offset2bag, bag_size, max_indices)
        ctx.save_for_backward(indices, offsets, per_sample_weights, weight, offset2bag, bag_size, max_indices)
        return out, offset2bag, bag_size, max_indices

    @staticmethod
    def backward(ctx, grad, *_):
        indices, offsets, per_sample_weights, weight, offset2bag, bag_size, max_indices = ctx.saved_tensors
        scale_grad_by_freq, mode, sparse, padding_idx = ctx.options
        plain = _data(grad)
        psw = _data(per_sample_weights)
        grad_weight = grad_psw = None
        if ctx.needs_input_grad[0]:
            grad_weight = aten._embedding_bag_backward(plain, indices, offsets, offset2bag, bag_size, max_indices,
                                                       ctx.num_weights, scale_grad_by_freq, mode, sparse, psw,
                                                       padding_idx)
        if ctx.needs_input_grad[6]:
            grad_psw = aten._embedding_bag_per_sample_weights_backward(plain, _data(weight), indices, offsets,
                                                                      offset2bag, mode, padding_idx)
        if not isinstance(grad, torch.Tensor):   # create_graph: torch's node, which refuses a second derivative
            grad_weight, grad_psw = (None if g is None else EmbeddingBagBackward.apply(grad, weight, g)
                                     for g in (grad_weight, grad_psw))
        return grad_weight, None, None, None, None, None, grad_psw, None, None

    @staticmethod
    def jvp(ctx, *_):
        raise NotImplementedError("Trying to use forward AD with _embedding_bag that does not support it because it "
                                  "has not been implemented yet.\nPlease file an issue to PyTorch at "
                                  "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
                                  "we can prioritize its implementation or submit a PR adding the implementation to "
                                  "derivatives.yaml")


class EmbeddingBagBackward(Function, node="EmbeddingBagBackwardBackward0", nondifferentiable_args=(2,)):
    """embedding_bag's gradient under create_graph, recorded as torch records it; differentiating it again raises
    torch's error (derivatives.yaml has no formula for _embedding_bag_backward)."""

    @staticmethod
    def forward(ctx, grad, weight, computed):
        return computed

    @staticmethod
    def backward(ctx, *_):
        raise NotImplementedError("the derivative for '_embedding_bag_backward' is not implemented.")
