"""`tg.nn.modules.utils` is torch's `torch.nn.modules.utils` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.utils as _torch_module
from torch.nn.modules.utils import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
