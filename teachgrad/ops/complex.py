"""Complex numbers: conj, the real and imaginary parts, angle, polar and complex, and the two views that see a
complex tensor as pairs of real numbers.

torch's convention (its docs, "Autograd for Complex Numbers"): for a real loss L of z = x + iy, the gradient
torch gives z is dL/dx + i dL/dy, twice the conjugate Wirtinger derivative dL/d(conj z). It points uphill, as a
real gradient does, so `z - lr * z.grad` steps downhill. An op's backward turns the gradient g of its output w
into that of its input z:

    grad_z = conj(dw/dz) * g + dw/d(conj z) * conj(g)

For a holomorphic op (exp, mul, matmul: dw/d(conj z) = 0) this is `g * conj(f'(z))`: the real formula with the
derivative conjugated, which is why the formulas of teachgrad/ops carry `.conj()` where torch's derivatives.yaml
does (a real tensor's conj is itself, at no cost). The ops here are not holomorphic: each has its own formula.

Guarded by tests/test_complex.py (each against torch: values, node names, gradients, gradcheck on complex
inputs, tangents; the views against torch's view semantics).
"""
import torch

from ..core.function import Function


class Conj(Function, node="ConjBackward0", is_view=True, batching="pointwise", linear=True):
    """conj(z) = x - iy, a view (torch sets a conj bit, no copy): the gradient is conjugated back."""

    @staticmethod
    def forward(ctx, a):
        return a.conj()

    @staticmethod
    def backward(ctx, grad):
        return torch.conj_physical(grad)   # (written out, not a conj bit: a gradient is a tensor of its own)


class ConjPhysical(Function, node="ConjPhysicalBackward0", batching="pointwise", linear=True):
    """conj(z) written into new memory: the same gradient as conj's."""

    @staticmethod
    def forward(ctx, a):
        return torch.conj_physical(a)

    @staticmethod
    def backward(ctx, grad):
        return torch.conj_physical(grad)


class ResolveConj(Function, node="CloneBackward0", batching="pointwise", linear=True):
    """A tensor whose conj bit is set (`z.conj()`), its conjugate written out: a copy, as torch records it."""

    @staticmethod
    def forward(ctx, a):
        return a.resolve_conj()

    @staticmethod
    def backward(ctx, grad):
        return grad


class ViewAsReal(Function, node="ViewAsRealBackward0", is_view=True, linear=True):
    """A complex tensor seen as real pairs, a last dimension of 2 (x, y): the gradient (gx, gy) seen back as
    gx + i gy."""

    @staticmethod
    def forward(ctx, a):
        return torch.view_as_real(a)

    @staticmethod
    def backward(ctx, grad):
        return torch.view_as_complex(grad.contiguous())   # (a Variable's: recorded, as teachgrad's view_as_complex)


class ViewAsComplex(Function, node="ViewAsComplexBackward0", is_view=True, linear=True):
    """Real pairs (a last dimension of 2) seen as complex numbers: the gradient gx + i gy seen back as (gx, gy)."""

    @staticmethod
    def forward(ctx, a):
        return torch.view_as_complex(a)

    @staticmethod
    def backward(ctx, grad):
        return torch.view_as_real(grad.contiguous().resolve_conj())


# the views torch makes again after an in-place write by running them (its view_func), not by strides: they change
# the dtype (view_as_real, view_as_complex) or set the conj bit, which no as_strided of the base can (ops/in_place.py)
METADATA_VIEWS = (Conj, ViewAsReal, ViewAsComplex)


class Complex(Function, node="ComplexBackward0", batching="pointwise"):
    """complex(x, y) = x + iy from two real tensors: x gets the real part of the gradient, y its imaginary part."""

    @staticmethod
    def forward(ctx, real, imag):
        return torch.complex(real, imag)

    @staticmethod
    def backward(ctx, grad):
        needs_real, needs_imag = ctx.needs_input_grad
        return grad.real if needs_real else None, grad.imag if needs_imag else None

    @staticmethod
    def jvp(ctx, t_real, t_imag):
        zeros = torch.zeros_like(ctx._primals[0] if t_real is None else t_real)
        return torch.complex(zeros if t_real is None else t_real, zeros if t_imag is None else t_imag)


