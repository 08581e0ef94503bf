"""Losses, activations and `linear`, mirroring `torch.nn.functional` (same arguments, same reductions).

Each loss is one Function: forward calls torch's kernel, backward is the formula written out.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import torch
import torch.nn.functional as F

from ..api import torch_functions as _tg, torch_signatures
from .. import ops
from ..core.function import Function
from ..rules.broadcast import unbroadcast
from ..core.variable import Variable

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor

sigmoid = _tg.sigmoid
tanh = _tg.tanh
# layers and activations (written in teachgrad/nn/functional_layers.py)
from .functional_layers import avg_pool2d, batch_norm, conv1d, conv2d, dropout, elu, embedding, gelu, layer_norm, leaky_relu, max_pool2d, pad, silu, softplus


def relu(input: TensorLike, inplace: bool = False) -> Variable:
    """max(input, 0); `inplace=True` writes it into input (`relu_`), as torch's."""
    return input.relu_() if inplace else _tg.relu(input)


def _reduce_grad(grad, reduction, count):
    """The gradient each element's loss gets from the reduced loss."""
    if reduction == "mean":
        return grad / count
    return grad


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


# pack_order: torch packs pos_weight, self, target, weight (its saved inputs by name)
class BinaryCrossEntropyWithLogits(Function, node="BinaryCrossEntropyWithLogitsBackward0",
                                   saves=("self", "target", "weight", "pos_weight"), nondifferentiable_args=(2, 3),
                                   pack_order=(3, 0, 1, 2)):
    """-w [p·t·log σ(x) + (1-t)·log(1-σ(x))], computed stably from logits x.

    d/dx = w [(1 - t + p·t)·σ(x) - p·t]   (= w (σ(x) - t) when pos_weight p is 1)
    """

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        ctx.reduction, ctx.count, ctx.shape = reduction, input.numel(), input.shape
        ctx.save_for_backward(input, target, weight, pos_weight)
        return F.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction, pos_weight=pos_weight)

    @staticmethod
    def backward(ctx, grad):
        x, t, w, p = ctx.saved_tensors
        s = x.sigmoid()
        grad_x = grad_t = None
        if ctx.needs_input_grad[0]:   # in torch's order (the mean's division last), so its bits
            grad_x = (s - t) * grad if p is None else ((p * t + 1 - t) * s - p * t) * grad
            grad_x = grad_x if w is None else grad_x * w
            grad_x = unbroadcast(grad_x / ctx.count if ctx.reduction == "mean" else grad_x, ctx.shape)
        if ctx.needs_input_grad[1]:
            grad = _reduce_grad(grad, ctx.reduction, ctx.count)
            grad_t = -x if p is None else (1 - s).log() - p * s.log()
            grad_t = grad_t * grad if w is None else grad_t * w * grad
        return grad_x, grad_t, None, None, None

    @staticmethod
    def jvp(ctx, tx, tt, _weight, _pos_weight, _reduction):
        x, t, w, p, reduction = ctx._primals
        s = x.sigmoid()
        d_x = (s - t) if p is None else ((1 - t + p * t) * s - p * t)
        d_t = -x if p is None else (1 - s).log() - p * s.log()
        tangent = d_x * tx + d_t * tt
        return _reduce_tangent(tangent if w is None else tangent * w, reduction)


def _reduce_tangent(tangent, reduction):
    """A per-element loss tangent, reduced the way the loss was."""
    if reduction == "mean":
        return tangent.mean()
    return tangent.sum() if reduction == "sum" else tangent


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


