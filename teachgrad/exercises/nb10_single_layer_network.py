"""Notebook 10 · a single-layer network: dL/dW of the layer, by hand."""
from __future__ import annotations

from typing import Any

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _tensor

__all__ = ["check_w_grad"]


def _single_layer():
    """The notebook's layer, rebuilt: w.grad by teachgrad and by torch, and dL/dz."""
    grads = []
    for lib in (tg, torch):
        torch.manual_seed(0)
        x, y = lib.ones(5), lib.zeros(3)
        w = lib.randn(5, 3, requires_grad=True)
        b = lib.randn(3, requires_grad=True)
        z = lib.matmul(x, w) + b
        lib.nn.functional.binary_cross_entropy_with_logits(z, y).backward()
        grads.append(w.grad.data if lib is tg else w.grad)
    assert torch.allclose(grads[0], grads[1]), "teachgrad and torch differ"
    return grads[0]


def check_w_grad(w_grad_by_hand: Any, hint: int = 1) -> Verdict:
    """w_grad_by_hand: dL/dW of the single-layer network, a (5, 3) tensor (or nested lists)."""
    hints = ("entry (i, j) is x[i] * dL_dz[j]: every input feature times every output's gradient.",
             "that is an outer product of a 5-vector and a 3-vector: torch has a function of that name, "
             "or broadcast a (5, 1) column against a (1, 3) row.")
    call = "check_w_grad(w_grad_by_hand, hint=2)"
    expected = _single_layer().double()
    if w_grad_by_hand is None:
        return _not_yet("set w_grad_by_hand to a (5, 3) tensor", hints, hint, call)
    answer = _tensor(w_grad_by_hand)
    if answer is None:
        return _not_yet(f"could not read a {type(w_grad_by_hand).__name__} as a tensor", hints, hint, call)
    if answer.shape != expected.shape:
        what = f"your answer has shape {tuple(answer.shape)}; w.grad has w's shape, (5, 3)"
        if answer.shape == expected.T.shape:
            what += ": one row per input feature, one column per output"
        return _not_yet(what, hints, hint, call)
    if not torch.allclose(answer, expected, atol=1e-6, rtol=1e-5):
        return _not_yet("the numbers differ from w.grad", hints, hint, call)
    return _correct("it equals w.grad (teachgrad) and w_t.grad (torch)")
