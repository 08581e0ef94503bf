"""Matrix products. For C = A @ B:  dA = dC @ Bᴴ  and  dB = Aᴴ @ dC, with ᴴ the conjugate transpose (`mH`): for
real matrices the transpose, for complex ones conjugated too (torch's convention, teachgrad/ops/complex.py).

`matmul` is not one node in torch: it is the chain of views, copies and mm/mv/bmm that aten's matmul
decomposes into, and so it is here (guarded by tests/test_composite_nodes.py).
"""
import math

import torch

from ..core.function import Function
from .einsum import Bmm
from .shape import Clone, Expand, SqueezeDim, T, Transpose, Unsqueeze, UnsafeView, reshape


def _column_major(matrix):
    """Whether a matrix is stored column by column (as `weight.t()` in F.linear is)."""
    rows, stride = matrix.shape[0], matrix.stride()
    return stride[0] == 1 and stride[1] == rows


def _column_major_inputs(ctx, a, b, first=0):
    """For each factor that needs a gradient, whether it is column-major (torch's mm backward keeps that layout)."""
    needs = ctx.needs_input_grad
    return needs[first] and _column_major(a), needs[first + 1] and _column_major(b)


def _mm_grad_a(grad, b, column_major):
    """dA = dC @ Bᴴ, computed as (B̄ @ dCᵀ)ᵀ when A is column-major, so dA is laid out as A (torch's mm_mat1_backward)."""
    return b.conj().mm(grad.t()).t() if column_major else grad.mm(b.mH)


def _mm_grad_b(grad, a, column_major):
    """dB = Aᴴ @ dC, computed as (dCᵀ @ Ā)ᵀ when B is column-major (torch's mm_mat2_backward)."""
    return grad.t().mm(a.conj()).t() if column_major else a.mH.mm(grad)


# pack_order: torch packs mat2 before self (its saved inputs by name, then outputs)
class Mm(Function, node="MmBackward0", saves=("self", "mat2"), pack_order=(1, 0)):
    """Matrix @ matrix."""

    @staticmethod
    def forward(ctx, a, b):
        result = a.mm(b)   # first: torch refuses what is not two matrices ("self must be a matrix")
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        ctx.column_major = _column_major_inputs(ctx, a, b)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = _mm_grad_a(grad, b, ctx.column_major[0]) if ctx.needs_input_grad[0] else None
        grad_b = _mm_grad_b(grad, a, ctx.column_major[1]) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return ta.mm(b) + a.mm(tb)


class Mv(Function, node="MvBackward0", saves=("self", "vec")):
    """Matrix @ vector."""

    @staticmethod
    def forward(ctx, a, v):
        ctx.save_for_backward(a, v)
        return a.mv(v)

    @staticmethod
    def backward(ctx, grad):
        a, v = ctx.saved_tensors
        grad_a = grad.unsqueeze(1) * v.conj().unsqueeze(0) if ctx.needs_input_grad[0] else None
        grad_v = a.mH.mv(grad) if ctx.needs_input_grad[1] else None
        return grad_a, grad_v

    @staticmethod
    def jvp(ctx, ta, tv):
        a, v = ctx._primals
        return ta.mv(v) + a.mv(tv)


class Dot(Function, node="DotBackward0", saves=("self", "tensor")):
    """Vector · vector."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a.dot(b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        return grad * b.conj() if needs_a else None, grad * a.conj() if needs_b else None

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return ta.dot(b) + a.dot(tb)


class Addmm(Function, node="AddmmBackward0", saves=("mat1", "mat2")):
    """bias + A @ B in one op (what `linear` records for a batch)."""

    @staticmethod
    def forward(ctx, bias, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[2] else None, b if ctx.needs_input_grad[1] else None)
        ctx.column_major = _column_major_inputs(ctx, a, b, first=1)
        return bias.addmm(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_bias = grad if ctx.needs_input_grad[0] else None
        grad_a = _mm_grad_a(grad, b, ctx.column_major[0]) if ctx.needs_input_grad[1] else None
        grad_b = _mm_grad_b(grad, a, ctx.column_major[1]) if ctx.needs_input_grad[2] else None
        return grad_bias, grad_a, grad_b

    @staticmethod
    def jvp(ctx, tbias, ta, tb):
        _, a, b = ctx._primals
        return tbias + ta.mm(b) + a.mm(tb)


class MatmulSqueeze(Function, node="SqueezeBackward4", batching=("along", 1)):
    """The squeeze at the end of vector @ matrix. torch squeezes the fresh product in place (`squeeze_`), so the
    result is no view, its node is squeeze_'s (SqueezeBackward4) and its version counter has counted one write."""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.shape = a.shape
        output = a.squeeze(dim)
        torch.autograd.graph.increment_version(output)
        return output

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None

    @staticmethod
    def jvp(ctx, ta, _dim):
        return ta.reshape(ctx._result.shape)


