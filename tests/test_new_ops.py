"""The ops of issue 22 against torch: values, node names, saved tensors, gradients (float64 and float32,
non-contiguous inputs), finite differences (gradcheck, gradgradcheck), forward mode against torch's
forward AD, and bad input giving torch's exception type and message."""
import pytest
import torch
import torch.autograd.forward_ad as tfw
from hypothesis import given, settings
from hypothesis import strategies as st

import teachgrad as tg
from teachgrad.check import gradcheck, gradgradcheck

from .helpers import assert_values_graph_and_grads_match, close_for, graph_names

gfw = tg.autograd.forward_ad


def F(lib):
    return tg.nn.functional if lib is tg else torch.nn.functional


IDX_GATHER = torch.tensor([[0, 1, 1], [2, 3, 0], [3, 3, 3]])
IDX_SCATTER = torch.tensor([[0, 2], [1, 3], [3, 0]])          # distinct targets in each row
IDX_ADD = torch.tensor([[0, 1, 2, 0], [2, 2, 0, 1]])          # repeats add up
MASK_ROW = torch.tensor([True, False, True, True])
MASK_2D = torch.tensor([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
WORDS = torch.tensor([[0, 2], [4, 2], [1, 2]])
ZEROS_AT = torch.tensor([1.0, 0.0, 1.0, 1.0])
ZEROS_TWICE = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])


def _bn(lib, x, w, b, training, with_stats=True):
    """batch_norm with fresh running stats of torch's dtype (the same each call, so the call repeats)."""
    c = x.shape[1]
    rm = torch.linspace(-0.5, 0.5, c, dtype=x.dtype) if with_stats else None
    rv = torch.linspace(0.5, 1.5, c, dtype=x.dtype) if with_stats else None
    return F(lib).batch_norm(x, rm, rv, w, b, training=training)


def _dropout(lib, x, p, **kwargs):
    torch.manual_seed(7)              # each call draws the same mask, in both libraries
    return F(lib).dropout(x, p, **kwargs)


