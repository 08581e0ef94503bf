"""`tg.Tensor`, `tg.FloatTensor`, `tg.DoubleTensor`, `tg.LongTensor`, `tg.BoolTensor`: torch's legacy constructors,
which are types too. They subclass Variable (`tg.Tensor.add` is Variable's method), so they stand above it, at
torch's top-level names; the factory functions (`tg.tensor`, `tg.ones`, ...) are teachgrad/api/factories.py.

Guarded by tests/test_legacy_and_small.py (the legacy constructors) and tests/test_namespaces.py.
"""
from __future__ import annotations

from typing import Any

import torch

from . import ops
from .api.factories import plain_data
from .core.variable import Variable


class LegacyTensorType(type):
    """What `tg.Tensor`, `tg.FloatTensor`, `tg.LongTensor`, ... are: torch's legacy constructors and types.

    Called, each builds as torch's of the same name builds (the arguments read by torch itself, Variables
    unwrapped) and returns a leaf Variable:

        tg.Tensor(4, 2)              # sizes: an uninitialized (4, 2) tensor of the default dtype
        tg.Tensor([[1, 2], [3, 4]])  # data: in the default dtype (float32), not int64 as tg.tensor gives
        tg.LongTensor([1.5, 2])      # data in that type: tensor([1, 2])

    Of one Variable, they give a new view of it (AliasBackward0 when it requires grad), as torch's do.
    As types, `isinstance(x, tg.Tensor)` is true of every Variable and `isinstance(x, tg.FloatTensor)` of a
    float32 Variable on the cpu (torch's tests on the tensor underneath), and `x.type(tg.FloatTensor)`
    converts. `tg.Tensor` subclasses Variable, so `tg.Tensor.add` is Variable's method; what it makes is
    a Variable (`type(x) is tg.Variable`). `tg.Variable(data, requires_grad=False)` keeps its own
    signature (a list through torch.as_tensor), as torch keeps `torch.autograd.Variable` apart.
    """

    torch_type: Any   # torch's constructor of the same name: torch.Tensor, torch.FloatTensor, ...

    def __call__(cls, *args: Any, **kwargs: Any) -> Variable:
        if "torch_type" not in cls.__dict__:   # a user's subclass of tg.Tensor: made as a Variable is made
            return super().__call__(*args, **kwargs)
        if len(args) == 1 and not kwargs and isinstance(args[0], Variable):
            x = args[0]
            cls.torch_type(x.data)   # torch's checks (tg.FloatTensor of an int64 Variable is refused)
            return ops.Alias.apply(x)
        return Variable(cls.torch_type(*(_legacy_argument(a) for a in args), **kwargs))

    def __instancecheck__(cls, instance: Any) -> bool:
        if "torch_type" not in cls.__dict__:
            return super().__instancecheck__(instance)
        if not isinstance(instance, Variable):
            return False
        return cls.torch_type is torch.Tensor or isinstance(instance.data, cls.torch_type)

    def __subclasscheck__(cls, subclass: type) -> bool:
        if "torch_type" not in cls.__dict__:
            return super().__subclasscheck__(subclass)
        return cls.torch_type is torch.Tensor and issubclass(subclass, Variable)

    @property
    def dtype(cls) -> Any:
        """The dtype a typed constructor makes (tg.FloatTensor.dtype is torch.float32); on tg.Tensor, as on
        torch.Tensor, the attribute each tensor has."""
        return Variable.dtype if cls.torch_type is torch.Tensor else cls.torch_type.dtype

    def __repr__(cls) -> str:
        return f"<class 'teachgrad.{cls.__name__}'>"


def _legacy_argument(a):
    """An argument of a legacy constructor as torch reads it: data with Variables as numbers, sizes as they are."""
    if isinstance(a, (list, tuple)) and not isinstance(a, torch.Size):
        return plain_data(a)
    return a.data if isinstance(a, Variable) else a


class Tensor(Variable, metaclass=LegacyTensorType):
    """torch.Tensor's legacy constructor (`tg.Tensor(4, 2)`, `tg.Tensor([[1, 2]])`) and the type every Variable is."""

    __slots__ = ()
    torch_type = torch.Tensor


def _legacy_type(torch_type: Any) -> LegacyTensorType:
    """One of torch's legacy typed constructors (`torch.LongTensor([0, 2])`), still common in older code."""
    return LegacyTensorType(torch_type.__name__, (), {"torch_type": torch_type, "__module__": __name__,
                                                     "__doc__": f"Like torch.{torch_type.__name__}: "
                                                                "a constructor and a type."})


FloatTensor = _legacy_type(torch.FloatTensor)
DoubleTensor = _legacy_type(torch.DoubleTensor)
LongTensor = _legacy_type(torch.LongTensor)
BoolTensor = _legacy_type(torch.BoolTensor)
