"""torch.fft: discrete Fourier transforms at torch's path (`tg.fft.fft(x)`), recorded as torch records them.

Each function reads its arguments as torch does (aten's SpectralOps.cpp) and runs one of the three transforms of
teachgrad/ops/fft.py: the input cropped (`narrow`: SliceBackward0) and zero-padded (ConstantPadNdBackward0) to the
length asked for, a real input made complex where the transform needs it (ToCopyBackward0), conj where an
inverse is computed as the conjugate of a forward one (ConjBackward0). `norm=` says which direction is scaled:
"backward" (the default: the inverse by 1/n), "ortho" (both by 1/sqrt(n)) or "forward" (the forward by 1/n).

hfft2, ihfft2, hfftn and ihfftn are not written here (torch's are; teachgrad says so when asked).

Guarded by tests/test_complex.py (each function against torch: values, node names, gradients, gradcheck,
gradgradcheck, tangents, torch's errors).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TypeAlias

import torch

from . import ops
from .api.factories import _factory
from .ops.fft import FftC2C, FftC2R, FftR2C
from .ops.shape import wrap_dim
from .rules import torch_leaves, variable_class

if TYPE_CHECKING:
    Variable = variable_class.Variable
    TensorLike: TypeAlias = Variable | torch.Tensor

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]


# --- the transforms of one dimension ---

def fft(input: TensorLike, n: int | None = None, dim: int = -1, norm: str | None = None) -> Variable:
    """X[k] = Σ_j x[j] e^{-2πi jk/n}: complex in, complex out; a real input is transformed as real (FftR2C)."""
    return _c2c("fft", input, n, dim, norm, forward=True)


def ifft(input: TensorLike, n: int | None = None, dim: int = -1, norm: str | None = None) -> Variable:
    """x[j] = 1/n Σ_k X[k] e^{+2πi jk/n} (the 1/n as norm="backward" asks)."""
    return _c2c("ifft", input, n, dim, norm, forward=False)


def rfft(input: TensorLike, n: int | None = None, dim: int = -1, norm: str | None = None) -> Variable:
    """fft of a real signal, its first n // 2 + 1 frequencies (the rest are their conjugates)."""
    return _r2c("rfft", input, n, dim, norm, forward=True, onesided=True)


def irfft(input: TensorLike, n: int | None = None, dim: int = -1, norm: str | None = None) -> Variable:
    """The real signal of length n (2 (m - 1) by default) whose rfft is the m frequencies given."""
    return _c2r("irfft", input, n, dim, norm, forward=False)


def hfft(input: TensorLike, n: int | None = None, dim: int = -1, norm: str | None = None) -> Variable:
    """fft of a signal with Hermitian symmetry, given by its first half: real out, irfft of its conjugate."""
    return _c2r("hfft", input, n, dim, norm, forward=True)


def ihfft(input: TensorLike, n: int | None = None, dim: int = -1, norm: str | None = None) -> Variable:
    """The inverse of hfft: the one-sided ifft of a real signal (rfft's conjugate, scaled)."""
    return _r2c("ihfft", input, n, dim, norm, forward=False, onesided=True)


# --- over several dimensions ---

def fftn(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
         norm: str | None = None) -> Variable:
    """fft over each of `dim` (every dimension, or the last len(s)); a real input is made complex first."""
    return _c2c_n("fftn", input, s, dim, norm, forward=True)


def ifftn(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None) -> Variable:
    return _c2c_n("ifftn", input, s, dim, norm, forward=False)


