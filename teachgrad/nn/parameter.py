"""`tg.nn.Parameter`: torch's Parameter, which may also be made from a Variable.

    W = tg.nn.Parameter(tg.randn(3, 4))     # a torch.nn.Parameter sharing the Variable's storage

What it returns is a real `torch.nn.Parameter` (a module registers it, `model.parameters()` lists it,
torch.optim trains it), and `isinstance(p, tg.nn.Parameter)` holds for every torch Parameter, so a
program's checks answer as under torch.
"""
import torch

from ..core.variable import Variable


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
        return torch.nn.Parameter(data, requires_grad)
