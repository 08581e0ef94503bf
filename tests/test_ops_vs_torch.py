"""Every op against torch: value, node names along the graph, gradients, and gradcheck."""
import pytest
import torch

import teachgrad as tg
from teachgrad.check import gradcheck

from .helpers import close, graph_names, pair

F_TG, F_TORCH = tg.nn.functional, torch.nn.functional


def F(lib):
    return F_TG if lib is tg else F_TORCH


# (id, shapes of the inputs, function of (lib, *inputs)); positive inputs where log/sqrt need them.
CASES = [
    ("add", [(3,), (3,)], lambda lib, a, b: a + b),
    ("add_broadcast", [(2, 3), (3,)], lambda lib, a, b: a + b),
    ("add_number", [(3,)], lambda lib, a: a + 2),
    ("radd_number", [(3,)], lambda lib, a: 2 + a),
    ("sub", [(3,), (3,)], lambda lib, a, b: a - b),
    ("sub_broadcast", [(2, 1), (1, 3)], lambda lib, a, b: a - b),
    ("rsub_number", [(3,)], lambda lib, a: 2 - a),
    ("mul", [(3,), (3,)], lambda lib, a, b: a * b),
    ("mul_broadcast", [(4, 3), (4, 1)], lambda lib, a, b: a * b),
    ("mul_number", [(3,)], lambda lib, a: a * 3),
    ("rmul_number", [(3,)], lambda lib, a: 3 * a),
    ("mul_same", [(3,)], lambda lib, a: a * a),
    ("div", [(3,), (3,)], lambda lib, a, b: a / (b.abs() + 1)),
    ("div_number", [(3,)], lambda lib, a: a / 4),
    ("rdiv_number", [(3,)], lambda lib, a: 2 / (a.abs() + 1)),
    ("neg", [(3,)], lambda lib, a: -a),
    ("pow_number", [(3,)], lambda lib, a: a ** 2),
    ("pow_method", [(3,)], lambda lib, a: a.pow(3)),
    ("pow_zero", [(3,)], lambda lib, a: a ** 0),
    ("pow_tensor", [(3,), (3,)], lambda lib, a, b: (a.abs() + 1) ** b),
    ("rpow_number", [(3,)], lambda lib, a: 2 ** a),
    ("exp", [(3,)], lambda lib, a: a.exp()),
    ("log", [(3,)], lambda lib, a: (a.abs() + 1).log()),
    ("sqrt", [(3,)], lambda lib, a: (a.abs() + 1).sqrt()),
    ("sin", [(3,)], lambda lib, a: a.sin()),
    ("cos", [(3,)], lambda lib, a: a.cos()),
    ("tanh", [(3,)], lambda lib, a: a.tanh()),
    ("sigmoid", [(3,)], lambda lib, a: a.sigmoid()),
    ("relu", [(5,)], lambda lib, a: a.relu()),
    ("abs", [(5,)], lambda lib, a: a.abs()),
    ("clamp", [(5,)], lambda lib, a: a.clamp(-0.5, 0.5)),
    ("clamp_min", [(5,)], lambda lib, a: a.clamp(min=0)),
    ("maximum", [(5,), (5,)], lambda lib, a, b: lib.maximum(a, b)),
    ("minimum", [(5,), (5,)], lambda lib, a, b: lib.minimum(a, b)),
    ("where", [(5,), (5,)], lambda lib, a, b: lib.where(a > 0, a, b)),
    ("sum", [(2, 3)], lambda lib, a: a.sum()),
    ("sum_dim", [(2, 3)], lambda lib, a: a.sum(0)),
    ("sum_dims_keepdim", [(2, 3, 4)], lambda lib, a: a.sum((0, 2), keepdim=True)),
    ("mean", [(2, 3)], lambda lib, a: a.mean()),
    ("mean_dim", [(2, 3)], lambda lib, a: a.mean(1)),
    ("max", [(2, 3)], lambda lib, a: a.max()),
    ("min", [(2, 3)], lambda lib, a: a.min()),
    ("max_dim", [(2, 3)], lambda lib, a: a.max(1)[0]),
    ("max_dim_keepdim", [(2, 3)], lambda lib, a: a.max(0, keepdim=True).values),
    ("t", [(2, 3)], lambda lib, a: a.t()),
    ("T", [(2, 3)], lambda lib, a: a.T),
    ("transpose", [(2, 3, 4)], lambda lib, a: a.transpose(0, 2)),
    ("permute", [(2, 3, 4)], lambda lib, a: a.permute(2, 0, 1)),
    ("reshape", [(2, 3)], lambda lib, a: a.reshape(3, 2)),
    ("reshape_copy", [(2, 3)], lambda lib, a: a.t().reshape(6)),
    ("view", [(2, 3)], lambda lib, a: a.view(-1)),
    ("flatten", [(2, 3)], lambda lib, a: a.flatten()),
    ("unsqueeze", [(3,)], lambda lib, a: a.unsqueeze(1)),
    ("squeeze", [(3, 1)], lambda lib, a: a.squeeze()),
    ("squeeze_dim", [(1, 3)], lambda lib, a: a.squeeze(0)),
    ("expand", [(3, 1)], lambda lib, a: a.expand(3, 4)),
    ("select", [(3, 4)], lambda lib, a: a[1]),
    ("select_column", [(3, 4)], lambda lib, a: a[:, 2]),
    ("slice", [(5,)], lambda lib, a: a[1:4]),
    ("slice_full", [(5,)], lambda lib, a: a[:]),
    ("select_then_slice", [(3, 4)], lambda lib, a: a[0, 1:3]),
    ("ellipsis", [(2, 3, 4)], lambda lib, a: a[..., 0]),
    ("none_index", [(3,)], lambda lib, a: a[None]),
    ("index_list", [(4,)], lambda lib, a: a[[0, 2, 2]]),
    ("index_mask", [(4,)], lambda lib, a: a[a > 0]),
    ("narrow", [(4, 2)], lambda lib, a: a.narrow(0, 1, 2)),
    ("cat", [(2, 3), (1, 3)], lambda lib, a, b: lib.cat([a, b])),
    ("stack", [(3,), (3,)], lambda lib, a, b: lib.stack([a, b], 1)),
    ("dot", [(3,), (3,)], lambda lib, a, b: a @ b),
    ("mv", [(2, 3), (3,)], lambda lib, a, b: a @ b),
    ("mm", [(2, 3), (3, 4)], lambda lib, a, b: a @ b),
    ("vec_mat", [(3,), (3, 4)], lambda lib, a, b: lib.matmul(a, b)),
    ("batch_mat", [(2, 2, 3), (3, 4)], lambda lib, a, b: a.matmul(b)),
    ("addmm", [(4,), (2, 3), (3, 4)], lambda lib, c, a, b: c.addmm(a, b)),
    ("to_float32", [(3,)], lambda lib, a: a.to(torch.float32)),
    ("float", [(3,)], lambda lib, a: a.float() * 2),
    ("clone", [(3,)], lambda lib, a: a.clone()),
    ("square", [(3,)], lambda lib, a: a.square()),
    ("bce_logits", [(4,), (4,)], lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t.sigmoid())),
    ("bce_logits_sum", [(2, 3), (2, 3)], lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t.sigmoid(), reduction="sum")),
    ("bce_logits_none", [(4,), (4,)], lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t.sigmoid(), reduction="none")),
    ("bce_logits_pos_weight", [(4,), (4,), (4,)], lambda lib, x, t, p: F(lib).binary_cross_entropy_with_logits(x, t.sigmoid(), pos_weight=p.detach().abs() + 0.5)),
    ("bce_logits_weight", [(4,), (4,), (4,)], lambda lib, x, t, w: F(lib).binary_cross_entropy_with_logits(x, t.sigmoid(), weight=w.detach().abs())),
    ("bce", [(4,), (4,)], lambda lib, x, t: F(lib).binary_cross_entropy(x.sigmoid(), t.sigmoid())),
    ("mse", [(4,), (4,)], lambda lib, x, t: F(lib).mse_loss(x, t)),
    ("mse_sum", [(2, 3), (2, 3)], lambda lib, x, t: F(lib).mse_loss(x, t, reduction="sum")),
    ("mse_none", [(4,), (4,)], lambda lib, x, t: F(lib).mse_loss(x, t, reduction="none")),
    ("softmax", [(2, 3)], lambda lib, x: F(lib).softmax(x, dim=1)),
    ("log_softmax", [(2, 3)], lambda lib, x: F(lib).log_softmax(x, dim=0)),
    ("cross_entropy", [(4, 3)], lambda lib, x: F(lib).cross_entropy(x, torch.tensor([0, 2, 1, 2]) if lib is torch else tg.tensor([0, 2, 1, 2]))),
    ("cross_entropy_sum", [(4, 3)], lambda lib, x: F(lib).cross_entropy(x, lib.tensor([0, 2, 1, 2]), reduction="sum")),
    ("cross_entropy_probs", [(4, 3), (4, 3)], lambda lib, x, p: F(lib).cross_entropy(x, p.softmax(1))),
    ("linear_batch", [(2, 3), (4, 3), (4,)], lambda lib, x, w, b: F(lib).linear(x, w, b)),
    ("linear_nobias", [(2, 3), (4, 3)], lambda lib, x, w: F(lib).linear(x, w)),
    ("mlp_layer", [(5,), (5, 3), (3,)], lambda lib, x, w, b: lib.matmul(x, w) + b),
    ("chain", [(3,), (3,)], lambda lib, a, b: ((a * b).sin() + a.exp() / (1 + b * b)).sum()),
]