# (id, shapes of the inputs that require grad, fn(lib, *inputs)); positive inputs where an op needs them
CASES = [
    ("sum_keepdims", [(3, 4)], lambda lib, a: a.sum(1, keepdims=True)),
    ("tg_sum_keepdims", [(3, 4)], lambda lib, a: lib.sum(a, 0, keepdims=True)),
    ("mean_keepdims", [(3, 4)], lambda lib, a: a.mean((0, 1), keepdims=True)),
    ("max_keepdims", [(3, 4)], lambda lib, a: a.max(1, keepdims=True).values),
    ("min_keepdims", [(3, 4)], lambda lib, a: lib.min(a, 0, keepdims=True)[0]),
    ("var", [(3, 4)], lambda lib, a: a.var()),
    ("var_dim", [(3, 4)], lambda lib, a: a.var(1)),
    ("var_keepdim", [(3, 4)], lambda lib, a: a.var(1, keepdim=True)),
    ("var_keepdims", [(3, 4)], lambda lib, a: a.var(dim=0, keepdims=True)),
    ("var_biased", [(3, 4)], lambda lib, a: a.var(0, unbiased=False)),
    ("var_flag_only", [(3, 4)], lambda lib, a: a.var(False)),
    ("var_correction", [(3, 4)], lambda lib, a: lib.var(a, (0, 1), correction=2)),
    ("var_all_keepdim", [(3, 4)], lambda lib, a: a.var(correction=0, keepdim=True)),
    ("var_1d", [(5,)], lambda lib, a: a.var(0)),
    ("std", [(3, 4)], lambda lib, a: a.std()),
    ("std_dim", [(3, 4)], lambda lib, a: a.std(1, correction=0)),
    ("std_fn_keepdim", [(3, 4)], lambda lib, a: lib.std(a, 0, keepdim=True)),
    ("std_biased", [(2, 3, 4)], lambda lib, a: a.std((0, 2), unbiased=False)),
    ("logsumexp", [(3, 4)], lambda lib, a: a.logsumexp(1)),
    ("logsumexp_dims", [(2, 3, 4)], lambda lib, a: lib.logsumexp(a, (0, 2))),
    ("logsumexp_keepdims", [(3, 4)], lambda lib, a: a.logsumexp(0, keepdims=True)),
    ("log10", [(3, 4)], lambda lib, a: (a.abs() + 0.5).log10()),
    ("log2", [(3, 4)], lambda lib, a: lib.log2(a.abs() + 0.5)),
    ("log1p", [(3, 4)], lambda lib, a: a.abs().log1p()),
    ("expm1", [(3, 4)], lambda lib, a: lib.expm1(a)),
    ("gather", [(3, 4)], lambda lib, a: a.gather(1, IDX_GATHER)),
    ("gather_dim0", [(4, 3)], lambda lib, a: lib.gather(a, 0, IDX_GATHER.t())),
    ("scatter", [(3, 4), (3, 2)], lambda lib, a, s: a.scatter(1, IDX_SCATTER, s)),
    ("scatter_value", [(3, 4)], lambda lib, a: lib.scatter(a, 1, IDX_SCATTER, 2.5)),
    ("scatter_add", [(3, 4), (2, 4)], lambda lib, a, s: a.scatter_add(0, IDX_ADD, s)),
    ("index_select", [(3, 4)], lambda lib, a: a.index_select(0, torch.tensor([2, 0, 2]))),
    ("index_select_fn", [(3, 4)], lambda lib, a: lib.index_select(a, 1, torch.tensor([1]))),
    ("masked_select", [(3, 4)], lambda lib, a: a.masked_select(MASK_2D)),
    ("masked_select_mask_broadcast", [(3, 4)], lambda lib, a: lib.masked_select(a, MASK_ROW)),
    ("masked_select_self_broadcast", [(4,)], lambda lib, a: a.masked_select(MASK_2D)),
    ("cumsum", [(3, 4)], lambda lib, a: a.cumsum(1)),
    ("cumsum_fn", [(3, 4)], lambda lib, a: lib.cumsum(a, 0)),
    ("cumsum_dtype", [(3, 4)], lambda lib, a: a.cumsum(-1, dtype=torch.float64)),
    ("cumprod", [(3, 4)], lambda lib, a: a.cumprod(1)),
    ("cumprod_one_zero", [(3, 4)], lambda lib, a: (a * ZEROS_AT).cumprod(1)),
    ("cumprod_zeros", [(3, 4)], lambda lib, a: lib.cumprod(a * ZEROS_TWICE, 1)),
    ("sort", [(3, 4)], lambda lib, a: a.sort(1).values),
    ("sort_descending", [(3, 4)], lambda lib, a: a.sort(0, descending=True)[0]),
    ("sort_stable", [(3, 4)], lambda lib, a: lib.sort(a, stable=True).values),
    ("topk", [(3, 4)], lambda lib, a: a.topk(2).values),
    ("topk_smallest", [(3, 4)], lambda lib, a: lib.topk(a, 2, dim=0, largest=False)[0]),
    ("repeat", [(3, 4)], lambda lib, a: a.repeat(2, 1)),
    ("repeat_new_dim", [(3, 4)], lambda lib, a: a.repeat((2, 1, 3))),
    ("tile", [(3, 4)], lambda lib, a: lib.tile(a, (2,))),
    ("tile_method", [(3, 4)], lambda lib, a: a.tile(2, 1, 1)),
    ("repeat_interleave", [(3, 4)], lambda lib, a: a.repeat_interleave(2)),
    ("repeat_interleave_dim", [(3, 4)], lambda lib, a: a.repeat_interleave(3, dim=1)),
    ("repeat_interleave_tensor", [(3, 4)], lambda lib, a: lib.repeat_interleave(a, torch.tensor([1, 0, 2]), dim=0)),
    ("flip", [(3, 4)], lambda lib, a: a.flip(0)),
    ("flip_fn", [(3, 4)], lambda lib, a: lib.flip(a, (0, 1))),
    ("roll", [(3, 4)], lambda lib, a: a.roll(1, 1)),
    ("roll_dims", [(3, 4)], lambda lib, a: a.roll((1, 2), (0, 1))),
    ("roll_flat", [(3, 4)], lambda lib, a: lib.roll(a, 3)),
    ("tril", [(3, 4)], lambda lib, a: a.tril()),
    ("triu", [(3, 4)], lambda lib, a: a.triu(1)),
    ("tril_fn", [(2, 3, 4)], lambda lib, a: lib.tril(a, -1)),
    ("gelu", [(3, 4)], lambda lib, a: F(lib).gelu(a)),
    ("gelu_tanh", [(3, 4)], lambda lib, a: F(lib).gelu(a, approximate="tanh")),
    ("silu", [(3, 4)], lambda lib, a: F(lib).silu(a)),
    ("softplus", [(3, 4)], lambda lib, a: F(lib).softplus(a)),
    ("softplus_beta", [(3, 4)], lambda lib, a: F(lib).softplus(a, beta=2, threshold=1.5)),
    ("elu", [(3, 4)], lambda lib, a: F(lib).elu(a)),
    ("elu_alpha", [(3, 4)], lambda lib, a: F(lib).elu(a, alpha=0.5)),
    ("leaky_relu", [(3, 4)], lambda lib, a: F(lib).leaky_relu(a)),
    ("leaky_relu_slope", [(3, 4)], lambda lib, a: F(lib).leaky_relu(a, 0.2)),
    ("embedding", [(5, 3)], lambda lib, w: F(lib).embedding(WORDS, w)),
    ("embedding_padding", [(5, 3)], lambda lib, w: F(lib).embedding(WORDS, w, padding_idx=2)),
    ("embedding_padding_negative", [(5, 3)], lambda lib, w: F(lib).embedding(WORDS, w, padding_idx=-1)),
    ("embedding_freq", [(5, 3)], lambda lib, w: F(lib).embedding(WORDS, w, scale_grad_by_freq=True)),
    ("conv1d", [(2, 3, 6), (4, 3, 3), (4,)], lambda lib, x, w, b: F(lib).conv1d(x, w, b)),
    ("conv1d_options", [(2, 3, 9), (4, 3, 3)], lambda lib, x, w: F(lib).conv1d(x, w, stride=2, padding=1, dilation=2)),
    ("conv1d_groups", [(2, 4, 6), (4, 2, 3), (4,)], lambda lib, x, w, b: lib.conv1d(x, w, b, groups=2)),
    ("conv1d_unbatched", [(3, 6), (2, 3, 2)], lambda lib, x, w: F(lib).conv1d(x, w)),
    ("conv1d_same", [(2, 3, 6), (2, 3, 3)], lambda lib, x, w: F(lib).conv1d(x, w, padding="same")),
    ("conv1d_same_even_kernel", [(2, 3, 6), (2, 3, 4)], lambda lib, x, w: F(lib).conv1d(x, w, padding="same")),
    ("conv2d_same_even_kernel", [(1, 2, 5, 4), (2, 2, 2, 3), (2,)], lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding="same")),
    ("pad", [(2, 3, 4)], lambda lib, x: F(lib).pad(x, (1, 2))),
    ("pad_value_two_dims", [(2, 3, 4)], lambda lib, x: F(lib).pad(x, [0, 1, 2, 0], value=1.5)),
    ("pad_crop", [(2, 3, 4)], lambda lib, x: F(lib).pad(x, (1, -1, -1, 1))),
    ("conv2d", [(2, 3, 5, 5), (2, 3, 3, 3), (2,)], lambda lib, x, w, b: F(lib).conv2d(x, w, b)),
    ("conv2d_options", [(1, 2, 6, 5), (3, 2, 2, 3)], lambda lib, x, w: F(lib).conv2d(x, w, stride=(2, 1), padding=1)),
    ("conv2d_depthwise", [(1, 3, 4, 4), (3, 1, 2, 2)], lambda lib, x, w: lib.conv2d(x, w, groups=3, padding="valid")),
    ("max_pool2d", [(2, 2, 6, 6)], lambda lib, x: F(lib).max_pool2d(x, 2)),
    ("max_pool2d_options", [(1, 2, 7, 7)], lambda lib, x: F(lib).max_pool2d(x, 3, stride=2, padding=1)),
    ("max_pool2d_ceil_dilation", [(1, 2, 7, 7)], lambda lib, x: F(lib).max_pool2d(x, 2, dilation=2, ceil_mode=True)),
    ("max_pool2d_unbatched", [(2, 6, 6)], lambda lib, x: F(lib).max_pool2d(x, (2, 3))),
    ("max_pool2d_indices", [(1, 2, 4, 4)], lambda lib, x: F(lib).max_pool2d(x, 2, return_indices=True)[0]),
    ("avg_pool2d", [(2, 2, 6, 6)], lambda lib, x: F(lib).avg_pool2d(x, 2)),
    ("avg_pool2d_options", [(1, 2, 7, 7)], lambda lib, x: F(lib).avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)),
    ("avg_pool2d_divisor_ceil", [(1, 2, 7, 7)], lambda lib, x: F(lib).avg_pool2d(x, 2, ceil_mode=True, divisor_override=3)),
    ("layer_norm", [(2, 3, 4)], lambda lib, x: F(lib).layer_norm(x, (4,))),
    ("layer_norm_affine", [(2, 3, 4), (4,), (4,)], lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b)),
    ("layer_norm_2d_shape", [(2, 3, 4), (3, 4)], lambda lib, x, w: F(lib).layer_norm(x, [3, 4], w, eps=1e-3)),
    ("batch_norm_train", [(4, 3, 2), (3,), (3,)], lambda lib, x, w, b: _bn(lib, x, w, b, training=True)),
    ("batch_norm_train_2d", [(5, 3)], lambda lib, x: _bn(lib, x, None, None, training=True)),
    ("batch_norm_no_stats", [(4, 3, 2, 2), (3,)], lambda lib, x, w: _bn(lib, x, w, None, True, with_stats=False)),
    ("batch_norm_eval", [(4, 3, 2), (3,), (3,)], lambda lib, x, w, b: _bn(lib, x, w, b, training=False)),
    ("dropout", [(3, 4)], lambda lib, x: _dropout(lib, x, 0.3)),
    ("dropout_one", [(3, 4)], lambda lib, x: _dropout(lib, x, 1.0)),
    ("dropout_eval", [(3, 4)], lambda lib, x: _dropout(lib, x * 2, 0.3, training=False)),
    ("torch_dropout", [(3, 4)], lambda lib, x: (torch.manual_seed(3), lib.dropout(x, 0.5, True))[1]),
    ("torch_max_pool2d", [(1, 2, 4, 4)], lambda lib, x: lib.max_pool2d(x, 2, [], 0, 1, True)),
    ("torch_layer_norm", [(2, 3, 4), (4,)], lambda lib, x, w: lib.layer_norm(x, [4], w, None, 1e-5, True)),
    ("torch_batch_norm", [(4, 3), (3,), (3,)], lambda lib, x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False)),
    ("torch_embedding", [(5, 3)], lambda lib, w: lib.embedding(w, WORDS, 2)),
    ("rsqrt", [(3, 4)], lambda lib, a: (a.abs() + 0.5).rsqrt()),
    ("rsqrt_fn", [(3, 4)], lambda lib, a: lib.rsqrt(a.abs() + 0.5)),
    ("flatten_from_1", [(2, 3, 4)], lambda lib, a: a.flatten(1)),
    ("flatten_middle", [(2, 3, 4, 2)], lambda lib, a: lib.flatten(a, 1, 2)),
    ("flatten_nothing_to_merge", [(2, 3)], lambda lib, a: lib.flatten(a * 2, -1, -1)),
    ("flatten_after_transpose", [(2, 3, 4)], lambda lib, a: a.transpose(0, 2).flatten(0, 1)),
    ("bmm", [(2, 3, 4), (2, 4, 2)], lambda lib, a, b: a.bmm(b)),
    ("bmm_fn", [(2, 3, 4), (2, 4, 2)], lambda lib, a, b: lib.bmm(a, b)),
    ("movedim", [(2, 3, 4)], lambda lib, a: a.movedim(0, -1)),
    ("einsum_batched_matmul", [(2, 3, 4), (2, 4, 5)], lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b)),
    ("einsum_implicit", [(3, 4), (4, 5)], lambda lib, a, b: lib.einsum("ij,jk", a, b)),
    ("einsum_transpose", [(3, 4)], lambda lib, a: lib.einsum("ij->ji", a)),
    ("einsum_diagonal", [(3, 3)], lambda lib, a: lib.einsum("ii->i", a)),
    ("einsum_trace", [(3, 3)], lambda lib, a: lib.einsum("ii", a)),
    ("einsum_outer", [(3,), (4,)], lambda lib, a, b: lib.einsum("i,j->ij", a, b)),
    ("einsum_sum_all", [(2, 3, 4)], lambda lib, a: lib.einsum("bij->", a)),
    ("einsum_ellipsis_broadcast", [(2, 3, 4), (4, 5)], lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b)),
    ("einsum_rowwise_dot", [(3, 4), (3, 4)], lambda lib, a, b: lib.einsum("ij,ij->i", a, b)),
    ("einsum_three_operands", [(2, 3), (3, 4), (4, 5)], lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c)),
    ("einsum_attention", [(2, 2, 3, 4), (2, 2, 5, 4)], lambda lib, q, k: lib.einsum("bhqd,bhkd->bhqk", q, k)),
    ("einsum_repeated_and_summed", [(3, 3, 2)], lambda lib, a: lib.einsum("iij->j", a)),
    ("einsum_list_operands", [(3,), (3, 4)], lambda lib, a, b: lib.einsum("i,ij->j", [a, b])),
    ("einsum_size_one_dim", [(2, 3, 4), (4, 1)], lambda lib, a, b: lib.einsum("abc,cd->abd", a, b)),
]

