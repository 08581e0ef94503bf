"""`tg.nn.modules.module` is torch's `torch.nn.modules.module` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.module as _torch_module
from torch.nn.modules.module import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
