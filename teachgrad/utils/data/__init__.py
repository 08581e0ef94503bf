"""`tg.utils.data` is torch's `torch.utils.data` (Dataset, DataLoader, TensorDataset, random_split, ...),
with one addition: a batch of Variables is stacked into a Variable (`dataloader.py`). The modules at torch's
paths: `dataloader`, `dataset`, `sampler`, `distributed`.

Guarded by tests/test_torch_paths.py.
"""
from torch.utils.data import *  # noqa: F401,F403  (torch's own: no gradient flows through a data loader)

from . import dataset, distributed, sampler
from .dataloader import DataLoader, default_collate
