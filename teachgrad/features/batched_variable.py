"""BatchedVariable: what a function under `vmap` sees, one example's worth of a batch.

torch.func wraps each tensor under vmap as a BatchedTensor(level, bdim). teachgrad keeps the batch dims in the
*data*, in front: a BatchedVariable of a vmap at level 1 over 8 examples of shape (3,) holds data of shape (8, 3),
and its `shape`, `size()`, `dim()`, `numel()` and `len()` say (3,): the function sees per-example shapes. Nested
vmaps stack their batch dims in front, outermost first (`_levels`, one level per leading dim, ascending).

The data and the graph are the physical ones: an op on a BatchedVariable runs, through its batching rule
(teachgrad/features/batching_rules.py), on the data with the batch dims in front, and it is recorded as that
op on the physical tensors. So a backward pass goes through the batch as through any tensor, and as the
examples never mix, the gradient of a batched output's sum is every example's own gradient (`vmap(grad(f))`).

What needs one number out of the batch is refused with torch's words (`.item()`, `bool(x)`, `.tolist()`).

Guarded by tests/test_vmap.py, tests/test_vmap_forward.py and tests/test_vmap_random.py.
"""
from __future__ import annotations

from typing import Any

import torch

from ..core.variable import Variable
from .. import ops
from ..api.torch_methods import TORCH_METHODS, TORCH_OPERATORS
from ..rules import batching, tangents

ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
        "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
        "inside PyTorch internals, please file a bug report.")
BACKWARD = batching.BACKWARD
REQUIRES_GRAD = ("You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* "
                 "APIs) inside of a function being transformed by a functorch transform. This is unsupported, please "
                 "attempt to use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
                 "requires_grad_() outside of a function being transformed instead.")
CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                "don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")

# The batch size of each open vmap level: level -> size (set by teachgrad/features/vmap.py as it opens a level).
batch_sizes: dict[int, int] = {}


def levels_of(x: Any) -> tuple[int, ...]:
    """The vmap levels x is batched at (outermost first); () for anything else."""
    return x._levels if isinstance(x, BatchedVariable) else ()


