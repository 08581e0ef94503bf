"""Notebook 05 · gradient accumulation: the scale that makes two half-batches add up to the full batch."""
from __future__ import annotations

from typing import Any

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _number, _close

__all__ = ["check_scale"]


def _accumulated(lib, scale):
    xs = lib.tensor([1.0, 2.0, 3.0, 4.0])
    ys = lib.tensor([3.0, 5.0, 7.0, 9.0])
    w = lib.tensor(0.5, requires_grad=True)
    for half in (slice(0, 2), slice(2, 4)):
        loss_half = ((w * xs[half] - ys[half]) ** 2).mean()
        (scale * loss_half).backward()
    return w


def check_scale(scale: Any, hint: int = 1) -> Verdict:
    """scale: the factor for each half-batch mean loss so that the accumulated grad is the full-batch one."""
    hints = ("a mean over 2 points weighs each point by 1/2; the full-batch mean weighs each point by 1/4.",
             "write the weight each point gets in w.grad: scale × (weight inside a half's mean); set it equal "
             "to the weight a point gets in the full-batch mean and solve for scale.")
    call = "check_scale(scale, hint=2)"
    value = _number(scale)
    if value is None:
        return _not_yet("set scale to a number (e.g. 1.0)", hints, hint, call)
    ours = _accumulated(tg, value)
    tg.check.agree(ours, _accumulated(torch, value), "accumulated w", quiet=True)
    xs, ys = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([3.0, 5.0, 7.0, 9.0])
    w = torch.tensor(0.5, requires_grad=True)
    ((w * xs - ys) ** 2).mean().backward()
    if not _close(ours.grad.item(), w.grad.item()):
        return _not_yet(f"the halves add up to {ours.grad.item():.4f}, the full batch gives {w.grad.item():.4f}",
                        hints, hint, call)
    return _correct(f"the two halves add up to the full-batch gradient {w.grad.item():.4f}")
