"""Broadcasting in reverse: a gradient is summed back to the shape of the input it is for."""
import torch


def shape_of(x):
    """The shape of a tensor operand, None for a Python number (it gets no gradient)."""
    return getattr(x, "shape", None)


def number_or_none(x):
    """A Python number operand, or None for a tensor.

    Ops keep such a number in `ctx.numbers`; backward computes with it, and the node shows it as
    the 0-dim tensor torch saves for it (`_saved_other` of `x * 3` is `tensor(3)`).
    """
    return None if isinstance(x, torch.Tensor) else x


def unbroadcast(grad, shape):
    """Sum `grad` over the dimensions broadcasting added or stretched, so it has `shape`.

    Inputs that were Python numbers (shape None) get no gradient.
    """
    if shape is None or grad is None:
        return None
    if grad.shape == shape:
        return grad
    return grad.sum_to_size(shape)
