"""Matrix products. For C = A @ B:  dA = dC @ Bᵀ  and  dB = Aᵀ @ dC."""
from ..core.function import Function
from .shape import SqueezeDim, Unsqueeze, UnsafeView, reshape


def _column_major(matrix):
    """Whether a matrix is stored column by column (as `weight.t()` in F.linear is)."""
    rows, stride = matrix.shape[0], matrix.stride()
    return stride[0] == 1 and stride[1] == rows


def _column_major_inputs(ctx, a, b, first=0):
    """For each factor that needs a gradient, whether it is column-major (torch's mm backward keeps that layout)."""
    needs = ctx.needs_input_grad
    return needs[first] and _column_major(a), needs[first + 1] and _column_major(b)


def _mm_grad_a(grad, b, column_major):
    """dA = dC @ Bᵀ, computed as (B @ dCᵀ)ᵀ when A is column-major, so dA is laid out as A (torch's mm_mat1_backward)."""
    return b.mm(grad.t()).t() if column_major else grad.mm(b.t())


def _mm_grad_b(grad, a, column_major):
    """dB = Aᵀ @ dC, computed as (dCᵀ @ A)ᵀ when B is column-major (torch's mm_mat2_backward)."""
    return grad.t().mm(a).t() if column_major else a.t().mm(grad)


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
        grad_a = grad.unsqueeze(1) * v.unsqueeze(0) if ctx.needs_input_grad[0] else None
        grad_v = a.t().mv(grad) if ctx.needs_input_grad[1] else None
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
        return grad * b if needs_a else None, grad * a if needs_b else None

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


class MatmulSqueeze(SqueezeDim, node="SqueezeBackward4"):
    """The squeeze at the end of vector @ matrix; torch squeezes in place there and names it so."""


# pack_order: torch packs other before self (its saved inputs by name, then outputs)
class Matmul(Function, node="MatmulBackward0", saves=("self", "other"), pack_order=(1, 0)):
    """Batched matrix products with broadcasting, for shapes the cases in `matmul` do not cover."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a.matmul(b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a2 = a.unsqueeze(0) if a.dim() == 1 else a
        b2 = b.unsqueeze(-1) if b.dim() == 1 else b
        g = grad
        if a.dim() == 1:
            g = g.unsqueeze(-2)
        if b.dim() == 1:
            g = g.unsqueeze(-1)
        grad_a = g.matmul(b2.transpose(-1, -2)).sum_to_size(a2.shape).reshape(a.shape) if ctx.needs_input_grad[0] else None
        grad_b = a2.transpose(-1, -2).matmul(g).sum_to_size(b2.shape).reshape(b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return ta.matmul(b) + a.matmul(tb)


def matmul(a, b):
    """a @ b, recorded as torch records it: Dot, Mv, Mm, or a vector/batch folded into Mm."""
    da, db = a.dim(), b.dim()
    if da == 1 and db == 1:
        return Dot.apply(a, b)
    if da == 2 and db == 1:
        return Mv.apply(a, b)
    if da == 2 and db == 2:
        return Mm.apply(a, b)
    if da == 1 and db == 2:
        return MatmulSqueeze.apply(Mm.apply(Unsqueeze.apply(a, 0), b), 0)
    if da > 2 and db == 2:
        rows = reshape(a, (-1, a.shape[-1]))
        return UnsafeView.apply(Mm.apply(rows, b), (*a.shape[:-1], b.shape[-1]))
    return Matmul.apply(a, b)