class Angle(Function, node="AngleBackward0", saves=("self",), batching="pointwise", function="angle",
            method="angle"):
    """The argument θ of z = |z| e^{iθ}: dθ/dx = -y/|z|², dθ/dy = x/|z|², so the gradient is g i z / |z|²
    (g real), 0 at z = 0; a real tensor's angle is 0 or π, flat: its gradient is 0 (torch's angle_backward)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return torch.angle(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return angle_backward(grad, a)

    @staticmethod
    def jvp(ctx, ta):
        """The tangent of θ is Re(conj(grad formula) ...): angle_backward applied to conj(tangent), conjugated,
        its real part (derivatives.yaml's `handle_r_to_c(..., angle_backward(self_t.conj(), self_p).conj())`)."""
        a = ctx._primals[0]
        tangent = angle_backward(ta.conj(), a).conj()
        return tangent.real if tangent.is_complex() else tangent


def angle_backward(grad, a):
    """g i z / |z|², and 0 where z = 0; zeros for a real z."""
    if not a.is_complex():
        return torch.zeros_like(a) if isinstance(a, torch.Tensor) else a.new_zeros(a.shape)
    return (grad * a / a.abs().pow(2) * 1j).masked_fill(a == 0, 0)


class Polar(Function, node="PolarBackward0", saves=("result",), batching="pointwise"):
    """polar(r, θ) = r e^{iθ}. With g the output's gradient: dL/dr = Re(conj(g) e^{iθ}) and
    dL/dθ = Re(conj(g) i z) (torch's polar_backward, which writes e^{iθ} as sgn(z), 0 where r = 0)."""

    @staticmethod
    def forward(ctx, abs, angle):
        result = torch.polar(abs, angle)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        grad_conj = grad.conj()
        needs_abs, needs_angle = ctx.needs_input_grad
        grad_abs = (grad_conj * result.sgn()).real if needs_abs else None
        grad_angle = (grad_conj * (result * 1j)).real if needs_angle else None
        return grad_abs, grad_angle

    @staticmethod
    def jvp(ctx, t_abs, t_angle):
        """dz = e^{iθ} dr + i z dθ."""
        abs, angle = ctx._primals
        result = ctx._result
        in_abs = None if t_abs is None else t_abs * torch.polar(torch.ones_like(abs), angle)
        in_angle = None if t_angle is None else t_angle * (result * 1j)
        return in_angle if in_abs is None else in_abs if in_angle is None else in_abs + in_angle


class Sgn(Function, node="SgnBackward0", saves=("self", "result"), batching="pointwise", function="sgn", method="sgn"):
    """sgn(z) = z / |z| (0 at 0), sign(x) for a real x. It depends only on the angle θ of z, and moves by
    i sgn(z) dθ: the gradient is (g - s Re(conj(s) g)) / |z|, the part of g across s, 0 at z = 0 (torch's
    sgn_backward); a real sign is flat, its gradient 0."""

    @staticmethod
    def forward(ctx, a):
        result = torch.sgn(a)
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        return sgn_backward(a, grad, result)

    @staticmethod
    def jvp(ctx, ta):
        return sgn_backward(ctx._primals[0], ta, ctx._result)


def sgn_backward(a, grad, s):
    """(g - s Re(conj(s) g)) / |z|, 0 where z = 0; zeros for a real tensor."""
    if not a.is_complex():
        return grad.new_zeros(grad.shape)
    abs = a.abs()
    return ((grad - s * (s.conj() * grad).real) / abs).masked_fill(abs == 0, 0)
