"""`tg.nn.modules` is torch's `torch.nn.modules`: teachgrad's nn is torch's own modules (see teachgrad/nn/__init__.py),
so each module at torch's path here (`tg.nn.modules.linear`, `.conv`, `.loss`, ...) holds torch's own classes.

Guarded by tests/test_torch_paths.py.
"""
from torch.nn.modules import *  # noqa: F401,F403

from . import (activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout, flatten, fold,
               instancenorm, lazy, linear, loss, module, normalization, padding, pixelshuffle, pooling, rnn, sparse,
               transformer, upsampling, utils)
