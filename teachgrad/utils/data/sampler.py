"""`tg.utils.data.sampler` is torch's `torch.utils.data.sampler` (Sampler, RandomSampler, BatchSampler, WeightedRandomSampler, ...): torch's own, since no
gradient flows through it (a dataset may hold Variables: the DataLoader of dataloader.py stacks them).

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.utils.data.sampler as _torch_sampler
from torch.utils.data.sampler import *  # noqa: F401,F403

__all__ = _torch_sampler.__all__


def __getattr__(name: str) -> Any:
    return getattr(_torch_sampler, name)
