"""Notebook 02 · variables and functions: predict is_leaf, requires_grad and grad_fn of three results."""
from __future__ import annotations

from typing import Any

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet

__all__ = ["check_predictions"]


def _leaf_quiz(lib):
    a = lib.tensor(2.0)
    b = lib.tensor(3.0, requires_grad=True)
    return {"c": a * b, "d": a + 1, "e": b.exp()}


def check_predictions(predictions: Any, hint: int = 1) -> Verdict:
    """predictions: {name: (is_leaf, requires_grad, grad_fn name or None)} for c, d, e; lists work too."""
    hints = ("a result records a node only if one of its inputs requires grad; a tensor without grad_fn is a leaf.",
             "for each of c, d, e ask one question: does any of its inputs require grad? Its answer decides "
             "all three entries: a leaf or not, requires_grad or not, and whether there is a node to name "
             "(the op's name + 'Backward0', as torch prints it).")
    call = "check_predictions(predictions, hint=2)"
    if not isinstance(predictions, dict):
        return _not_yet("predictions should be a dict with keys 'c', 'd', 'e'", hints, hint, call)
    ours, _ = tg.check.twin(_leaf_quiz, quiet=True)
    missing, wrong = [], []
    for name, x in ours.items():
        truth = (x.is_leaf, x.requires_grad, None if x.grad_fn is None else type(x.grad_fn).__name__)
        guess = predictions.get(name)
        if guess is None:
            missing.append(name)
        elif not isinstance(guess, (list, tuple)) or len(guess) != 3:
            wrong.append(name)
        elif (bool(guess[0]), bool(guess[1]), guess[2] if guess[2] not in ("None", "") else None) != truth:
            wrong.append(name)
    if missing:
        return _not_yet(f"fill in a triple for {', '.join(missing)}", hints, hint, call)
    if wrong:
        return _not_yet(f"look again at {', '.join(wrong)}", hints, hint, call)
    return _correct("all three predictions match teachgrad and torch")
