"""`tg.nn.modules.channelshuffle` is torch's `torch.nn.modules.channelshuffle` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.channelshuffle as _torch_module
from torch.nn.modules.channelshuffle import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
