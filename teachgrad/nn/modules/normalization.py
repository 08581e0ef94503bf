"""`tg.nn.modules.normalization` is torch's `torch.nn.modules.normalization` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.normalization as _torch_module
from torch.nn.modules.normalization import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
