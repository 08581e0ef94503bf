"""`tg.nn.modules.conv` is torch's `torch.nn.modules.conv` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.conv as _torch_module
from torch.nn.modules.conv import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
