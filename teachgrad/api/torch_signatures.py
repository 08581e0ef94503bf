"""Ops with torch's signatures: `tg.var(x, 1, keepdim=True)`, `x.gather(1, idx)`, `tg.softmax(x, dim=1)`, ...

Each function here reads its arguments the way torch does (aliases such as `keepdims`, the forms
`var` accepts, negative dims, index tensors given as Variables) and calls one Function from
teachgrad.ops. Every public function defined here is `tg.<its name>` (teachgrad/__init__.py reads them from this module); the same functions serve as
Variable methods (see the block at the end of TensorMethods in teachgrad/api/tensor_methods.py), where torch has the method.

Guarded by tests/test_ops_vs_torch.py and tests/test_new_ops.py (each signature's forms against torch's).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TypeAlias

import torch

from .. import ops
from ..rules import variable_class
from .arguments import NOT_GIVEN, check_tensor_list, keepdim_alias  # noqa: F401  (read here; shared)

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    Variable = variable_class.Variable
    Number: TypeAlias = int | float | bool           # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


def _plain(x):
    """An index or mask given as a Variable: its torch tensor (indices never carry gradients)."""
    return x.data if isinstance(x, variable_class.Variable) else x




# --- softmax, log_softmax ------------------------------------------------------------------------

def softmax(input: TensorLike, dim: int | None = None, dtype: torch.dtype | None = None) -> Variable:
    """torch.softmax and Tensor.softmax: as tg.nn.functional.softmax, with `dim` required."""
    _require_dim("softmax", dim)
    if dtype is not None:
        input = input.to(dtype)
    return ops.Softmax.apply(input, dim)


def log_softmax(input: TensorLike, dim: int | None = None, dtype: torch.dtype | None = None) -> Variable:
    """torch.log_softmax and Tensor.log_softmax: as tg.nn.functional.log_softmax, with `dim` required."""
    _require_dim("log_softmax", dim)
    if dtype is not None:
        input = input.to(dtype)
    return ops.LogSoftmax.apply(input, dim)


def _require_dim(name, dim):
    """torch.softmax and Tensor.softmax have no default dim (torch.nn.functional's has one): torch's message."""
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


# --- var, std, logsumexp ------------------------------------------------------------------------

def _var_arguments(name, dim, unbiased, keepdim, correction, keepdims):
    """torch's three forms: var(dim, unbiased, keepdim), var(dim, *, correction, keepdim), var(unbiased)."""
    if isinstance(dim, bool):             # x.var(False): the unbiased flag alone
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments - got (bool, bool)")
        dim, unbiased = None, dim
    if unbiased is not None and not isinstance(unbiased, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments - got unbiased of type "
                        f"{type(unbiased).__name__}, but expected bool")
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased and correction")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction, keepdim_alias(keepdim, keepdims, name)


def var(input: TensorLike, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: Number | None = None, keepdims: bool | None = None) -> Variable:
    """The variance over `dim` (all elements if None): sum((x - mean)²) / (n - correction).

    `unbiased=True` (the default) is correction=1, `unbiased=False` correction=0.
    """
    return ops.Var.apply(input, *_var_arguments("var", dim, unbiased, keepdim, correction, keepdims))


def std(input: TensorLike, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: Number | None = None, keepdims: bool | None = None) -> Variable:
    """The standard deviation, sqrt(var), with var's arguments."""
    return ops.Std.apply(input, *_var_arguments("std", dim, unbiased, keepdim, correction, keepdims))


def logsumexp(input: TensorLike, dim: int | Sequence[int], keepdim: bool = False, *,
              keepdims: bool | None = None) -> Variable:
    """log(sum(exp(x))) along dim, computed stably."""
    return ops.Logsumexp.apply(input, dim, keepdim_alias(keepdim, keepdims, "logsumexp"))


def histogram(input: TensorLike, bins: int | TensorLike = 100, *, range: Sequence[float] | None = None,
              weight: TensorLike | None = None, density: bool = False) -> torch.return_types.histogram:
    """torch.histogram: (hist, bin_edges), as torch.return_types.histogram. No derivative, as in torch."""
    hist, bin_edges = ops.Histogram.apply(input, bins, range, weight, density)
    return torch.return_types.histogram((hist, bin_edges))


# --- element-wise -------------------------------------------------------------------------------


# --- picking and placing by index ---------------------------------------------------------------

def gather(input: TensorLike, dim: int, index: TensorLike, *, sparse_grad: bool = False) -> Variable:
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0), and likewise for other dims."""
    if sparse_grad:
        raise NotImplementedError("teachgrad has no sparse tensors: gather(sparse_grad=True) is not available")
    return ops.Gather.apply(input, dim, _plain(index))


def scatter(input: TensorLike, dim: int, index: TensorLike, src: Number | TensorLike | None = None, *,
            value: Number | None = None, reduce: str | None = None) -> Variable:
    """input with src's elements (or `value`) written at the positions index gives along dim."""
    if reduce is not None:
        raise NotImplementedError("teachgrad's scatter has no reduce= (use scatter_add, or torch.scatter_reduce)")
    if src is not None and value is not None:
        raise TypeError("scatter() received an invalid combination of arguments - got both src and value")
    src = value if src is None else src
    if isinstance(src, (variable_class.Variable, torch.Tensor)):
        return ops.Scatter.apply(input, dim, _plain(index), src)
    return ops.ScatterValue.apply(input, dim, _plain(index), src)


