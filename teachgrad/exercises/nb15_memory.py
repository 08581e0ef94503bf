"""Notebook 15 · what autograd keeps in memory: saved-tensor hooks that keep float16 copies."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor

__all__ = ["check_half_hooks"]


def _small_net(lib, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(3)
    x, w1, w2 = torch.randn(16, 8, generator=g), torch.randn(8, 12, generator=g) / 3, torch.randn(12, 4, generator=g) / 3
    x, w1, w2 = x.to(dtype), w1.to(dtype), w2.to(dtype)
    if lib is tg:
        return tg.Variable(x), tg.Variable(w1, requires_grad=True), tg.Variable(w2, requires_grad=True)
    return x, w1.requires_grad_(), w2.requires_grad_()


def _net_loss(x, w1, w2):
    return ((x @ w1).tanh() @ w2).sin().sum()


def check_half_hooks(pack_half: Callable, unpack_half: Callable, hint: int = 1) -> Verdict:
    """pack_half/unpack_half: saved tensors kept in float16, given back in their own dtype."""
    hints = ("pack may return any object (a tuple, say): keep what unpack will need to rebuild the tensor.",
             "pack: remember the dtype and return a float16 copy (a method converts, another drops the graph "
             "first); unpack: convert the copy back to the remembered dtype.")
    call = "check_half_hooks(pack_half, unpack_half, hint=2)"
    for dtype in (torch.float32, torch.float64):       # float64 too: unpack must give back the saved dtype
        x, w1, w2 = _small_net(torch, dtype)
        _net_loss(x, w1, w2).backward()
        exact = w1.grad
        grads = []
        for lib in (tg, torch):
            x, w1, w2 = _small_net(lib, dtype)
            kept, returned = [], []

            def pack(t):
                packed = pack_half(t)
                kept.append(packed)
                return packed

            def unpack(packed):
                t = unpack_half(packed)
                returned.append(t)
                return t

            try:
                with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                    loss = _net_loss(x, w1, w2)
                loss.backward()
            except Exception as error:
                return _not_yet(_raised("your hooks", error) + f" (with lib = {lib.__name__}, {dtype} tensors)",
                                hints, hint, call)
            stored = [t for p in kept for t in (p if isinstance(p, (tuple, list)) else (p,))
                      if isinstance(t, (torch.Tensor, tg.Variable))]
            if not stored:
                return _not_yet(f"what pack returns holds no tensor (it gave {_kinds(kept)}): keep a float16 copy "
                                "of the saved tensor", hints, hint, call)
            if any(t.dtype != torch.float16 for t in stored):
                return _not_yet(f"what pack returns should hold the saved tensor in float16; yours holds "
                                f"{_dtypes(stored)}", hints, hint, call)
            if any(not isinstance(t, (torch.Tensor, tg.Variable)) or t.dtype != dtype for t in returned):
                return _not_yet(f"unpack_half should give back a tensor of the saved tensor's own dtype: with "
                                f"{dtype} tensors it gave {_dtypes(returned)}", hints, hint, call)
            grads.append(_tensor(w1.grad))
        error = ((grads[0] - exact.double()).abs().max() / exact.abs().max()).item()
        if error > 1e-2:
            return _not_yet(f"the gradients are off by {error:.0e} (relative): is every saved tensor given back "
                            "with its values?", hints, hint, call)
        if not torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6):
            return _not_yet("teachgrad and torch give different gradients under your hooks", hints, hint, call)
    return _correct("saved tensors kept in float16 and given back as float32 or float64, as saved; gradients "
                    "within 1e-2 of exact (teachgrad and torch)")


def _kinds(values: list) -> str:
    """The types of what pack returned, for a message."""
    return ", ".join(sorted({type(v).__name__ for v in values})) or "nothing"


def _dtypes(values: list) -> str:
    """The kinds of what unpack gave back, for a message: `torch.float32` or a type's name."""
    kinds = sorted({str(v.dtype) if isinstance(v, (torch.Tensor, tg.Variable)) else type(v).__name__ for v in values})
    return ", ".join(kinds)