def _broadcast_batch(batch1, batch2):
    """The batch shape both factors are expanded to; torch's message (infer_size's) for the first dimension,
    from the right, where they do not broadcast."""
    ndim = max(len(batch1), len(batch2))
    shape = [0] * ndim
    for dim in reversed(range(ndim)):
        offset = ndim - 1 - dim
        size1 = batch1[len(batch1) - 1 - offset] if offset < len(batch1) else 1
        size2 = batch2[len(batch2) - 1 - offset] if offset < len(batch2) else 1
        if size1 != size2 and size1 != 1 and size2 != 1:
            raise RuntimeError(f"The size of tensor a ({size1}) must match the size of tensor b ({size2}) "
                               f"at non-singleton dimension {dim}")
        shape[dim] = size2 if size1 == 1 else size1
    return tuple(shape)


def _should_fold(a, b):
    """Whether torch folds the batch of the larger factor into the rows of one mm (or mv) instead of a bmm.

    The larger factor (b is seen transposed when it is the larger) must be >= 3-D and the other 1-D or 2-D.
    torch then folds when the smaller factor requires grad (a bmm would leave a batch-sized gradient to sum),
    never when a is the 2-D one (the result would need a transposed copy), and otherwise only when the
    batch dims can be merged into the rows without a copy.
    """
    a_larger = a.dim() >= b.dim()
    larger = a.data if a_larger else b.data.mT
    smaller = b if a_larger else a
    if not (larger.dim() >= 3 and smaller.dim() <= 2):
        return False
    if smaller.requires_grad:
        return True
    if a.dim() == 2:
        return False
    if larger.numel() == 0:
        return True
    shape, stride = larger.shape, larger.stride()
    return all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(larger.dim() - 2))


def _folded(a, b):
    """(batch..., n, m) @ (m, p) as one (batch·n, m) @ (m, p) mm (or mv for a vector), viewed back.

    When b is the larger factor the product is done transposed, bᵀ @ aᵀ, and transposed back into a copy."""
    transpose = b.dim() > a.dim()
    larger = Transpose.apply(b, -2, -1) if transpose else a
    other = (T.apply(a) if a.dim() == 2 else a) if transpose else b
    output_shape = tuple(larger.shape[:-1])
    rows = reshape(larger, (math.prod(output_shape), larger.shape[-1]))
    if other.dim() == 1:
        return UnsafeView.apply(Mv.apply(rows, other), output_shape)
    output = UnsafeView.apply(Mm.apply(rows, other), (*output_shape, other.shape[1]))
    if not transpose:
        return output
    output = Transpose.apply(output, -2, -1)
    return output if output.data.is_contiguous() else Clone.apply(output, torch.contiguous_format)


def _batched(a, b):
    """Both factors expanded to the broadcast batch, reshaped to 3-D, one bmm, viewed to the result's shape."""
    da, db = a.dim(), b.dim()
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch = _broadcast_batch(tuple(a.shape[:max(da - 2, 0)]), tuple(b.shape[:max(db - 2, 0)]))
    count = math.prod(batch)
    a3 = reshape(Expand.apply(a, (*batch, n, m1)), (count, n, m1))
    if db == 1:
        b3 = Unsqueeze.apply(reshape(Expand.apply(b, (*batch, m2)), (count, m2)), 2)
    else:
        b3 = reshape(Expand.apply(b, (*batch, m2, p)), (count, m2, p))
    output_shape = (*batch, *((n,) if da > 1 else ()), *((p,) if db > 1 else ()))
    output = Bmm.apply(a3, b3)
    if db == 1:
        output = SqueezeDim.apply(output, -1)
    return UnsafeView.apply(output, output_shape)


def matmul(a, b):
    """a @ b, recorded as torch's matmul decomposes it (aten's _matmul_impl), so the nodes and every rounding are
    torch's: Dot, Mv or Mm for 1-D and 2-D factors; a batch against a matrix or vector folded into one Mm or Mv
    (`_should_fold`); anything else as one Bmm over the broadcast batch. There is no MatmulBackward0 node."""
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return Dot.apply(a, b)
    if da == 2 and db == 1:
        return Mv.apply(a, b)
    if da == 1 and db == 2:
        return MatmulSqueeze.apply(Mm.apply(Unsqueeze.apply(a, 0), b), 0)
    if da == 2 and db == 2:
        return Mm.apply(a, b)
    if _should_fold(a, b):
        return _folded(a, b)
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:
        # a batch of one against a batch of many: the one that requires grad is squeezed to a matrix, so that
        # its gradient comes from one folded mm rather than a sum over an expanded batch
        if a.shape[0] == 1 and a.requires_grad:
            return matmul(SqueezeDim.apply(a, 0), b)
        if b.shape[0] == 1 and b.requires_grad:
            return matmul(a, SqueezeDim.apply(b, 0))
    return _batched(a, b)
