"""`tg.nn.modules.distance` is torch's `torch.nn.modules.distance` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.distance as _torch_module
from torch.nn.modules.distance import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
