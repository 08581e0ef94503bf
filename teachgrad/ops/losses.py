"""The losses torch computes with a kernel of its own (a node of their own): smooth_l1_loss, huber_loss,
soft_margin_loss, ctc_loss (whose backward is torch's kernel only: see CtcLoss), and, at the end, the ones
teachgrad/nn/functional.py hands a reduction by name: binary_cross_entropy (with logits too), mse_loss and
nll_loss. (torch's other losses are compositions of ops; teachgrad/nn/functional.py composes them the same
way, so they record torch's nodes.)

Each forward calls torch's kernel; each backward is the formula of torch's derivatives.yaml written out, and on
plain tensors (a first-order backward) it calls torch's backward kernel, so the gradient is torch's to the bit.
`reduction` is torch's enum: 0 none, 1 mean, 2 sum. Under 'mean' every element's gradient is divided by the count.

Guarded by tests/test_losses_and_more.py and tests/test_ctc_loss.py.
"""
import torch
import torch.nn.functional as F

from ..core.function import Function
from ..rules.broadcast import unbroadcast
from .attention import DerivativeNotImplemented
from . import aten

NONE, MEAN, SUM = 0, 1, 2


def _per_element(grad, reduction, count):
    """The gradient each element's loss gets from the (reduced) loss."""
    return grad / count if reduction == MEAN else grad


def _reduce_tangent(tangent, reduction):
    if reduction == MEAN:
        return tangent.mean()
    return tangent.sum() if reduction == SUM else tangent


def _plain(*tensors):
    return all(isinstance(t, torch.Tensor) for t in tensors)


class _PairLoss(Function, saves=("self", "target")):
    """loss(input - target) element by element, then reduced; input and target have one shape (the caller
    broadcasts them first, as torch's). The gradient of input is grad · loss'(input - target), target's its negative.
    A subclass gives `derivative(diff, option)` and torch's `kernel(grad, input, target, reduction, option)`."""

    @classmethod
    def forward(cls, ctx, input, target, reduction, option):
        ctx.reduction, ctx.option, ctx.count = reduction, option, input.numel()
        ctx.save_for_backward(input, target)
        return cls.function(input, target, reduction, option)

    @classmethod
    def backward(cls, ctx, grad):
        input, target = ctx.saved_tensors
        if _plain(grad, input, target):
            grad_input = cls.kernel(grad, input, target, ctx.reduction, ctx.option)
        else:
            grad_input = _per_element(grad, ctx.reduction, ctx.count) * cls.derivative(input - target, ctx.option)
        return (grad_input if ctx.needs_input_grad[0] else None,
                -grad_input if ctx.needs_input_grad[1] else None, None, None)

    @classmethod
    def jvp(cls, ctx, t_input, t_target, _reduction, _option):
        input, target = ctx._primals[:2]
        tangent = _total(t_input, None if t_target is None else -t_target)
        return _reduce_tangent(tangent * cls.derivative(input - target, ctx.option), ctx.reduction)


def _total(a, b):
    if a is None:
        return b
    return a if b is None else a + b


class SmoothL1Loss(_PairLoss, node="SmoothL1LossBackward0"):
    """0.5 d² / beta where abs(d) < beta, else abs(d) - 0.5 beta (d = input - target).
    d/d input = d / beta where abs(d) < beta, else sign(d)."""

    function = staticmethod(lambda input, target, reduction, beta: aten.smooth_l1_loss(
        input, target, reduction, beta))
    kernel = staticmethod(lambda grad, input, target, reduction, beta: aten.smooth_l1_loss_backward(
        grad, input, target, reduction, beta))

    @staticmethod
    def derivative(diff, beta):
        return (diff / beta).where(diff.abs() < beta, diff.sign())


class HuberLoss(_PairLoss, node="HuberLossBackward0"):
    """0.5 d² where abs(d) <= delta, else delta (abs(d) - 0.5 delta) (d = input - target).
    d/d input = d where abs(d) <= delta, else delta sign(d)."""

    function = staticmethod(lambda input, target, reduction, delta: aten.huber_loss(
        input, target, reduction, delta))
    kernel = staticmethod(lambda grad, input, target, reduction, delta: aten.huber_loss_backward(
        grad, input, target, reduction, delta))

    @staticmethod
    def derivative(diff, delta):
        return diff.where(diff.abs() <= delta, diff.sign() * delta)


