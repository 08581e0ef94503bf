"""Issue 34, attention: F.scaled_dot_product_attention, nn.MultiheadAttention and the transformer modules run on
Variables (teachgrad/ops/attention.py, teachgrad/nn/functional.py, teachgrad/nn/transformer.py).

Each twin runs the same program with lib=torch and lib=teachgrad from the same seeds: the outputs, the gradients
of the inputs (and of every parameter of a module) and the node names of the graph must be equal to the bit
(torch.equal), in float64 and float32; the dropout masks are drawn from torch's generator as torch draws them.
Errors compare type and message (tests/twins.py).
"""
import warnings

import pytest
import torch

import teachgrad as tg
from tests.helpers import graph_names
from tests.twins import same

DTYPES = (torch.float64, torch.float32)


def _plain(t):
    return t.data if isinstance(t, tg.Variable) else t.detach()


def _equal(a, b):
    if a is None or b is None:
        return a is None and b is None
    return torch.equal(_plain(a), _plain(b))


def _weights(t, k):
    """A fixed cotangent for output k: backward of sum(out * weights) gives every output its own gradient."""
    return torch.linspace(-1, 1, t.numel(), dtype=t.dtype).reshape(t.shape) * (k + 1)


def _backward(lib, outputs):
    total = sum((o * _weights(_plain(o), k)).sum() for k, o in enumerate(outputs))
    total.backward()


# --- F.scaled_dot_product_attention ----------------------------------------------------------------------

def _sdpa_run(lib, dtype, shapes, mask=None, mask_requires_grad=False, backward=True, **kwargs):
    g = torch.Generator().manual_seed(0)
    data = [torch.randn(s, dtype=dtype, generator=g) for s in shapes]
    inputs = [lib.tensor(d.tolist(), dtype=dtype, requires_grad=True) for d in data]
    if mask is not None:
        mask = mask(g, dtype)
        if mask_requires_grad:
            mask = lib.tensor(mask.tolist(), dtype=dtype, requires_grad=True)
            inputs.append(mask)
    torch.manual_seed(7)   # dropout's draws
    out = lib.nn.functional.scaled_dot_product_attention(*inputs[:3], attn_mask=mask, **kwargs)
    if backward:
        _backward(lib, [out])
    return out, [i.grad for i in inputs], graph_names(out)


def _bool_mask(shape, row_all_false=False):
    def make(g, dtype):
        keep = torch.rand(shape, generator=g) > 0.4
        if row_all_false:
            keep[..., 0, :] = False   # a query that sees no key: _safe_softmax's zeros on the math path
        return keep
    return make


def _float_mask(shape):
    return lambda g, dtype: torch.randn(shape, dtype=dtype, generator=g)


QKV = [(2, 3, 4, 8)] * 3
CROSS = [(2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)]
SDPA_CASES = {
    "plain (fused kernel)": dict(shapes=QKV),
    "cross lengths": dict(shapes=CROSS),
    "is_causal": dict(shapes=CROSS, is_causal=True),
    "scale": dict(shapes=QKV, scale=0.3),
    "negative scale": dict(shapes=QKV, scale=-0.3),
    "bool mask": dict(shapes=CROSS, mask=_bool_mask((4, 6))),
    "float mask, broadcast": dict(shapes=CROSS, mask=_float_mask((2, 1, 4, 6))),
    "mask and is_causal (fused kernel)": dict(shapes=CROSS, mask=_float_mask((4, 6)), is_causal=True),
    "dropout (math path)": dict(shapes=CROSS, dropout_p=0.4),
    "dropout, causal, scale": dict(shapes=CROSS, dropout_p=0.3, is_causal=True, scale=-0.5),
    "dropout, bool mask with a row all False": dict(shapes=CROSS, dropout_p=0.2, mask=_bool_mask((4, 6), True)),
    "float mask that requires grad (math path)": dict(shapes=CROSS, mask=_float_mask((4, 6)), mask_requires_grad=True),
    "3-D inputs (math path)": dict(shapes=[(3, 4, 8), (3, 6, 8), (3, 6, 8)], mask=_bool_mask((4, 6))),
    "2-D inputs": dict(shapes=[(4, 8), (6, 8), (6, 8)], is_causal=True),
    "value of another head size (math path)": dict(shapes=[(2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)]),
    "grouped query heads": dict(shapes=[(2, 6, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)], enable_gqa=True),
    "grouped query heads, dropout": dict(shapes=[(2, 6, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8)], enable_gqa=True,
                                         dropout_p=0.25),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(SDPA_CASES))
