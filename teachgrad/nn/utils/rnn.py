"""`tg.nn.utils.rnn` is torch's `torch.nn.utils.rnn` (pad_sequence, pack_padded_sequence, PackedSequence, ...).

Given Variables, its functions run through teachgrad/api/interop.py: torch's result where no gradient is lost
(Variables that need none, or under no_grad), and a TypeError naming the function where one would be.

Guarded by tests/test_torch_paths.py.
"""
from typing import Any

import torch.nn.utils.rnn as _torch_rnn
from torch.nn.utils.rnn import *  # noqa: F401,F403

__all__ = _torch_rnn.__all__


def __getattr__(name: str) -> Any:
    return getattr(_torch_rnn, name)