class SoftMarginLoss(Function, node="SoftMarginLossBackward0", saves=("self", "target"), nondifferentiable_args=(1,)):
    """log(1 + exp(-y x)) for labels y (±1): d/dx = -y exp(-y x) / (1 + exp(-y x)) = -y sigmoid(-y x).
    torch does not differentiate it with respect to the labels."""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.reduction, ctx.count = reduction, input.numel()
        ctx.save_for_backward(input, target)
        return aten.soft_margin_loss(input, target, reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        if _plain(grad, input, target):
            return aten.soft_margin_loss_backward(grad, input, target, ctx.reduction), None, None
        target = target.data if not isinstance(target, torch.Tensor) else target
        z = (-target * input).exp()
        return _per_element(grad, ctx.reduction, ctx.count) * -target * z / (1 + z), None, None

    @staticmethod
    def jvp(ctx, t_input, _target, _reduction):
        input, target = ctx._primals[:2]
        z = (-target * input).exp()
        return _reduce_tangent(t_input * -target * z / (1 + z), ctx.reduction)


class CtcLoss(Function, node="CtcLossBackward0", saves=("log_probs", "targets", "result0", "result1"),
              nondifferentiable_args=(1,)):
    """Connectionist temporal classification: -log of the total probability, summed over every alignment of the
    target to the T input steps (each step emits a label or the blank; repeats between blanks merge), one loss per
    sequence of the batch. torch's kernel sums the alignments with a forward recursion over (step, target
    position) and keeps its table, log_alpha (result1), for backward.

    Backward (derivatives.yaml: `_ctc_loss_backward`): from log_alpha and the backward recursion's log_beta, the
    gradient of log_probs at (t, n, c) is exp(log_probs) - exp(log_alpha + log_beta at the positions labelled c
    + loss), times the incoming gradient: torch's backward kernel, so the gradient is torch's to the bit. torch
    has no derivative of that kernel: a second derivative raises there (DerivativeNotImplemented).
    """

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        loss, log_alpha = aten._ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                                                   zero_infinity)
        ctx.lengths, ctx.blank, ctx.zero_infinity = (input_lengths, target_lengths), blank, zero_infinity
        ctx.save_for_backward(log_probs, targets, loss, log_alpha)
        return loss

    @staticmethod
    def backward(ctx, grad):
        log_probs, targets, loss, log_alpha = ctx.saved_tensors
        plain = [getattr(t, "data", t) for t in (grad, log_probs, targets, loss, log_alpha)]
        grad_log_probs = aten._ctc_loss_backward(plain[0], plain[1], plain[2], *ctx.lengths, plain[3],
                                                           plain[4], ctx.blank, ctx.zero_infinity)
        if not isinstance(grad, torch.Tensor):   # create_graph: a gradient torch cannot differentiate again
            grad_log_probs = DerivativeNotImplemented.apply("_ctc_loss_backward", 1, grad_log_probs, grad, log_probs)
        return grad_log_probs, None, None, None, None, None


# --- the losses nn.functional hands a reduction by name ("none", "mean", "sum") ------------------------------

def _per_element_by_name(grad, reduction, count):
    """_per_element, with the reduction by name ('none', 'mean', 'sum'), as these losses are handed it."""
    if reduction == "mean":
        return grad / count
    return grad


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
            grad = _per_element_by_name(grad, ctx.reduction, ctx.count)
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
        return _reduce_tangent_by_name(tangent if w is None else tangent * w, reduction)


def _reduce_tangent_by_name(tangent, reduction):
    """_reduce_tangent, with the reduction by name."""
    if reduction == "mean":
        return tangent.mean()
    return tangent.sum() if reduction == "sum" else tangent


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
            grad_x = aten.binary_cross_entropy_backward(grad, x, t, w, _REDUCTIONS[ctx.reduction])
        grad = _per_element_by_name(grad, ctx.reduction, ctx.count)
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
        return _reduce_tangent_by_name(tangent if w is None else tangent * w, reduction)


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
        return _reduce_tangent_by_name(2 * (x - t) * (tx - tt), reduction)


def _mse_gradient(x, t, grad, norm):
    """norm * (x - t) * grad, in that order, as torch's kernel computes it (half and bfloat16 in float32).

    The 2 and the 1/n are one factor applied to the difference first: forming 2 * (x - t) before
    dividing by n overflows to inf near the dtype's limit where torch's gradient stays finite.
    """
    dtype = x.dtype
    if dtype not in (torch.float16, torch.bfloat16):
        return (x - t) * norm * grad
    return ((x.float() - t.float()) * norm * grad.float()).to(dtype)


# saves: self: torch keeps it, its formula does not need it
class NllLoss(Function, node="NllLossBackward0", saves=("self", "target", "weight", "total_weight"),
              nondifferentiable_args=(1, 2)):
    """Negative log-likelihood: -w[c]·x[c] for each sample's class c; reduced by the total weight."""

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction):
        ctx.reduction, ctx.ignore_index, ctx.shape = reduction, ignore_index, input.shape
        kernel = aten.nll_loss2d_forward if input.dim() == 4 else aten.nll_loss_forward
        output, total_weight = kernel(input, target, weight, _REDUCTIONS[reduction], ignore_index)
        ctx.save_for_backward(input, target, weight, total_weight)
        return output

    @staticmethod
    def backward(ctx, grad):
        input, target, weight, total_weight = (None if t is None else t.data for t in ctx.saved_tensors)
        if isinstance(grad, torch.Tensor):   # first order: torch's own kernel, which does what the lines below say
            kernel = aten.nll_loss2d_backward if len(ctx.shape) == 4 else aten.nll_loss_backward
            return (kernel(grad, input, target, weight, _REDUCTIONS[ctx.reduction], ctx.ignore_index, total_weight),
                    None, None, None, None)
        valid = target != ctx.ignore_index
        safe_target = target.where(valid, 0)
        class_dim = 0 if len(ctx.shape) == 1 else 1   # (C,), (N, C) or, for NllLoss2d, (N, C, H, W)
        weights = valid.to(grad.dtype) if weight is None else weight[safe_target] * valid
        if ctx.reduction == "none":
            grad = grad.unsqueeze(class_dim)
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
        class_dim = 0 if tx.dim() == 1 else 1
        weights = valid.to(tx.dtype) if weight is None else weight[safe_target] * valid
        picked = torch.zeros_like(tx).scatter_(class_dim, safe_target.unsqueeze(class_dim), weights.unsqueeze(class_dim))
        per_sample = -(tx * picked).sum(class_dim)
        if ctx.reduction == "none":
            return per_sample
        total = per_sample.sum()
        return total / picked.sum() if ctx.reduction == "mean" else total


class NllLoss2d(NllLoss, node="NllLoss2DBackward0"):
    """nll_loss of images: input (N, C, H, W), target (N, H, W); torch's nll_loss2d kernel, the same formulas."""


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
