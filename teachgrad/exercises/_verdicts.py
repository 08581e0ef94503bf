"""What every check shares: the `Verdict` it returns, the "✓ correct" / "not yet" messages with their hints,
reading a learner's answer (a number, list, tuple, torch tensor or Variable) as a float64 tensor or float, and
running a learner's function under a `Watch` (`_method.py`: what it ran, to judge how it computed)."""
from __future__ import annotations

import math
from typing import Any

import torch

import teachgrad as tg
from ._method import Watch

__all__ = ["Verdict"]


class Verdict:
    """A check's answer: `bool(verdict)` says whether the answer is right; it displays as its message."""

    def __init__(self, ok: bool, message: str):
        self.ok = ok
        self.message = message

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message

    def _repr_pretty_(self, printer, cycle):
        printer.text(self.message)


def _correct(message: str) -> Verdict:
    return Verdict(True, "✓ correct: " + message)


def _not_yet(what: str, hints: tuple[str, str], hint: int, call: str) -> Verdict:
    """'not yet: what', then the nudge (hint=1) or the method (hint=2)."""
    if hint >= 2:
        return Verdict(False, f"not yet: {what}\nmethod: {hints[1]}")
    return Verdict(False, f"not yet: {what}\nhint: {hints[0]}\n(stuck? run {call} for the method)")


def _raised(name: str, error: BaseException) -> str:
    if isinstance(error, NotImplementedError):
        return f"{name} is not written yet (it raises NotImplementedError)"
    first_line = str(error).split("\n")[0]
    return f"{name} raised {type(error).__name__}: {first_line}"


def _tensor(value: Any) -> torch.Tensor | None:
    """An answer as a float64 torch tensor: from a number, list, tuple, tensor or Variable; None if impossible."""
    if value is None or isinstance(value, (str, bytes, dict)):
        return None
    try:
        if isinstance(value, tg.Variable):
            value = value.data
        if isinstance(value, torch.Tensor):
            return value.detach().to("cpu", torch.float64)
        if isinstance(value, (list, tuple)):
            value = [v.data if isinstance(v, tg.Variable) else v for v in value]
            if any(isinstance(v, torch.Tensor) for v in value):
                return torch.stack([torch.as_tensor(v).detach().to("cpu", torch.float64) for v in value])
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None


def _number(value: Any) -> float | None:
    """An answer as a Python float, from a number or a one-element tensor, Variable, list or tuple."""
    if isinstance(value, bool):
        return None
    t = _tensor(value)
    if t is None or t.numel() != 1:
        return None
    return t.item()


def _close(a: float, b: float, rel: float = 1e-5, abs_: float = 1e-6) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def _watched(fn: Any, *args: Any) -> tuple[Any, BaseException | None, Watch]:
    """(what fn(*args) returned or None, the exception it raised or None, what it ran: a `Watch`)."""
    watch = Watch()
    try:
        with watch:
            result = fn(*args)
    except Exception as error:  # noqa: BLE001 (the learner's code may raise anything)
        return None, error, watch
    return result, None, watch
