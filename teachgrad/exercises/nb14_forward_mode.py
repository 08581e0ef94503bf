"""Notebook 14 · forward mode: a Jacobian built column by column with dual tensors."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from teachgrad.rules import tangents
from ._method import refusal
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor, _watched

__all__ = ["check_jacobian_by_columns"]


def _jacobian_cases():
    """Square, wide (more inputs than outputs) and tall (a scalar input, three outputs) functions."""
    w = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.0, 2.0]], dtype=torch.float64)

    def tall(x):
        return (tg if isinstance(x, tg.Variable) else torch).stack([x, x * x, x.exp()])

    return [("x ↦ sin(x)·x (3 → 3)", lambda x: x.sin() * x, torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)),
            ("x ↦ W @ tanh(x) (3 → 2)", lambda x: (x.tanh() * w).sum(1), torch.tensor([0.1, 0.7, -0.4], dtype=torch.float64)),
            ("x ↦ (x, x², eˣ) (1 → 3)", tall, torch.tensor(0.3, dtype=torch.float64))]


def check_jacobian_by_columns(jacobian_by_columns: Callable, hint: int = 1) -> Verdict:
    """jacobian_by_columns(f, x) against torch.autograd.functional.jacobian, and made with forward mode."""
    hints = ("column j of the Jacobian is how f(x) moves when only x's element j moves: a tangent.",
             "one forward pass per element j of x, with x made dual: which tangent makes the output's tangent "
             "column j? (fwAD.dual_level, make_dual and unpack_dual are the tools.) Stack the columns on a new "
             "last dimension and reshape to f(x).shape + x.shape.")
    call = "check_jacobian_by_columns(jacobian_by_columns, hint=2)"
    for name, f, x0 in _jacobian_cases():
        expected = torch.autograd.functional.jacobian(f, x0.clone())
        ours_reverse = tg.autograd.functional.jacobian(f, tg.Variable(x0.clone()))
        assert torch.allclose(ours_reverse.data, expected)
        calls = []

        def counting(x, f=f):
            calls.append(tangents.is_dual(x))
            return f(x)

        answer, error, watch = _watched(jacobian_by_columns, counting, tg.Variable(x0.clone()))
        refused = watch.refused(("reverse",))
        if refused is not None:
            return _not_yet(refusal("jacobian_by_columns", refused, "here the columns come from forward mode"),
                            hints, hint, call)
        if error is not None:
            return _not_yet(_raised("jacobian_by_columns", error) + f" for {name}", hints, hint, call)
        if answer is None:
            return _not_yet("jacobian_by_columns returns None; return the Jacobian", hints, hint, call)
        got = _tensor(answer)
        if got is None:
            return _not_yet(f"for {name} it returned a {type(answer).__name__}, not a tensor", hints, hint, call)
        if tuple(got.shape) != tuple(expected.shape):
            return _not_yet(f"for {name} the Jacobian has shape {tuple(got.shape)}; it should be f(x).shape + "
                            f"x.shape = {tuple(expected.shape)}", hints, hint, call)
        if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
            return _not_yet(f"for {name} the numbers differ from torch.autograd.functional.jacobian", hints, hint, call)
        if not any(calls):
            return _not_yet("the numbers are right, but f never saw a dual tensor: build the columns with "
                            "forward mode (make_dual)", hints, hint, call)
    return _correct("all three Jacobians equal torch.autograd.functional.jacobian, column by column in forward mode")