def test_sdpa_values_gradients_and_nodes_are_torchs_to_the_bit(case, dtype):
    ours = _sdpa_run(tg, dtype, **SDPA_CASES[case])
    theirs = _sdpa_run(torch, dtype, **SDPA_CASES[case])
    assert _equal(ours[0], theirs[0])
    assert len(ours[1]) == len(theirs[1]) and all(map(_equal, ours[1], theirs[1]))
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("dtype", (torch.bfloat16, torch.float16))
@pytest.mark.parametrize("case", ["plain (fused kernel)", "dropout (math path)", "dropout, causal, scale",
                                  "dropout, bool mask with a row all False", "3-D inputs (math path)"])
def test_sdpa_in_half_precision_is_torchs_to_the_bit(case, dtype):
    # torch's math path computes half and bfloat16 in float32 on the CPU (ToCopyBackward0 in and out)
    test_sdpa_values_gradients_and_nodes_are_torchs_to_the_bit(case, dtype)


def test_sdpa_records_torchs_nodes_on_each_path():
    fused = _sdpa_run(tg, torch.float64, QKV)[0]
    assert type(fused.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    math_path = _sdpa_run(tg, torch.float64, CROSS, dropout_p=0.5)[2]
    assert {"SafeSoftmaxBackward0", "BmmBackward0", "MulBackward0", "MulBackward1"} <= set(math_path)


def test_sdpa_dropout_zero_is_exact_and_dropout_draws_torchs_mask():
    no_dropout = _sdpa_run(tg, torch.float64, CROSS, dropout_p=0.0, backward=False)[0]
    assert _equal(no_dropout, _sdpa_run(torch, torch.float64, CROSS, backward=False)[0])
    # the same seed, the same mask: the zeros of the weights are torch's, the others scaled by 1 / (1 - p)
    ours = _sdpa_run(tg, torch.float64, [(1, 1, 64, 4), (1, 1, 64, 4), (1, 1, 64, 4)], dropout_p=0.5)[0]
    theirs = _sdpa_run(torch, torch.float64, [(1, 1, 64, 4), (1, 1, 64, 4), (1, 1, 64, 4)], dropout_p=0.5)[0]
    assert _equal(ours, theirs)


def test_sdpa_without_grad_gives_torchs_values():
    for kwargs in (dict(), dict(dropout_p=0.3), dict(is_causal=True)):
        def run(lib, kwargs=kwargs):
            q, k, v = (lib.tensor(torch.randn(2, 2, 5, 4, dtype=torch.float64,
                                              generator=torch.Generator().manual_seed(i)).tolist(), dtype=torch.float64)
                       for i in range(3))
            torch.manual_seed(1)
            return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)
        same(run)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_second_derivative_of_the_fused_kernel_is_refused_as_torch_refuses_it(dtype):
    def run(lib):
        q, k, v = (lib.tensor(torch.randn(1, 2, 3, 4, dtype=dtype, generator=torch.Generator().manual_seed(i)).tolist(),
                              dtype=dtype, requires_grad=True) for i in range(3))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
        grads = lib.autograd.grad((out * out).sum(), (q, k, v), create_graph=True)
        assert type(grads[0].grad_fn).__name__ == "NotImplemented"
        first = [_plain(g).clone() for g in grads]
        try:
            grads[0].sum().backward()
        except RuntimeError as error:
            return first, str(error)
        return first, None
    assert same(run)[1][1] == "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"


