"""`tg.nn.Parameter`: torch's Parameter, which may also be made from a Variable.

    W = tg.nn.Parameter(tg.randn(3, 4))     # a torch.nn.Parameter sharing the Variable's storage

What it returns is a real `torch.nn.Parameter` (a module registers it, `model.parameters()` lists it,
torch.optim trains it), and `isinstance(p, tg.nn.Parameter)` holds for every torch Parameter, so a
program's checks answer as under torch.

The ops a program calls on such a Parameter are teachgrad's: `self.transitions[i].view(1, -1)` records
SelectBackward0 and ViewBackward0 in teachgrad's graph, the Parameter its leaf (whose `.grad` teachgrad's engine
fills), as `self.transitions` would be a leaf of torch's. How: the Parameter is an instance of this class, whose
`__torch_function__` lets torch run each call first and, where torch's autograd recorded it (grad mode on, a
result with a grad_fn), runs it in teachgrad instead (teachgrad/api/interop.py). What torch records nothing for
stays torch's: `.grad`, sizes, repr, and everything under no_grad (an optimizer's step). The price: such a call
is computed twice. torch's own modules' parameters (nn.Linear's weight) are torch's Parameters: teachgrad records
the functions that modules call with them (F.linear(x, weight) with x a Variable), not ops called on them alone.

Guarded by tests/test_parameter_ops.py (ops on a program's Parameter, against torch) and
tests/test_torch_boundary.py.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import torch

from ..api import interop
from ..core.variable import Variable
from ..rules import torch_leaves


class _ParameterType(type(torch.nn.Parameter)):
    def __instancecheck__(cls, instance):
        return isinstance(instance, torch.nn.Parameter)


class Parameter(torch.nn.Parameter, metaclass=_ParameterType):
    """A tensor that is a module's parameter: `Parameter(data=None, requires_grad=True)`, as torch's.

    `data` may be a Variable: the Parameter shares its storage (as torch's shares a tensor's).
    """

    def __new__(cls, data=None, requires_grad=True):
        if isinstance(data, Variable):
            data = data.data
        elif isinstance(data, torch.Tensor) and type(data) is not torch.Tensor:
            data = data.detach()    # a Parameter (torch's or this one) made a Parameter again: its plain tensor
        return super().__new__(cls, data, requires_grad)

    def __repr__(self) -> str:
        return repr(torch.nn.Parameter(self.data, self.requires_grad))   # torch's text: `Parameter containing: ...`

    @classmethod
    def __torch_function__(cls, func: Callable[..., Any], types: Iterable[type], args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        """torch runs the call first; where torch's autograd recorded it (grad mode on, a result with a grad_fn),
        teachgrad runs it instead, the Parameter a leaf of its graph (see the module's docstring)."""
        kwargs = kwargs or {}
        if _has_variable((args, kwargs)):   # a Variable among the arguments: teachgrad's call, as for torch's Parameter
            return interop.handle(func, args, kwargs)
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
        if not _recorded_by_torch(result):
            return result
        if getattr(func, "__name__", "") == "__get__":   # a property that computes: p.T, p.mT
            return getattr(torch_leaves.as_variable(args[0]), func.__self__.__name__)
        return interop.handle(func, _as_leaves(args), _as_leaves(kwargs))


def _has_variable(value: Any) -> bool:
    if isinstance(value, Variable):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_variable(v) for v in value)
    return isinstance(value, dict) and any(_has_variable(v) for v in value.values())


def _recorded_by_torch(result: Any) -> bool:
    if isinstance(result, torch.Tensor):
        return result.grad_fn is not None
    return isinstance(result, (tuple, list)) and any(_recorded_by_torch(r) for r in result)


def _as_leaves(value: Any) -> Any:
    """The call's torch tensors as Variables: those that require grad as leaves of teachgrad's graph."""
    if isinstance(value, torch.Tensor):
        return torch_leaves.as_variable(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_as_leaves(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_leaves(v) for k, v in value.items()}
    return value
