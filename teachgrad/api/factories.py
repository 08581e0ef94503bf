"""Making Variables, mirroring torch's factory functions: `tg.tensor`, `tg.ones`, `tg.randn`, ...

Each takes torch's arguments plus `requires_grad`, and returns a leaf Variable. torch's legacy constructors,
which are types too (`tg.Tensor(4, 2)`, `tg.FloatTensor([1, 2])`, `isinstance(x, tg.Tensor)`), subclass
Variable, so they stand above it: teachgrad/tensor_types.py.

Guarded by tests/test_legacy_and_small.py (the legacy constructors, requires_grad given a non-bool) and
tests/test_namespaces.py.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

import torch

from ..rules import batching, variable_class

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    Variable = variable_class.Variable


def tensor(data: Any, dtype: torch.dtype | None = None, device: torch.device | str | int | None = None,
           requires_grad: bool = False) -> Variable:
    """A new leaf Variable holding a copy of `data` (a number, a nested list, a tensor)."""
    if type(requires_grad) is not bool:
        torch.tensor(0.0, requires_grad=requires_grad)   # torch refuses it (not even None), with its message
    if isinstance(data, variable_class.Variable):
        data = data.data
    if isinstance(data, torch.Tensor):
        data = data.detach().clone().to(device=device, dtype=dtype)
    else:
        try:   # numbers, nested lists of numbers: torch reads them at once
            data = torch.tensor(data, dtype=dtype, device=device)
        except TypeError:   # Variables among them (torch cannot read one): their values first
            data = torch.tensor(plain_data(data), dtype=dtype, device=device)
    return variable_class.Variable(data, requires_grad=requires_grad)


def plain_data(data: Any) -> Any:
    """`data` with every Variable in it replaced by its torch tensor, which torch.tensor reads as it reads its own (an
    element of one value each: `tensor([t1, t2])` of one-element tensors has shape (2,))."""
    if isinstance(data, variable_class.Variable):
        return data.data
    if isinstance(data, (list, tuple)):
        return [plain_data(d) for d in data]
    return data


def _factory(torch_fn: Callable[..., torch.Tensor]) -> Callable[..., Variable]:
    """Wrap a torch factory so it returns a leaf Variable and takes `requires_grad`."""

    random = torch_fn in (torch.randn, torch.rand, torch.randint, torch.randperm, torch.randn_like, torch.rand_like)

    @functools.wraps(torch_fn)
    def make(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Variable:
        if random and batching.vmap_depth:   # inside vmap: as `randomness=` says (teachgrad/rules/batching.py)
            return batching.draw_random(torch_fn, args, dict(kwargs, requires_grad=requires_grad))
        args = tuple(a.data if isinstance(a, variable_class.Variable) else a for a in args)
        if requires_grad is not None and type(requires_grad) is not bool:   # torch refuses 1 or 1.0, as it says
            data = torch_fn(*args, requires_grad=requires_grad, **kwargs)
            return variable_class.Variable(data, requires_grad=bool(requires_grad))
        return variable_class.Variable(torch_fn(*args, **kwargs), requires_grad=requires_grad)

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
