"""The torch.Tensor API on Variables: sizes and dtypes, arithmetic, comparisons, element-wise functions,
reductions, matrix products, shapes and views, moving between devices and dtypes, in-place ops, copies and
pickles. Each method runs an op from teachgrad.ops (or, where no gradient can flow, torch's own function on
the data); what autograd knows about a Variable is in teachgrad/core/variable.py, which builds on this class.

Guarded by tests/test_ops_vs_torch.py, tests/test_new_ops.py, tests/test_views.py, tests/test_copies.py and
tests/test_namespaces.py.
"""
from __future__ import annotations

import copy
import numbers
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeAlias
import warnings

import torch

from .. import ops
from ..rules import tangents, variable_class
from ..ops.in_place import write_in_place
from . import declared, interop, op_families, torch_signatures
from . import linalg as linalg_functions
from ..ops import aten

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    import builtins   # for `builtins.bool` below `def bool`, where `bool` names that method (torch's stubs say `_bool`)
    import numpy as np
    from numpy.typing import DTypeLike
    Variable = variable_class.Variable
    Number: TypeAlias = int | float | bool                 # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor        # a teachgrad Variable or a torch tensor
    Operand: TypeAlias = Variable | torch.Tensor | Number  # what an operator takes: x + y, x + torch_tensor, x + 1
    Shape: TypeAlias = int | Sequence[int]                 # sizes one by one, view(2, 3), or in one, view((2, 3))


