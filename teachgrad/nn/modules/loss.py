"""`tg.nn.modules.loss` is torch's `torch.nn.modules.loss` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.loss as _torch_module
from torch.nn.modules.loss import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