def _inputs(shapes, seed):
    gen = torch.Generator().manual_seed(seed)
    data = [torch.randn(s, generator=gen, dtype=torch.float64) for s in shapes]
    return zip(*(pair(d) for d in data))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_value_graph_and_grads_match_torch(case):
    _, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=len(shapes) * 7 + len(case[0]))
    ours, theirs = fn(tg, *ours_in), fn(torch, *theirs_in)
    assert close(ours, theirs)
    assert graph_names(ours) == graph_names(theirs)
    assert ours.requires_grad == theirs.requires_grad
    seed = torch.randn(theirs.shape, dtype=theirs.dtype, generator=torch.Generator().manual_seed(1))
    ours.backward(tg.Variable(seed.clone()))
    theirs.backward(seed.clone())
    for a, b in zip(ours_in, theirs_in):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            assert close(a.grad, b.grad), (a.grad, b.grad)
            assert isinstance(a.grad, tg.Variable) and a.grad.is_leaf and not a.grad.requires_grad


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in ("max", "min", "max_dim", "max_dim_keepdim", "relu", "abs", "clamp", "clamp_min", "maximum", "minimum", "to_float32", "float", "bce_logits_pos_weight", "bce_logits_weight")],
                         ids=lambda c: c[0])
def test_gradcheck(case):
    _, shapes, fn = case
    ours_in, _ = _inputs(shapes, seed=3)
    assert gradcheck(lambda *xs: fn(tg, *xs), tuple(ours_in))


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("relu", "abs", "clamp", "maximum", "max", "max_dim")], ids=lambda c: c[0])
def test_gradcheck_away_from_kinks(case):
    """Piecewise ops are checked on inputs well away from their kinks and ties."""
    _, shapes, fn = case
    gen = torch.Generator().manual_seed(5)
    inputs = []
    for s in shapes:
        x = torch.randn(s, generator=gen, dtype=torch.float64)
        x = x + torch.sign(x) * 0.1 + torch.arange(x.numel(), dtype=torch.float64).reshape(s) * 1e-3
        inputs.append(tg.Variable(x, requires_grad=True))
    assert gradcheck(lambda *xs: fn(tg, *xs), tuple(inputs))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_meta_device_shapes_graph_and_grads_match_torch(case):
    """On torch's meta device (shapes, no data) every op records the same graph and gradient shapes."""
    _, shapes, fn = case
    ours_in = [tg.ones(s, dtype=torch.float64, device="meta", requires_grad=True) for s in shapes]
    theirs_in = [torch.ones(s, dtype=torch.float64, device="meta", requires_grad=True) for s in shapes]
    try:
        theirs = fn(torch, *theirs_in)
    except Exception as error:           # data-dependent ops (a boolean mask) cannot run on meta
        with pytest.raises(type(error)):
            fn(tg, *ours_in)
        return
    ours = fn(tg, *ours_in)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype and ours.device == theirs.device
    assert graph_names(ours) == graph_names(theirs)
    ours.backward(tg.ones_like(ours))
    theirs.backward(torch.ones_like(theirs))
    for a, b in zip(ours_in, theirs_in):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            assert a.grad.shape == b.grad.shape and a.grad.device.type == "meta"
