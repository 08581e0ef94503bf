"""`tg.utils.data.dataloader` is at torch's path `torch.utils.data.dataloader`: torch's DataLoader, with one
addition: a batch of Variables is stacked into a Variable.

torch's `default_collate` knows tensors, numbers, dicts and sequences; a dataset of Variables (say a
`TensorDataset` of Variables) would stop it. `tg.utils.data.default_collate` stacks Variables with
`tg.stack` and leaves everything else to torch's, and `tg.utils.data.DataLoader` uses it by default.
Every other name of torch's module (get_worker_info, default_convert, ...) is torch's own.

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.utils.data.dataloader as _torch_dataloader
from torch.utils.data import DataLoader as _TorchDataLoader
from torch.utils.data._utils.collate import collate as _collate, default_collate_fn_map as _torch_collate_fn_map

from ...api.torch_functions import stack as _stack_variables
from ...core.variable import Variable


def _collate_variables(batch, *, collate_fn_map=None):
    return _stack_variables(list(batch), 0)


def default_collate(batch):
    """torch's default_collate, which also stacks a batch of Variables into one Variable."""
    return _collate(batch, collate_fn_map={Variable: _collate_variables, **_torch_collate_fn_map})


class DataLoader(_TorchDataLoader):
    """torch's DataLoader, whose batches may hold Variables (collated by this module's default_collate)."""

    def __init__(self, dataset, *args, collate_fn=None, **kwargs):
        batched = kwargs.get("batch_size", args[0] if args else 1) is not None or kwargs.get("batch_sampler")
        if collate_fn is None and batched and len(args) < 6:   # (args[5] would be a collate_fn given by position)
            collate_fn = default_collate
        super().__init__(dataset, *args, collate_fn=collate_fn, **kwargs)


__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


def __getattr__(name: str) -> Any:   # torch's own for the rest (no gradient flows through a data loader)
    return getattr(_torch_dataloader, name)
