"""`DataParallel` at torch's path: torch's class where it runs the module once, refused where it would replicate.

torch's `DataParallel` copies the module onto each device in every forward (its `Broadcast` is a node of torch's
graph) and sums the replicas' gradients back through torch's engine. A model on teachgrad has no torch graph to
carry them, so with more than one device teachgrad says so at construction. With one device or none, torch's
class just calls the module, and that is what it does here too. torch itself recommends
DistributedDataParallel, which teachgrad has (teachgrad/nn/parallel/distributed.py).

Guarded by tests/test_data_parallel.py.
"""
from __future__ import annotations

from typing import Any

import torch

REPLICAS = (
    "teachgrad's DataParallel does not replicate a module over several devices: torch's sums the replicas' "
    "gradients through torch's own autograd engine, which never runs for a model on teachgrad. Use "
    "teachgrad.nn.parallel.DistributedDataParallel (one process per device), as torch recommends"
)


class DataParallel(torch.nn.DataParallel):
    """torch's `DataParallel` with one device or none (it calls the module); several devices are refused."""

    def __init__(self, module: torch.nn.Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__(module, device_ids, output_device, dim)
        if len(self.device_ids) > 1:
            raise NotImplementedError(REPLICAS)
