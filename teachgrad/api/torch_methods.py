"""torch.Tensor's methods that teachgrad does not write itself, read from torch.Tensor: each runs torch's own method
on the data, through teachgrad/api/interop.py. Where no gradient is lost (indices, masks, anything under no_grad) that is
torch's result; where a result would need a gradient teachgrad cannot record, it is a TypeError naming the method.

The methods that record a graph are written out in teachgrad/api/tensor_methods.py; `Variable` inherits both.
Methods that touch autograd itself (hooks, grads, backward) are not here: on the data they would do nothing useful.
tests/test_interop.py checks TORCH_METHODS against the methods Variable writes (core/variable.py included).

Guarded by tests/test_interop.py (torch's methods and functions called with Variables).
"""
import torch

from . import interop, tensor_methods

# `i % n`, `i // n` on index tensors: torch's (refused, by name, where a gradient would be lost)
TORCH_OPERATORS = ("__floordiv__", "__mod__", "__rfloordiv__", "__rmod__")

# Methods that touch autograd itself are Variable's own (teachgrad/core/variable.py): never torch's on the data.
AUTOGRAD_WORDS = ("grad", "hook", "backward", "detach")


def _left_to_torch() -> tuple[str, ...]:
    """torch.Tensor's public methods that teachgrad/api/tensor_methods.py does not write (nor Variable itself, the
    autograd ones): read from both classes, so a method written in tensor_methods.py, or declared in an op's class
    line, leaves this table by itself."""
    written = set(dir(tensor_methods.TensorMethods))
    return tuple(sorted(name for name in dir(torch.Tensor)
                        if not name.startswith("_") and callable(getattr(torch.Tensor, name))
                        and name not in written and not any(word in name for word in AUTOGRAD_WORDS)))


TORCH_METHODS = _left_to_torch()   # absolute, argsort, bitwise_and, ..., xlogy_: 270 names with torch 2.13


class TorchMethods:
    """The methods of TORCH_OPERATORS and TORCH_METHODS, each torch's own run through interop.handle."""


for _name in TORCH_OPERATORS + TORCH_METHODS:
    setattr(TorchMethods, _name, interop.tensor_method(getattr(torch.Tensor, _name)))
