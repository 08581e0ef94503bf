"""Issue 34 (module_db): torch's own nn.MultiheadAttention and Transformer classes (torch.nn.X, not tg.nn.X) called
with Variables, masks included: torch's forward reads a mask's dtype with a helper of its own (F._none_or_dtype),
which teachgrad lets read a Variable's (api/interop.py). Values, gradients of the inputs and parameters, node names,
against the same module called with torch tensors."""
import copy

import pytest
import torch

import teachgrad as tg


def _twin_modules(make):
    torch.manual_seed(0)
    theirs = make().to(torch.float64)
    return copy.deepcopy(theirs), theirs


def _inputs(lib, shapes, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [lib.tensor(torch.randn(s, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64,
                       requires_grad=True) for s in shapes]


def _compare(make, shapes, masks, train=True):
    ours_module, theirs_module = _twin_modules(make)
    ours_module.train(train), theirs_module.train(train)
    ours_in, theirs_in = _inputs(tg, shapes), _inputs(torch, shapes)
    ours_masks = {k: tg.tensor(v) for k, v in masks.items()}   # masks made with teachgrad: Variables
    ours, theirs = ours_module(*ours_in, **ours_masks), theirs_module(*theirs_in, **masks)
    ours, theirs = (ours[0], theirs[0]) if isinstance(theirs, tuple) else (ours, theirs)
    assert isinstance(ours, tg.Variable)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    torch.testing.assert_close(ours.data, theirs.detach())
    cotangent = torch.randn(theirs.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    ours.backward(tg.tensor(cotangent)), theirs.backward(cotangent)
    for a, b in zip(ours_in, theirs_in):
        torch.testing.assert_close(a.grad.data, b.grad)
    for (name, a), (_, b) in zip(ours_module.named_parameters(), theirs_module.named_parameters()):
        torch.testing.assert_close(_plain(a.grad), b.grad, msg=name)


def _plain(t):
    return t.data if isinstance(t, tg.Variable) else t


KEY_PADDING = torch.tensor([[False, False, True], [False, True, False]])
CAUSAL = torch.ones(3, 3, dtype=torch.bool).triu(1)


@pytest.mark.parametrize("masks", [{}, {"key_padding_mask": KEY_PADDING}, {"attn_mask": CAUSAL},
                                   {"key_padding_mask": KEY_PADDING, "attn_mask": CAUSAL},
                                   {"attn_mask": CAUSAL.double() * -1e4}], ids=str)
def test_torchs_multihead_attention_given_variables_and_masks(masks):
    _compare(lambda: torch.nn.MultiheadAttention(4, 2, batch_first=True, add_bias_kv=False), [(2, 3, 4)] * 3, masks)


@pytest.mark.parametrize("norm_first", [False, True])
def test_torchs_transformer_layers_given_variables_and_masks(norm_first):
    _compare(lambda: torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True, norm_first=norm_first),
             [(2, 3, 4)], {"src_mask": CAUSAL, "src_key_padding_mask": KEY_PADDING})
    _compare(lambda: torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0,
                                                                                  batch_first=True), 2),
             [(2, 3, 4)], {"mask": CAUSAL, "src_key_padding_mask": KEY_PADDING})
    _compare(lambda: torch.nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, batch_first=True, norm_first=norm_first),
             [(2, 3, 4), (2, 3, 4)], {"tgt_mask": CAUSAL, "memory_key_padding_mask": KEY_PADDING})
    _compare(lambda: torch.nn.Transformer(4, 2, 1, 1, 8, dropout=0.0, batch_first=True),
             [(2, 3, 4), (2, 3, 4)], {"tgt_mask": CAUSAL, "src_key_padding_mask": KEY_PADDING})


def test_torchs_mask_helper_still_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match=r"input to _none_or_dtype\(\) must be None or torch.Tensor"):
        torch.nn.functional._none_or_dtype([True, False])
    assert torch.nn.functional._none_or_dtype(tg.tensor([True])) == torch.bool
    assert torch.nn.functional._none_or_dtype(None) is None
