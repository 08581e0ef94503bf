"""Broadcasting in reverse: a gradient is summed back to the shape of the input it is for."""


def shape_of(x):
    """The shape of a tensor operand, None for a Python number (it gets no gradient)."""
    return getattr(x, "shape", None)


def number_or_none(x):
    """Keep a Python number operand (ops save tensors with save_for_backward instead)."""
    return None if hasattr(x, "shape") else x


def unbroadcast(grad, shape):
    """Sum `grad` over the dimensions broadcasting added or stretched, so it has `shape`.

    Inputs that were Python numbers (shape None) get no gradient.
    """
    if shape is None:
        return None
    if grad.shape == shape:
        return grad
    return grad.sum_to_size(shape)
