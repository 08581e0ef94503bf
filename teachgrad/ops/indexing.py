"""Ops that pick or place elements by index: gather, scatter, scatter_add, index_select,
masked_select, embedding. Each backward places the gradient where the elements came from (or reads it
back from where they went), as torch's derivatives.yaml says.

The formulas call `gather`, `scatter`, `scatter_add` on the gradient: on plain tensors those are
torch's kernels; on Variables (create_graph=True) they are the ops below, so second derivatives work.
"""
import torch

from ..core.function import Function
from .shape import place_in_zeros
from . import aten


class Gather(Function, node="GatherBackward0", saves=("index", "self"), nondifferentiable_args=(2,)):
    """a.gather(dim, index): out[i][j] = a[index[i][j]][j] (dim 0). The gradient is scatter-added back."""

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.shape = dim, a.shape
        ctx.save_for_backward(index, a)   # torch keeps self too (for its size), so a later write to it is caught
        return torch.gather(a, dim, index)

    @staticmethod
    def backward(ctx, grad):
        index, _ = ctx.saved_tensors
        return grad.new_zeros(ctx.shape).scatter_add(ctx.dim, index.data, grad), None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _index):
        return ta.gather(ctx.dim, ctx._primals[2])


class Scatter(Function, node="ScatterBackward0", saves=("index",), nondifferentiable_args=(2,)):
    """a.scatter(dim, index, src): a with src's elements written at index. a's gradient is the gradient
    with the overwritten places zeroed; src's is the gradient read back at index."""

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim = dim
        ctx.save_for_backward(index)
        return a.scatter(dim, index, src)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        index = index.data
        grad_a = grad.scatter(ctx.dim, index, 0) if ctx.needs_input_grad[0] else None
        grad_src = grad.gather(ctx.dim, index) if ctx.needs_input_grad[3] else None
        return grad_a, None, None, grad_src

    @staticmethod
    def jvp(ctx, ta, _dim, _index, tsrc):
        return ta.scatter(ctx.dim, ctx._primals[2], tsrc)


class ScatterValue(Function, node="ScatterBackward1", saves=("index",), nondifferentiable_args=(2,)):
    """a.scatter(dim, index, value) for a number: the overwritten places get no gradient."""

    @staticmethod
    def forward(ctx, a, dim, index, value):
        ctx.dim = dim
        ctx.save_for_backward(index)
        return a.scatter(dim, index, value)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        return grad.scatter(ctx.dim, index.data, 0), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return ta.scatter(ctx.dim, ctx._primals[2], 0)


class ScatterAdd(Function, node="ScatterAddBackward0", saves=("index",), nondifferentiable_args=(2,)):
    """a.scatter_add(dim, index, src): src's elements added into a at index (repeats add up)."""

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim = dim
        ctx.save_for_backward(index)
        return a.scatter_add(dim, index, src)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        grad_src = grad.gather(ctx.dim, index.data) if ctx.needs_input_grad[3] else None
        return grad, None, None, grad_src

    @staticmethod
    def jvp(ctx, ta, _dim, _index, tsrc):
        return ta.scatter_add(ctx.dim, ctx._primals[2], tsrc)


class IndexSelect(Function, node="IndexSelectBackward0", saves=("index",), nondifferentiable_args=(2,),
                  batching=("along", 1)):
    """a.index_select(dim, index): whole slices along dim, in the order index lists them (repeats add up)."""

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.shape = dim % max(a.dim(), 1), a.shape
        ctx.save_for_backward(index)
        return a.index_select(dim, index)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        index = index.data
        if isinstance(grad, torch.Tensor):
            return grad.new_zeros(ctx.shape).index_add_(ctx.dim, index, grad), None, None
        # a Variable (create_graph): the same sum, recorded as an accumulating index_put
        if len(ctx.shape) == 0:
            return grad.reshape(()), None, None
        where = (None,) * ctx.dim + (index.reshape(-1),)
        return place_in_zeros(grad, ctx.shape, where, accumulate=True), None, None

    @staticmethod
    def jvp(ctx, ta, _dim, _index):
        return ta.index_select(ctx.dim, ctx._primals[2])


class MaskedSelect(Function, node="MaskedSelectBackward0", saves=("mask", "self"), nondifferentiable_args=(1,)):
    """a.masked_select(mask): the elements where mask (broadcast with a) holds, as a 1-D tensor."""

    @staticmethod
    def forward(ctx, a, mask):
        result = a.masked_select(mask)   # (first: torch's kernel gives the error for shapes that do not broadcast)
        ctx.shape = torch.broadcast_shapes(a.shape, mask.shape)
        ctx.save_for_backward(mask, a)   # torch keeps self too (for its size)
        return result

    @staticmethod
    def backward(ctx, grad):
        mask, _ = ctx.saved_tensors
        mask = mask.data.expand(ctx.shape)
        # the gradient has the broadcast shape; the engine sums it back to a's shape
        return place_in_zeros(grad, ctx.shape, (mask,), accumulate=False), None

    @staticmethod
    def jvp(ctx, ta, _mask):
        return ta.masked_select(ctx._primals[1])


class Embedding(Function, node="EmbeddingBackward0", saves=("indices",), nondifferentiable_args=(1,)):
    """weight[indices]: a row of the table per index. Rows picked several times add up their gradients;
    the row `padding_idx` gets none; `scale_grad_by_freq` divides by how often each row was picked."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.num_weights, ctx.padding_idx, ctx.scale = weight.shape[0], padding_idx, scale_grad_by_freq
        ctx.save_for_backward(indices)
        return torch.embedding(weight, indices, padding_idx, scale_grad_by_freq)

    @staticmethod
    def backward(ctx, grad):
        indices, = ctx.saved_tensors
        if isinstance(grad, torch.Tensor):   # first order: torch's own kernel, which does what the lines below say
            return aten.embedding_dense_backward(grad, indices.to(grad.device), ctx.num_weights,
                                                           ctx.padding_idx, ctx.scale), None, None, None
        indices = indices.data.reshape(-1).to(grad.device)   # (create_graph: the gradient is recorded)
        rows = grad.reshape(indices.numel(), grad.shape[-1])
        if ctx.padding_idx >= 0:
            rows = rows.where((indices != ctx.padding_idx).unsqueeze(1), 0.0)
        if ctx.scale and grad.device.type != "meta":   # (meta tensors have shapes, no values to count)
            counts = torch.bincount(indices, minlength=ctx.num_weights)
            rows = rows / counts[indices].unsqueeze(1).to(grad.dtype)
        return place_in_zeros(rows, (ctx.num_weights, grad.shape[-1]), (indices,), accumulate=True), None, None, None

    @staticmethod
    def jvp(ctx, tweight, *_):
        return torch.embedding(tweight, ctx._primals[1], ctx.padding_idx, ctx.scale)
