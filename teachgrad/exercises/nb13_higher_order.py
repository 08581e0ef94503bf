"""Notebook 13 · higher order: a third derivative with tg.grad."""
from __future__ import annotations

import math
from typing import Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised, _number, _close

__all__ = ["check_third_derivative"]


def check_third_derivative(third_derivative: Callable, hint: int = 1) -> Verdict:
    """third_derivative(fn, x) -> fn'''(x) as a Variable, for a scalar Variable x that requires grad."""
    hints = ("a gradient from tg.grad is a constant unless you ask it to record a graph of its own.",
             "call tg.grad three times, each on the previous result; pass create_graph=True to every call "
             "whose result you differentiate again.")
    call = "check_third_derivative(third_derivative, hint=2)"
    cases = [("sin(x)·x", lambda x: x.sin() * x, lambda a: -3 * math.sin(a) - a * math.cos(a)),
             ("x⁴", lambda x: x ** 4, lambda a: 24 * a)]
    for name, fn, closed_form in cases:
        for point in (0.5, 1.0, 2.0):
            x_t = torch.tensor(point, dtype=torch.float64, requires_grad=True)
            (d1,) = torch.autograd.grad(fn(x_t), x_t, create_graph=True)
            (d2,) = torch.autograd.grad(d1, x_t, create_graph=True)
            (d3,) = torch.autograd.grad(d2, x_t)
            try:
                ours = third_derivative(fn, tg.tensor(point, dtype=torch.float64, requires_grad=True))
            except RuntimeError as error:
                if "does not require grad" in str(error):
                    return _not_yet(f"for {name} at x = {point} a tg.grad call raised: the gradient you "
                                    "differentiated has no graph (it does not require grad)", hints, hint, call)
                return _not_yet(_raised("third_derivative", error), hints, hint, call)
            except Exception as error:
                return _not_yet(_raised("third_derivative", error), hints, hint, call)
            if ours is None:
                return _not_yet("third_derivative returns None", hints, hint, call)
            if isinstance(ours, (tuple, list)) and len(ours) == 1:
                ours = ours[0]
            value = _number(ours)
            if value is None:
                return _not_yet(f"for {name} it returned a {type(ours).__name__}, not a number", hints, hint, call)
            expected = closed_form(point)
            if not (_close(value, expected, 1e-6, 1e-6) and _close(value, d3.item(), 1e-6, 1e-6)):
                return _not_yet(f"for {name} at x = {point} you got {value:.4f}, the third derivative is "
                                f"{expected:.4f}", hints, hint, call)
    return _correct("third derivatives of sin(x)·x and x⁴ match the closed forms and torch")