# ops with kinks (or ties) where finite differences could straddle one: checked on inputs kept away from them
PIECEWISE = {"max_keepdims", "min_keepdims", "sort", "sort_descending", "sort_stable", "topk", "topk_smallest",
             "elu", "elu_alpha", "leaky_relu", "leaky_relu_slope", "softplus_beta", "max_pool2d", "max_pool2d_options",
             "max_pool2d_ceil_dilation", "max_pool2d_unbatched", "max_pool2d_indices", "torch_max_pool2d", "log1p", "log10", "log2"}
# by design not the derivative of the values (torch's documented rule): the padding row gets no gradient,
# scale_grad_by_freq divides by counts. Compared with torch above, not with finite differences.
NOT_THE_DERIVATIVE = {"embedding_padding", "embedding_padding_negative", "embedding_freq", "torch_embedding"}
# teachgrad refuses their second derivative, with a clear error (test_conv_double_backward_is_refused)
FIRST_ORDER_ONLY = {c[0] for c in CASES if c[0].startswith("conv")}


def _inputs(shapes, seed, dtype=torch.float64, contiguous=True, away_from_kinks=False):
    """The same leaves for both libraries; non-contiguous ones are every other element of a wider tensor."""
    gen = torch.Generator().manual_seed(seed)
    datas = []
    for s in shapes:
        x = torch.randn(*s, 2, generator=gen, dtype=dtype)[..., 0] if not contiguous else torch.randn(s, generator=gen, dtype=dtype)
        if away_from_kinks:   # distinct values at least 0.05 apart, none near 0
            ranks = torch.randperm(x.numel(), generator=gen).reshape(s).to(dtype)
            x.copy_((ranks - x.numel() / 2 + 0.5) * 0.1 + torch.sign(ranks - x.numel() / 2 + 0.5) * 0.05)
        datas.append(x)
    ours = [tg.Variable(d.clone() if contiguous else _same_layout(d), requires_grad=True) for d in datas]
    theirs = [(d.clone() if contiguous else _same_layout(d)).requires_grad_() for d in datas]
    return ours, theirs


