"""Making Variables, mirroring torch's factory functions: `tg.tensor`, `tg.ones`, `tg.randn`, ...

Each takes torch's arguments plus `requires_grad`, and returns a leaf Variable. torch's legacy constructors,
which are types too, are at the end: `tg.Tensor(4, 2)`, `tg.FloatTensor([1, 2])`, `isinstance(x, tg.Tensor)`.

Guarded by tests/test_legacy_and_small.py (the legacy constructors, requires_grad given a non-bool) and
tests/test_namespaces.py.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from .. import ops
from ..rules import batching
from ..core.variable import Variable


def tensor(data: Any, dtype: torch.dtype | None = None, device: torch.device | str | int | None = None,
           requires_grad: bool = False) -> Variable:
    """A new leaf Variable holding a copy of `data` (a number, a nested list, a tensor)."""
    if type(requires_grad) is not bool:
        torch.tensor(0.0, requires_grad=requires_grad)   # torch refuses it (not even None), with its message
    if isinstance(data, Variable):
        data = data.data
    if isinstance(data, torch.Tensor):
        data = data.detach().clone().to(device=device, dtype=dtype)
    else:
        try:   # numbers, nested lists of numbers: torch reads them at once
            data = torch.tensor(data, dtype=dtype, device=device)
        except TypeError:   # Variables among them (torch cannot read one): their values first
            data = torch.tensor(_plain(data), dtype=dtype, device=device)
    return Variable(data, requires_grad=requires_grad)


def _plain(data):
    """`data` with every Variable in it replaced by its torch tensor, which torch.tensor reads as it reads its own (an
    element of one value each: `tensor([t1, t2])` of one-element tensors has shape (2,))."""
    if isinstance(data, Variable):
        return data.data
    if isinstance(data, (list, tuple)):
        return [_plain(d) for d in data]
    return data


def _factory(torch_fn: Callable[..., torch.Tensor]) -> Callable[..., Variable]:
    """Wrap a torch factory so it returns a leaf Variable and takes `requires_grad`."""

    random = torch_fn in (torch.randn, torch.rand, torch.randint, torch.randperm, torch.randn_like, torch.rand_like)

    @functools.wraps(torch_fn)
    def make(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Variable:
        if random and batching.vmap_depth:   # inside vmap: as `randomness=` says (teachgrad/rules/batching.py)
            return batching.draw_random(torch_fn, args, dict(kwargs, requires_grad=requires_grad))
        args = tuple(a.data if isinstance(a, Variable) else a for a in args)
        if requires_grad is not None and type(requires_grad) is not bool:   # torch refuses 1 or 1.0, as it says
            return Variable(torch_fn(*args, requires_grad=requires_grad, **kwargs), requires_grad=bool(requires_grad))
        return Variable(torch_fn(*args, **kwargs), requires_grad=requires_grad)

    make.__doc__ = f"Like torch.{torch_fn.__name__}, returning a leaf Variable."
    return make


zeros = _factory(torch.zeros)
ones = _factory(torch.ones)
full = _factory(torch.full)
empty = _factory(torch.empty)
eye = _factory(torch.eye)
arange = _factory(torch.arange)
linspace = _factory(torch.linspace)
randn = _factory(torch.randn)
rand = _factory(torch.rand)
randint = _factory(torch.randint)
randperm = _factory(torch.randperm)
zeros_like = _factory(torch.zeros_like)
ones_like = _factory(torch.ones_like)
full_like = _factory(torch.full_like)
randn_like = _factory(torch.randn_like)
rand_like = _factory(torch.rand_like)
from_numpy = _factory(torch.from_numpy)


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
        return _plain(a)
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
