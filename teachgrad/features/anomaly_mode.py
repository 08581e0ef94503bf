"""Anomaly detection: find the forward line behind an error (or a NaN) in backward.

    with tg.autograd.detect_anomaly():
        y = x.sqrt()              # each node now remembers the stack that created it
        (y * 0).sum().backward()  # warns with that stack, then raises:
        # RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

As in torch, the switch is global (not per thread), and it costs time: use it to debug.

Guarded by tests/test_anomaly.py (the forward stack, NaN checks, torch's warnings and messages).
"""
from __future__ import annotations

import traceback
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Sequence

import torch

if TYPE_CHECKING:   # names for the hints only
    from ..core.node import Node
    from ..core.variable import Variable

_enabled = False
_check_nan = True   # torch's default, used once anomaly mode is switched on
_PACKAGE = str(Path(__file__).parent.parent)   # teachgrad/, whose frames are left out


def is_anomaly_enabled() -> bool:
    """True when nodes record their forward stack and backward errors are reported with it."""
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when, in anomaly mode, a node whose backward returns NaN raises."""
    return _check_nan


def _set(mode, check_nan):
    global _enabled, _check_nan
    _enabled, _check_nan = bool(mode), bool(check_nan)


class detect_anomaly:
    """Context manager: turn anomaly detection on inside (and warn that it is slow), as torch's.

    Like torch's, it is not a decorator: use `set_detect_anomaly` or a `with` block in the function.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = (_enabled, _check_nan)
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        _set(True, self.check_nan)

    def __exit__(self, *exc: object) -> Literal[False]:
        _set(*self.prev)
        return False


class set_detect_anomaly:
    """Turn anomaly detection on or off at once; as a context manager, restore the old setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_enabled, _check_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> Literal[False]:
        _set(*self.prev)
        return False


def forward_stack() -> traceback.StackSummary:
    """The stack that is creating a node, without teachgrad's own frames: it ends at the user's line."""
    stack = traceback.extract_stack()
    while stack and stack[-1].filename.startswith(_PACKAGE):
        stack.pop()
    return stack


def warn_forward_stack(node: Node) -> None:
    """Say which forward line created the node whose backward failed (torch's warning, then it raises)."""
    stack = getattr(node, "_forward_stack", None)
    if stack is None:
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                  + "".join(traceback.format_list(stack)), stacklevel=_stacklevel_outside_package())


def _stacklevel_outside_package():
    """The stacklevel that points a warning at the caller of backward(), not into teachgrad."""
    frames = traceback.extract_stack()[-2::-1]   # from warn_forward_stack outwards
    for level, frame in enumerate(frames, start=1):
        if not frame.filename.startswith(_PACKAGE):
            return level
    return 1


def check_nan(node: Node, grad_inputs: Sequence[Variable | torch.Tensor | None]) -> None:
    """In anomaly mode: a backward that returns NaN is an error at the node that made it."""
    for i, g in enumerate(grad_inputs):
        if g is not None and torch.isnan(g if isinstance(g, torch.Tensor) else g.data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
