"""`tg.nn.utils` mirrors `torch.nn.utils`: the gradient clippers and parameter vectors also take Variables;
the rest (rnn's padding and packing, parametrize, weight_norm, ...) is torch's own, for torch modules and tensors.

torch's clippers read each parameter's `.grad` and group the gradients in C++, which takes torch tensors only;
here a Variable's gradient is clipped through its data (the tensor itself), with torch's arithmetic.

Guarded by tests/test_torch_paths.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, TypeAlias

import torch
import torch.nn.utils as _torch_utils

from . import rnn
from ...core.variable import Variable

if TYPE_CHECKING:
    Tensors: TypeAlias = Variable | torch.Tensor | Iterable[Variable | torch.Tensor]

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector", "vector_to_parameters",
           "rnn"]


def _grads(parameters):
    """The gradients (torch tensors) of the parameters that have one: a Variable's is its grad's data."""
    if isinstance(parameters, (Variable, torch.Tensor)):
        parameters = [parameters]
    return [p.grad.data if isinstance(p, Variable) else p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors: Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Variable:
    """The norm of all `tensors` together, as if concatenated into one vector (torch's get_total_norm)."""
    if isinstance(tensors, (Variable, torch.Tensor)):
        tensors = [tensors]
    data = [t.data if isinstance(t, Variable) else t for t in tensors]
    return Variable._make(_torch_utils.get_total_norm(data, norm_type, error_if_nonfinite, foreach))


def clip_grad_norm_(parameters: Tensors, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Variable:
    """Scale the parameters' gradients in place so that their total norm is at most `max_norm`; returns the norm
    before clipping (torch's clip_grad_norm_, on Variables and torch tensors alike)."""
    with torch.no_grad():
        grads = _grads(list(parameters) if not isinstance(parameters, (Variable, torch.Tensor)) else parameters)
        total_norm = _torch_utils.get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
        coefficient = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for grad in grads:
            grad.mul_(coefficient.to(grad.device))
    return Variable._make(total_norm)


def clip_grad_value_(parameters: Tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp each gradient in place to [-clip_value, clip_value] (torch's clip_grad_value_)."""
    with torch.no_grad():
        for grad in _grads(parameters):
            grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters: Iterable[Variable | torch.Tensor]) -> Variable:
    """One vector of all the parameters, flattened and concatenated (recorded: a gradient flows back to them)."""
    return torch.cat([p.view(-1) for p in parameters])   # (Variables among them: teachgrad's cat, see api/interop.py)


def vector_to_parameters(vec: Variable | torch.Tensor, parameters: Iterable[Variable | torch.Tensor]) -> None:
    """Copy consecutive slices of `vec` into the parameters' data (torch's vector_to_parameters)."""
    vec = vec.data if isinstance(vec, Variable) else vec
    if not isinstance(vec, torch.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {torch.typename(vec)}")
    start = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p.data).data
        start += n


def __getattr__(name: str) -> Any:   # the rest of torch.nn.utils: torch's own
    return getattr(_torch_utils, name)
