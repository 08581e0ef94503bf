"""Notebook 00 · why autograd: the derivative of g(x) = exp(sin(3x)), written by hand."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from ._method import refusal
from ._verdicts import Verdict, _correct, _not_yet, _raised, _number, _close, _watched

__all__ = ["check_dg"]


def _g(x):
    return (3 * x).sin().exp()


def check_dg(dg: Callable, hint: int = 1) -> Verdict:
    """dg(x) should be g'(x) for g(x) = exp(sin(3x)), at any float x."""
    hints = ("g is exp of something: the derivative of exp(u) is exp(u) times du/dx, and u = sin(3x) "
             "is itself a chain of two links.",
             "name the links: v is 3x, u is the sine of v, g is the exponential of u; multiply the three "
             "local derivatives dg/du · du/dv · dv/dx, each written in terms of x.")
    for x0 in (-1.0, -0.3, 0.0, 0.5, 1.2):
        x = tg.tensor(x0, dtype=torch.float64, requires_grad=True)
        _g(x).backward()
        x_t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        _g(x_t).backward()
        tg.check.agree(x, x_t, "x", quiet=True)
        answer, error, watch = _watched(dg, x0)
        if isinstance(error, (TypeError, AttributeError)):  # written for tensors (torch.sin, x.sin()): a tensor
            answer, error, watch = _watched(dg, torch.tensor(x0, dtype=torch.float64))
        refused = watch.refused(("reverse", "forward"))
        if refused is not None:
            return _not_yet(refusal("dg", refused, "here g'(x) is yours, by the chain rule"), hints, hint,
                            "check_dg(dg, hint=2)")
        if error is not None:
            return _not_yet(_raised("dg", error), hints, hint, "check_dg(dg, hint=2)")
        if answer is None:
            return _not_yet("dg returns None; write g'(x) as a formula in x", hints, hint, "check_dg(dg, hint=2)")
        value = _number(answer)
        if value is None:
            return _not_yet(f"dg({x0}) gave {type(answer).__name__}, not a number", hints, hint,
                            "check_dg(dg, hint=2)")
        if not _close(value, x.grad.item()):
            return _not_yet(f"at x = {x0} your dg gives {value:.6f}, autograd gives {x.grad.item():.6f}",
                            hints, hint, "check_dg(dg, hint=2)")
    return _correct("your g'(x) matches autograd (teachgrad and torch) at every point checked")
