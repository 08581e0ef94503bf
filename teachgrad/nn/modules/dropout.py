"""`tg.nn.modules.dropout` is torch's `torch.nn.modules.dropout` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.dropout as _torch_module
from torch.nn.modules.dropout import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
