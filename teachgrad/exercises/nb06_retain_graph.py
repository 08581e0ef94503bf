"""Notebook 06 · retain_graph: which losses survive a second backward."""
from __future__ import annotations

from typing import Any

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet

__all__ = ["SECOND_BACKWARD_LOSSES", "check_second_backward"]


SECOND_BACKWARD_LOSSES = {
    "(a + b).sum()": lambda a, b: (a + b).sum(),
    "(a * b).sum()": lambda a, b: (a * b).sum(),
    "a.reshape(2, 2).sum()": lambda a, b: a.reshape(2, 2).sum(),
    "a.exp().sum()": lambda a, b: a.exp().sum(),
    "(a - b).mean()": lambda a, b: (a - b).mean(),
    "(a + b).relu().sum()": lambda a, b: (a + b).relu().sum(),
}


def _survives(lib, make_loss):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = lib.tensor([5.0, 6.0, 7.0, 8.0], requires_grad=True)
    loss = make_loss(a, b)
    loss.backward()
    try:
        loss.backward()
        return True
    except RuntimeError:
        return False


def check_second_backward(answer: Any, hint: int = 1) -> Verdict:
    """answer: {loss text: True if a second backward works, False if it raises}."""
    hints = ("a second backward fails when some node's gradient formula needs a value from the forward pass.",
             "for each node in the loss, write its backward formula: if it uses an input or the output "
             "(not only the incoming gradient and shapes), the node saved a tensor, and backward freed it.")
    call = "check_second_backward(answer, hint=2)"
    if not isinstance(answer, dict):
        return _not_yet("answer should be a dict like the one given", hints, hint, call)
    missing, wrong = [], []
    for text, make_loss in SECOND_BACKWARD_LOSSES.items():
        truth = _survives(tg, make_loss)
        assert truth == _survives(torch, make_loss), f"{text}: teachgrad and torch differ"
        guess = answer.get(text)
        if guess is None:
            missing.append(text)
        elif bool(guess) != truth or not isinstance(guess, (bool, int)):
            wrong.append(text)
    if missing:
        return _not_yet(f"fill in True or False for {len(missing)} loss(es): {', '.join(missing)}", hints, hint, call)
    if wrong:
        return _not_yet(f"{len(SECOND_BACKWARD_LOSSES) - len(wrong)} of {len(SECOND_BACKWARD_LOSSES)} right; "
                        f"look again at {', '.join(wrong)}", hints, hint, call)
    return _correct(f"all {len(SECOND_BACKWARD_LOSSES)} right (and teachgrad behaves as torch on each)")
