"""Broadcasting in reverse (a gradient is summed back to the shape of the input it is for), and the Python
numbers among an op's operands, which get no gradient and carry no tangent.

Guarded by tests/test_ops_vs_torch.py (broadcast operands' gradients against torch's).
"""
import torch


def numbers_or_none(a, b):
    """The Python number operands of a binary op, None for each tensor: `(a or None, b or None)`.

    Ops keep such a number in `ctx.numbers`; backward computes with it, and the node shows it as
    the 0-dim tensor torch saves for it (`_saved_other` of `x * 3` is `tensor(3)`).
    """
    return None if isinstance(a, torch.Tensor) else a, None if isinstance(b, torch.Tensor) else b


def conj(x):
    """The complex conjugate of an operand, as backward formulas write it (torch's `.conj()` in derivatives.yaml):
    a complex tensor's `conj()`, a Python complex number's `conjugate()`; a real tensor or number is its own
    conjugate, returned as it is after one dtype test (torch's `conj()` of a real tensor returns it too, but
    through its dispatcher: a third of a small multiplication's time, which a real program would pay)."""
    if type(x) in _NUMBERS:
        return x.conjugate()
    return x.conj() if x.dtype.is_complex else x


_NUMBERS = frozenset((int, float, complex, bool))


def unbroadcast(grad, shape):
    """Sum `grad` over the dimensions broadcasting added or stretched, so it has `shape`.

    Inputs that were Python numbers (shape None) get no gradient.
    """
    if shape is None or grad is None:
        return None
    if grad.shape == shape:
        return grad
    if isinstance(grad, torch.Tensor):
        return sum_to(grad, shape)
    return grad.sum_to_size(shape)   # a Variable (create_graph): recorded as torch records it


def sum_to(grad, shape):
    """torch's at::sum_to on a plain tensor: one sum over the leading dimensions and the stretched ones.

    (The same kernel `sum_to_size` runs, without its argument parsing: it is on every broadcast backward.)
    """
    lead = grad.dim() - len(shape)
    sizes = grad.shape
    stretched = []   # (a loop, not a list comprehension: no function call of its own on every broadcast backward)
    for i, n in enumerate(shape):
        if n == 1 and sizes[lead + i] != 1:
            stretched.append(lead + i)
    if not stretched:
        return grad.sum(tuple(range(lead))) if lead > 1 else grad.sum(0)
    summed = grad.sum(list(range(lead)) + stretched, keepdim=True)
    return summed.view(shape) if lead else summed


def total(*terms):
    """The sum of the tangent terms that exist (None: an input that was a Python number)."""
    terms = [t for t in terms if t is not None]
    result = terms[0]
    for term in terms[1:]:
        result = result + term
    return result


def times(tangent, factor):
    """tangent * factor, or None for a number's missing tangent."""
    return None if tangent is None else tangent * factor
