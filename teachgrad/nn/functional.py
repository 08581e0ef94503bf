"""`torch.nn.functional`, mirrored: losses, activations and `linear`, then the layer functions (convolutions,
pooling, normalization, dropout, embedding), with torch's arguments and reductions.

A loss torch computes with a kernel of its own is one Function in teachgrad/ops/losses.py: forward calls
torch's kernel, backward is the formula written out. A loss torch composes of other ops (l1_loss, kl_div,
poisson_nll_loss, gaussian_nll_loss, the margin losses, ...) is composed here of the same ops, so the graph has
torch's nodes (tests/test_losses_and_more.py). Each layer function
reads its arguments as torch does and calls one Function from teachgrad/ops (dropout on the CPU is a product with
a mask, as torch records it).
"""
from __future__ import annotations

import inspect
import math
import types
import warnings
from typing import TYPE_CHECKING, Any, Optional, Sequence, TypeAlias

import torch
import torch.nn.functional as F
from torch.nn import _reduction as _Reduction

from ..api import torch_functions as _tg, torch_signatures
from .. import ops
from ..rules import batching, grad_mode, torch_leaves
from ..core.variable import Variable
from ..ops import aten
from ..ops.losses import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, MseLoss, NllLoss, NllLoss2d

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor
    Ints: TypeAlias = int | Sequence[int]             # one size for every dimension, or one per dimension

sigmoid = _tg.sigmoid
tanh = _tg.tanh


def relu(input: TensorLike, inplace: bool = False) -> Variable:
    """max(input, 0); `inplace=True` writes it into input (`relu_`), as torch's."""
    return input.relu_() if inplace else _tg.relu(input)


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _no_grad_for(**weights):
    for name, w in weights.items():
        if isinstance(w, Variable) and w.requires_grad:
            raise NotImplementedError(f"teachgrad does not differentiate with respect to `{name}`; pass {name}.detach()")


def binary_cross_entropy_with_logits(input: TensorLike, target: TensorLike, weight: TensorLike | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: TensorLike | None = None) -> Variable:
    """Binary cross-entropy on logits: sigmoid and BCE in one stable step."""
    _check_reduction(reduction)
    _no_grad_for(weight=weight, pos_weight=pos_weight)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def binary_cross_entropy(input: TensorLike, target: TensorLike, weight: TensorLike | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """Binary cross-entropy on probabilities in (0, 1)."""
    _check_reduction(reduction)
    _no_grad_for(weight=weight)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def mse_loss(input: TensorLike, target: TensorLike, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: TensorLike | None = None) -> Variable:
    """Mean squared error (or summed, or per element)."""
    if weight is not None:
        raise NotImplementedError("teachgrad's mse_loss has no weight")
    _check_reduction(reduction)
    return MseLoss.apply(input, target, reduction)


def _softmax_dim(ndim):
    # torch's rule when no dim is given (with a warning): 0 for 0-, 1- and 3-D input, else 1
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: TensorLike, dim: int | None = None, _stacklevel: int = 3,
            dtype: torch.dtype | None = None) -> Variable:
    """Softmax along `dim` (by default, torch's guess from the number of dims): non-negative values that sum to 1."""
    return torch_signatures.softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype=dtype)


def log_softmax(input: TensorLike, dim: int | None = None, _stacklevel: int = 3,
                dtype: torch.dtype | None = None) -> Variable:
    """log(softmax(input)), computed stably (`dim` by default as for softmax)."""
    return torch_signatures.log_softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype=dtype)


def _nll_loss_nd(input, target, weight, ignore_index, reduction):
    """torch's nll_loss_nd: (C,) and (N, C) go to nll_loss, (N, C, H, W) to nll_loss2d, and any other K-d input is
    viewed as (N, C, 1, -1) for nll_loss2d (ViewBackward0), its unreduced loss viewed back to (N, d1, ...)."""
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if dim <= 2:
        return NllLoss.apply(input, target, weight, ignore_index, reduction)
    if dim == 4:
        return NllLoss2d.apply(input, target, weight, ignore_index, reduction)
    n, c, out_size = input.shape[0], input.shape[1], (input.shape[0], *input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    flat_input = input.contiguous().view(n, c, 1, -1) if input.numel() else input.contiguous().view(n, c, 0, 0)
    flat_target = target.contiguous().view(n, 1, -1) if target.numel() else target.contiguous().view(n, 0, 0)
    loss = NllLoss2d.apply(flat_input, flat_target, weight, ignore_index, reduction)
    return loss.view(out_size) if reduction == "none" else loss


def nll_loss(input: TensorLike, target: TensorLike, weight: TensorLike | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Negative log-likelihood of class indices, given log-probabilities."""
    _check_reduction(reduction)
    weight = weight.data if isinstance(weight, Variable) else weight
    return _nll_loss_nd(input, target, weight, ignore_index, reduction)   # (a Variable target is read as its data)


def cross_entropy(input: TensorLike, target: TensorLike, weight: TensorLike | None = None,
                  size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Variable:
    """Cross-entropy of logits: log_softmax over the classes (dim 1, or 0 for one sample), then nll_loss (as torch
    computes it).

    `target` holds class indices, or class probabilities of the input's shape. With label_smoothing ε, the target
    is mixed with the uniform distribution over the C classes: probabilities become (1 - ε)·p + ε/C, and for class
    indices torch adds ε/C times the loss of a uniform target to (1 - ε) times nll_loss (see `_smoothed`).
    """
    if label_smoothing > 1.0:   # (torch checks the upper end only: a negative label_smoothing smooths nothing)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    log_p = log_softmax(input, class_dim)
    class_weight = None   # the weight viewed along the class dim: (C,) as (1, C, 1, ...) for K-d input
    if weight is not None:
        class_weight = weight.view([-1 if d == class_dim else 1 for d in range(input.dim())])
    if target.is_floating_point():
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        weighted = log_p * target if weight is None else log_p * target * class_weight
        if reduction == "none":
            return -weighted.sum(class_dim)
        total = -weighted.sum()
        return ops.DivByNumber.apply(total, input.numel() // n_classes) if reduction == "mean" else total
    loss = nll_loss(log_p, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return loss
    return _smoothed(loss, log_p, target, weight, class_weight, class_dim, ignore_index, reduction, label_smoothing)


def _smoothed(loss, log_p, target, weight, class_weight, class_dim, ignore_index, reduction, label_smoothing):
    """torch's label smoothing of class indices: the loss of a uniform target, -Σ_c w_c·log p_c per sample (0 where
    the target is ignored), reduced as nll_loss reduces (for 'mean', divided by the weight of the targets not
    ignored), then (1 - ε)·loss + ε/C·smooth_loss."""
    target = target.data if isinstance(target, Variable) else target
    ignored = target == ignore_index
    per_class = log_p if class_weight is None else log_p * class_weight
    smooth_loss = (-per_class.sum(class_dim)).masked_fill_(ignored, 0.0)
    if reduction == "mean":
        kept = ignored.logical_not()
        if weight is None:
            total_weight = kept.sum()
        else:   # the weights of the targets kept
            plain_weight = weight.data if isinstance(weight, Variable) else weight
            total_weight = plain_weight.gather(0, target.masked_select(kept).flatten()).sum()
        smooth_loss = smooth_loss.sum() / total_weight
    elif reduction == "sum":
        smooth_loss = smooth_loss.sum()
    n_classes = log_p.shape[class_dim]
    return ops.Add.apply(ops.MulByNumber.apply(loss, 1 - label_smoothing),
                         ops.MulByNumber.apply(smooth_loss, label_smoothing / n_classes))


# --- more losses: torch's kernels (smooth_l1, huber, soft_margin: teachgrad/ops/losses.py) and torch's compositions
# (l1, kl_div, poisson_nll, gaussian_nll, margin_ranking, hinge_embedding, multilabel_soft_margin, cosine_embedding,
# triplet_margin), composed of the ops torch's composition records, so the graph has torch's nodes --------------

def _reduction_of(size_average, reduce, reduction):
    """torch's legacy arguments: size_average or reduce, when given, override reduction (with torch's warning)."""
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_string(size_average, reduce)
    return reduction


def _reduce(loss, reduction_enum):
    """torch's apply_loss_reduction: mean (MeanBackward0), sum (SumBackward0) or the loss itself."""
    if reduction_enum == _Reduction.get_enum("mean"):
        return ops.Mean.apply(loss)
    return ops.Sum.apply(loss) if reduction_enum == _Reduction.get_enum("sum") else loss


