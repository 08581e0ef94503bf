"""Notebook 09 · anomaly detection and inference mode: a square root whose backward gives no NaN."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor

__all__ = ["check_safe_sqrt"]


def check_safe_sqrt(safe_sqrt: Callable, hint: int = 1) -> Verdict:
    """safe_sqrt(lib, x): sqrt(x) where x > 0, else 0, with a backward that gives no NaN (0 at x <= 0)."""
    import warnings

    hints = ("the NaN comes from the branch where() does not pick: its gradient is 0, times sqrt's "
             "infinite slope at 0. Make sure sqrt never sees a 0.",
             "feed sqrt an input that is safe everywhere (a where() that puts a harmless positive number "
             "at x <= 0), then pick with a second where() as before.")
    call = "check_safe_sqrt(safe_sqrt, hint=2)"
    points = [0.0, -1.0, 0.25, 4.0]
    x_t = torch.tensor(points, dtype=torch.float64)
    positive = x_t > 0
    expected_value = torch.where(positive, x_t.clamp(min=1e-300).sqrt(), 0.0)      # sqrt where x > 0, else 0
    expected_grad = torch.where(positive, 0.5 / x_t.clamp(min=1e-300).sqrt(), 0.0)  # its slope, 0 elsewhere
    for lib in (tg, torch):
        x = lib.tensor(points, dtype=lib.float64, requires_grad=True)
        try:
            y = safe_sqrt(lib, x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with lib.autograd.detect_anomaly():
                    y.sum().backward()
        except Exception as error:
            if "nan values" in str(error):
                return _not_yet(f"backward still returns NaN (with lib = {lib.__name__}): {error}", hints, hint, call)
            return _not_yet(_raised("safe_sqrt", error) + f" (with lib = {lib.__name__})", hints, hint, call)
        value = _tensor(y)
        if value is None or value.shape != expected_value.shape or not torch.allclose(value, expected_value):
            return _not_yet(f"safe_sqrt(lib, {points}) should be {expected_value.tolist()}", hints, hint, call)
        grad = _tensor(x.grad)
        if grad is None or not torch.allclose(grad, expected_grad):
            return _not_yet(f"the gradient should be {expected_grad.tolist()}, got "
                            f"{None if grad is None else grad.tolist()}", hints, hint, call)
    return _correct("the values are sqrt's, and backward gives 0 (not NaN) where x <= 0, even under "
                    "detect_anomaly (same in torch)")
