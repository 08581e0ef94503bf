"""Notebook 11 · custom functions: forward and backward of x · sin(x)."""
from __future__ import annotations

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised

__all__ = ["check_xsinx"]


def check_xsinx(body: type, hint: int = 1) -> Verdict:
    """body: a class with forward/backward for x * sin(x); used as a tg.Function and a torch Function."""
    hints = ("the product rule gives d/dx [x sin x]; a backward returns the incoming gradient times it.",
             "write f'(x) = (derivative of the first factor) · sin x + x · (derivative of sin x), with "
             "tensor methods on the saved x, and multiply by grad_output (the chain rule).")
    call = "check_xsinx(XSinX, hint=2)"
    if not isinstance(body, type):
        return _not_yet(f"check_xsinx takes your class (with forward and backward), not a {type(body).__name__}",
                        hints, hint, call)
    ours = type(body.__name__, (body, tg.Function), {})
    theirs = type(body.__name__, (body, torch.autograd.Function), {})
    x = tg.linspace(-3.0, 3.0, 7, dtype=torch.float64, requires_grad=True)
    x_t = x.data.clone().requires_grad_()
    try:
        ours_ok = tg.check.gradcheck(ours.apply, (x,), raise_exception=False)
        torch_ok = torch.autograd.gradcheck(theirs.apply, (x_t,), raise_exception=False)
        x_ref = x.data.clone().requires_grad_()
        (x_ref * torch.sin(x_ref)).sum().backward()
        ours.apply(x).sum().backward()
    except Exception as error:
        return _not_yet(_raised("your backward", error), hints, hint, call)
    same = x.grad is not None and torch.allclose(x.grad.data, x_ref.grad)
    if ours_ok and torch_ok and same:
        return _correct("gradcheck passes in teachgrad and in torch, and x.grad matches torch's autograd")
    if same:
        return _not_yet("x.grad is right for .sum() but gradcheck fails: did you use grad_output?", hints, hint, call)
    return _not_yet("gradcheck fails", hints, hint, call)
