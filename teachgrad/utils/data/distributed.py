"""`tg.utils.data.distributed` is torch's `torch.utils.data.distributed` (DistributedSampler): torch's own, since no
gradient flows through it (a dataset may hold Variables: the DataLoader of dataloader.py stacks them).

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.utils.data.distributed as _torch_distributed
from torch.utils.data.distributed import *  # noqa: F401,F403

__all__ = _torch_distributed.__all__


def __getattr__(name: str) -> Any:
    return getattr(_torch_distributed, name)
