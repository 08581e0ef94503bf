"""Padding by reflection and replication, adaptive average and max pooling: ops torch computes with a kernel
forward and a kernel backward (aten's reflection_pad2d and reflection_pad2d_backward, ...), run here on the data.
Their gradient is torch's own kernel's. Under create_graph it is recorded as an op of its own (`_GradOf`): linear
in the incoming gradient, so its backward is the op itself (for max pooling, picking at the indices); the
gradient does not depend on the input, so the second derivative in the input is zero.

Guarded by tests/test_op_families.py (each op against torch) and tests/test_op_db.py (torch's own samples and
nn modules).
"""
import torch

from ..core.function import Function
from .layers import _data

aten = torch.ops.aten


class _Kernels(Function, saves=("self",)):
    """function(a, *options) forward, kernel(grad, a, *options) backward; linear in a, so its tangent is the
    function of the tangent. Where torch's backward kernel takes the input itself (`self`, not only its size), its
    recorded gradient's derivative in it is zeros (derivatives.yaml: `self: zeros_like(self)`)."""

    kernel_takes_input = True   # False where torch's backward kernel takes only the input's size (upsampling)

    def __init_subclass__(cls, **bookkeeping):
        super().__init_subclass__(**bookkeeping)
        # its recorded gradient, a node named as torch names it (ReflectionPad2DBackward0's gradient records
        # ReflectionPad2DBackwardBackward0)
        if "node_name" in cls.__dict__:
            cls.grad_op = type(cls.__name__ + "Grad", (_GradOf,), {"__module__": cls.__module__},
                               node=cls.node_name.removesuffix("0") + "Backward0")

    @classmethod
    def forward(cls, ctx, a, *options):
        ctx.options = options
        ctx.save_for_backward(a)
        return cls.function(a, *options)

    @classmethod
    def backward(cls, ctx, grad):
        a, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor):
            grad_a = cls.kernel(grad, _data(a), *ctx.options)
        else:   # create_graph: recorded
            grad_a = cls.grad_op.apply(grad, a if cls.kernel_takes_input else _data(a), cls, *ctx.options)
        return (grad_a,) + (None,) * len(ctx.options)

    @classmethod
    def jvp(cls, ctx, ta, *_):
        if isinstance(ta, torch.Tensor):
            return cls.function(ta, *ctx.options)
        return cls.apply(ta, *ctx.options)   # a tangent with a graph (forward over reverse): recorded


class _GradOf(Function):
    """The gradient of a `_Kernels` op (its kernel), recorded: linear in grad, so its own backward is the op; flat
    in the input, whose gradient is zeros where it is an input of the node. Each op has its own subclass,
    `op.grad_op`, for torch's node name."""

    @staticmethod
    def forward(ctx, grad, a, op, *options):
        ctx.op, ctx.options, ctx.input_shape = op, options, a.shape
        return op.kernel(grad, a, *options)

    @staticmethod
    def backward(ctx, gg):
        zeros = gg.new_zeros(ctx.input_shape) if ctx.needs_input_grad[1] else None
        return (ctx.op.apply(gg, *ctx.options), zeros, None) + (None,) * len(ctx.options)

    @staticmethod
    def jvp(ctx, t_grad, *_):
        if isinstance(t_grad, torch.Tensor):
            return ctx.op.kernel(t_grad, ctx._primals[1], *ctx.options)
        return ctx.op.grad_op.apply(t_grad, ctx._primals[1], ctx.op, *ctx.options)   # (a tangent with a graph: recorded)


class ReflectionPad1d(_Kernels, node="ReflectionPad1DBackward0"):
    """The last dim padded with its own mirror image (the edge element not repeated)."""
    function, kernel = staticmethod(aten.reflection_pad1d), staticmethod(aten.reflection_pad1d_backward)


class ReflectionPad2d(_Kernels, node="ReflectionPad2DBackward0"):
    function, kernel = staticmethod(aten.reflection_pad2d), staticmethod(aten.reflection_pad2d_backward)


class ReflectionPad3d(_Kernels, node="ReflectionPad3DBackward0"):
    function, kernel = staticmethod(aten.reflection_pad3d), staticmethod(aten.reflection_pad3d_backward)


class ReplicationPad1d(_Kernels, node="ReplicationPad1DBackward0"):
    """The last dim padded with copies of its edge elements."""
    function, kernel = staticmethod(aten.replication_pad1d), staticmethod(aten.replication_pad1d_backward)


class ReplicationPad2d(_Kernels, node="ReplicationPad2DBackward0"):
    function, kernel = staticmethod(aten.replication_pad2d), staticmethod(aten.replication_pad2d_backward)


class ReplicationPad3d(_Kernels, node="ReplicationPad3DBackward0"):
    function, kernel = staticmethod(aten.replication_pad3d), staticmethod(aten.replication_pad3d_backward)


PADS = {("reflect", 1): ReflectionPad1d, ("reflect", 2): ReflectionPad2d, ("reflect", 3): ReflectionPad3d,
        ("replicate", 1): ReplicationPad1d, ("replicate", 2): ReplicationPad2d, ("replicate", 3): ReplicationPad3d}


class AdaptiveAvgPool2d(_Kernels, node="AdaptiveAvgPool2DBackward0"):
    """The mean of each of output_size windows that tile the last two dims."""
    function = staticmethod(aten._adaptive_avg_pool2d)
    kernel = staticmethod(lambda grad, a, output_size: aten._adaptive_avg_pool2d_backward(grad, a))


class AdaptiveMaxPool2d(Function, node="AdaptiveMaxPool2DBackward0", saves=("self", "result1")):
    """The largest element of each of output_size windows, and where it is: its gradient goes there."""

    @staticmethod
    def forward(ctx, a, output_size):
        out, indices = aten.adaptive_max_pool2d(a, output_size)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(a, indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        a, indices = ctx.saved_tensors
        if isinstance(grad, torch.Tensor):
            return aten.adaptive_max_pool2d_backward(grad, _data(a), _data(indices)), None
        return AdaptiveMaxPool2dBackward.apply(grad, _data(a), _data(indices)), None   # create_graph: recorded

    @staticmethod
    def jvp(ctx, ta, _output_size):
        return _pick(ta, ctx._result[1]), None


def _pick(x, indices):
    """x's elements at max pooling's indices (positions in the flattened last two dims)."""
    flat = x.reshape(*x.shape[:-2], -1)
    return flat.gather(-1, indices.reshape(*indices.shape[:-2], -1)).reshape(indices.shape)


class AdaptiveMaxPool2dBackward(Function, node="AdaptiveMaxPool2DBackwardBackward0", nondifferentiable_args=(1, 2)):
    """adaptive_max_pool2d's gradient, recorded: each window's gradient put at its max; its backward picks there."""

    @staticmethod
    def forward(ctx, grad, a, indices):
        ctx.indices = indices
        return aten.adaptive_max_pool2d_backward(grad, a, indices)

    @staticmethod
    def backward(ctx, gg):
        return _pick(gg, ctx.indices), None, None

    @staticmethod
    def jvp(ctx, t_grad, *_):
        if isinstance(t_grad, torch.Tensor):
            return aten.adaptive_max_pool2d_backward(t_grad, ctx._primals[1], ctx.indices)
        return AdaptiveMaxPool2dBackward.apply(t_grad, ctx._primals[1], ctx.indices)   # (recorded, as above)
