"""`tg.nn.modules.batchnorm` is torch's `torch.nn.modules.batchnorm` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.batchnorm as _torch_module
from torch.nn.modules.batchnorm import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