def scatter_add(input: TensorLike, dim: int, index: TensorLike, src: TensorLike) -> Variable:
    """input with src's elements added at the positions index gives along dim."""
    return ops.ScatterAdd.apply(input, dim, _plain(index), src)


def index_select(input: TensorLike, dim: int, index: TensorLike) -> Variable:
    """The slices of input along dim that index lists (a 1-D index), in that order."""
    return ops.IndexSelect.apply(input, dim, _plain(index))


def masked_select(input: TensorLike, mask: TensorLike) -> Variable:
    """The elements where mask (broadcast against input) is True, as a 1-D tensor."""
    return ops.MaskedSelect.apply(input, _plain(mask))


# --- running sums and products, sorting ---------------------------------------------------------

def cumsum(input: TensorLike, dim: int, *, dtype: torch.dtype | None = None) -> Variable:
    return ops.Cumsum.apply(input, dim, dtype)


def cumprod(input: TensorLike, dim: int, *, dtype: torch.dtype | None = None) -> Variable:
    return ops.Cumprod.apply(input, dim, dtype)


def sort(input: TensorLike, dim: int = -1, descending: bool = False, *,
         stable: bool | None = None) -> torch.return_types.sort:
    """(values, indices): the values in order along dim; only the values carry gradients."""
    if stable is None:
        return torch.return_types.sort(ops.Sort.apply(input, dim, descending, False))
    return torch.return_types.sort(ops.SortStable.apply(input, dim, descending, stable))