def test_sdpa_second_derivative_on_the_math_path_is_torchs():
    def run(lib):
        q, k, v = (lib.tensor(torch.randn(3, 4, 5, dtype=torch.float64,
                                          generator=torch.Generator().manual_seed(i)).tolist(),
                              dtype=torch.float64, requires_grad=True) for i in range(3))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v)   # 3-D: the math path
        grads = lib.autograd.grad((out * out).sum(), (q, k, v), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (q, k, v))
        return [_plain(g) for g in grads + second]
    ours, theirs = run(tg), run(torch)
    assert all(torch.allclose(a, b, rtol=1e-12, atol=1e-13) for a, b in zip(ours, theirs))


def test_sdpa_forward_mode_of_the_fused_kernel_is_refused_as_torch_refuses_it():
    def run(lib):
        q = lib.tensor(torch.randn(1, 1, 3, 4, dtype=torch.float64).tolist(), dtype=torch.float64)
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(q, lib.ones_like(q))
            return lib.nn.functional.scaled_dot_product_attention(dual, dual, dual)
    assert same(run)[0] == "raised"


SDPA_ERRORS = {
    "dtypes differ": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(q, q.float(), q),
    "1-D": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(q[0, 0, 0], q[0, 0, 0], q[0, 0, 0]),
    "integer mask": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=torch.zeros(3, 3, dtype=torch.int64)),
    "mask and is_causal on the math path": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=torch.zeros(3, 3, dtype=torch.float64), is_causal=True, dropout_p=0.5),
    "dropout above 1": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=1.5),
    "key of another head size (fused kernel)": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(
        q, q[..., :3], q),
    "key of another head size (math path)": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(
        q[0], q[0, ..., :3], q[0]),
    "mask of the wrong shape": lambda lib, q: lib.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=torch.zeros(2, 3, dtype=torch.float64)),
}


@pytest.mark.parametrize("case", sorted(SDPA_ERRORS))
def test_sdpa_errors_are_torchs(case):
    def run(lib):
        q = lib.tensor(torch.randn(1, 2, 3, 4, dtype=torch.float64).tolist(), dtype=torch.float64, requires_grad=True)
        return SDPA_ERRORS[case](lib, q)
    assert same(run)[0] == "raised"


# --- baddbmm and unflatten (what nn.MultiheadAttention's torch code calls on Variables) ---------------------------

@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0)])
def test_baddbmm_is_torchs(beta, alpha):
    def run(lib, input_requires_grad):
        g = torch.Generator().manual_seed(0)
        data = [torch.randn(s, dtype=torch.float64, generator=g) for s in ((1, 3, 5), (2, 3, 4), (2, 4, 5))]
        inputs = [lib.tensor(d.tolist(), dtype=torch.float64, requires_grad=r)
                  for d, r in zip(data, (input_requires_grad, True, True))]
        out = lib.baddbmm(*inputs, beta=beta, alpha=alpha)
        names = graph_names(out)
        _backward(lib, [out])
        return out, [i.grad for i in inputs], names
    for input_requires_grad in (False, True):
        ours, theirs = run(tg, input_requires_grad), run(torch, input_requires_grad)
        assert _equal(ours[0], theirs[0]) and all(map(_equal, ours[1], theirs[1])) and ours[2] == theirs[2]


def test_unflatten_is_a_view_as_torchs():
    def run(lib):
        x = lib.tensor(torch.arange(12.0, dtype=torch.float64).tolist(), dtype=torch.float64, requires_grad=True)
        y = x.reshape(2, 6).unflatten(-1, (3, -1))
        _backward(lib, [y])
        return y, x.grad, graph_names(y)
    same(run)
    same(lambda lib: lib.tensor([[1.0] * 6], requires_grad=True).unflatten(1, (4, 2)))

    def function(lib):   # torch.unflatten(input, dim, sizes)
        x = lib.tensor(torch.arange(6.0, dtype=torch.float64).tolist(), dtype=torch.float64, requires_grad=True)
        y = lib.unflatten(x, 0, (2, 3))
        (y * y).sum().backward()
        return y, x.grad, graph_names(y)
    same(function)


