"""What every check shares: the `Verdict` it returns, the "✓ correct" / "not yet" messages with their hints,
and reading a learner's answer (a number, list, tuple, torch tensor or Variable) as a float64 tensor or float."""
from __future__ import annotations

import math
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

import teachgrad as tg

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


class _AutogradWatch(TorchFunctionMode):
    """Which autograd a learner's code asks for while it runs: teachgrad's engine (`tg.grad`, `.backward()`,
    anything built on them) and torch's (`torch.autograd.grad`, `.backward()`, `retain_grad()`, `torch.func`).
    `used` names the first one seen, or is None. An exercise that asks for gradients without autograd, or for an
    engine of one's own, refuses an answer that hands the work to an engine."""

    _TORCH = {"grad": "torch.autograd.grad", "backward": "torch's .backward()", "retain_grad": "retain_grad()"}

    def __init__(self):
        super().__init__()
        self.used = None

    def __enter__(self):
        from teachgrad.core import engine     # teachgrad's engine: every backward pass goes through its _run
        self._engine, self._run = engine, engine._run
        watch, run = self, engine._run

        def watched(*args, **kwargs):
            watch.used = watch.used or "teachgrad's engine (tg.grad or .backward())"
            return run(*args, **kwargs)
        engine._run = watched
        return super().__enter__()

    def __exit__(self, *exc):
        self._engine._run = self._run
        return super().__exit__(*exc)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in self._TORCH and self.used is None:
            self.used = self._TORCH[name]
        return func(*args, **(kwargs or {}))
