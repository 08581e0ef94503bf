"""`tg.nn.modules.activation` is torch's `torch.nn.modules.activation` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.activation as _torch_module
from torch.nn.modules.activation import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