def _warn_if_sizes_differ(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _broadcast_pair(input, target):
    """torch.broadcast_tensors(input, target): each expanded (ExpandBackward0) to the common shape where it is not."""
    shape = torch.broadcast_tensors(*(torch.empty((), device="meta").expand(x.shape) for x in (input, target)))[0].shape
    # (torch's error where they do not; on shapes alone, so that under vmap it reads each example's shape)
    return tuple(x if x.shape == shape else ops.Expand.apply(x, shape) for x in (input, target))


def l1_loss(input: TensorLike, target: TensorLike, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: TensorLike | None = None) -> Variable:
    """abs(input - target), reduced: torch composes it (SubBackward0, AbsBackward0, then Mean/SumBackward0).
    With `weight` (input's shape) each error is weighted; 'mean' then divides by weight's sum."""
    _warn_if_sizes_differ(input, target)
    reduction = _reduction_of(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return _reduce(ops.Abs.apply(ops.Sub.apply(input, target)), _Reduction.get_enum(reduction))
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = ops.Mul.apply(ops.Abs.apply(ops.Sub.apply(input, target)), weight)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return ops.Sum.apply(weighted)
    if reduction == "mean":
        return ops.Div.apply(ops.Sum.apply(weighted), ops.Sum.apply(weight))
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def smooth_l1_loss(input: TensorLike, target: TensorLike, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean", beta: float = 1.0) -> Variable:
    """0.5 d² / beta where abs(d) < beta, else abs(d) - 0.5 beta (d = input - target), reduced; beta = 0 is l1_loss."""
    _warn_if_sizes_differ(input, target)
    reduction = _reduction_of(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _reduce(ops.Abs.apply(ops.Sub.apply(input, target)), _Reduction.get_enum(reduction))
    return ops.SmoothL1Loss.apply(input, target, _Reduction.get_enum(reduction), beta)


def huber_loss(input: TensorLike, target: TensorLike, reduction: str = "mean", delta: float = 1.0,
               weight: TensorLike | None = None) -> Variable:
    """0.5 d² where abs(d) <= delta, else delta (abs(d) - 0.5 delta) (d = input - target), reduced; optionally weighted."""
    _warn_if_sizes_differ(input, target)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return ops.HuberLoss.apply(input, target, _Reduction.get_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = ops.Mul.apply(ops.HuberLoss.apply(input, target, _Reduction.get_enum("none"), delta), weight)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return ops.Sum.apply(weighted)
    if reduction == "mean":
        return ops.Mean.apply(weighted)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def kl_div(input: TensorLike, target: TensorLike, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Variable:
    """KL divergence of the target distribution from the input's log-probabilities, as torch composes it:
    target (log target - input), i.e. xlogy(t, t) - t·input, or with log_target exp(t)·(t - input).
    'batchmean' is the sum divided by the batch size (the true KL divergence); 'mean' divides by every element."""
    if size_average is not None or reduce is not None:
        reduction_enum = _Reduction.get_enum(_reduction_of(size_average, reduce, reduction))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        reduction_enum = _Reduction.get_enum("sum" if reduction == "batchmean" else reduction)
    if log_target:
        output = ops.Mul.apply(ops.Exp.apply(target), ops.Sub.apply(target, input))
    else:
        output = ops.Sub.apply(ops.Xlogy.apply(target, target), ops.Mul.apply(target, input))
    reduced = _reduce(output, reduction_enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = ops.Div.apply(reduced, input.size()[0])
    return reduced


def poisson_nll_loss(input: TensorLike, target: TensorLike, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Variable:
    """Poisson negative log-likelihood: exp(input) - target·input (log_input), or input - target·log(input + eps);
    `full` adds Stirling's term target·log(target) - target + 0.5·log(2π target) where target > 1."""
    reduction = _reduction_of(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = ops.Sub.apply(ops.Exp.apply(input), ops.Mul.apply(target, input))
    else:
        loss = ops.Sub.apply(input, ops.Mul.apply(target, ops.Log.apply(ops.AddByNumber.apply(input, eps))))
    if full:
        stirling = ops.Add.apply(ops.Sub.apply(ops.Mul.apply(target, ops.Log.apply(target)), target),
                                 ops.MulByNumber.apply(ops.Log.apply(ops.MulByNumber.apply(target, 2 * math.pi)), 0.5))
        loss = ops.Add.apply(loss, ops.MaskedFill.apply(stirling, _plain(target) <= 1, 0))
    return _reduce(loss, _Reduction.get_enum(reduction))


def gaussian_nll_loss(input: TensorLike, target: TensorLike, var: TensorLike | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Variable:
    """Gaussian negative log-likelihood: 0.5 (log var + (input - target)² / var) (+ 0.5 log 2π when `full`).
    var has input's shape, or one dim fewer, or one size-1 dim (one variance shared), or is a float; it is
    clamped to eps from below with no gradient through the clamp, as torch does."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torch.ones_like(_plain(input))
    elif torch.any(_plain(var) < 0):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():   # one variance per sample, for all of its last dim
            var = ops.Unsqueeze.apply(var, -1)
        elif not (input.dim() == var.dim()
                  and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = ops.Clone.apply(var, None)
    with grad_mode.no_grad():   # as torch: no backward through the clamp, but forward mode sees it
        var.clamp_(min=eps)
    squared = ops.Pow.apply(ops.Sub.apply(input, target), 2)
    loss = ops.Mul.apply(ops.Add.apply(ops.Log.apply(var), ops.Div.apply(squared, var)), 0.5)
    if full:
        loss = ops.Add.apply(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, _Reduction.get_enum(reduction))


def margin_ranking_loss(input1: TensorLike, input2: TensorLike, target: TensorLike, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Variable:
    """max(0, -target (input1 - input2) + margin): target 1 says input1 should rank higher, -1 lower."""
    reduction_enum = _Reduction.get_enum(_reduction_of(size_average, reduce, reduction))
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    ranked = ops.Mul.apply(ops.Neg.apply(target), ops.Sub.apply(input1, input2))
    return _reduce(ops.ClampMin.apply(ops.AddByNumber.apply(ranked, margin), 0, None), reduction_enum)


def hinge_embedding_loss(input: TensorLike, target: TensorLike, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """input where target is 1, max(0, margin - input) where it is -1 (summed where it is neither), reduced."""
    reduction_enum = _Reduction.get_enum(_reduction_of(size_average, reduce, reduction))
    labels, zeros = _plain(target), torch.zeros_like(_plain(input))
    margin_clamp = ops.ClampMin.apply(ops.Sub.apply(margin, input), 0, None)
    output = ops.Add.apply(ops.Where.apply(labels != 1, margin_clamp, zeros), ops.Where.apply(labels != -1, input, zeros))
    return _reduce(output, reduction_enum)


def logsigmoid(input: TensorLike) -> Variable:
    """log(sigmoid(input)), computed stably."""
    return ops.LogSigmoid.apply(input)


def soft_margin_loss(input: TensorLike, target: TensorLike, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """log(1 + exp(-target · input)) for labels ±1, reduced (torch's kernel; no gradient for the labels)."""
    reduction_enum = _Reduction.get_enum(_reduction_of(size_average, reduce, reduction))
    if getattr(target, "requires_grad", False):
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    return ops.SoftMarginLoss.apply(input, _plain(target), reduction_enum)


def multilabel_soft_margin_loss(input: TensorLike, target: TensorLike, weight: TensorLike | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Variable:
    """Binary cross-entropy of each class's logit with its 0/1 label, averaged over the classes (last dim)."""
    reduction = _reduction_of(size_average, reduce, reduction)
    loss = ops.Neg.apply(ops.Add.apply(ops.Mul.apply(target, ops.LogSigmoid.apply(input)),
                                       ops.Mul.apply(1 - target, ops.LogSigmoid.apply(ops.Neg.apply(input)))))
    if weight is not None:
        loss = ops.Mul.apply(loss, weight)
    class_dim = input.dim() - 1
    loss = ops.Div.apply(ops.SumDim.apply(loss, class_dim, False), input.size(class_dim))
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.Mean.apply(loss)
    if reduction == "sum":
        return ops.Sum.apply(loss)
    raise ValueError(reduction + " is not valid")


def cosine_embedding_loss(input1: TensorLike, input2: TensorLike, target: TensorLike, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Variable:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, reduced; the cosine is
    taken along the last dim (each row of a batch, or one vector against another for a 0-D target)."""
    reduction_enum = _Reduction.get_enum(_reduction_of(size_average, reduce, reduction))
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    epsilon = 1e-12   # torch's EPSILON, keeping each squared length off 0
    prod_sum = ops.SumDim.apply(ops.Mul.apply(input1, input2), dim, False)
    mag_square1 = ops.AddByNumber.apply(ops.SumDim.apply(ops.Mul.apply(input1, input1), dim, False), epsilon)
    mag_square2 = ops.AddByNumber.apply(ops.SumDim.apply(ops.Mul.apply(input2, input2), dim, False), epsilon)
    cos = ops.Div.apply(prod_sum, ops.Sqrt.apply(ops.Mul.apply(mag_square1, mag_square2)))
    labels, zeros = _plain(target), torch.zeros_like(_plain(cos))
    pos = ops.Sub.apply(1, cos)
    neg = ops.ClampMin.apply(ops.SubByNumber.apply(cos, margin), 0, None)
    output = ops.Add.apply(ops.Where.apply(labels == 1, pos, zeros), ops.Where.apply(labels == -1, neg, zeros))
    return _reduce(output, reduction_enum)


def pairwise_distance(x1: TensorLike, x2: TensorLike, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Variable:
    """The p-norm of x1 - x2 + eps along the last dim, as torch composes it (NormBackward1)."""
    last = max(x1.dim(), x2.dim()) - 1
    if last < 0:   # two 0-D tensors: torch's norm over no dim, of the one element
        return ops.NormDim.apply(ops.AddByNumber.apply(ops.Sub.apply(x1, x2), eps), p, None, keepdim)
    return ops.NormDim.apply(ops.AddByNumber.apply(ops.Sub.apply(x1, x2), eps), p, last, keepdim)


def triplet_margin_loss(anchor: TensorLike, positive: TensorLike, negative: TensorLike, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise p-distance; with `swap`, the
    negative's distance is the smaller of its distances to anchor and to positive."""
    reduction_enum = _Reduction.get_enum(_reduction_of(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ops.Minimum.apply(dist_neg, pairwise_distance(positive, negative, p, eps))
    output = ops.ClampMin.apply(ops.Sub.apply(ops.AddByNumber.apply(dist_pos, margin), dist_neg), 0, None)
    return _reduce(output, reduction_enum)


def one_hot(tensor: TensorLike, num_classes: int = -1) -> Variable:
    """Class indices as rows of zeros with a one at each index (integers: nothing to differentiate)."""
    return Variable._make(F.one_hot(tensor.data if isinstance(tensor, Variable) else tensor, num_classes))


def linear(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None) -> Variable:
    """input @ weightᵀ + bias, recorded as torch's linear (aten/src/ATen/native/Linear.cpp) records it.

    Rows (2-D input) with a bias: one Addmm. A contiguous input of another rank with a bias: flattened to rows
    (a reshape), one Addmm, viewed back. Otherwise matmul with weightᵀ and, if there is a bias, an in-place add
    of it. The bias is added inside addmm wherever torch does, so every rounding is torch's."""
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
    weight_t = ops.T.apply(weight)
    if bias is not None and input.dim() == 2:
        return ops.Addmm.apply(bias, input, weight_t)
    if bias is not None and input.data.is_contiguous():
        rows = ops.reshape(input, (math.prod(input.shape[:-1]), input.shape[-1]))
        output = ops.Addmm.apply(bias, rows, weight_t)
        return ops.View.apply(output, (*input.shape[:-1], output.shape[1]))
    output = ops.matmul(input, weight_t)
    return output if bias is None else output.add_(bias)


# --- layers: convolutions, pooling, normalization, dropout, activations, embedding ---------------------------

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


def conv1d(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None, stride: Ints = 1, padding: Ints | str = 0,
           dilation: Ints = 1, groups: int = 1) -> Variable:
    """1-D convolution (a cross-correlation, as torch's) of (N, C_in, L) input with (C_out, C_in/groups, k) weight."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None, stride: Ints = 1, padding: Ints | str = 0,
           dilation: Ints = 1, groups: int = 1) -> Variable:
    """2-D convolution of (N, C_in, H, W) input with (C_out, C_in/groups, kH, kW) weight."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _convolution_transpose(name, n, input, weight, bias, stride, padding, output_padding, groups, dilation):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    args = (_tuple(n, stride), _tuple(n, padding), _tuple(n, output_padding), _tuple(n, dilation), groups)
    if input.dim() == n + 1:   # unbatched: torch adds the batch dim and takes it away again
        input = ops.Unsqueeze.apply(input, 0)
        return ops.SqueezeDim.apply(ops.ConvolutionTranspose.apply(input, weight, bias, *args), 0)
    return ops.ConvolutionTranspose.apply(input, weight, bias, *args)


def conv3d(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None, stride: Ints = 1, padding: Ints | str = 0,
           dilation: Ints = 1, groups: int = 1) -> Variable:
    """3-D convolution of (N, C_in, D, H, W) input with (C_out, C_in/groups, kD, kH, kW) weight."""
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None, stride: Ints = 1,
                     padding: Ints = 0, output_padding: Ints = 0, groups: int = 1, dilation: Ints = 1) -> Variable:
    """1-D transposed convolution of (N, C_in, L) input with (C_in, C_out/groups, k) weight: the gradient of conv1d
    with respect to its input, as a layer (it upsamples by `stride`)."""
    return _convolution_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                                  dilation)


def conv_transpose2d(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None, stride: Ints = 1,
                     padding: Ints = 0, output_padding: Ints = 0, groups: int = 1, dilation: Ints = 1) -> Variable:
    """2-D transposed convolution of (N, C_in, H, W) input with (C_in, C_out/groups, kH, kW) weight."""
    return _convolution_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                                  dilation)


def conv_transpose3d(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None, stride: Ints = 1,
                     padding: Ints = 0, output_padding: Ints = 0, groups: int = 1, dilation: Ints = 1) -> Variable:
    """3-D transposed convolution of (N, C_in, D, H, W) input with (C_in, C_out/groups, kD, kH, kW) weight."""
    return _convolution_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                                  dilation)


def pad(input: TensorLike, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None) -> Variable:
    """input padded with `value` (0 by default): pad gives (left, right) amounts, last dim first."""
    if mode in ("reflect", "replicate", "circular"):   # torch's kernels (teachgrad/ops/padding_pooling.py), and
        if value is not None and value != 0:            # circular padding composed as torch composes it
            raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
        n = len(pad) // 2
        if len(pad) % 2 or n not in (1, 2, 3):
            raise NotImplementedError(f"teachgrad's pad in mode '{mode}' pads the last 1 to 3 dimensions (a pad of "
                                      f"2, 4 or 6 numbers), not {len(pad)} numbers")
        if input.dim() not in (n + 1, n + 2):   # torch's message
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
        if mode == "circular":
            return _pad_circular(input, list(pad))
        return ops.PADS[mode, n].apply(input, list(pad))
    if mode != "constant":
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:   # (torch's pad checks these itself, with its own words, before constant_pad_nd would)
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    return ops.ConstantPadNd.apply(input, tuple(pad), 0.0 if value is None else value)


# --- pooling ------------------------------------------------------------------------------------

def max_pool2d(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0, dilation: Ints = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Variable | tuple[Variable, Variable]:
    """The largest element of each kernel_size window (and, with return_indices, where it was)."""
    kernel_size = _tuple(2, kernel_size)
    stride = kernel_size if stride is None or stride == [] or stride == () else _tuple(2, stride)
    out, indices = ops.MaxPool2d.apply(input, kernel_size, stride, _tuple(2, padding), _tuple(2, dilation), ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool2d(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Optional[int] = None) -> Variable:
    """The mean of each kernel_size window."""
    kernel_size = _tuple(2, kernel_size)
    stride = kernel_size if stride is None or stride == [] or stride == () else _tuple(2, stride)
    return ops.AvgPool2d.apply(input, kernel_size, stride, _tuple(2, padding), ceil_mode, count_include_pad,
                               divisor_override)


def max_pool2d_with_indices(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0,
                            dilation: Ints = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Variable, Variable]:
    """max_pool2d's values and where each was (what torch's MaxPool2d module calls)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _one_dim_as_two(pool, input, *args):
    """A 1-d pool as torch computes it: a height of 1 added (unsqueeze), the 2-d pool, the height taken away
    again (SqueezeBackward1)."""
    out = pool(ops.Unsqueeze.apply(input, -2), *args)
    if isinstance(out, tuple):
        return tuple(ops.SqueezeDim.apply(o, -2) for o in out)
    return ops.SqueezeDim.apply(out, -2)


def avg_pool1d(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Variable:
    """The mean of each kernel_size window along the last dim."""
    kernel = _tuple(1, kernel_size)[0]
    step = kernel if stride is None or stride == [] or stride == () else _tuple(1, stride)[0]
    return _one_dim_as_two(avg_pool2d, input, (1, kernel), (1, step), (0, _tuple(1, padding)[0]), ceil_mode,
                           count_include_pad)


def max_pool1d(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0, dilation: Ints = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Variable | tuple[Variable, Variable]:
    """The largest element of each kernel_size window along the last dim."""
    kernel = _tuple(1, kernel_size)[0]
    step = kernel if stride is None or stride == [] or stride == () else _tuple(1, stride)[0]
    return _one_dim_as_two(max_pool2d, input, (1, kernel), (1, step), (0, _tuple(1, padding)[0]),
                           (1, _tuple(1, dilation)[0]), ceil_mode, return_indices)


def max_pool1d_with_indices(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0,
                            dilation: Ints = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Variable, Variable]:
    """max_pool1d's values and where each was (what torch's MaxPool1d module calls)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _output_size(output_size, input):
    """adaptive pooling's output_size: an int for both dims, None keeping the input's size."""
    sizes = _tuple(2, output_size)
    return [input.shape[-2 + i] if s is None else s for i, s in enumerate(sizes)]


def adaptive_avg_pool2d(input: TensorLike, output_size: Ints) -> Variable:
    """The mean of each of output_size windows; for (1, 1), as torch, the mean of the last two dims."""
    size = _output_size(output_size, input)
    if size == [1, 1]:
        return ops.MeanDim.apply(input, (-1, -2), True)
    return ops.AdaptiveAvgPool2d.apply(input, size)


def adaptive_avg_pool1d(input: TensorLike, output_size: Ints) -> Variable:
    return _one_dim_as_two(lambda x: ops.AdaptiveAvgPool2d.apply(x, [1, _tuple(1, output_size)[0]]), input)


def adaptive_max_pool2d(input: TensorLike, output_size: Ints,
                        return_indices: bool = False) -> Variable | tuple[Variable, Variable]:
    out, indices = ops.AdaptiveMaxPool2d.apply(input, _output_size(output_size, input))
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input: TensorLike, output_size: Ints,
                        return_indices: bool = False) -> Variable | tuple[Variable, Variable]:
    out, indices = _one_dim_as_two(lambda x: ops.AdaptiveMaxPool2d.apply(x, [1, _tuple(1, output_size)[0]]), input)
    return (out, indices) if return_indices else out


def lp_pool2d(input: TensorLike, norm_type: float, kernel_size: Ints, stride: Ints | None = None,
              ceil_mode: bool = False) -> Variable:
    """(the sum of x ** p over each window) ** (1/p), as torch computes it: p-th powers, avg_pool2d,
    sign * relu(abs(.)) times the window's size, ** (1/p)."""
    kh, kw = _tuple(2, kernel_size)
    out = avg_pool2d(_tg._variable(input).pow(norm_type), (kh, kw), stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kh * kw).pow(1.0 / norm_type)


def lp_pool1d(input: TensorLike, norm_type: float, kernel_size: int, stride: Ints | None = None,
              ceil_mode: bool = False) -> Variable:
    """lp_pool2d along the last dim only."""
    out = avg_pool1d(_tg._variable(input).pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


# --- normalization ------------------------------------------------------------------------------

def layer_norm(input: TensorLike, normalized_shape: Ints, weight: TensorLike | None = None, bias: TensorLike | None = None,
               eps: float = 1e-5) -> Variable:
    """Each sample normalized to mean 0, variance 1 over its last dims (normalized_shape), then * weight + bias."""
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    return ops.NativeLayerNorm.apply(input, tuple(normalized_shape), weight, bias, eps)


def batch_norm(input: TensorLike, running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
               weight: TensorLike | None = None, bias: TensorLike | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Variable:
    """Each channel (dim 1) normalized over the batch; in training the running stats are updated in place."""
    if training:
        count = input.shape[0]
        for size in input.shape[2:]:
            count *= size
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """What F.batch_norm and torch.batch_norm share once their arguments are read: the running stats required in
    evaluation mode (torch's kernel would read them: its wrapper refuses first, as here), an empty input's answer,
    then the op."""
    if not training:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    if input.numel() == 0:
        return _batch_norm_of_nothing(input, weight, bias)
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
    if data.is_cuda or data.device.type in ("xpu", "lazy") or batching.vmap_depth:   # where torch's
        # is_fused_kernel_acceptable says yes; and under vmap, whose batching rule draws as `randomness` says
        return ops.NativeDropout.apply(input, p, train)[0]
    noise = torch.empty_like(data).bernoulli_(1 - p).div_(1 - p)
    return ops.Mul.apply(input, noise)


def dropout(input: TensorLike, p: float = 0.5, training: bool = True, inplace: bool = False) -> Variable:
    """Zero each element with probability p (scaling the rest by 1 / (1 - p)) while training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise NotImplementedError("teachgrad's dropout has no inplace=True; use inplace=False")
    return _dropout(input, p, training)


def dropout_function(input: TensorLike, p: float, train: bool) -> Variable:
    """torch.dropout(input, p, train), the function under F.dropout."""
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _dropout(input, p, train)


# --- activations --------------------------------------------------------------------------------

def _no_inplace(name, inplace):
    if inplace:
        raise NotImplementedError(f"teachgrad's {name} has no inplace=True; use inplace=False")


def gelu(input: TensorLike, approximate: str = "none") -> Variable:
    """x Φ(x), Φ the standard normal CDF (approximate='tanh': its tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return ops.Gelu.apply(input, approximate)


def silu(input: TensorLike, inplace: bool = False) -> Variable:
    """x sigmoid(x) (also called swish)."""
    _no_inplace("silu", inplace)
    return ops.Silu.apply(input)


def softplus(input: TensorLike, beta: float = 1.0, threshold: float = 20.0) -> Variable:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    return ops.Softplus.apply(input, beta, threshold)


def elu(input: TensorLike, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    _no_inplace("elu", inplace)
    return ops.Elu.apply(input, alpha, 1.0, 1.0)


def leaky_relu(input: TensorLike, negative_slope: float = 0.01, inplace: bool = False) -> Variable:
    """x for x > 0, negative_slope * x otherwise."""
    _no_inplace("leaky_relu", inplace)
    return ops.LeakyRelu.apply(input, negative_slope)


# --- more activations (teachgrad/ops/activation_more.py), and torch's compositions --------------------------

def hardtanh(input: TensorLike, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Variable:
    """input clipped to [min_val, max_val]."""
    _no_inplace("hardtanh", inplace)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return ops.Hardtanh.apply(input, min_val, max_val)


def relu6(input: TensorLike, inplace: bool = False) -> Variable:
    """min(max(0, x), 6): torch's hardtanh from 0 to 6 (HardtanhBackward0)."""
    _no_inplace("relu6", inplace)
    return ops.Hardtanh.apply(input, 0.0, 6.0)


def hardshrink(input: TensorLike, lambd: float = 0.5) -> Variable:
    return ops.Hardshrink.apply(input, lambd)


def softshrink(input: TensorLike, lambd: float = 0.5) -> Variable:
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return ops.Softshrink.apply(input, lambd)


def threshold(input: TensorLike, threshold: float, value: float, inplace: bool = False) -> Variable:
    """input where it is > threshold, else value."""
    _no_inplace("threshold", inplace)
    return ops.Threshold.apply(input, threshold, value)


def hardsigmoid(input: TensorLike, inplace: bool = False) -> Variable:
    _no_inplace("hardsigmoid", inplace)
    return ops.Hardsigmoid.apply(input)


def hardswish(input: TensorLike, inplace: bool = False) -> Variable:
    _no_inplace("hardswish", inplace)
    return ops.Hardswish.apply(input)


def glu(input: TensorLike, dim: int = -1) -> Variable:
    """a * sigmoid(b), a and b the halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size "
                           f"{input.shape[dim]}")
    return ops.Glu.apply(input, dim)


def prelu(input: TensorLike, weight: TensorLike) -> Variable:
    """x for x > 0, weight * x otherwise, one weight per channel (dim 1) or one for all."""
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
        if input.dim() > 2:
            weight = _tg._variable(weight).reshape(channels, *([1] * (input.dim() - 2)))
    elif input.dim() == 0 and weight.dim() > 0:   # a 0-d input keeps its shape
        weight = _tg._variable(weight).reshape(())
    return ops.Prelu.apply(input, weight)


def softsign(input: TensorLike) -> Variable:
    """x / (1 + abs(x)), as torch computes it (DivBackward0)."""
    input = _tg._variable(input)
    return input / (input.abs() + 1)


def tanhshrink(input: TensorLike) -> Variable:
    """x - tanh(x), as torch computes it (SubBackward0)."""
    input = _tg._variable(input)
    return input - input.tanh()


def softmin(input: TensorLike, dim: int | None = None, _stacklevel: int = 3,
            dtype: torch.dtype | None = None) -> Variable:
    """softmax of -input, as torch computes it."""
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return torch_signatures.softmax(-_tg._variable(input), dim, dtype=dtype)


log_sigmoid = logsigmoid   # the name torch's LogSigmoid module calls (torch._C._nn.log_sigmoid)
_threshold = threshold     # the name torch's Threshold module calls


# --- embedding ----------------------------------------------------------------------------------

def embedding(input: TensorLike, weight: TensorLike, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Variable:
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

def max_pool2d_function(input: TensorLike, kernel_size: Ints, stride: Ints = (), padding: Ints = 0, dilation: Ints = 1,
                        ceil_mode: bool = False) -> Variable:
    """torch.max_pool2d: F.max_pool2d without return_indices."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def layer_norm_function(input: TensorLike, normalized_shape: Ints, weight: TensorLike | None = None,
                        bias: TensorLike | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Variable:
    """torch.layer_norm: F.layer_norm (cudnn_enable changes nothing on what is computed)."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm_function(input: TensorLike, weight: TensorLike | None, bias: TensorLike | None,
                        running_mean: torch.Tensor | None, running_var: torch.Tensor | None, training: bool,
                        momentum: float, eps: float, cudnn_enabled: bool) -> Variable:
    """torch.batch_norm: every argument required, weight and bias before the running stats."""
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm_of_nothing(input, weight, bias):
    """torch's batch_norm of an input with no elements never reaches its kernel: the input cloned, times weight[0]
    and plus bias[0] where given (so their gradients are zeros, not missing); the running stats stay as they are."""
    out = _tg._variable(input).clone()
    if weight is not None:
        out = out * _tg._variable(weight)[0]
    if bias is not None:
        out = out + _tg._variable(bias)[0]
    return out


def embedding_function(weight: TensorLike, indices: TensorLike, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                       sparse: bool = False) -> Variable:
    """torch.embedding: the table first, padding_idx -1 for none (F.embedding checks and converts it)."""
    if sparse:
        raise NotImplementedError("teachgrad has no sparse tensors: embedding(sparse=True) is not available")
    return ops.Embedding.apply(weight, _plain(indices), padding_idx, scale_grad_by_freq)


# --- attention: scaled_dot_product_attention, and torch's multi_head_attention_forward run on Variables --------

# c10's names of the dtypes, as torch's messages print them
_C10_NAMES = {torch.float64: "double", torch.float32: "float", torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16",
              torch.int64: "long int", torch.int32: "int", torch.int16: "short int", torch.int8: "signed char",
              torch.uint8: "unsigned char", torch.bool: "bool"}


def _check_attention_inputs(query, key, value, attn_mask):
    """torch's checks of scaled_dot_product_attention's arguments (validate_sdpa_input), with its messages."""
    names = [_C10_NAMES.get(t.dtype, str(t.dtype)) for t in (query, key, value)]
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: {names[0]} "
                           f"key.dtype: {names[1]} and value.dtype: {names[2]} instead.")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype not in (torch.bool, torch.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_C10_NAMES.get(attn_mask.dtype, str(attn_mask.dtype))} and  "
                           f"query.dtype: {names[0]} instead.")


def _as_flagged_tensor(t):
    """A torch tensor of t's data that requires grad as t does (what torch's choice of kernel reads)."""
    if not isinstance(t, Variable):
        return t
    return t.data.detach().requires_grad_(t.requires_grad) if t.data.is_floating_point() else t.data


def _additive_mask(keep, dtype):
    """A bool mask (True: attend) as torch turns it into one to add to the scores: 0 where True, -inf where False."""
    return torch.zeros(keep.shape, dtype=dtype, device=keep.device).masked_fill_(keep.logical_not(), -math.inf)


def scaled_dot_product_attention(query: TensorLike, key: TensorLike, value: TensorLike,
                                 attn_mask: TensorLike | None = None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Variable:
    """softmax(query keyᵀ · scale + attn_mask) value over the last two dims (scale 1/√E by default, E the head size).

    A bool attn_mask keeps the keys where it is True; is_causal keeps, for query i, keys 0..i; enable_gqa lets
    the query have more heads (dim -3) than key and value, each key head serving a group of query heads.
    torch on the CPU runs its fused kernel where it can, and its math path otherwise (with dropout, an attn_mask
    that requires grad, inputs that are not 4-D, key and value of different head sizes, ...). teachgrad asks
    torch's own choice (`torch._fused_sdp_choice`) with the same arguments, so it records what torch records:
    one ScaledDotProductFlashAttentionForCpuBackward0 node, or the math path's ops (see `_attention_math`).
    """
    _check_attention_inputs(query, key, value, attn_mask)
    flagged = [_as_flagged_tensor(t) for t in (query, key, value, attn_mask)]
    choice = torch._fused_sdp_choice(*flagged, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = _additive_mask(_plain(attn_mask), query.dtype)
    if choice == torch.nn.attention.SDPBackend.FLASH_ATTENTION.value and _plain(query).device.type == "cpu":
        return ops.ScaledDotProductFlashAttentionForCpu.apply(query, key, value, attn_mask, dropout_p, is_causal, scale)
    if choice != torch.nn.attention.SDPBackend.MATH.value:
        raise NotImplementedError(f"torch runs scaled_dot_product_attention here with its {choice} kernel of the "
                                  f"{_plain(query).device.type} device; teachgrad has the CPU's kernels only (flash "
                                  "for the CPU, and the math path)")
    return _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """torch's math path (`_scaled_dot_product_attention_math`), op by op, so its nodes and roundings:

    query and keyᵀ are each multiplied by √scale (MulBackward1: the scores stay moderate in low precision; a
    negative scale goes on the query), their product (matmul) plus the mask (AddBackward0), `_safe_softmax`
    (SafeSoftmaxBackward0), dropout (MulBackward0 with a mask drawn from torch's generator, as at::dropout draws
    it), and the product with value (matmul). On the CPU, half and bfloat16 inputs are computed in float32 (a
    ToCopyBackward0 on each way in and on the way out), as torch computes them."""
    dtype, device = query.dtype, _plain(query).device
    if device.type == "cpu" and dtype in (torch.float16, torch.bfloat16):
        query, key, value = (ops.ToCopy.apply(t, device, torch.float32) for t in (query, key, value))
        output = _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        return ops.ToCopy.apply(output, device, dtype)
    root = math.sqrt(abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    query = ops.MulByNumber.apply(query, -root if scale is not None and scale < 0 else root)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        keep = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool, device=_plain(query).device).tril()
        attn_mask = _additive_mask(keep, query.dtype)
    if enable_gqa and query.dim() >= 3 and query.shape[-3] != key.shape[-3]:   # each key head serves a group
        key = torch_signatures.repeat_interleave(key, query.shape[-3] // key.shape[-3], -3)
        value = torch_signatures.repeat_interleave(value, query.shape[-3] // value.shape[-3], -3)
    scores = ops.matmul(query, ops.MulByNumber.apply(ops.Transpose.apply(key, -2, -1), root))
    if attn_mask is not None:
        scores = ops.Add.apply(scores, attn_mask)
    weights = ops.SafeSoftmax.apply(scores, -1)
    if dropout_p > 0.0:
        weights = dropout_function(weights, dropout_p, True)
    return ops.matmul(weights, value)


def _runs_on_variables(function):
    """torch's Python function `function`, less its first step: given a Variable, that step hands the call back to
    Variable.__torch_function__ (which would come here again). So its body, torch's own code, runs on the
    Variables, and each torch function it calls (linear, softmax, bmm, scaled_dot_product_attention, ...) is
    handed to teachgrad's of that name: the graph holds the nodes torch's would. The helper with which torch
    reads a mask's dtype, which takes torch tensors only, reads a Variable's too (a mask may require grad). The
    torch tensors among the arguments that require grad (a module's nn.Parameters) come in as leaves of
    teachgrad's graph, each once, so that the tensor methods the body calls on them (`in_proj_bias.chunk(3)`) are
    teachgrad's too."""
    namespace = dict(function.__globals__, has_torch_function=lambda arguments: False,
                     has_torch_function_unary=lambda input: False,
                     has_torch_function_variadic=lambda *arguments: False,
                     _none_or_dtype=lambda mask: None if mask is None else mask.dtype)   # (a mask may be a Variable)
    body = types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__,
                              function.__closure__)
    body.__kwdefaults__ = function.__kwdefaults__

    def call(*args: Any, **kwargs: Any) -> Any:
        leaves = {}

        def as_leaf(value):
            if isinstance(value, torch.Tensor) and value.requires_grad and grad_mode.is_grad_enabled():
                return leaves.setdefault(id(value), torch_leaves.as_variable(value))
            return value
        args, kwargs = plain_masks(function, args, kwargs, refuse_grad=False)
        return body(*[as_leaf(a) for a in args], **{name: as_leaf(a) for name, a in kwargs.items()})
    call.__name__ = call.__qualname__ = function.__name__
    call.__doc__ = (f"torch.nn.functional.{function.__name__}: torch's own Python code, run on Variables, so each "
                    "torch function it calls records teachgrad's op of that name (torch's documentation says what "
                    "it computes and which arguments it takes).")
    return call


def plain_masks(function: Any, args: tuple, kwargs: dict, refuse_grad: bool = True) -> tuple[tuple, dict]:
    """The arguments of `function` (a torch function or forward), with each mask that is a Variable (an argument
    named ...mask: `key_padding_mask = idx == pad` made with teachgrad) and does not require grad given as its
    torch tensor: no gradient flows into it, its data is all there is to it, and torch's code reads a mask's dtype
    through a helper that takes torch tensors only. A mask that requires grad is kept, or (refuse_grad: where that
    helper is torch's, in a module's forward) refused by name."""
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError:   # arguments function does not take: its own call says so, in its words
        return args, kwargs
    for name, value in bound.arguments.items():
        if name.endswith("mask") and isinstance(value, Variable):
            if value.requires_grad and not refuse_grad:
                continue
            if value.requires_grad:
                raise NotImplementedError(f"teachgrad's {function.__qualname__} takes a {name} that does not require "
                                          f"grad (torch's code reads masks as torch tensors): pass {name}.detach()")
            bound.arguments[name] = value.data
    return bound.args, bound.kwargs


# torch.nn.functional.multi_head_attention_forward, what nn.MultiheadAttention's forward calls: torch's own code
# (the in-projection, the masks, the heads, baddbmm / softmax / dropout / bmm when the weights are wanted, else
# scaled_dot_product_attention, the out-projection), run on Variables
multi_head_attention_forward = _runs_on_variables(F.multi_head_attention_forward)


# --- ctc_loss ------------------------------------------------------------------------------------

def ctc_loss(log_probs: TensorLike, targets: TensorLike, input_lengths: TensorLike | Sequence[int],
             target_lengths: TensorLike | Sequence[int], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Variable:
    """The CTC loss of (T, N, C) log-probabilities (or (T, C), unbatched) against targets, (N, S) padded or all
    concatenated, with each sequence's input and target length: one CtcLossBackward0 node (teachgrad/ops/losses.py).

    As torch composes it: zero_infinity replaces an infinite loss by 0 (torch.where), 'mean' divides each loss by
    its target length (at least 1) and takes the mean over the batch, 'sum' sums; unbatched input is given a batch
    of one (unsqueeze) and, with reduction 'none', its loss taken out of it again (squeeze)."""
    return ctc_loss_function(log_probs, targets, input_lengths, target_lengths, blank,
                             _Reduction.get_enum(reduction), zero_infinity)


def ctc_loss_function(log_probs: TensorLike, targets: TensorLike, input_lengths: TensorLike | Sequence[int],
                      target_lengths: TensorLike | Sequence[int], blank: int = 0, reduction: int = 1,
                      zero_infinity: bool = False) -> Variable:
    """torch.ctc_loss: F.ctc_loss with the reduction as torch's enum (0 none, 1 mean, 2 sum)."""
    input_lengths, target_lengths = (tuple(_plain(n).tolist()) if isinstance(n, (Variable, torch.Tensor))
                                     else tuple(n) for n in (input_lengths, target_lengths))
    targets = _plain(targets)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = ops.Unsqueeze.apply(log_probs, 1), targets.unsqueeze(0)
    loss = ops.CtcLoss.apply(log_probs, targets.long(), input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        loss = ops.Where.apply(loss.data == math.inf, torch.zeros((), dtype=loss.dtype, device=loss.device), loss)
    if reduction == 1:
        lengths = torch.tensor(target_lengths, dtype=loss.dtype, device=loss.device).clamp_min(1)
        return ops.Div.apply(loss, lengths).mean()
    if reduction == 2:
        return loss.sum()
    return ops.SqueezeDim.apply(loss, 0) if unbatched else loss


# --- vision and the rest (issue 42): interpolate, grid_sample, affine_grid, group and instance norm, local response
# norm, embedding_bag, fold / unfold, pixel shuffle, celu / selu / mish / rrelu, circular padding, cosine similarity.
# Where torch's function is Python (interpolate, grid_sample, affine_grid, group_norm, instance_norm,
# local_response_norm, embedding_bag, fold, unfold, celu, selu, rrelu), torch's own body runs on the Variables
# (`_runs_on_variables`), with its argument reading, warnings and errors; the ATen function it calls at the end
# (torch._C._nn.upsample_bilinear2d, torch.group_norm, ...) is handed to teachgrad's of that name, below, which
# records the op of teachgrad/ops/sampling_layers.py, ops/layers.py or ops/activation_more.py.

def _raise_torchs(function, *args):
    """torch's own error for arguments torch refuses: torch's function run on the data (it raises)."""
    function(*[_plain(a) for a in args])
    raise AssertionError(f"{function.__name__} was expected to refuse these arguments")   # (never reached)


def _scale_factors(scale_factors, scales, named):
    """One scale per spatial dim, or None: from the `.vec` overload's list, or the other overload's scales (given
    in order, or by name: scales_d, scales_h, scales_w; scales for 1-d)."""
    scales = [*scales, *[named[k] for k in ("scales", "scales_d", "scales_h", "scales_w") if k in named]]
    if scales or isinstance(scale_factors, (int, float)):
        scale_factors = [scale_factors, *scales] if scale_factors is not None or not named else scales
    if scale_factors is None or all(s is None for s in scale_factors):
        return None
    return list(scale_factors)


def _nearest_function(op):
    def upsample(input: TensorLike, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None = None,
                 *scales: float | None, **named_scales: float | None) -> Variable:
        """Nearest-neighbour upsampling (torch._C._nn's kernel, which interpolate calls)."""
        return op.apply(input, None if output_size is None else list(output_size),
                        _scale_factors(scale_factors, scales, named_scales))
    return upsample


def _linear_function(op):
    def upsample(input: TensorLike, output_size: Sequence[int] | None, align_corners: bool,
                 scale_factors: Sequence[float] | float | None = None, *scales: float | None,
                 **named_scales: float | None) -> Variable:
        """Linear / bilinear / bicubic / trilinear upsampling (torch._C._nn's kernel, which interpolate calls)."""
        return op.apply(input, None if output_size is None else list(output_size), align_corners,
                        _scale_factors(scale_factors, scales, named_scales))
    return upsample


upsample_nearest1d = _nearest_function(ops.UpsampleNearest1d)
upsample_nearest2d = _nearest_function(ops.UpsampleNearest2d)
upsample_nearest3d = _nearest_function(ops.UpsampleNearest3d)
_upsample_nearest_exact1d = _nearest_function(ops.UpsampleNearestExact1d)
_upsample_nearest_exact2d = _nearest_function(ops.UpsampleNearestExact2d)
_upsample_nearest_exact3d = _nearest_function(ops.UpsampleNearestExact3d)
upsample_linear1d = _linear_function(ops.UpsampleLinear1d)
upsample_bilinear2d = _linear_function(ops.UpsampleBilinear2d)
upsample_trilinear3d = _linear_function(ops.UpsampleTrilinear3d)
upsample_bicubic2d = _linear_function(ops.UpsampleBicubic2d)
_upsample_bilinear2d_aa = _linear_function(ops.UpsampleBilinear2dAa)
_upsample_bicubic2d_aa = _linear_function(ops.UpsampleBicubic2dAa)


def adaptive_avg_pool3d(input: TensorLike, output_size: Ints) -> Variable:
    """The mean of each of output_size boxes over the last three dims; for (1, 1, 1), as torch, their mean."""
    sizes = _tuple(3, output_size)
    size = [input.shape[-3 + i] if s is None else s for i, s in enumerate(sizes)]
    if size == [1, 1, 1]:
        return ops.MeanDim.apply(input, (-1, -2, -3), True)
    return ops.AdaptiveAvgPool3d.apply(input, size)


def avg_pool3d(input: TensorLike, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Optional[int] = None) -> Variable:
    """The mean of each kernel_size box over the last three dims."""
    kernel_size = _tuple(3, kernel_size)
    stride = kernel_size if stride is None or stride == [] or stride == () else _tuple(3, stride)
    return ops.AvgPool3d.apply(input, kernel_size, stride, _tuple(3, padding), ceil_mode, count_include_pad,
                               divisor_override)


# torch's F.interpolate (its reading of size, scale_factor, recompute_scale_factor, align_corners and antialias,
# its warnings and errors), run on the Variables: it ends in one of the kernels above, or adaptive average pooling
# for mode='area'. torch.nn.Upsample and UpsamplingBilinear2d / UpsamplingNearest2d call it.
interpolate = _runs_on_variables(F.interpolate)
upsample = _runs_on_variables(F.upsample)
upsample_bilinear = _runs_on_variables(F.upsample_bilinear)
upsample_nearest = _runs_on_variables(F.upsample_nearest)


def grid_sampler(input: TensorLike, grid: TensorLike, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Variable:
    """torch.grid_sampler: grid_sampler_2d on 4-D input, grid_sampler_3d on 5-D (modes as torch's enums:
    interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    if input.dim() == 4:
        return ops.GridSampler2d.apply(input, grid, interpolation_mode, padding_mode, align_corners)
    if input.dim() == 5:
        return ops.GridSampler3d.apply(input, grid, interpolation_mode, padding_mode, align_corners)
    return _raise_torchs(torch.grid_sampler, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input: TensorLike, grid: TensorLike, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Variable:
    """torch.grid_sampler_2d: grid_sample's kernel on (N, C, H, W)."""
    return ops.GridSampler2d.apply(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: TensorLike, grid: TensorLike, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Variable:
    """torch.grid_sampler_3d: grid_sample's kernel on (N, C, D, H, W)."""
    return ops.GridSampler3d.apply(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta: TensorLike, size: Sequence[int], align_corners: bool) -> Variable:
    """torch.affine_grid_generator: the sampling grid theta maps the output's points to."""
    return ops.AffineGridGenerator.apply(theta, list(size), align_corners)


grid_sample = _runs_on_variables(F.grid_sample)
affine_grid = _runs_on_variables(F.affine_grid)


# --- group, instance and local response norm -----------------------------------------------------------------

def group_norm_function(input: TensorLike, num_groups: int, weight: TensorLike | None = None,
                        bias: TensorLike | None = None, eps: float = 1e-5, cudnn_enabled: bool = True) -> Variable:
    """torch.group_norm: torch's checks (each failure is torch's own error), then native_group_norm."""
    n, c = input.shape[0], input.shape[1]
    if c % num_groups or any(p is not None and (p.dim() != 1 or p.numel() != c) for p in (weight, bias)):
        return _raise_torchs(torch.group_norm, input, num_groups, weight, bias, eps)
    hxw = 1
    for size in input.shape[2:]:
        hxw *= size
    return ops.NativeGroupNorm.apply(input.contiguous(), weight, bias, n, c, hxw, num_groups, eps)[0]


def native_group_norm(input: TensorLike, weight: TensorLike | None, bias: TensorLike | None, N: int, C: int,
                      HxW: int, group: int, eps: float) -> tuple[Variable, Variable, Variable]:
    """torch.native_group_norm: (output, mean, rstd), the statistics per sample and group."""
    return ops.NativeGroupNorm.apply(input, weight, bias, N, C, HxW, group, eps)


def instance_norm_function(input: TensorLike, weight: TensorLike | None, bias: TensorLike | None,
                           running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
                           use_input_stats: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Variable:
    """torch.instance_norm, as torch composes it: the (N, C, ...) input viewed as one sample of N·C channels,
    batch norm of that (weight, bias and running stats repeated N times: RepeatBackward0), viewed back; the
    running stats then become the mean over the batch of their N updated copies."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    shape = [1, b * c, *input.shape[2:]]
    repeated = [None if p is None else ops.Repeat.apply(p, (b,)) if isinstance(p, Variable) else p.repeat(b)
                for p in (weight, bias)]
    stats = [None if s is None else _plain(s).repeat(b) for s in (running_mean, running_var)]
    out = _batch_norm(ops.View.apply(input.contiguous(), shape), repeated[0], repeated[1], stats[0], stats[1],
                      use_input_stats, momentum, eps)
    with torch.no_grad():
        for stat, copies in zip((running_mean, running_var), stats):
            if stat is not None:
                _plain(stat).copy_(copies.view(b, c).mean(0))
    return ops.View.apply(out, list(input.shape))


group_norm = _runs_on_variables(F.group_norm)
instance_norm = _runs_on_variables(F.instance_norm)
local_response_norm = _runs_on_variables(F.local_response_norm)   # torch's composition: mul, pad, avg_pool, pow, div


# --- embedding_bag ---------------------------------------------------------------------------------------------

def embedding_bag_function(weight: TensorLike, indices: TensorLike, offsets: TensorLike,
                           scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                           per_sample_weights: TensorLike | None = None, include_last_offset: bool = False,
                           padding_idx: Optional[int] = None) -> tuple[Variable, Variable, Variable, Variable]:
    """torch.embedding_bag: (output, offset2bag, bag_size, max_indices); mode 0 sum, 1 mean, 2 max."""
    if sparse:
        raise NotImplementedError("teachgrad has no sparse tensors: embedding_bag(sparse=True) is not available")
    if padding_idx is None:   # no padding row (the kernel's -1)
        padding_idx = -1
    elif -weight.shape[0] <= padding_idx < weight.shape[0]:   # a row, counted from the end when negative
        padding_idx %= weight.shape[0]
    else:
        return _raise_torchs(torch.embedding_bag, weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                             per_sample_weights, include_last_offset, padding_idx)
    return ops.EmbeddingBag.apply(weight, _plain(indices), _plain(offsets), scale_grad_by_freq, mode, sparse,
                                  per_sample_weights, include_last_offset, padding_idx)


embedding_bag = _runs_on_variables(F.embedding_bag)


# --- fold / unfold, pixel shuffle ------------------------------------------------------------------------------

def im2col(input: TensorLike, kernel_size: Ints, dilation: Ints, padding: Ints, stride: Ints) -> Variable:
    """Each sliding window's elements as a column (what F.unfold calls)."""
    return ops.Im2Col.apply(input, *[list(_tuple(2, v)) for v in (kernel_size, dilation, padding, stride)])


def col2im(input: TensorLike, output_size: Ints, kernel_size: Ints, dilation: Ints, padding: Ints,
           stride: Ints) -> Variable:
    """Each column added back into its window of an output_size image (what F.fold calls)."""
    return ops.Col2Im.apply(input, *[list(_tuple(2, v)) for v in (output_size, kernel_size, dilation, padding,
                                                                   stride)])


fold = _runs_on_variables(F.fold)
unfold = _runs_on_variables(F.unfold)


def pixel_shuffle(input: TensorLike, upscale_factor: int) -> Variable:
    """(*, C r², H, W) -> (*, C, H r, W r)."""
    return ops.PixelShuffle.apply(input, upscale_factor)


def pixel_unshuffle(input: TensorLike, downscale_factor: int) -> Variable:
    """(*, C, H r, W r) -> (*, C r², H, W)."""
    return ops.PixelUnshuffle.apply(input, downscale_factor)


# --- celu, selu, mish, rrelu -----------------------------------------------------------------------------------

_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946   # torch's constants


def celu_function(input: TensorLike, alpha: float = 1.0) -> Variable:
    """torch.celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if alpha == 0:
        return _raise_torchs(torch.celu, input, alpha)
    return ops.Celu.apply(input, alpha)


def selu_function(input: TensorLike) -> Variable:
    """torch.selu: scale · elu(x, alpha), torch's constants (recorded as EluBackward0, as torch does)."""
    return ops.Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def rrelu_function(input: TensorLike, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
                   generator: Optional[torch.Generator] = None) -> Variable:
    """torch.rrelu: torch's rrelu_with_noise kernel, which draws the slopes (see ops.RreluWithNoise)."""
    if generator is not None:
        raise NotImplementedError("teachgrad's rrelu draws from torch's default generator (no generator=)")
    if lower > upper:
        return _raise_torchs(torch.rrelu, input, lower, upper, training)
    noise = torch.empty_like(_plain(input), memory_format=torch.contiguous_format)   # (as torch makes it)
    return ops.RreluWithNoise.apply(input, noise, lower, upper, training)


celu = _runs_on_variables(F.celu)
selu = _runs_on_variables(F.selu)
rrelu = _runs_on_variables(F.rrelu)


def mish(input: TensorLike, inplace: bool = False) -> Variable:
    """x tanh(softplus(x))."""
    _no_inplace("mish", inplace)
    return ops.Mish.apply(input)


# --- circular padding, cosine similarity ----------------------------------------------------------------------

def _pad_circular(input, pad):
    """torch's circular padding (aten's _pad_circular), step for step, so the graph holds its CopySlices: a new
    tensor of the padded shape, the input copied into its middle, then for each padded dim (the last first) its
    left margin copied from the other end of the output, then its right margin from the start."""
    n_padded = len(pad) // 2
    n_kept = input.dim() - n_padded
    if n_kept not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(input.dim() - 1) * 2} or {(input.dim() - 2) * 2} respectively "
                           f"but got {len(pad)}")
    in_shape = list(input.shape)
    out_shape = in_shape[:n_kept]
    for i in range(n_padded):   # the first padded dim takes the last pair of pad
        left, right = pad[2 * (n_padded - i - 1)], pad[2 * (n_padded - i - 1) + 1]
        size = in_shape[n_kept + i]
        out_shape.append(size + left + right)
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[-1] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = _tg._variable(input).new_empty(out_shape)
    out_part, in_part = out, _tg._variable(input)
    for i in range(n_padded):   # pad's pair i is for dim -1 - i
        dim = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        out_part = out_part.narrow(dim, max(left, 0), out_shape[dim] - max(left, 0) - max(right, 0))
        in_part = in_part.narrow(dim, max(-left, 0), in_shape[dim] - max(-left, 0) - max(-right, 0))
    out_part.copy_(in_part)
    for i in range(n_padded):
        dim = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left > 0:
            out.narrow(dim, 0, left).copy_(out.narrow(dim, out_shape[dim] - left - max(right, 0), left))
        if right > 0:
            out.narrow(dim, out_shape[dim] - right, right).copy_(out.narrow(dim, max(left, 0), right))
    return out


def cosine_similarity_function(x1: TensorLike, x2: TensorLike, dim: int = 1, eps: float = 1e-8) -> Variable:
    """torch.cosine_similarity, as torch composes it: each input divided by its 2-norm along dim (a clone of the
    norm, kept at least eps without recording: the gradient goes through as if unclamped), the products summed."""
    x1, x2 = _tg._variable(x1), _tg._variable(x2)
    if not torch.result_type(_plain(x1), _plain(x2)).is_floating_point:
        return _raise_torchs(torch.cosine_similarity, x1, x2, dim, eps)
    if tuple(x1.shape) != tuple(x2.shape):
        try:
            shape = torch.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        except RuntimeError:
            return _raise_torchs(torch.cosine_similarity, x1, x2, dim, eps)
        x1, x2 = x1.expand(shape), x2.expand(shape)
    norms = []
    for x in (x1, x2):
        norm = ops.Clone.apply(ops.Norm.apply(x, 2, dim, True), None)
        norm.data.clamp_min_(eps)   # (torch does it under no_grad: not recorded)
        norms.append(norm)
    return ops.SumDim.apply(ops.Mul.apply(ops.Div.apply(x1, norms[0]), ops.Div.apply(x2, norms[1])), dim, False)


cosine_similarity = cosine_similarity_function
