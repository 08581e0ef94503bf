"""The losses torch computes with a kernel of its own (a node of their own): smooth_l1_loss, huber_loss,
soft_margin_loss, and ctc_loss (whose backward is torch's kernel only: see CtcLoss). (torch's other losses are
compositions of ops; teachgrad/nn/functional.py composes them the same way, so they record torch's nodes.)

Each forward calls torch's kernel; each backward is the formula of torch's derivatives.yaml written out, and on
plain tensors (a first-order backward) it calls torch's backward kernel, so the gradient is torch's to the bit.
`reduction` is torch's enum: 0 none, 1 mean, 2 sum. Under 'mean' every element's gradient is divided by the count.

Guarded by tests/test_losses_and_more.py and tests/test_ctc_loss.py.
"""
import torch

from ..core.function import Function
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
