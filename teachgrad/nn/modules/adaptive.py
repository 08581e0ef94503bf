"""`tg.nn.modules.adaptive` is torch's `torch.nn.modules.adaptive` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.adaptive as _torch_module
from torch.nn.modules.adaptive import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