# --- nn.MultiheadAttention and the transformer modules -------------------------------------------------------

def _module_run(lib, dtype, make, shapes, which, kwargs, train=True, grad=True):
    """Build the module from a seed, run it on inputs of `lib` (those at `which`, by position), backward a weighted
    sum of the outputs. Returns the outputs, the gradients (inputs, then parameters) and the node names."""
    torch.manual_seed(0)
    module = make(lib).to(dtype).train(train)
    g = torch.Generator().manual_seed(1)
    inputs = [lib.tensor(torch.randn(s, dtype=dtype, generator=g).tolist(), dtype=dtype, requires_grad=grad)
              for s in shapes]
    kwargs = {k: v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v  # float masks: the dtype
              for k, v in kwargs.items()}
    torch.manual_seed(2)   # the dropout masks' draws
    with torch.set_grad_enabled(grad):
        result = module(*[inputs[i] for i in which], **kwargs)
    outputs = [o for o in (result if isinstance(result, tuple) else (result,)) if o is not None]
    names = [graph_names(o) for o in outputs]
    if grad:
        _backward(lib, outputs)
    return outputs, [i.grad for i in inputs] + [p.grad for p in module.parameters()], names


def _check_module_twins(make, shapes, which, kwargs=None, train=True, grad=True, dtypes=DTYPES):
    for dtype in dtypes:
        ours = _module_run(tg, dtype, make, shapes, which, kwargs or {}, train, grad)
        theirs = _module_run(torch, dtype, make, shapes, which, kwargs or {}, train, grad)
        assert all(isinstance(o, tg.Variable) for o in ours[0])
        assert len(ours[0]) == len(theirs[0]) and all(map(_equal, ours[0], theirs[0])), dtype
        assert len(ours[1]) == len(theirs[1]) and all(map(_equal, ours[1], theirs[1])), dtype
        assert ours[2] == theirs[2]


def _square_mask(n):
    return torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64)


PADDING = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
MHA_CASES = {
    "self-attention": (dict(), [(5, 3, 8)], [0, 0, 0], dict()),
    "no weights (scaled_dot_product_attention)": (dict(), [(5, 3, 8)], [0, 0, 0], dict(need_weights=False)),
    "per-head weights, unbatched, no bias": (dict(bias=False), [(5, 8)], [0, 0, 0], dict(average_attn_weights=False)),
    "batch_first, dropout": (dict(dropout=0.3, batch_first=True), [(3, 5, 8)], [0, 0, 0], dict()),
    "kdim and vdim": (dict(kdim=6, vdim=4), [(5, 3, 8), (7, 3, 6), (7, 3, 4)], [0, 1, 2], dict()),
    "key is value, masks, bias_kv, zero attention": (
        dict(add_bias_kv=True, add_zero_attn=True), [(5, 3, 8), (7, 3, 8)], [0, 1, 1],
        dict(key_padding_mask=torch.tensor([[False] * 6 + [True]] * 3), attn_mask=torch.ones(5, 7, dtype=torch.bool).triu(1))),
    "key padding mask, no weights": (dict(batch_first=True), [(3, 5, 8)], [0, 0, 0],
                                     dict(key_padding_mask=PADDING, need_weights=False)),
    "causal float mask, no weights": (dict(), [(5, 3, 8)], [0, 0, 0],
                                      dict(attn_mask=_square_mask(5), is_causal=True, need_weights=False)),
    "3-D mask per head": (dict(), [(5, 2, 8)], [0, 0, 0], dict(attn_mask=torch.randn(8, 5, 5, dtype=torch.float64))),
}


