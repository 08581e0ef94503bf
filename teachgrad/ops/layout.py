"""Ops that copy elements into a new arrangement: repeat (tile), flip, roll, tril, triu.
Each backward undoes the arrangement on the gradient (derivatives.yaml's repeat_backward, flip, roll, tril, triu).
"""
import torch

from ..core.function import Function


class Repeat(Function, node="RepeatBackward0"):
    """a.repeat(*repeats): a tiled repeats[i] times along each dim (leading repeats add new dims).

    Backward: the gradient cut into its tiles, which are summed.
    """

    @staticmethod
    def forward(ctx, a, repeats):
        ctx.shape, ctx.repeats = tuple(a.shape), tuple(repeats)
        return a.repeat(repeats)

    @staticmethod
    def backward(ctx, grad):
        lead = len(ctx.repeats) - len(ctx.shape)
        if lead:
            grad = grad.sum(tuple(range(lead)))
        if not ctx.shape:
            return grad, None
        tiles = []                           # (repeat, size) per dim: sum the repeat axes away
        for r, s in zip(ctx.repeats[lead:], ctx.shape):
            tiles += [r, s]
        grad = grad.reshape(tiles).sum(tuple(range(0, len(tiles), 2)))
        return grad, None

    @staticmethod
    def jvp(ctx, ta, _repeats):
        return ta.repeat(ctx.repeats)


class Flip(Function, node="FlipBackward0", batching=("along", 1)):
    """a.flip(dims): the order reversed along dims; the gradient is flipped back."""

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = tuple(dims)
        return a.flip(ctx.dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.flip(ctx.dims), None

    @staticmethod
    def jvp(ctx, ta, _dims):
        return ta.flip(ctx.dims)


class Roll(Function, node="RollBackward0"):
    """a.roll(shifts, dims): elements shifted cyclically; the gradient is rolled back by -shifts."""

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return a.roll(shifts, dims)

    @staticmethod
    def backward(ctx, grad):
        shifts = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, (tuple, list)) else -ctx.shifts
        return grad.roll(shifts, ctx.dims), None, None

    @staticmethod
    def jvp(ctx, ta, _shifts, _dims):
        return ta.roll(ctx.shifts, ctx.dims)


class Tril(Function, node="TrilBackward0"):
    """a.tril(diagonal): the lower triangle kept, the rest zeroed; the gradient likewise."""

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return a.tril(diagonal)

    @staticmethod
    def backward(ctx, grad):
        return grad.tril(ctx.diagonal), None

    @staticmethod
    def jvp(ctx, ta, _diagonal):
        return ta.tril(ctx.diagonal)


class Triu(Function, node="TriuBackward0"):
    """a.triu(diagonal): the upper triangle kept, the rest zeroed; the gradient likewise."""

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return a.triu(diagonal)

    @staticmethod
    def backward(ctx, grad):
        return grad.triu(ctx.diagonal), None

    @staticmethod
    def jvp(ctx, ta, _diagonal):
        return ta.triu(ctx.diagonal)


class ConstantPadNd(Function, node="ConstantPadNdBackward0"):
    """F.pad(a, pad, value=v): a surrounded by v (pad lists (left, right) amounts from the last dim back;
    negative amounts crop). Backward crops the gradient back: a pad by the negated amounts."""

    @staticmethod
    def forward(ctx, a, pad, value):
        ctx.pad = tuple(pad)
        return torch.constant_pad_nd(a, pad, value)

    @staticmethod
    def backward(ctx, grad):
        back = [-p for p in ctx.pad]
        if isinstance(grad, torch.Tensor):
            return torch.constant_pad_nd(grad, back, 0), None, None
        return ConstantPadNd.apply(grad, back, 0), None, None

    @staticmethod
    def jvp(ctx, ta, _pad, _value):
        return torch.constant_pad_nd(ta, ctx.pad, 0)
