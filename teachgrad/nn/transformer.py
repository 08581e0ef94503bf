"""torch's attention and transformer modules, as `tg.nn` gives them: torch's own classes, each with one step
added in front of its forward.

    layer = tg.nn.TransformerEncoderLayer(d_model=64, nhead=4, batch_first=True)
    out = layer(x)          # x a Variable: torch's forward, on Variables; the graph is teachgrad's

Where a graph is recorded (grad mode on, and the input or a parameter requires grad), torch's forward runs on
the Variables, as for any torch module: its calls (`F.multi_head_attention_forward`, `F.linear`, `F.layer_norm`,
dropout, `F.scaled_dot_product_attention`, ...) are handed to teachgrad's functions (teachgrad/nn/functional.py),
so the nodes, values and gradients are torch's. torch does the same: while a gradient is needed it never takes
its fast paths.

Where nothing is recorded (under no_grad, or in eval with frozen parameters), torch may take a fast path:
`torch._native_multi_head_attention`, `torch._transformer_encoder_layer_fwd`, nested tensors for padded
batches. A torch module handed a Variable cannot (it sees an argument with `__torch_function__` and takes its
slow path, equal to the fast one only to round-off). So these classes run torch's forward on the Variables'
data there, fast path and all, and hand the results back as Variables: torch's values to the bit.

Masks made with teachgrad (`key_padding_mask = idx == pad`, `torch.tril(torch.ones(T, T)) == 0` under
`import teachgrad as torch`) are Variables; torch's forward reads a mask's dtype with a helper that takes torch
tensors only, so each mask that does not require grad is handed to it as its data (`plain_masks`).

Only `tg.nn.<Name>` is one of these; `tg.nn.modules.transformer.<Name>` is torch's class itself (it gives the
slow path's values where nothing is recorded). nn.Transformer builds its layers from torch's classes; its own
forward runs on the data as a whole when nothing is recorded.

Guarded by tests/test_attention.py (twins of torch's modules, in training and eval, with and without grad).
"""
from __future__ import annotations

from typing import Any

import torch

from ..api import interop
from ..core.variable import Variable
from ..rules import grad_mode
from .functional import plain_masks


class _TorchsForwardOnDataWhenNothingRecords:
    """The step in front of forward: torch's forward on the data when no graph is recorded (see the module)."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = plain_masks(super().forward, args, kwargs)   # (masks made with teachgrad: their data)
        arguments = (args, kwargs)
        if not any(isinstance(a, Variable) for a in _flat(arguments)) or _records(self, arguments):
            return super().forward(*args, **kwargs)
        plain = interop._unwrap(arguments, Variable)
        return interop._wrap(super().forward(*plain[0], **plain[1]), Variable)


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    if isinstance(value, dict):
        return _flat(list(value.values()))
    return [value]


def _records(module, arguments):
    """Whether teachgrad would record: grad mode on and an argument or a parameter requires grad, or a tangent
    of forward mode among the arguments."""
    if grad_mode.forward_level >= 0 and interop._any_dual(arguments):
        return True
    if not grad_mode.is_grad_enabled():
        return False
    return (interop._any_requires_grad(arguments, Variable)
            or any(p.requires_grad for p in module.parameters()))


class MultiheadAttention(_TorchsForwardOnDataWhenNothingRecords, torch.nn.MultiheadAttention):
    __doc__ = torch.nn.MultiheadAttention.__doc__


class TransformerEncoderLayer(_TorchsForwardOnDataWhenNothingRecords, torch.nn.TransformerEncoderLayer):
    __doc__ = torch.nn.TransformerEncoderLayer.__doc__


class TransformerDecoderLayer(_TorchsForwardOnDataWhenNothingRecords, torch.nn.TransformerDecoderLayer):
    __doc__ = torch.nn.TransformerDecoderLayer.__doc__


class TransformerEncoder(_TorchsForwardOnDataWhenNothingRecords, torch.nn.TransformerEncoder):
    __doc__ = torch.nn.TransformerEncoder.__doc__


class TransformerDecoder(_TorchsForwardOnDataWhenNothingRecords, torch.nn.TransformerDecoder):
    __doc__ = torch.nn.TransformerDecoder.__doc__


class Transformer(_TorchsForwardOnDataWhenNothingRecords, torch.nn.Transformer):
    __doc__ = torch.nn.Transformer.__doc__
