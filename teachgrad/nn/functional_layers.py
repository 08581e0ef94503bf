"""The layer functions with torch.nn.functional's signatures: convolutions, pooling,
normalization, dropout, activations, embedding. Each reads its arguments as torch does and calls one
Function from teachgrad.ops (dropout on the CPU is a product with a mask, as torch records it)."""
import warnings
from typing import Optional

import torch

from .. import ops
from ..core.variable import Variable


def _plain(x):
    return x.data if isinstance(x, Variable) else x


def _tuple(n, value):
    """An int (or a 1-tuple) spread to n dims, as torch's _pair; sequences are kept."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    return value * n if len(value) == 1 else value


# --- convolution --------------------------------------------------------------------------------

def _same_padding(weight, n, dilation, stride):
    """padding='same': (k - 1) * dilation in all per dim, half on each side. Where that is odd the right side
    needs one more: returned as the extra pad (F.pad's order, last dim first), as torch's _convolution_mode."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    padding, extra = [], [0] * (2 * n)
    for i, (k, d) in enumerate(zip(weight.shape[2:], dilation)):
        total = d * (k - 1)
        padding.append(total // 2)
        extra[2 * (n - 1 - i) + 1] = total - 2 * (total // 2)
    return tuple(padding), extra


def _convolution(name, n, input, weight, bias, stride, padding, dilation, groups):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    stride, dilation = _tuple(n, stride), _tuple(n, dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * n
        elif padding == "same":
            padding, extra = _same_padding(weight, n, dilation, stride)
            if any(extra):
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                              "copy of the input be created", UserWarning, stacklevel=3)
                input = ops.ConstantPadNd.apply(input, extra, 0)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    padding = _tuple(n, padding)
    if input.dim() == n + 1:   # unbatched: torch adds the batch dim and takes it away again
        input = ops.Unsqueeze.apply(input, 0)
        return ops.SqueezeDim.apply(ops.Convolution.apply(input, weight, bias, stride, padding, dilation, groups), 0)
    return ops.Convolution.apply(input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (a cross-correlation, as torch's) of (N, C_in, L) input with (C_out, C_in/groups, k) weight."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution of (N, C_in, H, W) input with (C_out, C_in/groups, kH, kW) weight."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def pad(input, pad, mode: str = "constant", value: Optional[float] = None):
    """input padded with `value` (0 by default): pad gives (left, right) amounts, last dim first."""
    if mode != "constant":
        if mode in ("reflect", "replicate", "circular"):
            raise NotImplementedError(f"teachgrad's pad has mode='constant' only (not '{mode}')")
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:   # (torch's pad checks these itself, with its own words, before constant_pad_nd would)
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    return ops.ConstantPadNd.apply(input, tuple(pad), 0.0 if value is None else value)


# --- pooling ------------------------------------------------------------------------------------

def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest element of each kernel_size window (and, with return_indices, where it was)."""
    kernel_size = _tuple(2, kernel_size)
    stride = kernel_size if stride is None or stride == [] or stride == () else _tuple(2, stride)
    out, indices = ops.MaxPool2d.apply(input, kernel_size, stride, _tuple(2, padding), _tuple(2, dilation), ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None):
    """The mean of each kernel_size window."""
    kernel_size = _tuple(2, kernel_size)
    stride = kernel_size if stride is None or stride == [] or stride == () else _tuple(2, stride)
    return ops.AvgPool2d.apply(input, kernel_size, stride, _tuple(2, padding), ceil_mode, count_include_pad,
                               divisor_override)


# --- normalization ------------------------------------------------------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Each sample normalized to mean 0, variance 1 over its last dims (normalized_shape), then * weight + bias."""
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    return ops.NativeLayerNorm.apply(input, tuple(normalized_shape), weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Each channel (dim 1) normalized over the batch; in training the running stats are updated in place."""
    if training:
        count = input.shape[0]
        for size in input.shape[2:]:
            count *= size
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    else:   # (torch's kernel would read the missing stats: its wrapper refuses first, as here)
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    return ops.NativeBatchNorm.apply(input, weight, bias, _plain(running_mean), _plain(running_var), training,
                                     momentum, eps)


# --- dropout ------------------------------------------------------------------------------------

def _dropout(input, p, train):
    """torch's at::dropout: the input itself when not training (or p == 0); on the CPU, input times a mask
    of bernoulli(1 - p) / (1 - p) drawn from torch's generator (so a seeded program draws the same mask);
    elsewhere torch's fused kernel."""
    if p == 0 or not train or input.numel() == 0:
        return input
    data = _plain(input)
    if p == 1:
        return ops.Mul.apply(input, torch.zeros((), dtype=data.dtype, device=data.device))
    if data.is_cuda or data.device.type in ("xpu", "lazy"):   # where torch's is_fused_kernel_acceptable says yes
        return ops.NativeDropout.apply(input, p, train)[0]
    noise = torch.empty_like(data).bernoulli_(1 - p).div_(1 - p)
    return ops.Mul.apply(input, noise)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability p (scaling the rest by 1 / (1 - p)) while training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise NotImplementedError("teachgrad's dropout has no inplace=True; use inplace=False")
    return _dropout(input, p, training)


def dropout_function(input, p: float, train: bool):
    """torch.dropout(input, p, train), the function under F.dropout."""
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _dropout(input, p, train)


# --- activations --------------------------------------------------------------------------------

def _no_inplace(name, inplace):
    if inplace:
        raise NotImplementedError(f"teachgrad's {name} has no inplace=True; use inplace=False")


def gelu(input, approximate: str = "none"):
    """x Φ(x), Φ the standard normal CDF (approximate='tanh': its tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return ops.Gelu.apply(input, approximate)


def silu(input, inplace: bool = False):
    """x sigmoid(x) (also called swish)."""
    _no_inplace("silu", inplace)
    return ops.Silu.apply(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    return ops.Softplus.apply(input, beta, threshold)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    _no_inplace("elu", inplace)
    return ops.Elu.apply(input, alpha, 1.0, 1.0)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x for x > 0, negative_slope * x otherwise."""
    _no_inplace("leaky_relu", inplace)
    return ops.LeakyRelu.apply(input, negative_slope)


# --- embedding ----------------------------------------------------------------------------------

def embedding(input, weight, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False):
    """Row input[i] of the table `weight` for each index; the row padding_idx gets no gradient."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.shape[0], "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.shape[0], "Padding_idx must be within num_embeddings"
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        raise NotImplementedError("teachgrad's embedding has no max_norm (torch renormalizes rows of the weight in place)")
    if sparse:
        raise NotImplementedError("teachgrad has no sparse tensors: embedding(sparse=True) is not available")
    return ops.Embedding.apply(weight, _plain(input), padding_idx, scale_grad_by_freq)


# --- the same layers as torch's top-level functions (their own argument orders) ------------------

def max_pool2d_function(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
    """torch.max_pool2d: F.max_pool2d without return_indices."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def layer_norm_function(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, cudnn_enable: bool = True):
    """torch.layer_norm: F.layer_norm (cudnn_enable changes nothing on what is computed)."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm_function(input, weight, bias, running_mean, running_var, training: bool, momentum: float, eps: float,
                        cudnn_enabled: bool):
    """torch.batch_norm: every argument required, weight and bias before the running stats."""
    if not training:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    return ops.NativeBatchNorm.apply(input, weight, bias, _plain(running_mean), _plain(running_var), training,
                                     momentum, eps)


def embedding_function(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False, sparse: bool = False):
    """torch.embedding: the table first, padding_idx -1 for none (F.embedding checks and converts it)."""
    if sparse:
        raise NotImplementedError("teachgrad has no sparse tensors: embedding(sparse=True) is not available")
    return ops.Embedding.apply(weight, _plain(indices), padding_idx, scale_grad_by_freq)