@pytest.mark.parametrize("case", sorted(MHA_CASES))
def test_multihead_attention_is_torchs_to_the_bit(case):
    options, shapes, which, kwargs = MHA_CASES[case]
    _check_module_twins(lambda lib: lib.nn.MultiheadAttention(8, 4 if "head" in case else 2, **options),
                        shapes, which, kwargs)


@pytest.mark.parametrize("train, grad", [(False, True), (False, False), (True, False)])
def test_multihead_attention_in_eval_and_without_grad_is_torchs_fast_path_or_not(train, grad):
    # in eval without grad torch takes its fast path (torch._native_multi_head_attention): the same bits here
    for need_weights in (True, False):
        _check_module_twins(lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True), [(3, 5, 8)], [0, 0, 0],
                            dict(need_weights=need_weights, key_padding_mask=PADDING), train, grad)


MHA_ERRORS = {
    "wrong embedding size": lambda lib, x: lib.nn.MultiheadAttention(6, 2).double()(x, x, x),
    "is_causal without a mask": lambda lib, x: lib.nn.MultiheadAttention(8, 2).double()(x, x, x, is_causal=True),
    "2-D mask of the wrong shape": lambda lib, x: lib.nn.MultiheadAttention(8, 2).double()(
        x, x, x, attn_mask=torch.zeros(4, 5, dtype=torch.float64)),
    "4-D query": lambda lib, x: lib.nn.MultiheadAttention(8, 2).double()(x[None], x[None], x[None]),
}


@pytest.mark.parametrize("case", sorted(MHA_ERRORS))
def test_multihead_attention_errors_are_torchs(case):
    def run(lib):
        x = lib.tensor(torch.randn(5, 3, 8, dtype=torch.float64).tolist(), dtype=torch.float64, requires_grad=True)
        return MHA_ERRORS[case](lib, x)
    assert same(run)[0] == "raised"


def test_the_modules_are_torchs_classes_with_torchs_parameters():
    for name in ("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
                 "TransformerDecoder", "Transformer"):
        assert issubclass(getattr(tg.nn, name), getattr(torch.nn, name)) and getattr(tg.nn, name).__name__ == name
    torch.manual_seed(0)
    ours = tg.nn.MultiheadAttention(8, 2)
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    assert all(torch.equal(ours.state_dict()[k], theirs.state_dict()[k]) for k in theirs.state_dict())


ENCODER_LAYERS = {
    "post-norm, relu": dict(),
    "pre-norm, gelu": dict(norm_first=True, activation="gelu"),
    "callable activation": dict(activation=torch.nn.functional.silu),
    "batch_first, no bias": dict(batch_first=True, bias=False),
}


@pytest.mark.parametrize("case", sorted(ENCODER_LAYERS))
def test_transformer_encoder_layer_trains_as_torchs(case):
    options = ENCODER_LAYERS[case]
    shape = (3, 5, 8) if options.get("batch_first") else (5, 3, 8)
    _check_module_twins(lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, **options), [shape], [0])
    _check_module_twins(lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, **options), [shape], [0],
                        dict(src_mask=_square_mask(5), is_causal=True))


def test_transformer_encoder_with_padding_mask_trains_as_torchs():
    _check_module_twins(
        lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                              norm=lib.nn.LayerNorm(8), enable_nested_tensor=False),
        [(3, 5, 8)], [0], dict(src_key_padding_mask=PADDING, mask=_square_mask(5)))


def test_transformer_decoder_layer_and_decoder_train_as_torchs():
    _check_module_twins(lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1), [(4, 3, 8), (5, 3, 8)],
                        [0, 1], dict(tgt_mask=_square_mask(4), tgt_is_causal=True))
    _check_module_twins(
        lambda lib: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(8, 2, 16, norm_first=True,
                                                                             batch_first=True), 2),
        [(3, 4, 8), (3, 5, 8)], [0, 1], dict(memory_key_padding_mask=PADDING))


