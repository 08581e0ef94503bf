"""`tg.nn.modules.instancenorm` is torch's `torch.nn.modules.instancenorm` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.instancenorm as _torch_module
from torch.nn.modules.instancenorm import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
