"""`tg.nn.modules.rnn` is torch's `torch.nn.modules.rnn` (see teachgrad/nn/modules/__init__.py)."""
from typing import Any

import torch.nn.modules.rnn as _torch_module
from torch.nn.modules.rnn import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    return getattr(_torch_module, name)
