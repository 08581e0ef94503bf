"""`tg.utils.data.dataset` is torch's `torch.utils.data.dataset` (Dataset, TensorDataset, ConcatDataset, Subset, random_split, ...): torch's own, since no
gradient flows through it (a dataset may hold Variables: the DataLoader of dataloader.py stacks them).

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.utils.data.dataset as _torch_dataset
from torch.utils.data.dataset import *  # noqa: F401,F403

__all__ = _torch_dataset.__all__


def __getattr__(name: str) -> Any:
    return getattr(_torch_dataset, name)
