"""`tg.optim.optimizer` is at torch's path `torch.optim.optimizer`: its `Optimizer` is teachgrad's (torch's, which
also trains Variables: see teachgrad/optim/__init__.py); every other name is torch's own.

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.optim.optimizer as _torch_optimizer

from . import Optimizer

__all__ = ["Optimizer"]


def __getattr__(name: str) -> Any:   # the rest (required, ParamsT, register_optimizer_step_pre_hook, ...): torch's
    return getattr(_torch_optimizer, name)
