"""`tg.nn.modules.pooling` is torch's `torch.nn.modules.pooling` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.pooling as _torch_module
from torch.nn.modules.pooling import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
