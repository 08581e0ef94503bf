"""`tg.optim.swa_utils` is torch's `torch.optim.swa_utils` (AveragedModel, SWALR, ...): it averages torch modules'
parameters and schedules learning rates, with no gradient flowing through it.

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.optim.swa_utils as _torch_swa_utils
from torch.optim.swa_utils import *  # noqa: F401,F403

__all__ = _torch_swa_utils.__all__


def __getattr__(name: str) -> Any:
    return getattr(_torch_swa_utils, name)
