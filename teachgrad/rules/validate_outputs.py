"""Every gradient a node returns is fitted to its input, as torch's engine does for every node
(validate_outputs in torch/csrc/autograd/engine.cpp): cast to the input's dtype, summed back to its shape when
it is a broadcast of it, a scalar moved to the input's device; anything else refused with torch's message.

A complex input may get a real gradient (cast to complex: its imaginary part is 0). A real input that met a
complex one (`x * z`) gets, from a built-in op's formula, a complex gradient: its real part is the gradient, as
torch's formulas say with `handle_r_to_c` (a real input moves only along the real axis, so only the real part of
the conjugate Wirtinger derivative counts). It is taken here, once, for every op; a user's Function that returns
a complex gradient for a real input is refused, as torch refuses it.

This is why ops like `Add` return the output's gradient as it is: the sum over broadcast dimensions is done
here, once, for every op.

Guarded by tests/test_engine.py, tests/test_engine_fidelity.py (dtypes, devices, shapes, messages) and
tests/test_function.py (a custom Function's wrong gradient refused).
"""
import torch

from .broadcast import sum_to


def fitted(node, k, g, meta):
    """A gradient that does not match its input (shape, dtype, device): summed, cast, moved, or refused.
    The engine's `call_node` calls it for each gradient that differs from its input's `meta`."""
    shape, dtype, device = meta
    if g.shape != shape:
        if not _expandable(shape, g.shape):   # a broadcast of the input's shape is summed back; any other is a bug
            raise RuntimeError(_message(node, f"invalid gradient at index {k} - got {list(g.shape)} but expected "
                                              f"shape compatible with {list(shape)}"))
        g = sum_to(g, shape) if isinstance(g, torch.Tensor) else g.sum_to_size(shape)   # (a Variable: recorded)
    if g.dtype is not dtype:   # (fit_dtype, written out: this runs for every broadcast operand's gradient)
        if g.dtype.is_complex and not dtype.is_complex:
            g = real_part(node, g)
        g = g.to(dtype)
    if g.device != device:   # (checked here too, so the message's closure is made only for a gradient it may need)
        g = fit_device(g, device, lambda text: _message(node, text), k)
    return g


def real_part(node, g):
    """A complex gradient for a real input: its real part (torch's handle_r_to_c), from a built-in op only."""
    if not node._trusted:
        raise RuntimeError(COMPLEX_FOR_REAL)
    return g.real.clone() if isinstance(g, torch.Tensor) else g.real   # (a Variable: recorded)


COMPLEX_FOR_REAL = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, "
                    "but got false.  (Could this error message be improved?  If so, please report an enhancement "
                    "request to PyTorch.)")


def _message(node, text):
    return f"Function {node.name()} returned an {text}"


def _expandable(shape, to):
    """Whether `shape` broadcasts to `to`."""
    lead = len(to) - len(shape)
    if lead < 0:
        return False
    for i, n in enumerate(shape):
        if n != 1 and n != to[lead + i]:
            return False
    return True


def fit_dtype(g, dtype):
    """A gradient takes its input's dtype (an f16 input of an f32 product gets an f16 gradient)."""
    return g if g.dtype is dtype else g.to(dtype)


def fit_device(g, device, message, k):
    """A gradient must be on its input's device; only a scalar is moved there."""
    if g.device == device:
        return g
    if g.dim() == 0:
        return g.to(device)
    raise RuntimeError(message(f"invalid gradient at index {k} - expected device {device} but got {g.device}"))


def wrong_number_message(node, got):
    """A backward must return one gradient per input (checked for every op, as torch's validate_outputs does)."""
    return (f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.needs_input_grad)}, got {got})")
