"""Broadcasting in reverse: a gradient is summed back to the shape of the input it is for."""
import torch


def shape_of(x):
    """The shape of a tensor operand, None for a Python number (it gets no gradient)."""
    return getattr(x, "shape", None)


def number_or_none(x):
    """A Python number operand, or None for a tensor: backward computes with the number itself."""
    return None if isinstance(x, torch.Tensor) else x


def wrapped_number(x):
    """A Python number operand as the 0-dim tensor torch saves for it (shown as `_saved_other`)."""
    if isinstance(x, torch.Tensor):
        return x
    return torch.tensor(x, dtype=torch.float64 if isinstance(x, float) else None)


def unbroadcast(grad, shape):
    """Sum `grad` over the dimensions broadcasting added or stretched, so it has `shape`.

    Inputs that were Python numbers (shape None) get no gradient.
    """
    if shape is None:
        return None
    if grad.shape == shape:
        return grad
    return grad.sum_to_size(shape)
