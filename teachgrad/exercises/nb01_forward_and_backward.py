"""Notebook 01 · forward and backward: the three gradients of t2 = (p q + s)², by hand."""
from __future__ import annotations

from typing import Any

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _number, _close

__all__ = ["check_grads"]


def _t2(lib):
    p = lib.tensor(3.0, requires_grad=True)
    q = lib.tensor(5.0, requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True)
    t2 = (p * q + s) ** 2
    t2.backward()
    return dict(p=p, q=q, s=s, t2=t2)


def check_grads(my_grads: Any, hint: int = 1) -> Verdict:
    """my_grads: dt2/dp, dt2/dq, dt2/ds for t2 = (p q + s)^2, as a dict {"p":, "q":, "s":} or a sequence."""
    hints = ("call u = p*q + s; the chain rule gives dt2/dp = dt2/du · du/dp, and likewise for q and s.",
             "compute u's value first, then dt2/du = 2u; multiply it by each local derivative "
             "du/dp = q, du/dq = p, du/ds = 1 (with the numbers put in).")
    call = "check_grads(my_grads, hint=2)"
    ours, _ = tg.check.twin(_t2, quiet=True)
    if isinstance(my_grads, dict):
        values = [my_grads.get(name) for name in "pqs"]
    elif isinstance(my_grads, (list, tuple)) and len(my_grads) == 3:
        values = list(my_grads)
    else:
        return _not_yet("give a dict {'p': ..., 'q': ..., 's': ...} of three numbers", hints, hint, call)
    if all(v is None for v in values):
        return _not_yet("fill in my_grads with three numbers", hints, hint, call)
    wrong = [name for name, v in zip("pqs", values)
             if _number(v) is None or not _close(_number(v), ours[name].grad.item())]
    if wrong:
        return _not_yet(f"look again at {', '.join(wrong)}", hints, hint, call)
    return _correct("all three gradients match teachgrad and torch")
