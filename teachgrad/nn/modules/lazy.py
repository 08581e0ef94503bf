"""`tg.nn.modules.lazy` is torch's `torch.nn.modules.lazy` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.lazy as _torch_module
from torch.nn.modules.lazy import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
