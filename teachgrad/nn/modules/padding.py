"""`tg.nn.modules.padding` is torch's `torch.nn.modules.padding` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.padding as _torch_module
from torch.nn.modules.padding import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