def _same_layout(d):
    wide = torch.zeros(*d.shape, 2, dtype=d.dtype)
    wide[..., 0] = d
    return wide[..., 0]


def _compare(case, dtype=torch.float64, contiguous=True):
    name, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=len(name), dtype=dtype, contiguous=contiguous,
                                 away_from_kinks=name in PIECEWISE)
    if not contiguous:
        assert all(not t.is_contiguous() for t in theirs_in if t.dim() > 0 and t.numel() > 1)
    return assert_values_graph_and_grads_match(name, fn, ours_in, theirs_in, dtype)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_graph_and_grads_match_torch(case):
    _compare(case)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_float32_matches_torch(case):
    _compare(case, dtype=torch.float32)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_non_contiguous_inputs_match_torch(case):
    _compare(case, contiguous=False)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_saved_tensors_match_torch(case):
    """Each tensor torch's node keeps as `_saved_<name>` is kept by ours under the same name, equal."""
    name, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=2, away_from_kinks=name in PIECEWISE)
    ours, theirs = fn(tg, *ours_in), fn(torch, *theirs_in)
    if theirs.grad_fn is None:
        assert ours.grad_fn is None
        return
    for attribute in dir(theirs.grad_fn):
        value = getattr(theirs.grad_fn, attribute) if attribute.startswith("_saved_") else None
        if isinstance(value, torch.Tensor) and value.numel():
            mine = getattr(ours.grad_fn, attribute)
            assert mine is not None and torch.equal(mine.data, value.detach()), attribute


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in NOT_THE_DERIVATIVE], ids=lambda c: c[0])
def test_gradcheck(case):
    name, shapes, fn = case
    ours_in, _ = _inputs(shapes, seed=3, away_from_kinks=name in PIECEWISE)
    assert gradcheck(lambda *xs: fn(tg, *xs), tuple(ours_in))


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in FIRST_ORDER_ONLY | NOT_THE_DERIVATIVE], ids=lambda c: c[0])
def test_gradgradcheck(case):
    name, shapes, fn = case
    ours_in, _ = _inputs(shapes, seed=4, away_from_kinks=name in PIECEWISE)
    assert gradgradcheck(lambda *xs: fn(tg, *xs), tuple(ours_in))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_forward_mode_matches_torch(case, dtype):
    name, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=5, dtype=dtype, away_from_kinks=name in PIECEWISE)
    gen = torch.Generator().manual_seed(6)
    tangents = [torch.randn(s, generator=gen, dtype=dtype) for s in shapes]
    with tfw.dual_level():
        theirs = tfw.unpack_dual(fn(torch, *[tfw.make_dual(x.detach(), t) for x, t in zip(theirs_in, tangents)]))
    with gfw.dual_level():
        ours = gfw.unpack_dual(fn(tg, *[gfw.make_dual(x.detach(), t.clone()) for x, t in zip(ours_in, tangents)]))
    assert close_for(ours.primal, theirs.primal, dtype)
    assert close_for(ours.tangent, theirs.tangent, dtype), (ours.tangent, theirs.tangent)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in FIRST_ORDER_ONLY], ids=lambda c: c[0])