def test_transformer_trains_as_torchs():
    _check_module_twins(lambda lib: lib.nn.Transformer(8, 2, 2, 2, 16, dropout=0.1), [(5, 3, 8), (4, 3, 8)], [0, 1],
                        dict(tgt_mask=_square_mask(4), src_key_padding_mask=PADDING))


@pytest.mark.parametrize("train, grad", [(False, True), (False, False), (True, False)])
def test_transformer_modules_in_eval_and_without_grad_are_torchs_fast_paths_or_not(train, grad):
    # eval without grad: torch's _transformer_encoder_layer_fwd, and nested tensors for the padded batch
    _check_module_twins(lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), [(3, 5, 8)], [0],
                        dict(src_key_padding_mask=PADDING), train, grad)
    _check_module_twins(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                                              2), [(3, 5, 8)], [0], dict(src_key_padding_mask=PADDING),
                        train, grad)
    _check_module_twins(lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, batch_first=True), [(3, 5, 8), (3, 4, 8)],
                        [0, 1], dict(), train, grad)


def test_transformer_warnings_are_torchs():
    def caught(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            torch.manual_seed(0)
            encoder = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 2).double().eval()
            x = lib.tensor(torch.randn(5, 3, 8, dtype=torch.float64).tolist(), dtype=torch.float64)
            with torch.no_grad():
                encoder(x, src_key_padding_mask=PADDING)
        return [(w.category, str(w.message)) for w in seen]
    ours, theirs = caught(tg), caught(torch)
    assert ours == theirs and any("enable_nested_tensor" in message for _, message in theirs)


# --- a whole program: a small GPT (nanoGPT's layout: causal self-attention through scaled_dot_product_attention,
# GELU MLP, pre-norm blocks, tied embeddings) trained a few steps with AdamW, then sampled ---------------------------

def _tiny_gpt_program(lib, dropout, use_sdpa):
    nn, F = lib.nn, lib.nn.functional
    vocab, block, n_embd, n_head = 11, 8, 16, 4

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.resid_dropout = nn.Dropout(dropout)
            self.register_buffer("tril", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            if use_sdpa:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=dropout if self.training else 0,
                                                   is_causal=True)
            else:   # the lecture's hand-written attention
                att = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
                att = F.softmax(att.masked_fill(self.tril[:, :, :T, :T] == 0, float("-inf")), dim=-1)
                y = F.dropout(att, dropout, self.training) @ v
            return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(n_embd), CausalSelfAttention(), nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                     nn.Dropout(dropout))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(Block(), Block())
            self.ln_f, self.lm_head = nn.LayerNorm(n_embd), nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            x = self.wte(idx) + self.wpe(lib.arange(idx.size(1)))
            logits = self.lm_head(self.ln_f(self.blocks(x)))
            loss = None if targets is None else F.cross_entropy(logits.view(-1, vocab), targets.view(-1))
            return logits, loss

    torch.manual_seed(0)
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = lib.tensor(torch.randint(vocab, (64,), generator=torch.Generator().manual_seed(1)).tolist())
    losses = []
    for step in range(3):
        ix = torch.randint(len(data) - block, (4,))
        x = lib.stack([data[i:i + block] for i in ix.tolist()])
        y = lib.stack([data[i + 1:i + block + 1] for i in ix.tolist()])
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    idx = lib.zeros((1, 1), dtype=torch.long)
    with torch.no_grad():
        for _ in range(5):
            logits, _ = model(idx[:, -block:])
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = lib.cat((idx, lib.multinomial(probs, num_samples=1)), dim=1)
    return losses, idx.tolist(), {name: _plain(p).clone() for name, p in model.named_parameters()}


@pytest.mark.parametrize("use_sdpa", [True, False])
def test_a_small_gpt_trains_and_samples_as_torchs(use_sdpa):
    ours = _tiny_gpt_program(tg, 0.1, use_sdpa)
    theirs = _tiny_gpt_program(torch, 0.1, use_sdpa)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    assert ours[2].keys() == theirs[2].keys() and all(torch.equal(ours[2][k], theirs[2][k]) for k in theirs[2])


