"""`tg.nn.modules.fold` is torch's `torch.nn.modules.fold` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.fold as _torch_module
from torch.nn.modules.fold import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