def test_double_backward_matches_torch(case):
    """Second derivatives: d/dx of (dy/dx · v) under create_graph=True, against torch's."""
    name, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=8, away_from_kinks=name in PIECEWISE)
    ours, theirs = fn(tg, *ours_in), fn(torch, *theirs_in)
    gen = torch.Generator().manual_seed(9)
    v = torch.randn(theirs.shape, dtype=torch.float64, generator=gen)
    g_ours = tg.grad(ours, ours_in, tg.Variable(v.clone()), create_graph=True)
    g_theirs = torch.autograd.grad(theirs, theirs_in, v.clone(), create_graph=True)
    # torch's backward of a backward is an op of its own, so a gradient that does not depend on the inputs
    # (a piecewise-linear op's, a bias's) still requires grad there, with a zero second derivative; ours does not
    for a, b in zip(g_ours, g_theirs):
        if b.requires_grad and not a.requires_grad:
            assert not any(s is not None and s.any() for s in torch.autograd.grad(b.sum(), theirs_in, retain_graph=True,
                                                                                 allow_unused=True))
        assert b.requires_grad or not a.requires_grad
    pairs = [(a, b) for a, b in zip(g_ours, g_theirs) if a.requires_grad]
    if not pairs:
        return
    w = [torch.randn(b.shape, dtype=torch.float64, generator=gen) for _, b in pairs]
    second_ours = tg.grad(sum(((a * tg.Variable(u)).sum() for (a, _), u in zip(pairs, w))), ours_in, allow_unused=True)
    second_theirs = torch.autograd.grad(sum((b * u).sum() for (_, b), u in zip(pairs, w)), theirs_in, allow_unused=True)
    for a, b in zip(second_ours, second_theirs):
        if b is None:
            assert a is None or not a.data.any()
        else:
            assert a is not None and close_for(a, b, torch.float64), (name, a, b)


def test_conv_double_backward_is_refused_with_a_clear_error():
    """teachgrad computes the first derivative of a convolution under create_graph, but not a second."""
    x = tg.randn(1, 2, 5, dtype=torch.float64, requires_grad=True)
    w = tg.randn(3, 2, 2, dtype=torch.float64, requires_grad=True)
    tx, tw = x.data.clone().requires_grad_(), w.data.clone().requires_grad_()
    gx, = tg.grad((tg.conv1d(x, w) ** 2).sum(), x, create_graph=True)
    tgx, = torch.autograd.grad((torch.conv1d(tx, tw) ** 2).sum(), tx, create_graph=True)
    assert close_for(gx, tgx, torch.float64) and gx.requires_grad
    with pytest.raises(NotImplementedError, match="teachgrad does not compute the second derivative of convolution"):
        gx.sum().backward()
    # first order under create_graph, when nothing upstream requires grad, is still plain
    g, = tg.grad(tg.conv1d(x, w.detach()).sum(), x, create_graph=True)
    assert close_for(g, torch.autograd.grad(torch.conv1d(tx, tw.detach()).sum(), tx)[0], torch.float64)


def test_batch_norm_updates_running_stats_as_torch():
    x = torch.randn(6, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    stats_ours = [torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)]
    stats_theirs = [s.clone() for s in stats_ours]
    for momentum in (0.1, 0.5):
        tg.nn.functional.batch_norm(tg.Variable(x, requires_grad=True), *[tg.Variable(s) for s in stats_ours],
                                    training=True, momentum=momentum)
        torch.nn.functional.batch_norm(x.clone().requires_grad_(), *stats_theirs, training=True, momentum=momentum)
        for a, b in zip(stats_ours, stats_theirs):
            assert torch.allclose(a, b, atol=1e-12, rtol=0)
    # eval mode leaves them alone
    before = [s.clone() for s in stats_ours]
    tg.nn.functional.batch_norm(tg.Variable(x), *stats_ours, training=False)
    assert all(torch.equal(a, b) for a, b in zip(before, stats_ours))


