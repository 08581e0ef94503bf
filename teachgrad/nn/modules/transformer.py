"""`tg.nn.modules.transformer` is torch's `torch.nn.modules.transformer` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.transformer as _torch_module
from torch.nn.modules.transformer import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
