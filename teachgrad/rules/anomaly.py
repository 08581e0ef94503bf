"""Anomaly mode's word, and what `apply` and the engine do while it is on (the switches are
teachgrad/features/anomaly_mode.py, which sets the word here: the core reads it and never imports the feature).

- `enabled`, `check_nan`: the mode word, read by `Function.apply` (a new node remembers its forward stack) and by the
  engine (a node whose backward fails or returns NaN is reported with that stack);
- `forward_stack()`, `warn_forward_stack(node)`, `check_nan_in(node, grads)`: those reports, as torch words them.

As in torch, the switch is global (not per thread).

Guarded by tests/test_anomaly.py (the forward stack, NaN checks, torch's warnings and messages).
"""
import traceback
import warnings
from pathlib import Path

import torch

enabled = False     # anomaly mode is on: nodes record their forward stack, errors in backward name it
check_nan = True    # torch's default, used once anomaly mode is switched on
_PACKAGE = str(Path(__file__).parent.parent)   # teachgrad/, whose frames are left out


def set_mode(mode, nan):
    """Called by teachgrad/features/anomaly_mode.py's switches."""
    global enabled, check_nan
    enabled, check_nan = bool(mode), bool(nan)


def forward_stack():
    """The stack that is creating a node, without teachgrad's own frames: it ends at the user's line."""
    stack = traceback.extract_stack()
    while stack and stack[-1].filename.startswith(_PACKAGE):
        stack.pop()
    return stack


def warn_forward_stack(node):
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


def check_nan_in(node, grad_inputs):
    """In anomaly mode: a backward that returns NaN is an error at the node that made it."""
    for i, g in enumerate(grad_inputs):
        if g is not None and torch.isnan(g if isinstance(g, torch.Tensor) else g.data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