class BinaryCrossEntropy(Function, node="BinaryCrossEntropyBackward0", saves=("self", "target", "weight"),
                         nondifferentiable_args=(2,)):
    """-w [t·log(x) + (1-t)·log(1-x)] on probabilities x.  d/dx = w (x - t) / (x (1 - x))."""

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        ctx.reduction, ctx.count = reduction, input.numel()
        ctx.save_for_backward(input, target, weight)
        return F.binary_cross_entropy(input, target, weight, reduction=reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t, w = ctx.saved_tensors
        grad_x = grad_t = None
        if ctx.needs_input_grad[0] and isinstance(grad, torch.Tensor) and isinstance(x, torch.Tensor):   # plain: torch's kernel
            grad_x = torch.ops.aten.binary_cross_entropy_backward(grad, x, t, w, _REDUCTIONS[ctx.reduction])
        grad = _reduce_grad(grad, ctx.reduction, ctx.count)
        if ctx.needs_input_grad[0] and grad_x is None:
            grad_x = grad * (x - t) / ((1 - x) * x).clamp(min=1e-12)
            grad_x = grad_x if w is None else grad_x * w
        if ctx.needs_input_grad[1]:
            grad_t = grad * ((1 - x).log() - x.log())
            grad_t = grad_t if w is None else grad_t * w
        return grad_x, grad_t, None, None

    @staticmethod
    def jvp(ctx, tx, tt, _weight, _reduction):
        x, t, w, reduction = ctx._primals
        tangent = tx * (x - t) / ((1 - x) * x).clamp(min=1e-12) + tt * ((1 - x).log() - x.log())
        return _reduce_tangent(tangent if w is None else tangent * w, reduction)


def binary_cross_entropy(input: TensorLike, target: TensorLike, weight: TensorLike | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """Binary cross-entropy on probabilities in (0, 1)."""
    _check_reduction(reduction)
    _no_grad_for(weight=weight)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


class MseLoss(Function, node="MseLossBackward0", saves=("self", "target")):
    """(x - t)²: d/dx = 2 (x - t), d/dt = -2 (x - t)."""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.reduction = reduction
        ctx.shapes = input.shape, target.shape
        ctx.save_for_backward(input, target)
        result = F.mse_loss(input, target, reduction=reduction)
        ctx.count = torch.broadcast_shapes(input.shape, target.shape).numel()
        return result

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        norm = 2.0 / ctx.count if ctx.reduction == "mean" else 2.0
        diff = _mse_gradient(x, t, grad, norm)
        grad_x = unbroadcast(diff, ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        grad_t = unbroadcast(-diff, ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return grad_x, grad_t, None

    @staticmethod
    def jvp(ctx, tx, tt, _reduction):
        x, t, reduction = ctx._primals
        return _reduce_tangent(2 * (x - t) * (tx - tt), reduction)


def _mse_gradient(x, t, grad, norm):
    """norm * (x - t) * grad, in that order, as torch's kernel computes it (half and bfloat16 in float32).

    The 2 and the 1/n are one factor applied to the difference first: forming 2 * (x - t) before
    dividing by n overflows to inf near the dtype's limit where torch's gradient stays finite.
    """
    dtype = x.dtype
    if dtype not in (torch.float16, torch.bfloat16):
        return (x - t) * norm * grad
    return ((x.float() - t.float()) * norm * grad.float()).to(dtype)


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


# saves: self: torch keeps it, its formula does not need it
class NllLoss(Function, node="NllLossBackward0", saves=("self", "target", "weight", "total_weight"),
              nondifferentiable_args=(1, 2)):
    """Negative log-likelihood: -w[c]·x[c] for each sample's class c; reduced by the total weight."""

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction):
        if input.dim() > 2:
            raise NotImplementedError("teachgrad's nll_loss takes input of shape (C,) or (N, C)")
        ctx.reduction, ctx.ignore_index, ctx.shape = reduction, ignore_index, input.shape
        output, total_weight = torch.ops.aten.nll_loss_forward(input, target, weight, _REDUCTIONS[reduction], ignore_index)
        ctx.save_for_backward(input, target, weight, total_weight)
        return output

    @staticmethod
    def backward(ctx, grad):
        _, target, weight, total_weight = (None if t is None else t.data for t in ctx.saved_tensors)
        valid = target != ctx.ignore_index
        safe_target = target.where(valid, 0)
        class_dim = len(ctx.shape) - 1
        weights = valid.to(grad.dtype) if weight is None else weight[safe_target] * valid
        if ctx.reduction == "none":
            grad = grad.unsqueeze(-1)
        elif ctx.reduction == "mean":
            grad = grad / total_weight
        picked = torch.zeros(ctx.shape, dtype=torch.bool, device=target.device)
        picked = picked.scatter_(class_dim, safe_target.unsqueeze(class_dim), valid.unsqueeze(class_dim))
        # only the picked entries get -w·grad; a mask (not a product) keeps the rest exactly 0,
        # also when every target is ignored and grad / total_weight is nan
        per_sample = -grad * weights.unsqueeze(class_dim)
        return per_sample.expand(ctx.shape).where(picked, 0.0), None, None, None, None

    @staticmethod
    def jvp(ctx, tx, *_):
        _, target, weight, ignore_index, _ = ctx._primals
        valid = target != ignore_index
        safe_target = target.where(valid, 0)
        class_dim = tx.dim() - 1
        weights = valid.to(tx.dtype) if weight is None else weight[safe_target] * valid
        picked = torch.zeros_like(tx).scatter_(class_dim, safe_target.unsqueeze(class_dim), weights.unsqueeze(class_dim))
        per_sample = -(tx * picked).sum(-1)
        if ctx.reduction == "none":
            return per_sample
        total = per_sample.sum()
        return total / picked.sum() if ctx.reduction == "mean" else total


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def nll_loss(input: TensorLike, target: TensorLike, weight: TensorLike | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Negative log-likelihood of class indices, given log-probabilities."""
    _check_reduction(reduction)
    target = target.data if isinstance(target, Variable) else target
    weight = weight.data if isinstance(weight, Variable) else weight
    return NllLoss.apply(input, target, weight, ignore_index, reduction)


def cross_entropy(input: TensorLike, target: TensorLike, weight: TensorLike | None = None,
                  size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Variable:
    """Cross-entropy of logits: log_softmax over the classes, then nll_loss (as torch computes it).

    `target` holds class indices, or class probabilities of the input's shape.
    """
    if label_smoothing:
        raise NotImplementedError("teachgrad's cross_entropy has no label_smoothing")
    class_dim = 0 if input.dim() == 1 else 1
    log_p = log_softmax(input, class_dim)
    if target.is_floating_point():
        weighted = log_p * target if weight is None else log_p * target * weight
        if reduction == "none":
            return -weighted.sum(class_dim)
        total = -weighted.sum()
        return ops.DivByNumber.apply(total, input.numel() // input.shape[class_dim]) if reduction == "mean" else total
    return nll_loss(log_p, target, weight, ignore_index=ignore_index, reduction=reduction)


def one_hot(tensor: TensorLike, num_classes: int = -1) -> Variable:
    """Class indices as rows of zeros with a one at each index (integers: nothing to differentiate)."""
    return Variable._make(F.one_hot(tensor.data if isinstance(tensor, Variable) else tensor, num_classes))


def linear(input: TensorLike, weight: TensorLike, bias: TensorLike | None = None) -> Variable:
    """input @ weightᵀ + bias, recorded as torch records it (Addmm for a batch of rows)."""
    if input.dim() == 2 and bias is not None:
        return ops.Addmm.apply(bias, input, ops.T.apply(weight))
    output = ops.matmul(input, ops.T.apply(weight) if weight.dim() == 2 else weight)
    return output if bias is None else output + bias