def _new_leaf(data, requires_grad):
    """What a factory method (`new_zeros`, ...) returns: a leaf, which requires grad when asked, as torch's."""
    if requires_grad and not (data.is_floating_point() or data.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return variable_class.Variable._make(data).requires_grad_(requires_grad)


def _is_operand(x):
    # (the order is for speed: float and int first, torch.Tensor last, since isinstance against torch.Tensor, whose
    # class has a metaclass of its own, takes twice as long to say no; numbers.Number is an ABC, ten times slower)
    return isinstance(x, (float, int, variable_class.Variable, torch.Tensor)) or isinstance(x, numbers.Number)


class TensorMethods:
    """The methods a torch.Tensor has, for `Variable` to inherit."""

    __slots__ = ()

    # --- the tensor underneath ---

    shape = property(lambda self: self.data.shape, doc="The size of each dimension.")
    dtype = property(lambda self: self.data.dtype)
    device = property(lambda self: self.data.device)
    ndim = property(lambda self: self.data.dim())
    is_cuda = property(lambda self: self.data.is_cuda)
    is_meta = property(lambda self: self.data.is_meta)
    # the layout and device flags torch's own code reads (torch.autograd.gradcheck asks is_sparse, ...)
    layout = property(lambda self: self.data.layout)
    is_sparse = property(lambda self: self.data.is_sparse)
    is_sparse_csr = property(lambda self: self.data.is_sparse_csr)
    is_quantized = property(lambda self: self.data.is_quantized)
    is_mkldnn = property(lambda self: self.data.is_mkldnn)
    is_nested = property(lambda self: self.data.is_nested)
    is_cpu = property(lambda self: self.data.is_cpu)
    is_mps = property(lambda self: self.data.is_mps)
    is_xpu = property(lambda self: self.data.is_xpu)

    @property
    def _is_param(self) -> bool:
        return False

    @_is_param.setter
    def _is_param(self, value: bool) -> None:
        """torch's `torch.nn.Parameter(v)` marks what `v.detach()` returns a parameter by setting `_is_param`: for a
        Variable that would be a Variable no module registers (left out of model.parameters()). Refused here."""
        raise TypeError("torch.nn.Parameter(...) was given a teachgrad Variable, and a torch module would not "
                        "register what it returns: use tg.nn.Parameter(variable) (teachgrad.nn.Parameter), a "
                        "torch.nn.Parameter that shares the Variable's storage")

    def size(self, dim: int | None = None) -> torch.Size | int:
        return self.data.size() if dim is None else self.data.size(dim)

    def dim(self) -> int:
        return self.data.dim()

    def numel(self) -> int:
        return self.data.numel()

    def element_size(self) -> int:
        return self.data.element_size()

    nbytes = property(lambda self: self.data.nbytes, doc="Bytes the elements take (numel * element_size).")
    itemsize = property(lambda self: self.data.itemsize)

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self.data.stride() if dim is None else self.data.stride(dim)

    def storage_offset(self) -> int:
        return self.data.storage_offset()

    def is_contiguous(self, memory_format: torch.memory_format = torch.contiguous_format) -> bool:
        return self.data.is_contiguous(memory_format=memory_format)

    def data_ptr(self) -> int:
        return self.data.data_ptr()

    def item(self) -> Number:
        return self.data.item()

    def tolist(self) -> list | Number:
        return self.data.tolist()

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self.data.numpy()

    def is_floating_point(self) -> bool:
        return self.data.is_floating_point()

    def is_inference(self) -> bool:
        """True for a Variable computed in `inference_mode`: it can never enter a graph."""
        return self.data.is_inference()

    def __len__(self) -> int:
        return len(self.data)

    def __iter__(self) -> Iterator[Variable]:
        if self.data.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> float:
        return float(self.data)

    def __int__(self) -> int:
        return int(self.data)

    def __index__(self) -> int:
        return self.data.__index__()

    def __bool__(self) -> bool:
        return bool(self.data)

    def __format__(self, spec: str) -> str:
        if self.data.dim() == 0:
            return self.data.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self) -> str:
        text = repr(self.data)
        body = text[len("tensor("):-1].replace("\n       ", "\n         ")
        if self.grad_fn is not None:
            body += f", grad_fn=<{self.grad_fn.name()}>"
        elif self._requires_grad:
            body += ", requires_grad=True"
        if tangents.is_dual(self):
            body += ", tangent=" + repr(tangents.tangent_of(self)).replace("\n", "\n" + " " * len("Variable("))
        return f"Variable({body})"

    # --- copies and files, by torch's rules (torch/_tensor.py: __deepcopy__, __reduce_ex__) ---

    def __copy__(self) -> Variable:
        """copy.copy: a new leaf over the same storage, with requires_grad; no .grad, no hooks, no history."""
        _warn_unserialized_hooks(self)
        return _rebuild_variable(copy.copy(self.data), self.requires_grad, self.name)

    def __deepcopy__(self, memo: dict[int, Any]) -> Variable:
        """copy.deepcopy: only of a leaf; new storage (views copied together keep sharing theirs), .grad copied."""
        if self.grad_fn is not None:
            raise RuntimeError(_DEEPCOPY_NON_LEAF)
        if id(self) in memo:
            return memo[id(self)]
        new = _rebuild_variable(copy.deepcopy(self.data, memo), self._requires_grad, copy.deepcopy(self.name, memo))
        if self._grad is not None:
            new._grad = variable_class.Variable._make(copy.deepcopy(self._grad.data, memo))
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol: int) -> tuple[Callable[..., Variable], tuple[torch.Tensor, bool, str | None]]:
        """pickle and torch.save: the data and requires_grad (a leaf when loaded); not .grad, hooks or history."""
        _warn_unserialized_hooks(self)
        return _rebuild_variable, (self.data, self.requires_grad, self.name)

    @classmethod
    def __torch_function__(cls, func: Callable[..., Any], types: Iterable[type], args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """torch's own functions accept Variables: see teachgrad/api/interop.py."""
        return interop.handle(func, args, kwargs or {})


    # --- arithmetic ---

    def __add__(self, other: Operand) -> Variable:
        return ops.Add.apply(self, other) if _is_operand(other) else NotImplemented

    def __radd__(self, other: Operand) -> Variable:
        return ops.Add.apply(self, other) if _is_operand(other) else NotImplemented

    def __sub__(self, other: Operand) -> Variable:
        return ops.Sub.apply(self, other) if _is_operand(other) else NotImplemented

    def __rsub__(self, other: Operand) -> Variable:
        if not isinstance(self, variable_class.Variable):   # Tensor.__rsub__(2.0, x), called unbound: as torch's
            return NotImplemented
        if isinstance(other, numbers.Number):
            return ops.Rsub.apply(self, other)
        return ops.RsubTensor.apply(self, other) if _is_operand(other) else NotImplemented

    def __mul__(self, other: Operand) -> Variable:
        return ops.Mul.apply(self, other) if _is_operand(other) else NotImplemented

    def __rmul__(self, other: Operand) -> Variable:
        return ops.Mul.apply(self, other) if _is_operand(other) else NotImplemented

    def __truediv__(self, other: Operand) -> Variable:
        return ops.Div.apply(self, other) if _is_operand(other) else NotImplemented

    def __rtruediv__(self, other: Operand) -> Variable:
        if isinstance(other, numbers.Number):
            return ops.Mul.apply(ops.Reciprocal.apply(self), other)
        return ops.Div.apply(other, self) if _is_operand(other) else NotImplemented

    def __pow__(self, exponent: Operand) -> Variable:
        return self.pow(exponent) if _is_operand(exponent) else NotImplemented

    def __rpow__(self, base: Operand) -> Variable:
        if isinstance(base, numbers.Number):
            return ops.PowScalarBase.apply(base, self)
        if isinstance(self, numbers.Number) and isinstance(base, variable_class.Variable):
            return ops.Pow.apply(base, self)   # Tensor.__rpow__(2.0, x), called unbound, is torch.pow(x, 2.0)
        return ops.PowTensor.apply(base, self) if _is_operand(base) else NotImplemented

    def __matmul__(self, other: TensorLike) -> Variable:
        return ops.matmul(self, other) if isinstance(other, (variable_class.Variable, torch.Tensor)) else NotImplemented

    def __rmatmul__(self, other: TensorLike) -> Variable:
        """other @ self (Python calls it for a torch tensor on the left; called directly, a Variable works too)."""
        return ops.matmul(other, self) if isinstance(other, (variable_class.Variable, torch.Tensor)) else NotImplemented

    def __abs__(self) -> Variable:   # abs(x)
        return self.abs()

    def __neg__(self) -> Variable:
        return ops.Neg.apply(self)

    def __pos__(self) -> Variable:
        return self

    def add(self, other: Operand, alpha: Number = 1) -> Variable:
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other: Operand, alpha: Number = 1) -> Variable:
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other: Operand) -> Variable:
        return self * other

    def div(self, other: Operand, *, rounding_mode: str | None | object = torch_signatures.NOT_GIVEN) -> Variable:
        """self / other. Given rounding_mode ('trunc', 'floor', or even None), torch records DivBackward2, whose
        derivative is zero for both inputs when the quotient is rounded (teachgrad/ops/arithmetic.py)."""
        if rounding_mode is torch_signatures.NOT_GIVEN:
            return self / other
        return ops.DivRounding.apply(self, other, rounding_mode)

    def neg(self) -> Variable:
        return -self

    def pow(self, exponent: Operand) -> Variable:
        """self ** exponent, for a number or a tensor exponent."""
        if isinstance(exponent, numbers.Number):
            return ops.Pow.apply(self, exponent)
        return ops.PowTensor.apply(self, exponent)

    def square(self) -> Variable:
        return ops.Pow.apply(self, 2)

    def reciprocal(self) -> Variable:
        return ops.Reciprocal.apply(self)

    # --- comparisons and logic: results never require grad ---

    def _compare(self, other, op):
        if not _is_operand(other):
            return NotImplemented
        return variable_class.Variable._make(op(self.data, other.data if isinstance(other, variable_class.Variable) else other))

    def __eq__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__eq__)

    def __ne__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__ne__)

    def __lt__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__lt__)

    def __le__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__le__)

    def __gt__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__gt__)

    def __ge__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__ge__)

    def __and__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__and__)

    def __or__(self, other: Operand) -> Variable:
        return self._compare(other, torch.Tensor.__or__)

    def __invert__(self) -> Variable:
        return variable_class.Variable._make(~self.data)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def equal(self, other: TensorLike) -> bool:
        """True if both have the same size and elements (a Python bool, as torch.equal)."""
        return torch.equal(self.data, other.data if isinstance(other, variable_class.Variable) else other)

    def isnan(self) -> Variable:
        return variable_class.Variable._make(self.data.isnan())

    def all(self, *args: Any, **kwargs: Any) -> Variable:
        """torch's Tensor.all on the data (dim, keepdim as torch's): a boolean, never recorded."""
        return variable_class.Variable._make(self.data.all(*args, **kwargs))

    def any(self, *args: Any, **kwargs: Any) -> Variable:
        """torch's Tensor.any on the data (dim, keepdim as torch's): a boolean, never recorded."""
        return variable_class.Variable._make(self.data.any(*args, **kwargs))

    def argmax(self, dim: int | None = None, keepdim: bool = False, *, keepdims: bool | None = None) -> Variable:
        return variable_class.Variable._make(self.data.argmax(dim, torch_signatures.keepdim_alias(keepdim, keepdims, "argmax")))

    def argmin(self, dim: int | None = None, keepdim: bool = False, *, keepdims: bool | None = None) -> Variable:
        return variable_class.Variable._make(self.data.argmin(dim, torch_signatures.keepdim_alias(keepdim, keepdims, "argmin")))

    # --- element-wise functions ---

    def exp(self) -> Variable:
        return ops.Exp.apply(self)

    def log(self) -> Variable:
        return ops.Log.apply(self)

    def sqrt(self) -> Variable:
        return ops.Sqrt.apply(self)

    def sin(self) -> Variable:
        return ops.Sin.apply(self)

    def cos(self) -> Variable:
        return ops.Cos.apply(self)

    def tanh(self) -> Variable:
        return ops.Tanh.apply(self)

    def sigmoid(self) -> Variable:
        return ops.Sigmoid.apply(self)

    def relu(self) -> Variable:
        return ops.Relu.apply(self)

    def abs(self) -> Variable:
        return ops.Abs.apply(self)

    def sign(self) -> Variable:
        return ops.Sign.apply(self)

    # --- complex numbers (teachgrad/ops/complex.py) ---

    def conj(self) -> Variable:
        """The complex conjugate, a view; a real tensor's conj is the tensor itself (as torch's: no node)."""
        return ops.Conj.apply(self) if self.data.is_complex() else self

    def resolve_conj(self) -> Variable:
        """self, or, when its conj bit is set, its conjugate written out (CloneBackward0)."""
        return ops.ResolveConj.apply(self) if self.data.is_conj() else self

    def conj_physical(self) -> Variable:
        return ops.ConjPhysical.apply(self) if self.data.is_complex() else self   # (torch's returns a real one itself)

    @property
    def real(self) -> Variable:
        """The real part, a view: view_as_real's first column (torch records ViewAsReal, then Select); a real
        tensor's real part is the tensor itself."""
        if not self.data.is_complex():
            return self
        return ops.ViewAsReal.apply(self.resolve_conj()).select(-1, 0)   # (a conj view's: of a copy)

    @real.setter
    def real(self, value: Any) -> None:
        self.real.copy_(value)

    @property
    def imag(self) -> Variable:
        """The imaginary part, a view: view_as_real's second column."""
        if not self.data.is_complex():
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return ops.ViewAsReal.apply(self.resolve_conj()).select(-1, 1)

    @imag.setter
    def imag(self, value: Any) -> None:
        self.imag.copy_(value)

    @property
    def mH(self) -> Variable:
        """The conjugate transpose of the last two dimensions (a real matrix's mT)."""
        return self.transpose(-2, -1).conj()

    @property
    def H(self) -> Variable:
        """The conjugate transpose of a matrix."""
        if self.dim() not in (0, 2):   # (torch's message; a 0-D one is deprecated, with torch's warning)
            more = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                               + more)
        return self.mH if self.dim() == 2 else self.conj()

    def adjoint(self) -> Variable:
        return self.mH

    def clamp(self, min: Number | TensorLike | None = None, max: Number | TensorLike | None = None) -> Variable:
        """Limit to [min, max]; the bounds are numbers, or tensors (which may require grad)."""
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if isinstance(min, (variable_class.Variable, torch.Tensor)) or isinstance(max, (variable_class.Variable, torch.Tensor)):
            return ops.ClampTensor.apply(self, min, max)
        return ops.Clamp.apply(self, min, max)

    clip = clamp

    def clamp_min(self, min: Number | TensorLike) -> Variable:
        if isinstance(min, (variable_class.Variable, torch.Tensor)):
            return ops.ClampMinTensor.apply(self, min, None)
        return ops.ClampMin.apply(self, min, None)

    def clamp_max(self, max: Number | TensorLike) -> Variable:
        if isinstance(max, (variable_class.Variable, torch.Tensor)):
            return ops.ClampMaxTensor.apply(self, None, max)
        return ops.ClampMax.apply(self, None, max)

    def masked_fill(self, mask: TensorLike, value: Number | TensorLike) -> Variable:
        """`value` where `mask` is True, self elsewhere (the gradient flows where the mask is False)."""
        op = ops.MaskedFillTensor if isinstance(value, (variable_class.Variable, torch.Tensor)) else ops.MaskedFill
        return op.apply(self, mask, value)   # (a Variable mask is read as its data: no edge)

    def norm(self, p: Number | str = "fro", dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Variable:
        """The vector norm (2 by default) of all elements, or along `dim`."""
        if p == "nuc":   # the sum of the singular values (torch.linalg.matrix_norm's)
            return linalg_functions.matrix_norm(self, "nuc", (-2, -1) if dim is None else dim, keepdim)
        return ops.Norm.apply(self, 2 if p == "fro" else p, dim, keepdim)

    def maximum(self, other: TensorLike) -> Variable:
        return ops.Maximum.apply(self, other)

    def minimum(self, other: TensorLike) -> Variable:
        return ops.Minimum.apply(self, other)

    def where(self, condition: TensorLike, other: Operand) -> Variable:
        """Elements of self where `condition` holds, else of `other` (torch.Tensor.where)."""
        return ops.Where.apply(condition, self, other)   # (a Variable condition is read as its data: no edge)

    def softmax(self, dim: int | None = None, dtype: torch.dtype | None = None) -> Variable:
        return torch_signatures.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int | None = None, dtype: torch.dtype | None = None) -> Variable:
        return torch_signatures.log_softmax(self, dim, dtype=dtype)

    # --- reductions ---

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
            keepdims: bool | None = None) -> Variable:
        keepdim = torch_signatures.keepdim_alias(keepdim, keepdims, "sum")
        if dim is None:   # every dimension: kept (as size 1) only when asked
            return ops.SumDim.apply(self, tuple(range(self.dim())), True) if keepdim else ops.Sum.apply(self)
        return ops.SumDim.apply(self, dim, keepdim)

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
             keepdims: bool | None = None) -> Variable:
        keepdim = torch_signatures.keepdim_alias(keepdim, keepdims, "mean")
        if dim is None:
            return ops.MeanDim.apply(self, tuple(range(self.dim())), True) if keepdim else ops.Mean.apply(self)
        return ops.MeanDim.apply(self, dim, keepdim)

    def max(self, dim: int | TensorLike | None = None, keepdim: bool = False, *,
            keepdims: bool | None = None) -> Variable | torch.return_types.max:
        """The largest element, or (values, indices) along `dim`."""
        keepdim = torch_signatures.keepdim_alias(keepdim, keepdims, "max")
        if isinstance(dim, (variable_class.Variable, torch.Tensor)):
            return self.maximum(dim)
        if dim is None:
            return ops.Max.apply(self)
        return torch.return_types.max(ops.MaxDim.apply(self, dim, keepdim))

    def min(self, dim: int | TensorLike | None = None, keepdim: bool = False, *,
            keepdims: bool | None = None) -> Variable | torch.return_types.min:
        """The smallest element, or (values, indices) along `dim`."""
        keepdim = torch_signatures.keepdim_alias(keepdim, keepdims, "min")
        if isinstance(dim, (variable_class.Variable, torch.Tensor)):
            return self.minimum(dim)
        if dim is None:
            return ops.Min.apply(self)
        return torch.return_types.min(ops.MinDim.apply(self, dim, keepdim))

    def sum_to_size(self, *size: Shape) -> Variable:
        """Sum over broadcast dimensions until the shape is `size` (undoes broadcasting)."""
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
        if not _expandable(size, self.shape):   # (teachgrad summed what it could, silently, before)
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
        if not size:   # as torch's sum_to: to the empty size, the whole sum (SumBackward0)
            return self.sum()
        lead = self.dim() - len(size)
        dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size) if n == 1 and self.shape[lead + i] != 1)
        result = self.sum(dims, keepdim=True) if dims else self
        return result.reshape(size) if lead else result

    # --- matrix products ---

    def matmul(self, other: TensorLike) -> Variable:
        return ops.matmul(self, other)

    def mm(self, other: TensorLike) -> Variable:
        return ops.Mm.apply(self, other)

    def mv(self, other: TensorLike) -> Variable:
        return ops.Mv.apply(self, other)

    def dot(self, other: TensorLike) -> Variable:
        return ops.Dot.apply(self, other)

    def addmm(self, mat1: TensorLike, mat2: TensorLike, *, beta: Number = 1, alpha: Number = 1) -> Variable:
        if beta != 1 or alpha != 1:   # (scaled: the same node, AddmmBackward0, keeping beta and alpha)
            return ops.AddmmScaled.apply(self, mat1, mat2, beta, alpha)
        return ops.Addmm.apply(self, mat1, mat2)

    def baddbmm(self, batch1: TensorLike, batch2: TensorLike, *, beta: Number = 1, alpha: Number = 1) -> Variable:
        return ops.Baddbmm.apply(self, batch1, batch2, beta, alpha)

    # --- shapes ---

    def t(self) -> Variable:
        return ops.T.apply(self)

    @property
    def T(self) -> Variable:
        return self.permute(tuple(range(self.dim() - 1, -1, -1)))

    @property
    def mT(self) -> Variable:
        return self.transpose(-2, -1)

    def transpose(self, dim0: int, dim1: int) -> Variable:
        return ops.Transpose.apply(self, dim0, dim1)

    def permute(self, *dims: Shape) -> Variable:
        return ops.Permute.apply(self, tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def view(self, *shape: Shape) -> Variable:
        return ops.View.apply(self, _shape_arg(shape))

    def reshape(self, *shape: Shape) -> Variable:
        return ops.reshape(self, _shape_arg(shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Variable:
        return torch_signatures._flatten_method(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Variable:
        """dim split into `sizes` (one may be -1): a view, as torch records it (ViewBackward0)."""
        return ops.View.apply(self, self.data.unflatten(dim, sizes).shape)   # (torch's checks and messages)

    def contiguous(self, memory_format: torch.memory_format = torch.contiguous_format) -> Variable:
        """self where already contiguous in `memory_format`, else a copy that is (CloneBackward0)."""
        if memory_format is torch.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return self if self.data.is_contiguous(memory_format=memory_format) else ops.Clone.apply(self, memory_format)

    def clone(self, memory_format: torch.memory_format = torch.preserve_format) -> Variable:
        return ops.Clone.apply(self, memory_format)

    def unsqueeze(self, dim: int) -> Variable:
        return ops.Unsqueeze.apply(self, dim)

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Variable:
        if dim is None:
            return ops.Squeeze.apply(self)
        if isinstance(dim, (tuple, list)):   # torch's squeeze.dims overload: its own node, SqueezeBackward2
            return ops.SqueezeDims.apply(self, tuple(dim))
        return ops.SqueezeDim.apply(self, dim)

    def expand(self, *shape: Shape) -> Variable:
        return ops.Expand.apply(self, _shape_arg(shape))

    def expand_as(self, other: TensorLike) -> Variable:
        return self.expand(other.shape)

    def narrow(self, dim: int, start: int, length: int) -> Variable:
        """`length` positions from `start` along `dim` (a view); checked as torch checks them."""
        if self.dim() == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        dim = ops.shape.wrap_dim(dim, self.dim())
        size = self.shape[dim]
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
        start = start + size if start < 0 else start
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return ops.Slice.apply(self, (slice(None),) * dim + (slice(start, start + length),))

    def select(self, dim: int, index: int) -> Variable:
        """Position `index` along `dim`, which disappears (a view); checked as torch checks them."""
        if self.dim() == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        dim = ops.shape.wrap_dim(dim, self.dim())
        if not -self.shape[dim] <= index < self.shape[dim]:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} "
                             f"at dimension {dim}")
        return ops.Select.apply(self, (slice(None),) * dim + (index,))

    def unbind(self, dim: int = 0) -> tuple[Variable, ...]:
        if self.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return ops.Unbind.apply(self, ops.shape.wrap_dim(dim, self.dim()))

    def split(self, split_size: int | Sequence[int], dim: int = 0) -> tuple[Variable, ...]:
        """Pieces of `split_size` along `dim` (the last may be smaller), or of the sizes listed."""
        if self.dim() == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        dim = ops.shape.wrap_dim(dim, self.dim())
        if isinstance(split_size, int):
            length = self.shape[dim]
            if split_size < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
            if split_size == 0 and length != 0:
                raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension size of "
                                   f"{length}")
            sizes = [min(split_size, length - start) for start in range(0, length, split_size or 1)] or [0]
            return ops.Split.apply(self, tuple(sizes), dim)
        return ops.SplitWithSizes.apply(self, tuple(split_size), dim)

    def split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> tuple[Variable, ...]:
        return self.split(list(split_sizes), dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Variable, ...]:
        """`chunks` pieces along `dim`, as even as possible (torch's rule: ceil(size / chunks) each)."""
        if self.dim() == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        size = self.shape[ops.shape.wrap_dim(dim, self.dim())]
        return self.split(max(-(-size // chunks), 1), dim)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Variable:
        return ops.Diagonal.apply(self, offset, dim1, dim2)

    def view_as(self, other: TensorLike) -> Variable:
        return self.view(other.shape)

    def __getitem__(self, index: Any) -> Variable:
        return ops.getitem(self, index)

    # --- moving between devices and dtypes ---

    def to(self, *args: Any, **kwargs: Any) -> Variable:
        """A copy on another device, dtype or memory format (ToCopyBackward0); self when torch's `to` would
        return the tensor itself (nothing changes and no `copy=True`)."""
        if args or kwargs:   # x.to(other): other's dtype and device (torch reads a Variable as its tensor)
            args = tuple(a.data if isinstance(a, variable_class.Variable) else a for a in args)
            kwargs = {k: a.data if isinstance(a, variable_class.Variable) else a for k, a in kwargs.items()}
        return self._copied_as(self.data.to(*args, **kwargs) if args or kwargs else self.data)

    def _copied_as(self, target):
        """self, or the ToCopy that gives `target`'s device, dtype and layout (what torch's `to` made of the data)."""
        if target is self.data:
            return self
        memory_format = _memory_format(target, self.data)
        if memory_format is torch.preserve_format and (target.device != self.device or target.dtype != self.dtype):
            return ops.ToCopy.apply(self, target.device, target.dtype)
        return ops.ToFreshCopy.apply(self, target.device, target.dtype, memory_format)

    def cpu(self) -> Variable:
        return self.to("cpu")

    def cuda(self, device: torch.device | int | str | None = None) -> Variable:
        return self.to(torch.device("cuda") if device is None else torch.device("cuda", device) if isinstance(device, int) else device)

    def _as_dtype(self, dtype, memory_format, name):
        """x.float(memory_format=...) and its kin: torch's `to(dtype, memory_format=...)` (None: preserve_format)."""
        if memory_format is None:
            memory_format = torch.preserve_format
        if not isinstance(memory_format, torch.memory_format):
            raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, "
                            f"not {type(memory_format).__name__}")
        return self.to(dtype, memory_format=memory_format)

    def double(self, *, memory_format: torch.memory_format | None = torch.preserve_format) -> Variable:
        return self._as_dtype(torch.float64, memory_format, "double")

    def float(self, *, memory_format: torch.memory_format | None = torch.preserve_format) -> Variable:
        return self._as_dtype(torch.float32, memory_format, "float")

    def half(self, *, memory_format: torch.memory_format | None = torch.preserve_format) -> Variable:
        return self._as_dtype(torch.float16, memory_format, "half")

    def long(self, *, memory_format: torch.memory_format | None = torch.preserve_format) -> Variable:
        return self._as_dtype(torch.int64, memory_format, "long")

    def int(self, *, memory_format: torch.memory_format | None = torch.preserve_format) -> Variable:
        return self._as_dtype(torch.int32, memory_format, "int")

    def bool(self, *, memory_format: torch.memory_format | None = torch.preserve_format) -> Variable:
        return self._as_dtype(torch.bool, memory_format, "bool")

    def type(self, dtype: Any = None, non_blocking: builtins.bool = False, **kwargs: Any) -> str | Variable:
        """torch's legacy `type`: with no type, the name of the tensor's type ('torch.FloatTensor', torch's
        own name, so code comparing it runs unchanged); given a dtype, a type name ('torch.DoubleTensor') or a
        legacy type (tg.FloatTensor, tg.Tensor, torch.LongTensor), a copy of that type (ToCopyBackward0), or
        self when it is of that type already."""
        torch_type = getattr(dtype, "torch_type", dtype)   # tg.FloatTensor -> torch.FloatTensor (api/factories.py)
        if dtype is None and not kwargs:
            return self.data.type()
        return self._copied_as(self.data.type(torch_type, non_blocking, **kwargs))

    def new_zeros(self, *size: Shape, requires_grad: bool = False, **options: Any) -> Variable:
        """Zeros of this Variable's dtype and device, unless `dtype=`, `device=` (torch's options) say otherwise."""
        return _new_leaf(self.data.new_zeros(_shape_arg(size), **options), requires_grad)

    def new_ones(self, *size: Shape, requires_grad: bool = False, **options: Any) -> Variable:
        return _new_leaf(self.data.new_ones(_shape_arg(size), **options), requires_grad)

    # --- in place ---

    def _in_place(self, out_of_place, in_place, other=None):
        """Write into this Variable as torch does (teachgrad/ops/in_place.py: the history it takes over)."""
        return write_in_place(self, out_of_place, in_place, other)

    def add_(self, other: Operand, alpha: Number = 1) -> Variable:
        return self._in_place(lambda v: v.add(other, alpha=alpha), lambda d, o: d.add_(o, alpha=alpha), other)

    def sub_(self, other: Operand, alpha: Number = 1) -> Variable:
        return self._in_place(lambda v: v.sub(other, alpha=alpha), lambda d, o: d.sub_(o, alpha=alpha), other)

    def mul_(self, other: Operand) -> Variable:
        return self._in_place(lambda v: v * other, lambda d, o: d.mul_(o), other)

    def div_(self, other: Operand, *, rounding_mode: str | None | object = torch_signatures.NOT_GIVEN) -> Variable:
        if rounding_mode is torch_signatures.NOT_GIVEN:
            return self._in_place(lambda v: v / other, lambda d, o: d.div_(o), other)
        return self._in_place(lambda v: v.div(other, rounding_mode=rounding_mode),
                              lambda d, o: d.div_(o, rounding_mode=rounding_mode), other)

    def exp_(self) -> Variable:
        return self._in_place(ops.Exp.apply, lambda d, o: d.exp_())

    def zero_(self) -> Variable:
        return self._in_place(ops.Zero.apply, lambda d, o: d.zero_())

    def fill_(self, value: Number | TensorLike) -> Variable:
        fill = ops.FillTensor if isinstance(value, (variable_class.Variable, torch.Tensor)) else ops.Fill
        return self._in_place(lambda v: fill.apply(v, value), lambda d, o: d.fill_(o), value)

    def copy_(self, src: TensorLike) -> Variable:
        return self._in_place(lambda v: ops.Copy.apply(v, src), lambda d, o: d.copy_(o), src)

    def index_put_(self, indices: Sequence[TensorLike], values: Operand, accumulate: builtins.bool = False) -> Variable:
        """Write `values` at the positions `indices` (a tuple of index tensors) pick."""
        indices = tuple(ops.shape.plain_index(i) for i in indices)
        if not isinstance(values, (variable_class.Variable, torch.Tensor)):
            values = torch.tensor(values, dtype=self.dtype, device=self.device)
        return self._in_place(lambda v: ops.IndexPut.apply(v, indices, values, accumulate),
                              lambda d, o: aten.index_put_(d, list(indices), o, accumulate), values)

    def log_(self) -> Variable:
        return self._in_place(lambda v: v.log(), lambda d, o: d.log_())

    def sqrt_(self) -> Variable:
        return self._in_place(lambda v: v.sqrt(), lambda d, o: d.sqrt_())

    def sin_(self) -> Variable:
        return self._in_place(lambda v: v.sin(), lambda d, o: d.sin_())

    def cos_(self) -> Variable:
        return self._in_place(lambda v: v.cos(), lambda d, o: d.cos_())

    def tanh_(self) -> Variable:
        return self._in_place(lambda v: v.tanh(), lambda d, o: d.tanh_())

    def sigmoid_(self) -> Variable:
        return self._in_place(lambda v: v.sigmoid(), lambda d, o: d.sigmoid_())

    def relu_(self) -> Variable:
        return self._in_place(lambda v: v.relu(), lambda d, o: d.relu_())

    def abs_(self) -> Variable:
        return self._in_place(lambda v: v.abs(), lambda d, o: d.abs_())

    def neg_(self) -> Variable:
        return self._in_place(lambda v: -v, lambda d, o: d.neg_())

    def pow_(self, exponent: Operand) -> Variable:
        return self._in_place(lambda v: v.pow(exponent), lambda d, o: d.pow_(o), exponent)

    def clamp_(self, min: Number | TensorLike | None = None, max: Number | TensorLike | None = None) -> Variable:
        bounds = (min, max)
        return self._in_place(lambda v: v.clamp(*bounds), lambda d, o: d.clamp_(*(_plain(b) for b in bounds)))

    clip_ = clamp_

    def masked_fill_(self, mask: TensorLike, value: Number | TensorLike) -> Variable:
        return self._in_place(lambda v: v.masked_fill(mask, value), lambda d, o: d.masked_fill_(_plain(mask), o), value)

    def __iadd__(self, other: Operand) -> Variable:
        return self.add_(other)

    def __isub__(self, other: Operand) -> Variable:
        return self.sub_(other)

    def __imul__(self, other: Operand) -> Variable:
        return self.mul_(other)

    def __itruediv__(self, other: Operand) -> Variable:
        return self.div_(other)

    def __setitem__(self, index: Any, value: Operand) -> None:
        """Write into part of this Variable, as torch does it: through a view, or with index_put_."""
        target, tensor_indices = ops.shape.index_target(self, index)
        if tensor_indices is not None:
            target.index_put_(tensor_indices, value)
        else:
            ops.shape.copy_to(target, value)

    # --- ops with torch's signatures, as methods (the functions live in teachgrad/torch_signatures.py) ---

    var = torch_signatures.var
    std = torch_signatures.std
    logsumexp = torch_signatures.logsumexp
    logcumsumexp = torch_signatures.logcumsumexp
    histogram = torch_signatures.histogram
    gather = torch_signatures.gather
    scatter = torch_signatures.scatter
    scatter_add = torch_signatures.scatter_add
    index_select = torch_signatures.index_select
    masked_select = torch_signatures.masked_select
    cumsum = torch_signatures.cumsum
    cumprod = torch_signatures.cumprod
    sort = torch_signatures.sort
    topk = torch_signatures.topk
    repeat = torch_signatures._repeat_method
    tile = torch_signatures._tile_method
    repeat_interleave = torch_signatures.repeat_interleave
    flip = torch_signatures._flip_method
    roll = torch_signatures.roll
    tril = torch_signatures.tril
    triu = torch_signatures.triu
    bmm = torch_signatures.bmm
    movedim = torch_signatures.movedim

    # --- end of the ops with torch's signatures ---

    # --- more ops, by family (the functions live in teachgrad/api/op_families.py; the ops that declare torch's names
    # in their class line, tan, hypot, ..., are set below the class from teachgrad/api/declared.py) ---

    polygamma = op_families._polygamma_method
    logit, nan_to_num = op_families.logit, op_families.nan_to_num
    mvlgamma = op_families.mvlgamma
    round, positive = op_families.round, op_families.positive
    fmod, remainder = op_families.fmod, op_families.remainder
    copysign, xlogy, lerp = op_families.copysign, op_families.xlogy, op_families.lerp
    addcmul, addcdiv, float_power = op_families.addcmul, op_families.addcdiv, op_families.float_power
    true_divide = op_families.true_divide
    amax, amin, aminmax, nansum, nanmean = (op_families.amax, op_families.amin, op_families.aminmax,
                                            op_families.nansum, op_families.nanmean)
    prod, median, nanmedian, mode, kthvalue = (op_families.prod, op_families.median, op_families.nanmedian,
                                               op_families.mode, op_families.kthvalue)
    cummax, cummin, msort = op_families.cummax, op_families.cummin, op_families.msort
    ravel, reshape_as, broadcast_to = op_families.ravel, op_families.reshape_as, op_families.broadcast_to
    fliplr, flipud, tensor_split, hsplit, vsplit, dsplit = (op_families.fliplr, op_families.flipud,
                                                            op_families.tensor_split, op_families.hsplit,
                                                            op_families.vsplit, op_families.dsplit)
    outer, ger, diff, take_along_dim = op_families.outer, op_families.outer, op_families.diff, op_families.take_along_dim
    rot90 = op_families.rot90
    addmv, addr, addbmm = op_families.addmv, op_families.addr, op_families.addbmm
    # torch.linalg's as methods (teachgrad/api/linalg.py; det and matrix_exp are declared by their ops)
    inverse, cholesky_inverse = linalg_functions.inv, linalg_functions.cholesky_inverse
    triangular_solve = linalg_functions.triangular_solve
    lu, lu_solve = linalg_functions.lu_legacy, linalg_functions.lu_solve_legacy
    geqrf, ormqr = linalg_functions.geqrf, linalg_functions.ormqr
    cholesky, cholesky_solve = linalg_functions.cholesky_legacy, linalg_functions.cholesky_solve
    cross, matrix_power = linalg_functions.cross_legacy, linalg_functions.matrix_power
    pinverse = linalg_functions.pinverse
    slogdet, logdet = linalg_functions.slogdet_legacy, linalg_functions.logdet
    qr, svd = linalg_functions.qr_legacy, linalg_functions.svd_legacy

    # --- end of more ops ---


for _name, _method in declared.METHODS.items():   # the ops that declare torch's method names in their class line
    setattr(TensorMethods, _name, _method)


def _expandable(size: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether a tensor of `size` broadcasts to `shape` (torch's is_expandable_to): no more dims, and each of its
    dims, matched from the right, either equal or 1."""
    return len(size) <= len(shape) and all(n == m or n == 1 for n, m in zip(reversed(size), reversed(shape)))


def _rebuild_variable(data, requires_grad, name=None):
    """What a copy, a pickle or torch.load makes again: a leaf Variable of `data`.

    Listed with torch.serialization.add_safe_globals, so torch.load(weights_only=True) may call it; also under
    the names files saved before it moved here give it (teachgrad.variable, teachgrad.tensor_methods)."""
    new = variable_class.Variable._make(data)
    new._requires_grad = requires_grad
    new.name = name
    return new


# Files saved by earlier versions name it where it was then: teachgrad/__init__.py keeps those module names.
torch.serialization.add_safe_globals([_rebuild_variable, (_rebuild_variable, "teachgrad.variable._rebuild_variable"),
                                      (_rebuild_variable, "teachgrad.tensor_methods._rebuild_variable")])


def _plain(x):
    return x.data if isinstance(x, variable_class.Variable) else x


_DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001"
)


def _warn_unserialized_hooks(variable):
    """As torch warns when a tensor with hooks is copied or saved: the hooks are left behind."""
    if variable._grad_fn is None:
        hooks = variable._hooks or ()
    else:
        hooks = [hook for output_nr, hook in variable._grad_fn._tensor_pre_hooks or ()
                 if output_nr == variable._output_nr]
    for hook in hooks:
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=3)


def _memory_format(tensor, source):
    """The layout `to` gave `tensor` (a copy of `source`), for ToCopy to make again: channels_last where torch
    made it so, contiguous where `to(..., memory_format=torch.contiguous_format)` made a strided source so."""
    if tensor.dim() == 4 and not tensor.is_contiguous() and tensor.is_contiguous(memory_format=torch.channels_last):
        return torch.channels_last
    if tensor.dim() == 5 and not tensor.is_contiguous() and tensor.is_contiguous(memory_format=torch.channels_last_3d):
        return torch.channels_last_3d
    if tensor.is_contiguous() and not source.is_contiguous():
        return torch.contiguous_format
    return torch.preserve_format


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        return tuple(shape[0])
    return tuple(shape)
