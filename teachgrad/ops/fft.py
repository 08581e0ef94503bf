"""The discrete Fourier transforms, as torch records them: every function of torch.fft (teachgrad/fft.py) is one
of three ops, a complex-to-complex transform (FftC2C), a real-to-complex one (FftR2C) and a complex-to-real one
(FftC2R), with the padding, cropping, conj and dtype copies around it recorded as their own nodes.

A DFT is linear: X = F x with F[k, n] = e^{-2πi kn/N} (times the scale `norm` asks for). Its gradient is the
adjoint, Fᴴ g, and Fᴴ is the unscaled transform the other way: the backward of a forward transform is the
inverse one with the same scale, and the other way round (torch's `_fft_c2c(grad, dim, normalization, !forward)`).
The one-sided transforms keep half the spectrum of a real signal, so their backward fills the other half
(FunctionsManual.cpp's fft_r2c_backward, fft_c2r_backward).

`normalization` is torch's code: 0 no scale, 1 by 1/sqrt(n), 2 by 1/n (teachgrad/fft.py reads `norm=` into it).

Guarded by tests/test_complex.py (each function against torch: values, node names, gradients, gradcheck,
gradgradcheck, tangents).
"""
import torch

from ..core.function import Function
from . import aten


class FftC2C(Function, node="FftC2CBackward0"):
    """A complex-to-complex DFT over `dim`, forward (e^{-2πi kn/N}) or inverse (e^{+2πi kn/N}); its gradient is
    the transform the other way, with the same scale."""

    @staticmethod
    def forward(ctx, a, dim, normalization, forward):
        ctx.dim, ctx.normalization, ctx.forward = list(dim), normalization, forward
        return aten._fft_c2c(a, list(dim), normalization, forward)

    @staticmethod
    def backward(ctx, grad):
        return c2c(grad, ctx.dim, ctx.normalization, not ctx.forward), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        """Linear: the transform of the tangent."""
        return c2c(ta, ctx.dim, ctx.normalization, ctx.forward)


class FftR2C(Function, node="FftR2CBackward0"):
    """A DFT of a real signal over `dim`; `onesided` keeps the first n // 2 + 1 frequencies of the last dim (the
    others are their conjugates). Backward: the dropped half filled with zeros, the inverse transform with the
    same scale, its real part (a real input moves only along the real axis)."""

    @staticmethod
    def forward(ctx, a, dim, normalization, onesided):
        ctx.dim, ctx.normalization, ctx.onesided = list(dim), normalization, onesided
        ctx.last_dim_size = a.shape[dim[-1]]
        return aten._fft_r2c(a, list(dim), normalization, onesided)

    @staticmethod
    def backward(ctx, grad):
        if ctx.onesided:
            missing = ctx.last_dim_size - grad.shape[ctx.dim[-1]]
            if missing > 0:   # the dropped frequencies got no gradient: zeros after the kept ones
                grad = pad_dim(grad, ctx.dim[-1], missing)
        return c2c(grad, ctx.dim, ctx.normalization, False).real, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return r2c(ta, ctx.dim, ctx.normalization, ctx.onesided)


class FftC2R(Function, node="FftC2RBackward0"):
    """The inverse of a one-sided DFT: n // 2 + 1 frequencies of a real signal in, the real signal of length
    `last_dim_size` out. Backward: the one-sided transform of the gradient, its middle frequencies doubled (each
    stands for itself and its conjugate twin, which the forward read from it)."""

    @staticmethod
    def forward(ctx, a, dim, normalization, last_dim_size):
        ctx.dim, ctx.normalization = list(dim), normalization
        return aten._fft_c2r(a, list(dim), normalization, last_dim_size)

    @staticmethod
    def backward(ctx, grad):
        last = ctx.dim[-1]
        half = r2c(grad, ctx.dim, ctx.normalization, True)
        doubled = grad.shape[last] - half.shape[last]   # the frequencies that have a twin: 1 .. doubled
        if doubled > 0:
            twice = torch.ones(half.shape[last], dtype=grad.dtype, device=grad.device)
            twice[1:1 + doubled] = 2
            shape = [1] * half.dim()
            shape[last] = -1
            half = half * twice.view(shape)
        return half, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        _, _, _, last_dim_size = ctx._primals
        return c2r(ta, ctx.dim, ctx.normalization, last_dim_size)


def c2c(a, dim, normalization, forward):
    """_fft_c2c on a tensor (torch's kernel), or recorded (FftC2C) on a Variable under create_graph."""
    if isinstance(a, torch.Tensor):
        return aten._fft_c2c(a, dim, normalization, forward)
    return FftC2C.apply(a, dim, normalization, forward)


def r2c(a, dim, normalization, onesided):
    """_fft_r2c on a tensor, or recorded (FftR2C) on a Variable."""
    if isinstance(a, torch.Tensor):
        return aten._fft_r2c(a, dim, normalization, onesided)
    return FftR2C.apply(a, dim, normalization, onesided)


def c2r(a, dim, normalization, last_dim_size):
    """_fft_c2r on a tensor, or recorded (FftC2R) on a Variable."""
    if isinstance(a, torch.Tensor):
        return aten._fft_c2r(a, dim, normalization, last_dim_size)
    return FftC2R.apply(a, dim, normalization, last_dim_size)


def pad_dim(a, dim, amount):
    """`a` with `amount` zeros after its end along `dim` (a tensor's own cat, or recorded on a Variable)."""
    sizes = list(a.shape)
    sizes[dim] = amount
    return torch.cat([a, torch.zeros(sizes, dtype=a.dtype, device=a.device)], dim)
