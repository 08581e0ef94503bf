"""Matrix products with an added term, `beta * input + alpha * (product)`, as torch records them: addmm (with beta
and alpha), addmv, addr, baddbmm, addbmm; vdot; trace; rot90. Formulas from torch's derivatives.yaml: the added
term's gradient is grad * beta, each factor's is the product's gradient times alpha.

Guarded by tests/test_op_families.py (each op against torch) and tests/test_op_db.py (torch's own samples).
"""
import torch

from ..core.function import Function
from ..rules.broadcast import times, total


def _scaled(x, factor):
    return x if factor == 1 else x * factor


class _AddProduct(Function):
    """beta * input + alpha * product(a, b); `product`, `grad_a` and `grad_b` are the plain product's."""

    @classmethod
    def forward(cls, ctx, input, a, b, beta, alpha):
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(a, b)
        return cls.kernel(input, a, b, beta=beta, alpha=alpha)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        needs_input, needs_a, needs_b = ctx.needs_input_grad[:3]
        return (_scaled(grad, ctx.beta) if needs_input else None,
                _scaled(cls.grad_a(grad, a, b), ctx.alpha) if needs_a else None,
                _scaled(cls.grad_b(grad, a, b), ctx.alpha) if needs_b else None, None, None)

    @classmethod
    def jvp(cls, ctx, t_input, ta, tb, *_):
        _, a, b, beta, alpha = ctx._primals
        product = total(None if ta is None else cls.product(ta, b), None if tb is None else cls.product(a, tb))
        return total(times(t_input, beta), times(product, alpha))


class AddmmScaled(_AddProduct, node="AddmmBackward0", saves=("mat1", "mat2")):
    """beta * input + alpha * (mat1 @ mat2)."""
    kernel = staticmethod(torch.addmm)
    product = staticmethod(lambda a, b: a.mm(b))
    grad_a = staticmethod(lambda grad, a, b: grad.mm(b.mH))
    grad_b = staticmethod(lambda grad, a, b: a.mH.mm(grad))


class Addmv(_AddProduct, node="AddmvBackward0", saves=("mat", "vec")):
    """beta * input + alpha * (mat @ vec)."""
    kernel = staticmethod(torch.addmv)
    product = staticmethod(lambda a, b: a.mv(b))
    grad_a = staticmethod(lambda grad, a, b: grad.unsqueeze(1) * b.conj())
    grad_b = staticmethod(lambda grad, a, b: a.mH.mv(grad))


class Addr(_AddProduct, node="AddrBackward0", saves=("vec1", "vec2")):
    """beta * input + alpha * outer(vec1, vec2)."""
    kernel = staticmethod(torch.addr)
    product = staticmethod(lambda a, b: a.unsqueeze(1) * b)
    grad_a = staticmethod(lambda grad, a, b: grad.mv(b.conj()))
    grad_b = staticmethod(lambda grad, a, b: grad.t().mv(a.conj()))


class Baddbmm(_AddProduct, node="BaddbmmBackward0", saves=("batch1", "batch2")):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    kernel = staticmethod(torch.baddbmm)
    product = staticmethod(lambda a, b: a.bmm(b))
    grad_a = staticmethod(lambda grad, a, b: grad.bmm(b.mH))
    grad_b = staticmethod(lambda grad, a, b: a.mH.bmm(grad))


class Addbmm(_AddProduct, node="AddbmmBackward0", saves=("batch1", "batch2")):
    """beta * input + alpha * (the sum over the batch of batch1 @ batch2)."""
    kernel = staticmethod(torch.addbmm)
    product = staticmethod(lambda a, b: a.bmm(b).sum(0))
    grad_a = staticmethod(lambda grad, a, b: grad.unsqueeze(0).expand(a.shape[0], *grad.shape).bmm(b.mH))
    grad_b = staticmethod(lambda grad, a, b: a.mH.bmm(grad.unsqueeze(0).expand(a.shape[0], *grad.shape)))


class Vdot(Function, node="VdotBackward0", saves=("self", "other"), function="vdot", method="vdot"):
    """The dot product of two vectors, conjugating the first (sum of conj(a) b): d/da = conj(grad) b, d/db = grad a
    (torch's formulas: a enters conjugated, so its gradient is the conjugate of a holomorphic one's)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.vdot(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad.conj() * b, grad * a

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return total(None if ta is None else (ta.conj() * b).sum(), None if tb is None else (a.conj() * tb).sum())


class Trace(Function, node="TraceBackward0", function="trace", method="trace", out_variant=False):
    """The sum of the diagonal of a matrix: the gradient goes to each diagonal element."""

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        return torch.trace(a)

    @staticmethod
    def backward(ctx, grad):
        return grad * torch.eye(*ctx.shape, dtype=grad.dtype, device=grad.device)

    @staticmethod
    def jvp(ctx, ta):
        return ta.diagonal().sum()


class Rot90(Function, node="Rot90Backward0", batching=("along", 2)):
    """The tensor turned k quarter turns in the plane of dims: the gradient is turned back."""

    @staticmethod
    def forward(ctx, a, k, dims):
        ctx.k, ctx.dims = k, list(dims)
        return torch.rot90(a, k, dims)

    @staticmethod
    def backward(ctx, grad):
        return torch.rot90(grad, -ctx.k, ctx.dims), None, None   # (a Variable's: recorded, as teachgrad's rot90)

    @staticmethod
    def jvp(ctx, ta, *_):
        return torch.rot90(ta, ctx.k, ctx.dims)
