"""Anomaly detection: find the forward line behind an error (or a NaN) in backward.

    with tg.autograd.detect_anomaly():
        y = x.sqrt()              # each node now remembers the stack that created it
        (y * 0).sum().backward()  # warns with that stack, then raises:
        # RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

As in torch, the switch is global (not per thread), and it costs time: use it to debug.

The word these switches set, and the reports it turns on, are teachgrad/rules/anomaly.py: `Function.apply`
and the engine read the word there, and never import this module.

Guarded by tests/test_anomaly.py (the forward stack, NaN checks, torch's warnings and messages).
"""
from __future__ import annotations

import warnings
from typing import Literal

from ..rules import anomaly


def is_anomaly_enabled() -> bool:
    """True when nodes record their forward stack and backward errors are reported with it."""
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when, in anomaly mode, a node whose backward returns NaN raises."""
    return anomaly.check_nan


class detect_anomaly:
    """Context manager: turn anomaly detection on inside (and warn that it is slow), as torch's.

    Like torch's, it is not a decorator: use `set_detect_anomaly` or a `with` block in the function.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = (anomaly.enabled, anomaly.check_nan)
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        anomaly.set_mode(True, self.check_nan)

    def __exit__(self, *exc: object) -> Literal[False]:
        anomaly.set_mode(*self.prev)
        return False


class set_detect_anomaly:
    """Turn anomaly detection on or off at once; as a context manager, restore the old setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.set_mode(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> Literal[False]:
        anomaly.set_mode(*self.prev)
        return False