def test_dropout_draws_torchs_mask_from_a_seeded_generator():
    x = torch.rand(50, 40, dtype=torch.float32) + 1
    torch.manual_seed(123)
    ours = tg.nn.functional.dropout(tg.Variable(x, requires_grad=True), 0.25)
    torch.manual_seed(123)
    theirs = torch.nn.functional.dropout(x.clone().requires_grad_(), 0.25)
    assert torch.equal(ours.data, theirs.detach())
    assert 0.15 < (ours.data == 0).float().mean().item() < 0.35          # about p of the elements are dropped
    assert torch.allclose(ours.data[ours.data != 0], x[ours.data != 0] / 0.75)
    x_eval = tg.Variable(x, requires_grad=True)
    assert tg.nn.functional.dropout(x_eval, 0.25, training=False) is x_eval   # as torch: the input itself


def test_native_dropout_function_matches_torchs_fused_kernel():
    """The fused kernel torch uses off the CPU (checked here on the CPU, where it also runs)."""
    x = torch.randn(4, 5, dtype=torch.float64)
    torch.manual_seed(5)
    out, mask = tg.ops.NativeDropout.apply(tg.Variable(x, requires_grad=True), 0.4, True)
    torch.manual_seed(5)
    t_out, t_mask = torch.native_dropout(x.clone().requires_grad_(), 0.4, True)
    assert torch.equal(out.data, t_out.detach()) and torch.equal(mask.data, t_mask)
    assert out.grad_fn.name() == t_out.grad_fn.name() == "NativeDropoutBackward0" and not mask.requires_grad
    v = torch.randn(4, 5, dtype=torch.float64)
    assert close_for(tg.grad(out, out.grad_fn.next_functions[0][0].variable, tg.Variable(v))[0],
                  torch.autograd.grad(t_out, t_out.grad_fn.next_functions[0][0].variable, v)[0], torch.float64)


def test_torch_functions_called_with_variables_run_the_new_ops():
    """`torch.cumsum(x, 0)`, `torch.nn.functional.gelu(x)` on a Variable that requires grad now record."""
    x = tg.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.cumsum(x, 0).grad_fn.name() == "CumsumBackward0"
    assert torch.nn.functional.gelu(x).grad_fn.name() == "GeluBackward0"
    assert torch.var(x, 1, keepdims=True).grad_fn.name() == "VarBackward0"
    assert torch.gather(x, 1, torch.tensor([[0], [1], [2]])).grad_fn.name() == "GatherBackward0"
    assert x.flip(0, 1).grad_fn.name() == "FlipBackward0" and torch.equal(x.flip(0, 1).data, x.data.flip(0, 1))
    assert torch.equal(x.tile(2).data, x.data.tile(2))


def _error_of(fn, lib):
    try:
        fn(lib)
    except Exception as error:   # noqa: BLE001  (the exception itself is what is compared)
        return error
    raise AssertionError(f"no error under {lib.__name__}")


X = torch.randn(2, 3, 4, dtype=torch.float64)


def _x(lib):
    return tg.Variable(X.clone(), requires_grad=True) if lib is tg else X.clone().requires_grad_()