def fft2(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Variable:
    return fftn(input, s, dim, norm)


def ifft2(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Variable:
    return ifftn(input, s, dim, norm)


def rfftn(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None) -> Variable:
    """fftn of a real signal, one-sided in the last of `dim`."""
    x = _variable(input)
    _require_real("rfftn", x)
    x, dims, sizes = _shape_and_dims(_as_float(x), s, dim)
    x = _resize(x, dims, sizes)
    return FftR2C.apply(x, dims, _normalization(norm, True), True)


def rfft2(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Variable:
    return rfftn(input, s, dim, norm)


def irfftn(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
           norm: str | None = None) -> Variable:
    """The real signal whose rfftn is the given half spectrum: the last of `dim` has length s[-1] (2 (m - 1)
    by default)."""
    x = _as_complex(_variable(input))
    x, dims, sizes = _shape_and_dims(x, s, dim)
    last = sizes[-1] if s is not None else 2 * (x.shape[dims[-1]] - 1)
    _check_points(last)
    x = _resize(x, dims, sizes[:-1] + [last // 2 + 1])
    return FftC2R.apply(x, dims, _normalization(norm, False), last)


def irfft2(input: TensorLike, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Variable:
    return irfftn(input, s, dim, norm)


# --- helpers torch has beside the transforms ---

def fftshift(input: TensorLike, dim: int | Sequence[int] | None = None) -> Variable:
    """The zero frequency moved to the middle: a roll by n // 2 along each of `dim` (every dimension)."""
    x = _variable(input)
    dims = _shift_dims(x, dim)
    return ops.Roll.apply(x, [x.shape[d] // 2 for d in dims], dims)


def ifftshift(input: TensorLike, dim: int | Sequence[int] | None = None) -> Variable:
    """fftshift undone: a roll by (n + 1) // 2 along each of `dim`."""
    x = _variable(input)
    dims = _shift_dims(x, dim)
    return ops.Roll.apply(x, [(x.shape[d] + 1) // 2 for d in dims], dims)


fftfreq = _factory(torch.fft.fftfreq)     # the frequencies of fft's outputs, in cycles per unit of d
rfftfreq = _factory(torch.fft.rfftfreq)   # those of rfft's outputs


def __getattr__(name: str):
    if name in ("hfft2", "ihfft2", "hfftn", "ihfftn"):
        raise AttributeError(f"module 'teachgrad.fft' has no attribute '{name}': teachgrad does not write "
                             f"torch.fft.{name}; its fft module has {', '.join(__all__)}")
    raise AttributeError(f"module 'teachgrad.fft' has no attribute '{name}'")


# --- reading the arguments, as torch's SpectralOps.cpp does ---

def _normalization(norm: str | None, forward: bool) -> int:
    """norm= as torch's code: 0 unscaled, 1 by 1/sqrt(n), 2 by 1/n; "backward" scales the inverse,
    "forward" the forward transform."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "ortho":
        return 1
    if norm == "forward":
        return 2 if forward else 0
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _c2c(name, input, n, dim, norm, forward):
    x = _variable(input)
    if not x.is_complex():   # a real signal: its full (two-sided) spectrum, by the real transform
        return _r2c(name, x, n, dim, norm, forward, onesided=False)
    d = wrap_dim(dim, x.dim()) if x.dim() else _no_dims(dim)
    x = _resize(x, [d], [_points(n, x.shape[d])])
    return FftC2C.apply(x, [d], _normalization(norm, forward), forward)


def _r2c(name, input, n, dim, norm, forward, onesided):
    """The transform of a real signal; an inverse one is the conjugate of the forward one (scaled as asked)."""
    x = _variable(input)
    _require_real(name, x)
    x = _as_float(x)
    d = wrap_dim(dim, x.dim()) if x.dim() else _no_dims(dim)
    x = _resize(x, [d], [_points(n, x.shape[d])])
    result = FftR2C.apply(x, [d], _normalization(norm, forward), onesided)
    return result if forward else result.conj()


def _c2r(name, input, n, dim, norm, forward):
    """The real signal of a one-sided spectrum; hfft reads its input conjugated."""
    x = _as_complex(_variable(input))
    d = wrap_dim(dim, x.dim()) if x.dim() else _no_dims(dim)
    last = _points(n, 2 * (x.shape[d] - 1))
    x = _resize(x, [d], [last // 2 + 1])
    if forward:
        x = x.conj()
    return FftC2R.apply(x, [d], _normalization(norm, forward), last)


def _c2c_n(name, input, s, dim, norm, forward):
    x = _as_complex(_variable(input))
    x, dims, sizes = _shape_and_dims(x, s, dim)
    x = _resize(x, dims, sizes)
    return FftC2C.apply(x, dims, _normalization(norm, forward), forward)


def _shape_and_dims(x, s, dim):
    """The dims transformed (every one, or the last len(s)) and their lengths, as torch reads s and dim."""
    if dim is not None:
        dims = [wrap_dim(d, x.dim()) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.dim():
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.dim()} dimensions.")
        dims = list(range(x.dim() - len(s), x.dim()))
    else:
        dims = list(range(x.dim()))
    sizes = [x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    for size in sizes:
        _check_points(size)
    return x, dims, sizes


def _resize(x, dims, sizes):
    """x cropped (a view, SliceBackward0) and then zero-padded (ConstantPadNdBackward0) to `sizes` along `dims`."""
    pad = [0] * (2 * x.dim())
    for d, size in zip(dims, sizes):
        if x.shape[d] > size:
            x = x.narrow(d, 0, size)
        elif x.shape[d] < size:
            pad[len(pad) - 2 * d - 1] = size - x.shape[d]   # (constant_pad_nd lists the last dim first)
    return ops.ConstantPadNd.apply(x, pad, 0) if any(pad) else x


def _points(n, default):
    if n is None:
        return default
    _check_points(n)
    return n


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _no_dims(dim):
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _require_real(name, x):
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {_SCALAR_TYPE[x.dtype]}")


_SCALAR_TYPE = {torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble", torch.complex32: "ComplexHalf"}


def _as_float(x):
    """An integer signal as the default float dtype (it requires no grad: nothing is recorded)."""
    return x if x.is_floating_point() else x.to(torch.get_default_dtype())


def _as_complex(x):
    """A real signal made complex (ToCopyBackward0), as torch's transforms that need complex input do."""
    if x.is_complex():
        return x
    x = _as_float(x)
    return x.to(torch.complex128 if x.dtype == torch.float64 else torch.complex64)


def _shift_dims(x, dim):
    if dim is None:
        return list(range(x.dim()))
    return [wrap_dim(d, x.dim()) for d in ([dim] if isinstance(dim, int) else dim)]


def _variable(x):
    """A torch tensor as a Variable (one that requires grad: a leaf of teachgrad's graph)."""
    if isinstance(x, variable_class.Variable):
        return x
    return torch_leaves.as_variable(x)
