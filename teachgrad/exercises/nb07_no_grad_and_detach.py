"""Notebook 07 · no_grad and detach: a loss whose gradient never reaches w."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised

__all__ = ["check_frozen_loss"]


def _layer(lib):
    x = lib.ones(5)
    torch.manual_seed(0)
    w = lib.randn(5, 3, requires_grad=True)
    b = lib.randn(3, requires_grad=True)
    return x, w, b


def check_frozen_loss(frozen_loss: Callable, hint: int = 1) -> Verdict:
    """frozen_loss(lib, x, w, b): the loss ((x @ w + b) ** 2).mean() with no gradient reaching w."""
    hints = ("use a version of w that has the same values but no link back to w.",
             "either take w's values without its history (one method call on w), or compute the product "
             "where nothing is recorded (a with-block), and add b outside it.")
    call = "check_frozen_loss(frozen_loss, hint=2)"
    x, w, b = _layer(torch)
    with torch.no_grad():
        xw = x @ w
    target = ((xw + b) ** 2).mean()
    target.backward()
    b_target = b.grad
    results = {}
    for lib in (tg, torch):
        x, w, b = _layer(lib)
        try:
            loss = frozen_loss(lib, x, w, b)
            loss.backward()
        except Exception as error:
            return _not_yet(_raised("frozen_loss", error) + f" (with lib = {lib.__name__})", hints, hint, call)
        results[lib.__name__] = (loss, w, b)
    (loss, w, b), (loss_t, w_t, b_t) = results["teachgrad"], results["torch"]
    if not w.requires_grad:
        return _not_yet("w.requires_grad was switched off; leave w as it is and cut the graph inside "
                        "frozen_loss instead", hints, hint, call)
    if w.grad is not None or w_t.grad is not None:
        return _not_yet("a gradient still reaches w", hints, hint, call)
    if b.grad is None or b_t.grad is None or not torch.allclose(b.grad.data, b_target) \
            or not torch.allclose(b_t.grad, b_target):
        return _not_yet("b should still receive its gradient, unchanged", hints, hint, call)
    if not torch.allclose(loss.data, target.detach()):
        return _not_yet("the loss value changed; only the gradient flow should change", hints, hint, call)
    return _correct("w.grad is None, b.grad and the loss are as before (same in torch)")
