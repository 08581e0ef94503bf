"""`tg.nn.modules.sparse` is torch's `torch.nn.modules.sparse` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.sparse as _torch_module
from torch.nn.modules.sparse import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