def wrap_dim(dim: int, ndim: int) -> int:
    """A logical dim, checked and made non-negative, with torch's IndexError when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


class BatchedVariable(Variable):
    """A Variable whose data carries `len(_levels)` batch dims in front, and which reports the shape after them."""

    __slots__ = ("_levels",)
    __hash__ = Variable.__hash__

    @classmethod
    def of(cls, v: Variable, levels: tuple[int, ...]) -> Variable:
        """The Variable `v` an op just made (physical data, its node), seen as batched at `levels`."""
        if not levels:
            return v
        b = cls.__new__(cls)
        for name in _VARIABLE_SLOTS:
            if hasattr(v, name):
                setattr(b, name, getattr(v, name))
        b._levels = levels
        if b._fw_grad is not None:             # a dual: its tangent dropped with the others when the level closes
            tangents.set_tangent(b, b._fw_grad[1], b._fw_grad[2])
        return b

    # --- the logical (per-example) sizes ---

    shape = property(lambda self: self._data.shape[len(self._levels):], doc="The size of one example.")
    ndim = property(lambda self: self._data.dim() - len(self._levels))

    def size(self, dim: int | None = None) -> torch.Size | int:
        return self.shape if dim is None else self.shape[wrap_dim(dim, self.ndim)]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self.shape.numel()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"BatchedVariable(levels={self._levels}, value=\n{self._data!r})"

    # --- one number out of the batch: refused, as torch refuses it ---

    def item(self) -> Any:
        raise RuntimeError(ITEM)

    tolist = __float__ = __int__ = __index__ = item

    def __bool__(self) -> bool:
        raise RuntimeError(CONTROL_FLOW)

    # --- reverse mode from inside: torch's errors (tg.func.grad and vjp differentiate inside vmap) ---

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(BACKWARD)

    def requires_grad_(self, requires_grad: bool = True) -> Variable:
        raise RuntimeError(REQUIRES_GRAD)

    def numpy(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def detach(self) -> Variable:
        return BatchedVariable.of(Variable._make(self._data.detach()), self._levels)

    # `x.data` is batched too, as torch's BatchedTensor's: code that reads it (a mask, an index, a target) keeps the
    # batch. So what Variable reads from `self.data` is read here from the physical tensor, `_data`.

    @property
    def data(self) -> Variable:
        return self.detach()

    @data.setter
    def data(self, value: Any) -> None:
        raise NotImplementedError("vmap: teachgrad does not set `.data` of a batched Variable")

    _version = property(lambda self: self._data._version)

    def stride(self, dim: int | None = None) -> Any:   # (of the physical data: what memory the example spans)
        return self._data.stride()[len(self._levels):] if dim is None else self._data.stride(
            wrap_dim(dim, self.ndim) + len(self._levels))

    def storage_offset(self) -> int:
        return self._data.storage_offset()

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def is_floating_point(self) -> bool:
        return self._data.is_floating_point()

    def is_complex(self) -> bool:
        return self._data.is_complex()

    def is_inference(self) -> bool:
        return self._data.is_inference()

    def element_size(self) -> int:
        return self._data.element_size()

    def is_contiguous(self, memory_format: torch.memory_format = torch.contiguous_format) -> bool:
        return self._data.is_contiguous(memory_format=memory_format)

    def __format__(self, spec: str) -> str:
        return repr(self) if not spec else self.item()

    def equal(self, other: Any) -> bool:
        raise RuntimeError(CONTROL_FLOW)

    def _physical(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        """A Variable method that reads `self.data`, run on a plain view of the physical data, batched again."""
        old = batching.set_depth(0)
        try:
            result = method(ops.Alias.apply(self), *args, **kwargs)
        finally:
            batching.set_depth(old)
        return BatchedVariable.of(result, self._levels) if isinstance(result, Variable) else result

    def to(self, *args: Any, **kwargs: Any) -> Variable:
        return self._physical(Variable.to, *args, **kwargs)

    def type(self, *args: Any, **kwargs: Any) -> Any:
        return self._physical(Variable.type, *args, **kwargs)

    def contiguous(self) -> Variable:
        return self._physical(Variable.contiguous)

    def new_zeros(self, *size: Any, **options: Any) -> Variable:   # (a new tensor: not batched, as in torch)
        return Variable.new_zeros(Variable._make(self._data), *size, **options)

    def new_ones(self, *size: Any, **options: Any) -> Variable:
        return Variable.new_ones(Variable._make(self._data), *size, **options)

    # --- in-place writes: not rebuilt under vmap ---

    def _in_place(self, *args: Any) -> Any:   # (every in-place method of Variable goes through it)
        raise NotImplementedError("vmap: teachgrad has no batching rules for in-place ops (x.add_(...), x[i] = v, "
                                  "...); write them out of place (x = x + ...)")

    def __setitem__(self, index: Any, value: Any) -> None:
        self._in_place()

    # --- methods that compute on the data (nothing recorded): the batch dims kept in front ---

    def __getitem__(self, index: Any) -> Variable:
        """x[index] on one example: the same index after a `:` for each batch dim."""
        index = tuple(index) if isinstance(index, list) else index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, (Variable, torch.Tensor)) and (levels_of(i) or i.dtype == torch.bool) for i in index):
            raise NotImplementedError("vmap: teachgrad has no batching rule for indexing with a batched or boolean "
                                      "tensor index")
        tensors = [k for k, i in enumerate(index) if isinstance(i, (Variable, torch.Tensor, list))]
        if tensors and tensors != list(range(tensors[0], tensors[-1] + 1)):
            raise NotImplementedError("vmap: teachgrad has no batching rule for indexing with tensor indices "
                                      "that are not next to each other")
        old = batching.set_depth(0)
        try:
            result = ops.getitem(ops.Alias.apply(self), (slice(None),) * len(self._levels) + index)
        finally:
            batching.set_depth(old)
        return BatchedVariable.of(result, self._levels)

    def _compare(self, other: Any, op: Any) -> Any:
        if not isinstance(other, (Variable, torch.Tensor, int, float, bool)):
            return NotImplemented
        levels = tuple(sorted(set(self._levels) | set(levels_of(other))))
        rank = max(self.ndim, other.dim() if isinstance(other, (Variable, torch.Tensor)) else 0)
        a = align_data(self, levels, rank)
        b = align_data(other, levels, rank) if levels_of(other) else (
            other._data if isinstance(other, Variable) else other)
        return BatchedVariable.of(Variable._make(op(a, b)), levels)

    def __invert__(self) -> Variable:
        return BatchedVariable.of(Variable._make(~self._data), self._levels)

    def isnan(self) -> Variable:
        return BatchedVariable.of(Variable._make(self._data.isnan()), self._levels)

    def _reduce_data(self, name: str, dim: int | None, keepdim: bool) -> Variable:
        k = len(self._levels)
        if dim is None:
            data = getattr(self._data.reshape(*self._data.shape[:k], -1), name)(-1)
        else:
            data = getattr(self._data, name)(wrap_dim(dim, self.ndim) + k, keepdim=keepdim)
        return BatchedVariable.of(Variable._make(data), self._levels)

    def all(self, dim: int | None = None, keepdim: bool = False) -> Variable:
        return self._reduce_data("all", dim, keepdim)

    def any(self, dim: int | None = None, keepdim: bool = False) -> Variable:
        return self._reduce_data("any", dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Variable:
        return self._reduce_data("argmax", dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Variable:
        return self._reduce_data("argmin", dim, keepdim)

    def __eq__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__eq__)

    def __ne__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__ne__)

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__lt__)

    def __le__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__le__)

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__gt__)

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__ge__)

    def __and__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__and__)

    def __or__(self, other: Any) -> Any:
        return self._compare(other, torch.Tensor.__or__)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__


_VARIABLE_SLOTS = [name for name in Variable.__slots__ if name != "__weakref__"]


def _refuse_torch_method(name: str) -> Any:
    def refused(self: BatchedVariable, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"vmap: teachgrad has no batching rule for Tensor.{name} (it runs torch's own "
                                  "method on the data, which would not see the batch)")
    refused.__name__ = name
    return refused


# torch's methods that teachgrad runs on the data (teachgrad/api/torch_methods.py) would see the batch dims as
# the example's: under vmap each is refused by name
_METADATA = ("is_complex", "is_signed", "is_conj", "is_neg", "get_device", "is_pinned", "is_shared")
for _name in TORCH_OPERATORS + TORCH_METHODS:
    if _name in BatchedVariable.__dict__:
        continue
    if _name in _METADATA:         # what the tensor is, not what is in it: the physical tensor's answer
        setattr(BatchedVariable, _name, lambda self, *args, _n=_name: getattr(self._data, _n)(*args))
    elif _name in ("ndimension", "nelement"):
        setattr(BatchedVariable, _name, BatchedVariable.dim if _name == "ndimension" else BatchedVariable.numel)
    elif _name.startswith("new_"):   # a new tensor, made from nothing of the example's: torch's (not batched)
        setattr(BatchedVariable, _name, lambda self, *args, _n=_name, **kwargs: getattr(
            Variable._make(self._data), _n)(*args, **kwargs))
    else:
        setattr(BatchedVariable, _name, _refuse_torch_method(_name))
for _name in ("dtype", "device", "layout", "is_cuda", "is_cpu", "is_meta", "is_sparse", "is_sparse_csr",
              "is_quantized", "is_mkldnn", "is_nested", "is_mps", "is_xpu", "itemsize"):
    setattr(BatchedVariable, _name, property(lambda self, _n=_name: getattr(self._data, _n)))


def align_data(x: Any, levels: tuple[int, ...], rank: int) -> torch.Tensor:
    """x's data with one leading dim per level of `levels` (size 1 where x is not batched at it), then its logical
    dims padded with size-1 dims in front to `rank` (so that it broadcasts against the others)."""
    data = x._data if isinstance(x, Variable) else x
    return data.reshape(aligned_shape(data.shape, levels_of(x), levels, rank))


def aligned_shape(shape: torch.Size, own: tuple[int, ...], levels: tuple[int, ...], rank: int | None) -> list[int]:
    """The shape of data batched at `own`, with a dim for each of `levels` (1 where missing) and `rank` logical dims."""
    new, j = [], 0
    for level in levels:
        if j < len(own) and own[j] == level:
            new.append(shape[j])
            j += 1
        else:
            new.append(1)
    logical = list(shape[len(own):])
    if rank is not None:
        logical = [1] * (rank - len(logical)) + logical
    return new + logical
