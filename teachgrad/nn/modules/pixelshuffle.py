"""`tg.nn.modules.pixelshuffle` is torch's `torch.nn.modules.pixelshuffle` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.pixelshuffle as _torch_module
from torch.nn.modules.pixelshuffle import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
