"""`tg.nn.modules.flatten` is torch's `torch.nn.modules.flatten` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.flatten as _torch_module
from torch.nn.modules.flatten import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