def topk(input: TensorLike, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> torch.return_types.topk:
    """(values, indices) of the k largest (or smallest) elements along dim."""
    return torch.return_types.topk(ops.Topk.apply(input, k, dim, largest, sorted))


# --- rearranging --------------------------------------------------------------------------------

def _wrap_dim(dim, ndim):
    """A dim in [-ndim, ndim - 1] as a non-negative one, with torch's error otherwise."""
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _flatten_method(input: Variable, start_dim: int = 0, end_dim: int = -1) -> Variable:
    """The dims start_dim..end_dim merged into one (a reshape; the input itself when there is nothing to merge)."""
    if input.dim() == 0:
        return ops.reshape(input, (1,))
    start, end = _wrap_dim(start_dim, input.dim()), _wrap_dim(end_dim, input.dim())
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = tuple(input.shape)
    merged = 1
    for size in shape[start:end + 1]:
        merged *= size
    return ops.reshape(input, shape[:start] + (merged,) + shape[end + 1:])


def _sizes(sizes):
    """sizes given as separate ints or as one sequence: (2, 3) or ((2, 3),)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, torch.Size)):
        return tuple(sizes[0])
    return tuple(sizes)


def _repeat_method(input: Variable, *sizes: int | Sequence[int]) -> Variable:
    """Tensor.repeat: the whole tensor tiled sizes[i] times along each dim."""
    sizes = _sizes(sizes)
    if len(sizes) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    return ops.Repeat.apply(input, sizes)


def tile(input: TensorLike, dims: int | Sequence[int]) -> Variable:
    """repeat, with missing leading dims of `dims` taken as 1 (as torch.tile)."""
    dims = _sizes(dims if isinstance(dims, tuple) else (dims,))
    dims = (1,) * (input.dim() - len(dims)) + dims
    return ops.Repeat.apply(input, dims)


def _tile_method(self: Variable, *dims: int | Sequence[int]) -> Variable:
    return tile(self, _sizes(dims))


def repeat_interleave(input: TensorLike, repeats: int | TensorLike | None = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Variable:
    """Each element (or slice along dim) repeated `repeats` times in place, recorded as torch records it:
    unsqueeze, expand, clone, view for a number; index_select for a tensor of repeats."""
    if repeats is None:   # torch.repeat_interleave(counts): indices repeated, no gradient
        return variable_class.Variable._make(torch.repeat_interleave(_plain(input), output_size=output_size))
    source = input if dim is not None else ops.reshape(input, (-1,))   # (ops, not methods: input may be a torch tensor)
    dim = 0 if dim is None else dim % max(input.dim(), 1)
    if isinstance(repeats, (variable_class.Variable, torch.Tensor)):
        repeats = _plain(repeats)
        if repeats.dim() == 0 or repeats.numel() == 1:
            repeats = repeats.reshape(1).expand(source.shape[dim])
        index = torch.repeat_interleave(repeats, output_size=output_size)
        return ops.IndexSelect.apply(source, dim, index)
    if repeats < 0:
        raise RuntimeError("Repeats can not be negative")
    shape = list(source.shape)
    expanded = ops.Unsqueeze.apply(source, dim + 1).expand(*shape[:dim + 1], repeats, *shape[dim + 1:])
    shape[dim] *= repeats
    return expanded.clone(memory_format=torch.contiguous_format).view(shape)


def flip(input: TensorLike, dims: int | Sequence[int]) -> Variable:
    """The order of elements reversed along each of dims."""
    return ops.Flip.apply(input, _sizes(dims if isinstance(dims, (tuple, list)) else (dims,)))


def _flip_method(self: Variable, *dims: int | Sequence[int]) -> Variable:
    return flip(self, _sizes(dims))


def roll(input: TensorLike, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Variable:
    """Elements shifted cyclically by shifts along dims (over the flattened tensor if dims is None)."""
    return ops.Roll.apply(input, shifts, dims)


def tril(input: TensorLike, diagonal: int = 0) -> Variable:
    return ops.Tril.apply(input, diagonal)


def triu(input: TensorLike, diagonal: int = 0) -> Variable:
    return ops.Triu.apply(input, diagonal)


# --- einsum and the batched product under it ----------------------------------------------------

def einsum(equation: str, *operands: TensorLike | Sequence[TensorLike]) -> Variable:
    """Sum of products of the operands' elements as the labels say ("bij,bjk->bik" is a batched a @ b),
    recorded step by step as torch records it (see teachgrad/ops/einsum.py)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise NotImplementedError("teachgrad's einsum takes the equation as a string (not torch's sublist format)")
    path = None
    # as torch.functional.einsum: with 3 or more operands, the order of the products comes from opt_einsum
    # when it is installed and enabled; otherwise left to right
    if len(operands) > 2 and torch.backends.opt_einsum.enabled and torch.backends.opt_einsum.is_available():
        planner = torch.backends.opt_einsum.get_opt_einsum()
        pairs = planner.contract_path(equation, *[_plain(o) for o in operands],
                                      optimize=torch.backends.opt_einsum.strategy)[0]
        path = [index for pair in pairs for index in pair]
    return ops.einsum(equation, *operands, path=path)


def bmm(input: TensorLike, mat2: TensorLike) -> Variable:
    """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p)."""
    return ops.Bmm.apply(input, mat2)


def movedim(input: TensorLike, source: int, destination: int) -> Variable:
    """input with dimension `source` moved to `destination`."""
    if not (isinstance(source, int) and isinstance(destination, int)):
        raise NotImplementedError("teachgrad's movedim moves one dimension (ints), not sequences of them")
    return ops.movedim(input, source, destination)


# --- logcumsumexp, meshgrid -----------------------------------------------------------------------

def logcumsumexp(input: TensorLike, dim: int) -> Variable:
    """log(cumsum(exp(input))) along dim, computed stably: out[i] = log(exp(x[0]) + ... + exp(x[i]))."""
    return ops.Logcumsumexp.apply(input, dim)


def meshgrid(*tensors: TensorLike | Sequence[TensorLike], indexing: str | None = None) -> tuple[Variable, ...]:
    """Grids of coordinates from 0-D or 1-D tensors: grid i holds tensors[i]'s values along its own dim, repeated
    along the others. indexing='ij' (the default, with torch's warning when it is not given) puts tensor i
    along dim i; 'xy' swaps the first two dims, as numpy does. Each grid is a view of its tensor, then an
    expand (ViewBackward0, ExpandBackward0), as torch records it."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    torch.meshgrid(*[_plain(t) for t in tensors], indexing=indexing)   # torch's checks, errors and warning
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(ops.Expand.apply(ops.View.apply(t, view_shape), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
