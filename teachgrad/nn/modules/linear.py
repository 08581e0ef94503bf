"""`tg.nn.modules.linear` is torch's `torch.nn.modules.linear` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.linear as _torch_module
from torch.nn.modules.linear import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