# (id, fn(lib)); torch's exception type and message, word for word
ERRORS = [
    ("keepdim_and_keepdims", lambda lib: _x(lib).sum(1, keepdim=True, keepdims=True)),
    ("var_dim_out_of_range", lambda lib: _x(lib).var(3)),
    ("logsumexp_dim_out_of_range", lambda lib: _x(lib).logsumexp(3)),
    ("gather_index_out_of_bounds", lambda lib: _x(lib).gather(1, torch.tensor([[[5]]]))),
    ("gather_float_index", lambda lib: _x(lib).gather(1, torch.tensor([[[0.5]]]))),
    ("index_select_2d_index", lambda lib: _x(lib).index_select(1, torch.tensor([[0]]))),
    ("cumsum_dim_out_of_range", lambda lib: _x(lib).cumsum(3)),
    ("topk_k_too_large", lambda lib: _x(lib).topk(5)),
    ("repeat_too_few_dims", lambda lib: _x(lib).repeat(2)),
    ("masked_select_shapes", lambda lib: _x(lib).masked_select(torch.ones(5, dtype=torch.bool))),
    ("tril_1d", lambda lib: _x(lib)[0, 0].tril()),
    ("flip_dim_out_of_range", lambda lib: _x(lib).flip(5)),
    ("roll_dim_out_of_range", lambda lib: _x(lib).roll(1, 7)),
    ("conv1d_channels", lambda lib: F(lib).conv1d(_x(lib), torch.randn(2, 2, 2, dtype=torch.float64))),
    ("conv1d_1d_input", lambda lib: F(lib).conv1d(_x(lib)[0, 0], torch.randn(2, 3, 2, dtype=torch.float64))),
    ("conv1d_same_strided", lambda lib: F(lib).conv1d(_x(lib), torch.randn(2, 3, 3, dtype=torch.float64), padding="same", stride=2)),
    ("conv1d_bad_padding", lambda lib: F(lib).conv1d(_x(lib), torch.randn(2, 3, 3, dtype=torch.float64), padding="foo")),
    ("max_pool2d_too_small", lambda lib: F(lib).max_pool2d(_x(lib), 5)),
    ("layer_norm_shape", lambda lib: F(lib).layer_norm(_x(lib), (3,))),
    ("layer_norm_int_shape", lambda lib: F(lib).layer_norm(_x(lib), 4)),
    ("batch_norm_one_value", lambda lib: F(lib).batch_norm(_x(lib)[:1, :, :1], None, None, training=True)),
    ("batch_norm_eval_no_stats", lambda lib: F(lib).batch_norm(_x(lib), None, None, training=False)),
    ("dropout_p", lambda lib: F(lib).dropout(_x(lib), 1.5)),
    ("torch_dropout_p", lambda lib: lib.dropout(_x(lib), -0.5, True)),
    ("embedding_index", lambda lib: F(lib).embedding(torch.tensor([5]), _x(lib)[0])),
    ("embedding_padding_idx", lambda lib: F(lib).embedding(torch.tensor([1]), _x(lib)[0], padding_idx=4)),
    ("gelu_approximate", lambda lib: F(lib).gelu(_x(lib), approximate="foo")),
    ("var_of_integers", lambda lib: lib.tensor([1, 2, 3]).var()),
    ("einsum_dims", lambda lib: lib.einsum("ij->i", _x(lib))),
    ("einsum_bad_label", lambda lib: lib.einsum("i2,j->ij", _x(lib)[0], _x(lib)[0, 0])),
    ("einsum_output_label_unknown", lambda lib: lib.einsum("ijk->z", _x(lib))),
    ("einsum_output_label_twice", lambda lib: lib.einsum("ijk->ii", _x(lib))),
    ("einsum_too_few_operands", lambda lib: lib.einsum("ijk,k->i", _x(lib))),
    ("einsum_too_many_operands", lambda lib: lib.einsum("ijk->i", _x(lib), _x(lib))),
    ("einsum_sizes", lambda lib: lib.einsum("ijk,ij->k", _x(lib), _x(lib)[0])),
    ("einsum_repeated_sizes", lambda lib: lib.einsum("iik->k", _x(lib))),
    ("einsum_bad_ellipsis", lambda lib: lib.einsum("i..->i", _x(lib)[0, 0])),
    ("bmm_shapes", lambda lib: lib.bmm(_x(lib), _x(lib))),
    ("flatten_start_after_end", lambda lib: _x(lib).flatten(2, 1)),
    ("pad_odd_length", lambda lib: F(lib).pad(_x(lib), (1,))),
    ("pad_too_long", lambda lib: F(lib).pad(_x(lib), (1,) * 8)),
    ("pad_crop_too_much", lambda lib: F(lib).pad(_x(lib), (-3, -2))),
    ("pad_unknown_mode", lambda lib: F(lib).pad(_x(lib), (1, 1), mode="foo")),
    ("flatten_dim_out_of_range", lambda lib: lib.flatten(_x(lib), 3)),
    ("torch_batch_norm_eval_no_stats", lambda lib: lib.batch_norm(_x(lib), None, None, None, None, False, 0.1, 1e-5, False)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_bad_input_gives_torchs_error(case):
    _, fn = case
    ours, theirs = _error_of(fn, tg), _error_of(fn, torch)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def test_var_argument_forms_refused_as_torch():
    """torch refuses var(dim, 1) and unbiased together with correction (TypeError; its message lists the
    overloads, ours names the problem)."""
    for call in (lambda x: x.var(0, 1), lambda x: x.std(1, correction=0, unbiased=True)):
        with pytest.raises(TypeError, match="received an invalid combination of arguments"):
            call(_x(torch))
        with pytest.raises(TypeError, match="received an invalid combination of arguments"):
            call(_x(tg))


def test_var_with_no_degrees_of_freedom_matches_torch():
    """n == correction: the variance is nan/inf and so is its gradient (inf, nan where x equals the mean)."""
    for data, kwargs in ((torch.tensor([[1.0, 2.0, 3.0]]), dict(dim=0)), (torch.tensor([2.0, 2.0]), dict(correction=2)),
                         (torch.tensor([1.0, 3.0]), dict(correction=3))):
        ours, theirs = tg.Variable(data.clone(), requires_grad=True), data.clone().requires_grad_()
        a, b = ours.var(**kwargs), theirs.var(**kwargs)
        assert torch.equal(a.data.isnan(), b.detach().isnan())
        a.sum().backward()
        b.sum().backward()
        assert torch.allclose(ours.grad.data, theirs.grad, equal_nan=True)


def test_gradcheck_takes_non_contiguous_inputs():
    """Finite differences on a transposed leaf (and gradgradcheck on an op whose output is a permuted view,
    whose random grad_output then has the same layout) work, as torch's gradcheck."""
    x = tg.Variable(torch.randn(4, 3, dtype=torch.float64).t(), requires_grad=True)
    assert not x.data.is_contiguous()
    assert gradcheck(lambda a: (a * a).cumsum(1), (x,))
    assert gradgradcheck(lambda a: (a * a).movedim(0, 1), (x,))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_saved_tensor_hooks_see_torchs_tensors_in_torchs_order(case):
    """The same tensors, in the same order. (batch_norm in training: torch packs its inputs before the kernel
    runs, so a hook that copies the running stats sees them before the update; teachgrad packs after forward,
    so only their shapes are compared.)"""
    name, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=2, away_from_kinks=name in PIECEWISE)
    packed_ours, packed_theirs = [], []
    with tg.autograd.graph.saved_tensors_hooks(lambda t: packed_ours.append(t.data.clone()) or t, lambda t: t):
        fn(tg, *ours_in)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed_theirs.append(t.detach().clone()) or t, lambda t: t):
        fn(torch, *theirs_in)
    assert len(packed_ours) == len(packed_theirs)
    updated_in_place = (1, 2) if name.startswith("batch_norm_train") else ()
    for k, (a, b) in enumerate(zip(packed_ours, packed_theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert k in updated_in_place or torch.allclose(a, b, atol=1e-12, rtol=0)


def _meta_case(case):
    if case[0] == "einsum_attention":   # a reshape of a permuted operand: torch records View on meta, ReshapeAlias on the CPU
        return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason="torch's reshape of this layout on meta"))
    return case