def test_masks_made_with_teachgrad_are_read_as_torchs():
    """`key_padding_mask = idx == pad` and a causal mask made under `import teachgrad as torch` are Variables."""
    def masks(lib, dtype):
        idx = lib.tensor([[1, 2, 3, 0, 0], [4, 5, 6, 7, 0], [1, 1, 1, 1, 1]])
        causal = lib.tril(lib.ones(5, 5, dtype=dtype)) == 0
        return dict(key_padding_mask=idx == 0, attn_mask=causal)

    def run(lib, train, grad):
        torch.manual_seed(0)
        module = lib.nn.MultiheadAttention(8, 2, batch_first=True).double().train(train)
        x = lib.tensor(torch.randn(3, 5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1)).tolist(),
                       dtype=torch.float64, requires_grad=grad)
        with torch.set_grad_enabled(grad):
            out, weights = module(x, x, x, **masks(lib, torch.float64))
        encoder_layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double().train(train)
        with torch.set_grad_enabled(grad):
            encoded = encoder_layer(x, src_mask=masks(lib, torch.float64)["attn_mask"],
                                    src_key_padding_mask=masks(lib, torch.float64)["key_padding_mask"])
        if grad:
            (out.sum() + weights.sum() + encoded.sum()).backward()
        return out, weights, encoded, x.grad
    for train, grad in ((True, True), (False, False)):
        same(lambda lib: run(lib, train, grad))


def test_a_mask_that_requires_grad_is_refused_by_name():
    x = tg.randn(5, 3, 8, dtype=torch.float64)
    mask = tg.zeros(5, 5, dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="attn_mask that does not require grad"):
        tg.nn.MultiheadAttention(8, 2).double()(x, x, x, attn_mask=mask)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'value'"):   # torch's own words
        tg.nn.MultiheadAttention(8, 2).double()(x, x)


def test_multi_head_attention_forward_differentiates_a_mask_that_requires_grad():
    def run(lib):
        g = torch.Generator().manual_seed(0)
        data = [torch.randn(s, dtype=torch.float64, generator=g) for s in ((3, 2, 4), (12, 4), (12,), (4, 4), (4,),
                                                                             (3, 3))]
        x, w_in, b_in, w_out, b_out, mask = (lib.tensor(d.tolist(), dtype=torch.float64, requires_grad=True)
                                             for d in data)
        for need_weights in (True, False):
            out, _ = lib.nn.functional.multi_head_attention_forward(
                x, x, x, 4, 2, w_in, b_in, None, None, False, 0.0, w_out, b_out, attn_mask=mask,
                need_weights=need_weights)
            out.sum().backward()
        return out, graph_names(out), [t.grad for t in (x, w_in, b_in, w_out, b_out, mask)]
    ours, theirs = run(tg), run(torch)
    assert _equal(ours[0], theirs[0]) and ours[1] == theirs[1] and all(map(_equal, ours[2], theirs[2]))


def test_sdpa_forward_mode_on_the_math_path_is_torchs():
    def run(lib):
        fwAD = lib.autograd.forward_ad
        g = torch.Generator().manual_seed(0)
        q, k, v, tq, tk, tv = (lib.tensor(torch.randn(3, 4, 5, dtype=torch.float64, generator=g).tolist(),
                                          dtype=torch.float64) for _ in range(6))
        mask = torch.rand(4, 4, generator=g) > 0.3
        with fwAD.dual_level():
            out = lib.nn.functional.scaled_dot_product_attention(
                fwAD.make_dual(q, tq), fwAD.make_dual(k, tk), fwAD.make_dual(v, tv), attn_mask=mask)
            primal, tangent = fwAD.unpack_dual(out)
            return _plain(primal).clone(), _plain(tangent).clone()
    ours, theirs = run(tg), run(torch)
    assert torch.equal(ours[0], theirs[0]) and torch.allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14)
