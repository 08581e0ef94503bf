"""Ops that move elements around without changing them: views, indexing, joining, moving.

Their backward puts each gradient element back where its input element came from.
"""
import torch

from .. import function
from ..function import Function


class T(Function):
    """a.t(): transpose a matrix; the gradient is transposed back."""

    node_name = "TBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        return a.t()

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


class Transpose(Function):
    """Swap two dimensions; the gradient swaps them back."""

    node_name = "TransposeBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = dim0, dim1
        return a.transpose(dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class Permute(Function):
    """Reorder dimensions; the gradient gets the inverse order."""

    node_name = "PermuteBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, dims):
        ctx.inverse = tuple(sorted(range(len(dims)), key=lambda i: dims[i] % len(dims)))
        return a.permute(dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(ctx.inverse), None


class View(Function):
    """The same elements seen with another shape; the gradient is reshaped back."""

    node_name = "ViewBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        return a.view(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class UnsafeView(View):
    """A reshape of a fresh copy (what torch's reshape and matmul record)."""

    node_name = "UnsafeViewBackward0"


class Clone(Function):
    """A copy: the gradient passes through."""

    node_name = "CloneBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, memory_format):
        return a.clone(memory_format=memory_format)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def reshape(a, shape):
    """a.reshape(shape): a view when the memory layout allows it, else a copy, as in torch."""
    try:
        a.data.view(shape)
    except RuntimeError:
        return UnsafeView.apply(Clone.apply(a, torch.contiguous_format), shape)
    return View.apply(a, shape)


class Unsqueeze(Function):
    """Insert a dimension of size 1; the gradient squeezes it away."""

    node_name = "UnsqueezeBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim if dim >= 0 else dim + a.dim() + 1
        return a.unsqueeze(dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


class Squeeze(Function):
    """Remove every dimension of size 1; the gradient is reshaped back."""

    node_name = "SqueezeBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        return a.squeeze()

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class SqueezeDim(Function):
    """Remove dimension `dim` if it has size 1."""

    node_name = "SqueezeBackward1"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, dim):
        ctx.shape = a.shape
        return a.squeeze(dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class Expand(Function):
    """Repeat size-1 dimensions without copying; the gradient sums the repeats."""

    node_name = "ExpandBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        return a.expand(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.shape), None


class CopyGrad(Function):
    """`dst.copy_(src)` into a fresh tensor: how a leaf keeps its first gradient under create_graph.

    Its node has an edge to nothing for `dst` (torch's CopyBackwards); `src` gets the gradient.
    """

    node_name = "CopyBackwards"
    check_gradients = False

    @staticmethod
    def forward(ctx, dst, src):
        ctx.dtype = src.dtype
        return dst.copy_(src)

    @staticmethod
    def backward(ctx, grad):
        return None, grad.to(ctx.dtype)


class ToCopy(Function):
    """A copy on another device or with another dtype; the gradient goes back to the original's."""

    node_name = "ToCopyBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, device, dtype):
        ctx.device, ctx.dtype = a.device, a.dtype
        return a.to(device=device, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(device=ctx.device, dtype=ctx.dtype), None, None


# --- indexing ---------------------------------------------------------------------------------

def place_in_zeros(grad, shape, index, accumulate):
    """Zeros of `shape` with `grad` written at `index`: the backward of every indexing op."""
    if isinstance(grad, torch.Tensor):
        return _place(grad, shape, index, accumulate)
    return PlaceInZeros.apply(grad, shape, index, accumulate)


def _place(grad, shape, index, accumulate):
    zeros = grad.new_zeros(shape)
    if accumulate:
        return zeros.index_put_(index if isinstance(index, tuple) else (index,), grad, accumulate=True)
    zeros[index] = grad
    return zeros


class PlaceInZeros(Function):
    """Writes a gradient into zeros at an index; its own gradient reads that index back."""

    node_name = "IndexPutBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, grad, shape, index, accumulate):
        ctx.index = index
        return _place(grad, shape, index, accumulate)

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.index], None, None, None


class _Indexing(Function):
    """Base of the indexing ops: forward reads a[index], backward writes the gradient there."""

    check_gradients = False
    accumulate = False

    @classmethod
    def forward(cls, ctx, a, index):
        ctx.shape, ctx.index = a.shape, index
        return a[index]

    @classmethod
    def backward(cls, ctx, grad):
        return place_in_zeros(grad, ctx.shape, ctx.index, cls.accumulate), None


class Select(_Indexing):
    """a[..., i, ...]: one position along a dimension, which disappears."""

    node_name = "SelectBackward0"


class Slice(_Indexing):
    """a[..., start:stop:step, ...]: a range along a dimension."""

    node_name = "SliceBackward0"


class Index(_Indexing):
    """a[tensor]: positions chosen by integer or boolean tensors (repeats add up in backward).

    The index tensors are saved for backward (not kept on the node), so they are freed with the graph.
    """

    node_name = "IndexBackward0"
    accumulate = True
    nondifferentiable_args = (1,)

    @classmethod
    def forward(cls, ctx, a, index):
        ctx.shape, ctx.many = a.shape, isinstance(index, tuple)
        ctx.save_for_backward(*(index if ctx.many else (index,)))
        return a[index]

    @classmethod
    def backward(cls, ctx, grad):
        indices = tuple(i.data for i in ctx.saved_tensors)
        return place_in_zeros(grad, ctx.shape, indices if ctx.many else indices[0], True), None


def plain_index(item):
    """An index with Variables replaced by their torch tensors (lists of them by a tensor)."""
    Variable = function.Variable
    if isinstance(item, Variable):
        return item.data
    if isinstance(item, list):
        return torch.tensor([i.item() if isinstance(i, Variable) else i for i in item])
    return item


def getitem(a, index):
    """a[index], recorded as torch records it: Select/Slice/Unsqueeze per dimension, or Index."""
    if isinstance(index, list) and any(isinstance(i, (list, tuple, slice, torch.Tensor, function.Variable))
                                       or i is None or i is Ellipsis for i in index):
        index = tuple(index)   # as torch (and numpy once): a list holding sequences indexes like a tuple
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(plain_index(i) for i in items)
    if any(isinstance(i, torch.Tensor) for i in items):
        if not all(isinstance(i, torch.Tensor) for i in items):
            raise NotImplementedError(
                "teachgrad indexes with basic indices (ints, slices, None, ...) or with tensors, "
                "not a mix of both; index in two steps instead"
            )
        return Index.apply(a, items if len(items) > 1 else items[0])
    if not isinstance(index, tuple) and isinstance(index, slice):
        return Slice.apply(a, (index,))
    result, dim = a, 0
    for k, item in enumerate(items):
        prefix = (slice(None),) * dim
        if item is Ellipsis:
            remaining = sum(1 for i in items[k + 1:] if i is not None)
            dim = result.dim() - remaining
        elif item is None:
            result = Unsqueeze.apply(result, dim)
            dim += 1
        elif isinstance(item, slice):
            if item != slice(None):
                result = Slice.apply(result, prefix + (item,))
            dim += 1
        elif isinstance(item, int) or (hasattr(item, "__index__") and not isinstance(item, bool)):
            result = Select.apply(result, prefix + (int(item),))
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(item).__name__})"
            )
    return result


# --- joining ----------------------------------------------------------------------------------

class Cat(Function):
    """Join tensors along an existing dimension; the gradient is cut back into pieces."""

    node_name = "CatBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim, ctx.sizes = dim, [t.shape[dim] for t in tensors]
        return torch.cat(tensors, dim)

    @staticmethod
    def backward(ctx, grad):
        pieces, start = [], 0
        for size in ctx.sizes:
            pieces.append(grad.narrow(ctx.dim, start, size))
            start += size
        return (None, *pieces)


class Split(Function):
    """Cut into pieces along `dim` (what split and chunk record): one node, one output per piece.

    Backward joins the pieces' gradients back together (zeros for pieces that got none).
    """

    node_name = "SplitBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, a, split_size, dim):
        ctx.dim = dim
        return a.split(split_size, dim)

    @staticmethod
    def backward(ctx, *grads):
        if isinstance(grads[0], torch.Tensor):
            return torch.cat(grads, ctx.dim), None, None
        return Cat.apply(ctx.dim, *grads), None, None


class Stack(Function):
    """Join tensors along a new dimension; each gets its slice of the gradient."""

    node_name = "StackBackward0"
    check_gradients = False

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        return torch.stack(tensors, dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, *grad.unbind(ctx.dim))
