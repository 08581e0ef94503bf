"""Ops that move elements around without changing them: views, indexing, joining, moving.

Their backward puts each gradient element back where its input element came from.
"""
import operator

import torch

from ..rules import batching, grad_mode, views
from ..core.function import Function
from ..rules import variable_class
from . import aten


def wrap_dim(dim, ndim):
    """A dimension argument as torch checks it: in [-ndim, ndim - 1] (a 0-dim tensor counts as 1-dim), made >= 0.

    Out of range is torch's IndexError, never a silent wrap onto another dimension."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim % bound


class T(Function, node="TBackward0", is_view=True, linear=True):
    """a.t(): transpose a matrix; the gradient is transposed back."""

    @staticmethod
    def forward(ctx, a):
        return a.t()

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


class Transpose(Function, node="TransposeBackward0", is_view=True, batching=("along", 1, 2)):
    """Swap two dimensions; the gradient swaps them back."""

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = dim0, dim1
        return a.transpose(dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None

    @staticmethod
    def jvp(ctx, ta, _dim0, _dim1):
        return ta.transpose(*ctx.dims)


class Permute(Function, node="PermuteBackward0", is_view=True):
    """Reorder dimensions; the gradient gets the inverse order."""

    @staticmethod
    def forward(ctx, a, dims):
        ctx.inverse = tuple(sorted(range(len(dims)), key=lambda i: dims[i] % len(dims)))
        return a.permute(dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(ctx.inverse), None

    @staticmethod
    def jvp(ctx, ta, _dims):
        _, dims = ctx._primals
        return ta.permute(dims)


class View(Function, node="ViewBackward0", is_view=True):
    """The same elements seen with another shape; the gradient is reshaped back."""

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        return a.view(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None

    @staticmethod
    def jvp(ctx, ta, _shape):
        return ta.reshape(ctx._result.shape)


class UnsafeView(View, node="UnsafeViewBackward0", is_view=False):
    """A reshape of a fresh copy (what torch's reshape and matmul record): not a view of anything."""


class Clone(Function, node="CloneBackward0", batching="pointwise", linear=True):
    """A copy: the gradient passes through."""

    @staticmethod
    def forward(ctx, a, memory_format):
        return a.clone(memory_format=memory_format)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ReshapeAlias(View, node="ReshapeAliasBackward0"):
    """a.reshape(shape) of a non-contiguous tensor whose layout still allows a view: torch records
    `_reshape_alias` (the same view, under another name)."""


def reshape(a, shape):
    """a.reshape(shape): a view when the memory layout allows it, else a copy, as in torch
    (View for a contiguous tensor, ReshapeAlias for another that can be viewed, Clone + UnsafeView otherwise)."""
    if a.data.is_contiguous():
        return View.apply(a, shape)
    try:
        a.data.view(shape)
    except RuntimeError:
        return UnsafeView.apply(Clone.apply(a, torch.contiguous_format), shape)
    return ReshapeAlias.apply(a, shape)


class Unsqueeze(Function, node="UnsqueezeBackward0", is_view=True):
    """Insert a dimension of size 1; the gradient squeezes it away."""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim if dim >= 0 else dim + a.dim() + 1
        return a.unsqueeze(dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None

    @staticmethod
    def jvp(ctx, ta, _dim):
        return ta.unsqueeze(ctx.dim)


class Squeeze(Function, node="SqueezeBackward0", is_view=True):
    """Remove every dimension of size 1; the gradient is reshaped back."""

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        return a.squeeze()

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)

    @staticmethod
    def jvp(ctx, ta):
        return ta.reshape(ctx._result.shape)


class SqueezeDim(Function, node="SqueezeBackward1", is_view=True, batching=("along", 1)):
    """Remove dimension `dim` if it has size 1."""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.shape = a.shape
        return a.squeeze(dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None

    @staticmethod
    def jvp(ctx, ta, _dim):
        return ta.reshape(ctx._result.shape)


class SqueezeDims(SqueezeDim, node="SqueezeBackward2", is_view=True, batching=("along", 1)):
    """squeeze with a tuple or list of dims (torch's squeeze.dims overload, a node of its own): as SqueezeDim."""


class Expand(Function, node="ExpandBackward0", is_view=True):
    """Repeat size-1 dimensions without copying; the gradient sums the repeats."""

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        return a.expand(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.shape), None

    @staticmethod
    def jvp(ctx, ta, _shape):
        return ta.expand(ctx._result.shape)


class CopyGrad(Function, node="CopyBackwards"):
    """`dst.copy_(src)` into a fresh tensor: how a leaf keeps its first gradient under create_graph.

    Its node has an edge to nothing for `dst` (torch's CopyBackwards); `src` gets the gradient.
    """

    @staticmethod
    def forward(ctx, dst, src):
        ctx.dtype = src.dtype
        return dst.copy_(src)

    @staticmethod
    def backward(ctx, grad):
        return None, grad.to(ctx.dtype)


class ToCopy(Function, node="ToCopyBackward0", batching="pointwise"):
    """A copy on another device or with another dtype; the gradient goes back to the original's."""

    @staticmethod
    def forward(ctx, a, device, dtype):
        ctx.device, ctx.dtype = a.device, a.dtype
        return a.to(device=device, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        if grad.dtype.is_complex and not ctx.dtype.is_complex:   # a real tensor made complex: the real part
            grad = grad.real
        return grad.to(device=ctx.device, dtype=ctx.dtype), None, None

    @staticmethod
    def jvp(ctx, ta, _device, _dtype):
        result = ctx._result
        return ta.to(device=result.device, dtype=result.dtype)


class ToFreshCopy(ToCopy, node="ToCopyBackward0", batching="pointwise"):
    """`to(memory_format=...)` or `to(..., copy=True)`: always a new tensor, laid out as asked
    (channels_last, say), even on the same device with the same dtype. The same node as ToCopy's."""

    @staticmethod
    def forward(ctx, a, device, dtype, memory_format):
        ctx.device, ctx.dtype = a.device, a.dtype
        return a.to(device=device, dtype=dtype, memory_format=memory_format, copy=True)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(device=ctx.device, dtype=ctx.dtype), None, None, None

    @staticmethod
    def jvp(ctx, ta, _device, _dtype, memory_format):
        result = ctx._result
        return ta.to(device=result.device, dtype=result.dtype, memory_format=memory_format)


# --- indexing ---------------------------------------------------------------------------------

def place_in_zeros(grad, shape, index, accumulate):
    """Zeros of `shape` with `grad` written at `index`: the backward of every indexing op."""
    if isinstance(grad, torch.Tensor):
        return _place(grad, shape, index, accumulate)
    return PlaceInZeros.apply(grad, shape, index, accumulate)


def _place(grad, shape, index, accumulate):
    """With `accumulate`, `index` is index_put_'s (tensors, None for whole dims) and repeats add up."""
    zeros = grad.new_zeros(shape)
    if accumulate:
        return aten.index_put_(zeros, list(index), grad, True)
    zeros[index] = grad
    return zeros


def python_index(indices):
    """index_put_'s indices (None for a dimension taken whole) as a Python index: `:` for None."""
    return tuple(slice(None) if i is None else i for i in indices)


class PlaceInZeros(Function, node="IndexPutBackward0"):
    """Writes a gradient into zeros at an index; its own gradient reads that index back."""

    @staticmethod
    def forward(ctx, grad, shape, index, accumulate):
        ctx.index = python_index(index) if accumulate else index
        return _place(grad, shape, index, accumulate)

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.index], None, None, None

    @staticmethod
    def jvp(ctx, tgrad, *_):
        _, shape, index, accumulate = ctx._primals
        return _place(tgrad, shape, index, accumulate)


class _Indexing(Function):
    """Base of the indexing ops: forward reads a[index], backward writes the gradient there."""

    accumulate = False

    @classmethod
    def forward(cls, ctx, a, index):
        ctx.shape, ctx.index = a.shape, index
        return a[index]

    @classmethod
    def backward(cls, ctx, grad):
        return place_in_zeros(grad, ctx.shape, ctx.index, cls.accumulate), None

    @classmethod
    def jvp(cls, ctx, ta, _index):
        return ta[ctx.index]


class Select(_Indexing, node="SelectBackward0", is_view=True):
    """a[..., i, ...]: one position along a dimension, which disappears."""


class Slice(_Indexing, node="SliceBackward0", is_view=True):
    """a[..., start:stop:step, ...]: a range along a dimension."""


class FwPrimal(Function, node="CppFunction", qualified_name="torch::autograd::Identity", is_view=True,
               batching="pointwise"):
    """unpack_dual(t).primal: all of t as a new view, without its tangent (torch's _fw_primal; its node is a C++
    Identity, which torch shows as CppFunction)."""

    @staticmethod
    def forward(ctx, a):
        return a.view_as(a)

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, ta):
        return ta


class Alias(Function, node="AliasBackward0", is_view=True, batching="pointwise", linear=True):
    """a[...]: all of a, as a new view of it."""

    @staticmethod
    def forward(ctx, a):
        return a[...]

    @staticmethod
    def backward(ctx, grad):
        return grad


class Diagonal(Function, node="DiagonalBackward0", is_view=True, batching=("along", 2, 3)):
    """a.diagonal(offset, dim1, dim2): the elements a[..., i, i + offset, ...], a view."""

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.shape, ctx.args = a.shape, (offset, dim1, dim2)
        return a.diagonal(offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        zeros = grad.new_zeros(ctx.shape)
        zeros.diagonal(*ctx.args).copy_(grad)
        return zeros, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return ta.diagonal(*ctx.args)


class Unbind(Function, node="UnbindBackward0", is_view=True, batching=("along", 1)):
    """a.unbind(dim): every position along dim, as separate views; their gradients are stacked back."""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return a.unbind(dim)

    @staticmethod
    def backward(ctx, *grads):
        return _join(torch.stack, Stack, ctx.dim, grads), None

    @staticmethod
    def view_step(args, i):
        """How output i is made from the input alone: a Select."""
        return Select, ((slice(None),) * args[1] + (i,),)

    @staticmethod
    def jvp(ctx, ta, _dim):
        return ta.unbind(ctx.dim)


class Split(Function, node="SplitBackward0", is_view=True, batching=("along", 2)):
    """a.split(size, dim) and a.chunk(n, dim): consecutive pieces as views; gradients are joined back."""

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.dim = dim
        return torch.split(a, list(sizes), dim)

    @staticmethod
    def backward(ctx, *grads):
        return _join(torch.cat, Cat, ctx.dim, grads), None, None

    @staticmethod
    def view_step(args, i):
        """How output i is made from the input alone: a Slice."""
        sizes, dim = args[1], args[2]
        start = sum(sizes[:i])
        return Slice, ((slice(None),) * dim + (slice(start, start + sizes[i]),),)

    @staticmethod
    def jvp(ctx, ta, _sizes, _dim):
        return tuple(ta.split([r.shape[ctx.dim] for r in ctx._result], ctx.dim))


class SplitWithSizes(Split, node="SplitWithSizesBackward0", batching=("along", 2)):
    """a.split([sizes], dim): pieces of the sizes listed."""


def _join(join, Join, dim, grads):
    """torch.stack/cat of the gradients, recorded by Stack/Cat when they are Variables."""
    if all(isinstance(g, torch.Tensor) for g in grads):
        return join(grads, dim)
    return Join.apply(dim, *grads)


class Index(Function, node="IndexBackward0", saves=("indices[]",)):
    """a[tensors]: positions chosen by integer or boolean tensors (repeats add up in backward).

    `indices` holds one entry per dimension it indexes: an index tensor, or None for one taken whole.
    """

    @staticmethod
    def forward(ctx, a, indices):
        ctx.shape = a.shape
        ctx.save_for_backward(*indices)
        return a[python_index(indices)]

    @staticmethod
    def backward(ctx, grad):
        indices = tuple(plain_index(i) for i in ctx.saved_tensors)
        return place_in_zeros(grad, ctx.shape, indices, accumulate=True), None

    @staticmethod
    def jvp(ctx, ta, _indices):
        indices = ctx._primals[1]
        return ta[python_index(indices)]


def plain_index(item):
    """An index with Variables replaced by their torch tensors (lists of them by a tensor)."""
    Variable = variable_class.Variable
    if isinstance(item, Variable):
        return item.data
    if isinstance(item, list):
        return index_tensor([i.item() if isinstance(i, Variable) else i for i in item])
    if isinstance(item, range):   # x[range(n), y]: torch reads a range as the list of its integers
        return torch.tensor(item, dtype=torch.int64)
    return item


def index_tensor(data):
    """A list given as an index, read as torch reads it: a mask when it holds only bools, else int64 (1.5 reads
    as 1); a string in it is refused with torch's TypeError (torch/csrc/utils/tensor_new.cpp,
    indexing_tensor_from_data)."""
    refuse_strings(data)
    tensor = torch.tensor(data)
    return tensor if tensor.dtype in (torch.bool, torch.uint8) else tensor.to(torch.int64)


def refuse_strings(data):
    """torch reads an index that is not a number, slice or tensor as data, and refuses a string in it."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (list, tuple)):
        for item in data:
            refuse_strings(item)


def getitem(a, index):
    """a[index], recorded as torch records it: a view per basic index (Select, Slice, Unsqueeze),
    then one Index node for the tensor indices, if any."""
    if isinstance(index, (torch.Tensor, variable_class.Variable)) and index.dim() and not a.requires_grad \
            and grad_mode.forward_level < 0 and not batching.vmap_depth:
        # (speed) a batch picked from data, `X[ix]`: a copy that nothing records, torch's indexing on the data
        return variable_class.Variable._make(a._data[index.data if isinstance(index, variable_class.Variable) else index])
    if isinstance(index, slice):
        if a._data.dim() == 0:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        return Slice.apply(a, (index,))                       # a[:] is a Slice even when it takes all
    result, tensor_indices = index_target(a, index)
    if tensor_indices is not None:
        return Index.apply(result, tensor_indices)
    if result is a:
        return Alias.apply(a)                                  # a[...], a[:, :]: a new view of all of a
    return result


def index_target(a, index):
    """Apply the basic part of `index` as views of `a`; return (view, tensor indices or None).

    The tensor indices come one per dimension of the view, None for a dimension taken whole,
    as index and index_put_ take them. A `:` that takes everything makes no view.
    """
    if isinstance(index, list) and any(isinstance(i, (list, tuple, str, slice, torch.Tensor, variable_class.Variable))
                                       or i is None or i is Ellipsis for i in index):
        index = tuple(index)   # as torch (and numpy once): a list holding sequences (a string too) indexes like a tuple
    items = index if isinstance(index, tuple) else (index,)
    items = tuple([plain_index(i) for i in items])
    check_index_count(a._data.dim(), index, items)
    steps, dim, ndim, tensors = [], 0, a._data.dim(), []   # the view ops to apply; ndim: the dims of the view so far
    for k, item in enumerate(items):
        if item is Ellipsis:
            dim = ndim - sum(_dims_used(i) for i in items[k + 1:])
        elif item is None:
            steps.append((Unsqueeze, (dim,)))
            dim += 1
            ndim += 1
        elif isinstance(item, bool):   # as torch: a new dimension (Unsqueeze), then indexed by the bool: kept or emptied
            steps.append((Unsqueeze, (dim,)))
            tensors.append((dim, torch.zeros(int(item), dtype=torch.int64, device=a._data.device)))
            dim += 1
            ndim += 1
        elif isinstance(item, slice):
            if item != slice(None):
                steps.append((Slice, ((slice(None),) * dim + (item,),)))
            dim += 1
        elif isinstance(item, torch.Tensor) and not (item.dim() == 0 and not item.dtype.is_floating_point
                                                      and item.dtype != torch.bool):
            tensors.append((dim, item))
            dim += _dims_used(item)
        elif isinstance(item, int) or (hasattr(item, "__index__") and not isinstance(item, bool)):
            steps.append((Select, ((slice(None),) * dim + (int(item),),)))
            ndim -= 1
        else:
            refuse_strings(item)
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(item).__name__})"
            )
    if not tensors:   # (torch's own indexing makes the same view in one call, when nothing is recorded)
        return views.apply_view_ops(a, steps, lambda data: data[items]), None
    result = views.apply_view_ops(a, steps)
    indices, used = [], 0
    for position, tensor in tensors:
        while used < position:
            indices.append(None)
            used += 1
        indices.append(tensor)
        used += _dims_used(tensor)
    return result, tuple(indices)


def check_index_count(ndim, index, items):
    """torch's IndexError for more indices than dimensions, counted before any view is made (a bool and
    None add a dimension, `...` takes none); a lone int or slice on a 0-dim tensor gets torch's own words."""
    if ndim == 0 and not isinstance(index, (tuple, bool)):
        if isinstance(index, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if isinstance(index, int) or (hasattr(index, "__index__") and not isinstance(index, torch.Tensor)):
            if operator.index(index) == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            raise IndexError(f"index {operator.index(index)} is out of bounds for dimension 0 with size 0")
    if sum(0 if isinstance(i, bool) else _dims_used(i) for i in items) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")


def _dims_used(item):
    """How many dimensions an index item walks over: a boolean mask takes as many as it has."""
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, torch.Tensor) and item.dtype in (torch.bool, torch.uint8):
        return item.dim()
    return 1


def copy_to(dst, value):
    """dst[...] = value, as torch's __setitem__ writes it: copy_ same shapes, fill_ a 0-dim, else broadcast."""
    Variable = variable_class.Variable
    if not isinstance(value, (Variable, torch.Tensor)):
        value = torch.tensor(value, dtype=dst.dtype, device=dst.device)
    if value.shape == dst.shape:
        dst.copy_(value)
    elif value.dim() == 0 and value.device.type == "cpu":
        dst.fill_(value)
    else:
        shape = list(value.shape)
        while shape and shape[0] == 1:
            shape.pop(0)
        value = value.view(shape)
        dst.copy_(value if value.shape == dst.shape else value.expand(dst.shape))


# --- joining ----------------------------------------------------------------------------------

def skipped_by_cat(tensor) -> bool:
    """torch's legacy rule: cat skips a 1-D tensor of 0 elements among tensors of any shape."""
    return tensor.dim() == 1 and tensor.numel() == 0


class Cat(Function, node="CatBackward0"):
    """Join tensors along an existing dimension; the gradient is cut back into pieces."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim, ctx.sizes = dim, [None if skipped_by_cat(t) else t.shape[dim] for t in tensors]
        return torch.cat(tensors, dim)

    @staticmethod
    def backward(ctx, grad):
        pieces, start = [], 0
        for size in ctx.sizes:
            if size is None:   # a skipped 1-D empty tensor: an empty gradient of its shape
                pieces.append(grad.new_zeros(0))
                continue
            pieces.append(grad.narrow(ctx.dim, start, size))
            start += size
        return (None, *pieces)

    @staticmethod
    def jvp(ctx, _dim, *tangents):
        return torch.cat(tangents, ctx.dim)


class Stack(Function, node="StackBackward0"):
    """Join tensors along a new dimension; each gets its slice of the gradient."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        return torch.stack(tensors, dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, *grad.unbind(ctx.dim))

    @staticmethod
    def jvp(ctx, _dim, *tangents):
        return torch.stack(tangents, ctx.dim)
