"""Making Variables, mirroring torch's factory functions: `tg.tensor`, `tg.ones`, `tg.randn`, ...

Each takes torch's arguments plus `requires_grad`, and returns a leaf Variable.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from ..core.variable import Variable


def tensor(data: Any, dtype: torch.dtype | None = None, device: torch.device | str | int | None = None,
           requires_grad: bool = False) -> Variable:
    """A new leaf Variable holding a copy of `data` (a number, a nested list, a tensor)."""
    if isinstance(data, Variable):
        data = data.data
    if isinstance(data, torch.Tensor):
        data = data.detach().clone().to(device=device, dtype=dtype)
    else:
        data = torch.tensor(_plain(data), dtype=dtype, device=device)
    return Variable(data, requires_grad=requires_grad)


def _plain(data):
    if isinstance(data, Variable):
        return data.data.tolist()
    if isinstance(data, (list, tuple)):
        return [_plain(d) for d in data]
    return data


def _factory(torch_fn: Callable[..., torch.Tensor]) -> Callable[..., Variable]:
    """Wrap a torch factory so it returns a leaf Variable and takes `requires_grad`."""

    @functools.wraps(torch_fn)
    def make(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Variable:
        args = tuple(a.data if isinstance(a, Variable) else a for a in args)
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


def _legacy(torch_type: Callable[..., torch.Tensor]) -> Callable[..., Variable]:
    """torch's legacy typed constructors (`torch.LongTensor([0, 2])`), still common in older code."""

    def make(*args: Any) -> Variable:
        return Variable(torch_type(*(a.data if isinstance(a, Variable) else a for a in args)))

    make.__name__ = make.__qualname__ = torch_type.__name__
    make.__doc__ = f"Like torch.{torch_type.__name__}, returning a leaf Variable."
    return make


FloatTensor = _legacy(torch.FloatTensor)
DoubleTensor = _legacy(torch.DoubleTensor)
LongTensor = _legacy(torch.LongTensor)
BoolTensor = _legacy(torch.BoolTensor)