@pytest.mark.parametrize("case", [_meta_case(c) for c in CASES], ids=[c[0] for c in CASES])
def test_meta_device_shapes_graph_and_grads_match_torch(case):
    """On torch's meta device (shapes, no data) each op records torch's graph and gradient shapes."""
    _, shapes, fn = case
    ours_in = [tg.ones(s, dtype=torch.float64, device="meta", requires_grad=True) for s in shapes]
    theirs_in = [torch.ones(s, dtype=torch.float64, device="meta", requires_grad=True) for s in shapes]
    try:
        theirs = fn(torch, *theirs_in)
    except Exception as error:   # noqa: BLE001  (an op with no meta kernel, or a CPU constant: ours must refuse too)
        with pytest.raises(type(error)):
            fn(tg, *ours_in)
        return
    ours = fn(tg, *ours_in)
    assert ours.shape == theirs.shape and ours.device == theirs.device
    assert graph_names(ours) == graph_names(theirs)
    try:
        theirs.backward(torch.ones_like(theirs))
    except Exception as error:   # noqa: BLE001  (index_add with a CPU index: torch's backward refuses on meta)
        with pytest.raises(type(error)):
            ours.backward(tg.ones_like(ours))
        return
    ours.backward(tg.ones_like(ours))
    for a, b in zip(ours_in, theirs_in):
        assert (a.grad is None) == (b.grad is None)
        assert b.grad is None or (a.grad.shape == b.grad.shape and a.grad.device.type == "meta")


def test_plain_torch_tensors_in_give_variables_out():
    """teachgrad's functions take torch tensors too (as torch's take tensors), and give Variables."""
    a = torch.randn(3, 3, dtype=torch.float64)
    for ours, theirs in [(tg.repeat_interleave(a, 2), torch.repeat_interleave(a, 2)),
                         (tg.einsum("ii->i", a), torch.einsum("ii->i", a)),
                         (tg.einsum("i,j->ij", a[0], a[1]), torch.einsum("i,j->ij", a[0], a[1])),
                         (tg.flip(a, (0,)), torch.flip(a, (0,))), (tg.var(a, 1), torch.var(a, 1))]:
        assert isinstance(ours, tg.Variable) and not ours.requires_grad and torch.equal(ours.data, theirs)


# --- random shapes, dims and options (hypothesis) ----------------------------------------------


_REDUCING = {
    "var": lambda x, dim, keepdim, flag: x.var(dim, unbiased=flag, keepdim=keepdim),
    "std": lambda x, dim, keepdim, flag: x.std(dim, correction=0 if flag else 1, keepdim=keepdim),
    "logsumexp": lambda x, dim, keepdim, flag: x.logsumexp(dim, keepdims=keepdim),
    "sum_keepdims": lambda x, dim, keepdim, flag: x.sum(dim, keepdims=keepdim),
    "cumsum": lambda x, dim, keepdim, flag: x.cumsum(dim),
    "cumprod": lambda x, dim, keepdim, flag: x.cumprod(dim),
    "flip": lambda x, dim, keepdim, flag: x.flip(dim),
    "roll": lambda x, dim, keepdim, flag: x.roll(2 if flag else -1, dim),
    "sort": lambda x, dim, keepdim, flag: x.sort(dim, descending=flag).values,
    "softplus": lambda x, dim, keepdim, flag: (tg.nn.functional if isinstance(x, tg.Variable) else torch.nn.functional
                                               ).softplus(x, beta=2.0 if flag else 1.0),
}


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data(),
       op=st.sampled_from(sorted(_REDUCING)), keepdim=st.booleans(), flag=st.booleans())
def test_random_shapes_and_dims_match_torch(shape, data, op, keepdim, flag):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(len(shape) + dim))
    x = x + torch.arange(x.numel(), dtype=torch.float64).reshape(shape) * 1e-3   # no ties for sort
    ours, theirs = tg.Variable(x.clone(), requires_grad=True), x.clone().requires_grad_()
    a, b = _REDUCING[op](ours, dim, keepdim, flag), _REDUCING[op](theirs, dim, keepdim, flag)
    assert close_for(a, b, torch.float64) and graph_names(a) == graph_names(b)
    v = torch.randn(b.shape, dtype=torch.float64)
    a.backward(tg.Variable(v.clone()))
    b.backward(v.clone())
    assert close_for(ours.grad, theirs.grad, torch.float64)


def test_pad_modes_other_than_constant_are_refused_clearly():
    """'reflect' and 'replicate' are torch's kernels (tests/test_op_families.py), 'circular' torch's composition
    (tests/test_nn_functional_more.py); a mode torch does not know is torch's error."""
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode wrap"):
        tg.nn.functional.pad(tg.randn(1, 2, 3, requires_grad=True), (1, 1), mode="wrap")
