"""`tg.optim.lr_scheduler` is torch's `torch.optim.lr_scheduler` (StepLR, OneCycleLR, ...): a scheduler only sets
the learning rates of an optimizer's param_groups, so torch's work with teachgrad's optimizers as they are.

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.optim.lr_scheduler as _torch_lr_scheduler
from torch.optim.lr_scheduler import *  # noqa: F401,F403

__all__ = _torch_lr_scheduler.__all__


def __getattr__(name: str) -> Any:
    return getattr(_torch_lr_scheduler, name)
