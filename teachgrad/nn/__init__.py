"""`tg.nn` gives a program what `torch.nn` gives it: torch's own modules (Module, Linear, ReLU,
Sequential, Embedding, LayerNorm, CrossEntropyLoss, ...), with teachgrad's `functional`, an `init`
that also fills Variables, and a `Parameter` that also takes a Variable.

torch's modules keep torch tensors as their parameters. Called on a Variable, a module's forward
reaches teachgrad's ops (through `Variable.__torch_function__`, see teachgrad/api/interop.py), so the graph is
teachgrad's and its parameters are leaves of it; torch.optim and tg.optim then train them. The attention and
transformer modules are torch's classes with one step in front of forward (teachgrad/nn/transformer.py): where
nothing is recorded, torch's forward runs on the data, fast paths and all. `parallel` is teachgrad's own
(DistributedDataParallel on teachgrad's engine: torch's reduces on torch's engine, which never runs here).
"""
from torch.nn import *  # noqa: F401,F403  (torch's modules, losses, containers, utils)

del functional, init, modules, parameter, utils  # noqa: F821  (torch's modules of these names: teachgrad's follow)
from . import functional, init, modules, parallel, parameter, utils  # noqa: E402
from .parallel import DataParallel  # noqa: E402  (torch.nn.DataParallel is torch.nn.parallel's)
from .parameter import Parameter
from .transformer import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402
                          TransformerEncoder, TransformerEncoderLayer)
