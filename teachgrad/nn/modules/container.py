"""`tg.nn.modules.container` is torch's `torch.nn.modules.container` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.container as _torch_module
from torch.nn.modules.container import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
