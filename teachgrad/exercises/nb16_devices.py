"""Notebook 16 · devices: weight gradients on the meta device, by backward."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised

__all__ = ["check_meta_grads"]


def check_meta_grads(meta_grads: Callable, hint: int = 1) -> Verdict:
    """meta_grads(sizes, batch, device="meta") -> [W.grad for each weight], computed by backward."""
    hints = ("every tensor the network uses must be made on the device you are given, with requires_grad "
             "on the weights only.",
             "make the weights with device=device and requires_grad=True, the input with device=device; run "
             "forward (x @ W, tanh between layers), call backward on the sum, and return each W.grad.")
    call = "check_meta_grads(meta_grads, hint=2)"

    def reference(sizes, batch, device):
        weights = [torch.randn(a, b, device=device, requires_grad=True) for a, b in zip(sizes, sizes[1:])]
        h = torch.randn(batch, sizes[0], device=device)
        for k, weight in enumerate(weights):
            h = h @ weight
            if k < len(weights) - 1:
                h = h.tanh()
        h.sum().backward()
        return [weight.grad for weight in weights]

    for sizes, device in (([784, 4096, 4096, 10], "meta"), ([3, 5, 2], "meta"), ([3, 5, 2], "cpu")):
        expected = reference(sizes, 64, device)
        try:
            grads = meta_grads(sizes, 64, device=device)
        except Exception as error:
            return _not_yet(f"for sizes {sizes} on {device}, " + _raised("meta_grads", error), hints, hint, call)
        if not isinstance(grads, (list, tuple)) or len(grads) != len(expected):
            return _not_yet(f"for sizes {sizes} return a list of {len(expected)} gradients, got "
                            f"{type(grads).__name__}", hints, hint, call)
        for k, (g, e) in enumerate(zip(grads, expected)):
            if not isinstance(g, tg.Variable):
                return _not_yet(f"gradient {k} for sizes {sizes} is {type(g).__name__}, not a Variable", hints,
                                hint, call)
            if g.device.type != device or g.shape != e.shape or g.dtype != e.dtype:
                return _not_yet(f"gradient {k} for sizes {sizes} is {g.dtype} of shape {tuple(g.shape)} on "
                                f"{g.device.type}; expected {e.dtype} of shape {tuple(e.shape)} on {device}",
                                hints, hint, call)
            if g.requires_grad or g.grad_fn is not None:
                return _not_yet(f"gradient {k} has a grad_fn: return the .grad of each weight", hints, hint, call)
        if device == "cpu":
            # with the sum as the loss, every column of the last weight's gradient is the same (d loss/d out = 1),
            # and gradients that come from backward are not all zero
            last = grads[-1].data
            if not torch.allclose(last, last[:, :1].expand_as(last)) or any(not g.data.abs().sum() for g in grads):
                return _not_yet("on cpu your gradients are not those of a backward pass (are they made by hand?)",
                                hints, hint, call)
    return _correct("every gradient has its weight's shape, on meta, as in torch; on cpu they come from backward")
