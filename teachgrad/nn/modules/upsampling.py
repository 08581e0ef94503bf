"""`tg.nn.modules.upsampling` is torch's `torch.nn.modules.upsampling` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.upsampling as _torch_module
from torch.nn.modules.upsampling import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
