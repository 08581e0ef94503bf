"""Issue 34: torch's losses (l1, smooth_l1, huber, kl_div, poisson_nll, gaussian_nll, margin_ranking, hinge_embedding,
soft_margin, multilabel_soft_margin, cosine_embedding, triplet_margin), their nn modules, meshgrid, logcumsumexp,
against torch: values, node names, gradients of every input (float64 and float32), finite differences
(gradcheck), forward mode against torch's, and bad input giving torch's exception type and message."""
import math
import warnings

import pytest
import torch
import torch.autograd.forward_ad as tfw

import teachgrad as tg
from teachgrad.check import gradcheck

from .helpers import assert_values_graph_and_grads_match, close_for, graph_names
from .twins import same

gfw = tg.autograd.forward_ad


def F(lib):
    return tg.nn.functional if lib is tg else torch.nn.functional


SIGNS = torch.tensor([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]], dtype=torch.float64)
ROW_SIGNS = torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)
BITS = (SIGNS > 0).double()
COUNTS = torch.tensor([[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 7.0], [1.0, 4.0, 0.0, 2.0]], dtype=torch.float64)
REDUCTIONS = ["mean", "sum", "none"]


def _quiet(fn):
    """kl_div(reduction='mean') warns in both libraries, as torch: the warning is checked apart."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return run


# (id, inputs as (shape, kind), fn(lib, *inputs)); every input requires grad; kinds: n normal, p positive, q in (0, 1)
def _cases():
    cases = []
    for r in REDUCTIONS:
        cases += [
            (f"l1_{r}", [((3, 4), "n"), ((3, 4), "n")], lambda lib, x, t, r=r: F(lib).l1_loss(x, t, reduction=r)),
            (f"l1_broadcast_{r}", [((3, 4), "n"), ((4,), "n")],
             _quiet(lambda lib, x, t, r=r: F(lib).l1_loss(x, t, reduction=r))),
            (f"l1_weight_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "p")],
             lambda lib, x, t, w, r=r: F(lib).l1_loss(x, t, reduction=r, weight=w)),
            (f"smooth_l1_{r}", [((3, 4), "n"), ((3, 4), "n")],
             lambda lib, x, t, r=r: F(lib).smooth_l1_loss(x, t, reduction=r)),
            (f"smooth_l1_beta_{r}", [((3, 4), "n"), ((3, 4), "n")],
             lambda lib, x, t, r=r: F(lib).smooth_l1_loss(x, t, reduction=r, beta=0.5)),
            (f"smooth_l1_beta0_{r}", [((3, 4), "n"), ((3, 4), "n")],
             lambda lib, x, t, r=r: F(lib).smooth_l1_loss(x, t, reduction=r, beta=0.0)),
            (f"huber_{r}", [((3, 4), "n"), ((3, 4), "n")], lambda lib, x, t, r=r: F(lib).huber_loss(x, t, reduction=r)),
            (f"huber_delta_{r}", [((3, 4), "n"), ((3, 4), "n")],
             lambda lib, x, t, r=r: F(lib).huber_loss(x, t, reduction=r, delta=0.7)),
            (f"huber_weight_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "p")],
             lambda lib, x, t, w, r=r: F(lib).huber_loss(x, t, reduction=r, weight=w)),
            (f"kl_div_{r}", [((3, 4), "n"), ((3, 4), "q")], _quiet(lambda lib, x, t, r=r: F(lib).kl_div(x, t, reduction=r))),
            (f"kl_div_log_target_{r}", [((3, 4), "n"), ((3, 4), "n")],
             _quiet(lambda lib, x, t, r=r: F(lib).kl_div(x, t, reduction=r, log_target=True))),
            (f"poisson_nll_{r}", [((3, 4), "n"), ((3, 4), "p")],
             lambda lib, x, t, r=r: F(lib).poisson_nll_loss(x, t, reduction=r)),
            (f"poisson_nll_not_log_{r}", [((3, 4), "p"), ((3, 4), "p")],
             lambda lib, x, t, r=r: F(lib).poisson_nll_loss(x, t, log_input=False, reduction=r)),
            (f"poisson_nll_full_{r}", [((3, 4), "n"), ((3, 4), "p")],
             lambda lib, x, t, r=r: F(lib).poisson_nll_loss(x, t * 3, full=True, reduction=r)),
            (f"gaussian_nll_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "p")],
             lambda lib, x, t, v, r=r: F(lib).gaussian_nll_loss(x, t, v, reduction=r)),
            (f"gaussian_nll_full_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "p")],
             lambda lib, x, t, v, r=r: F(lib).gaussian_nll_loss(x, t, v, full=True, reduction=r)),
            (f"gaussian_nll_var_per_row_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3,), "p")],
             lambda lib, x, t, v, r=r: F(lib).gaussian_nll_loss(x, t, v, reduction=r)),
            (f"gaussian_nll_var_shared_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3, 1), "p")],
             lambda lib, x, t, v, r=r: F(lib).gaussian_nll_loss(x, t, v, reduction=r)),
            (f"margin_ranking_{r}", [((5,), "n"), ((5,), "n"), ((5,), "n")],
             lambda lib, a, b, y, r=r: F(lib).margin_ranking_loss(a, b, y, margin=0.3, reduction=r)),
            (f"hinge_embedding_{r}", [((3, 4), "n")],
             lambda lib, x, r=r: F(lib).hinge_embedding_loss(x, SIGNS, reduction=r)),
            (f"soft_margin_{r}", [((3, 4), "n")], lambda lib, x, r=r: F(lib).soft_margin_loss(x, SIGNS, reduction=r)),
            (f"multilabel_soft_margin_{r}", [((3, 4), "n"), ((3, 4), "q")],
             lambda lib, x, y, r=r: F(lib).multilabel_soft_margin_loss(x, y, reduction=r)),
            (f"multilabel_soft_margin_weight_{r}", [((3, 4), "n"), ((4,), "p")],
             lambda lib, x, w, r=r: F(lib).multilabel_soft_margin_loss(x, BITS, weight=w, reduction=r)),
            (f"cosine_embedding_{r}", [((3, 4), "n"), ((3, 4), "n")],
             lambda lib, a, b, r=r: F(lib).cosine_embedding_loss(a, b, ROW_SIGNS, margin=-0.5, reduction=r)),
            (f"triplet_margin_{r}", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "n")],
             lambda lib, a, p, n, r=r: F(lib).triplet_margin_loss(a, p, n, margin=2.0, reduction=r)),
        ]
    cases += [
        ("kl_div_batchmean", [((3, 4), "n"), ((3, 4), "q")], lambda lib, x, t: F(lib).kl_div(x, t, reduction="batchmean")),
        ("kl_div_batchmean_log_target", [((3, 4), "n"), ((3, 4), "n")],
         lambda lib, x, t: F(lib).kl_div(x, t, reduction="batchmean", log_target=True)),
        ("margin_ranking_2d", [((2, 3), "n"), ((2, 3), "n")],
         lambda lib, a, b: F(lib).margin_ranking_loss(a, b, SIGNS[:2, :3])),
        ("hinge_embedding_margin", [((3, 4), "n")],
         lambda lib, x: F(lib).hinge_embedding_loss(x, SIGNS, margin=0.5)),
        ("cosine_embedding_1d", [((4,), "n"), ((4,), "n")],
         lambda lib, a, b: F(lib).cosine_embedding_loss(a, b, torch.tensor(-1.0, dtype=torch.float64))),
        ("triplet_margin_swap_p1", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "n")],
         lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, p=1, swap=True)),
        ("triplet_margin_p3", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "n")],
         lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, p=3)),
        ("pairwise_distance", [((3, 4), "n"), ((3, 4), "n")], lambda lib, a, b: F(lib).pairwise_distance(a, b)),
        ("logsigmoid", [((3, 4), "n")], lambda lib, x: F(lib).logsigmoid(x)),
        ("logcumsumexp", [((3, 4), "n")], lambda lib, x: lib.logcumsumexp(x, 1)),
        ("logcumsumexp_dim0_method", [((3, 4), "n")], lambda lib, x: x.logcumsumexp(dim=0)),
        ("logcumsumexp_large", [((5,), "n")], lambda lib, x: lib.logcumsumexp(x * 400, -1)),
        ("logcumsumexp_0d", [((), "n")], lambda lib, x: lib.logcumsumexp(x, 0)),
        ("meshgrid_ij", [((3,), "n"), ((4,), "n")], lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")[0] * 2
         + lib.meshgrid(a, b, indexing="ij")[1]),
        ("meshgrid_xy", [((3,), "n"), ((4,), "n")], lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[0]),
        ("meshgrid_xy_second", [((3,), "n"), ((4,), "n"), ((2,), "n")],
         lambda lib, a, b, c: lib.meshgrid([a, b, c], indexing="xy")[1]),
        ("meshgrid_0d", [((), "n"), ((4,), "n")], lambda lib, a, b: lib.meshgrid((a, b), indexing="ij")[0]),
        ("conv_transpose2d", [((2, 3, 5, 5), "n"), ((3, 4, 3, 3), "n"), ((4,), "n")],
         lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)),
        ("conv_transpose2d_groups_dilation", [((2, 4, 4, 3), "n"), ((4, 3, 2, 3), "n")],
         lambda lib, x, w: F(lib).conv_transpose2d(x, w, None, (1, 2), 0, 0, 2, (2, 1))),
        ("conv_transpose2d_unbatched", [((3, 4, 4), "n"), ((3, 2, 3, 3), "n")],
         lambda lib, x, w: F(lib).conv_transpose2d(x, w)),
        ("conv_transpose1d", [((2, 3, 6), "n"), ((3, 2, 3), "n"), ((2,), "n")],
         lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, stride=3, padding=2, output_padding=1)),
        ("conv_transpose1d_unbatched", [((3, 6), "n"), ((3, 2, 3), "n")], lambda lib, x, w: F(lib).conv_transpose1d(x, w)),
        ("tg_conv_transpose2d", [((1, 2, 3, 3), "n"), ((2, 2, 2, 2), "n")],
         lambda lib, x, w: lib.conv_transpose2d(x, w, None, 2)),
        ("gaussian_nll_float_var", [((3, 4), "n"), ((3, 4), "n")],
         lambda lib, x, t: F(lib).gaussian_nll_loss(x, t, 0.5)),
        ("gaussian_nll_var_below_eps", [((3, 4), "n"), ((3, 4), "n"), ((3, 4), "n")],
         lambda lib, x, t, v: F(lib).gaussian_nll_loss(x, t, v.abs() * 1e-8, eps=1e-3)),
    ]
    return cases


CASES = _cases()
IDS = [c[0] for c in CASES]
NO_FORWARD_MODE = set()   # cases whose forward mode torch itself lacks (none so far)
NOT_THE_DERIVATIVE = {"gaussian_nll_var_below_eps"}   # torch clamps var under no_grad: its gradient is not the
# derivative of the clamped loss (the finite differences see the clamp), as torch's is not
FIRST_ORDER_ONLY = {c[0] for c in CASES if "conv_transpose" in c[0]}   # teachgrad refuses a convolution's second
# derivative with a clear error (teachgrad/ops/layers.py: NoDoubleBackward): checked below


def _data(shape, kind, gen, dtype):
    x = torch.randn(shape, generator=gen, dtype=dtype)
    if kind == "p":
        return x.abs() + 0.2
    if kind == "q":
        return torch.rand(shape, generator=gen, dtype=dtype) * 0.8 + 0.1
    return x


def _inputs(specs, seed, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    datas = [_data(shape, kind, gen, dtype) for shape, kind in specs]
    return ([tg.Variable(d.clone(), requires_grad=True) for d in datas], [d.clone().requires_grad_() for d in datas])


def _cast(fn, dtype):
    """The case with its constant labels in `dtype` too."""
    if dtype == torch.float64:
        return fn

    def run(lib, *xs):
        global SIGNS, ROW_SIGNS, BITS
        saved = SIGNS, ROW_SIGNS, BITS
        SIGNS, ROW_SIGNS, BITS = (t.to(dtype) for t in saved)
        try:
            return fn(lib, *xs)
        finally:
            SIGNS, ROW_SIGNS, BITS = saved
    return run


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_graph_and_grads_match_torch(case, dtype):
    name, specs, fn = case
    fn = _cast(fn, dtype)
    ours_in, theirs_in = _inputs(specs, seed=len(name), dtype=dtype)
    assert_values_graph_and_grads_match(name, fn, ours_in, theirs_in, dtype)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in NOT_THE_DERIVATIVE], ids=lambda c: c[0])
def test_gradcheck(case):
    name, specs, fn = case
    ours_in, _ = _inputs(specs, seed=3)
    assert gradcheck(lambda *xs: fn(tg, *xs), tuple(ours_in))


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in NO_FORWARD_MODE], ids=lambda c: c[0])
def test_forward_mode_matches_torch(case):
    name, specs, fn = case
    ours_in, theirs_in = _inputs(specs, seed=5)
    gen = torch.Generator().manual_seed(6)
    tangents = [torch.randn(x.shape, generator=gen, dtype=torch.float64) for x in theirs_in]
    with tfw.dual_level():
        theirs = tfw.unpack_dual(fn(torch, *[tfw.make_dual(x.detach(), t) for x, t in zip(theirs_in, tangents)]))
    with gfw.dual_level():
        ours = gfw.unpack_dual(fn(tg, *[gfw.make_dual(x.detach(), t.clone()) for x, t in zip(ours_in, tangents)]))
    assert close_for(ours.primal, theirs.primal, torch.float64)
    assert close_for(ours.tangent, theirs.tangent, torch.float64), (ours.tangent, theirs.tangent)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in FIRST_ORDER_ONLY], ids=lambda c: c[0])
def test_double_backward_matches_torch(case):
    """d/dx of (dy/dx · v) under create_graph=True, against torch's, where torch's second derivative is not 0."""
    name, specs, fn = case
    ours_in, theirs_in = _inputs(specs, seed=8)
    ours, theirs = fn(tg, *ours_in), fn(torch, *theirs_in)
    gen = torch.Generator().manual_seed(9)
    v = torch.randn(theirs.shape, dtype=torch.float64, generator=gen)
    g_ours = tg.grad(ours, ours_in, tg.Variable(v.clone()), create_graph=True, allow_unused=True)
    g_theirs = torch.autograd.grad(theirs, theirs_in, v.clone(), create_graph=True, allow_unused=True)
    assert [a is None for a in g_ours] == [b is None for b in g_theirs]
    w = [None if b is None else torch.randn(b.shape, dtype=torch.float64, generator=gen) for b in g_theirs]
    pairs = [(a, b, u) for a, b, u in zip(g_ours, g_theirs, w) if b is not None and b.requires_grad]
    theirs2 = torch.autograd.grad(sum((b * u).sum() for _, b, u in pairs), theirs_in, allow_unused=True) if pairs else ()
    if not pairs or all(s is None or not s.any() for s in theirs2):   # torch's second derivative is 0 (piecewise linear)
        return
    mine = [(a * tg.Variable(u)).sum() for a, _, u in pairs if a.requires_grad]
    ours2 = tg.grad(sum(mine), ours_in, allow_unused=True)
    for a, b in zip(ours2, theirs2):
        if b is None or not b.any():
            assert a is None or not a.data.any()
        else:
            assert a is not None and close_for(a, b, torch.float64), (name, a, b)


# --- the nn modules: torch's own, calling F.*, which reaches teachgrad's ---------------------------------------

MODULES = [
    ("L1Loss", lambda nn: nn.L1Loss(), 2), ("L1Loss_sum", lambda nn: nn.L1Loss(reduction="sum"), 2),
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(beta=0.5), 2), ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.5), 2),
    ("KLDivLoss", lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True), 2),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(), 2), ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(), 3),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(margin=0.1), 3),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(swap=True), 3),
]


@pytest.mark.parametrize("case", MODULES, ids=[m[0] for m in MODULES])
def test_nn_loss_modules_run_teachgrads_functions(case):
    name, make, arity = case
    specs = [((3, 4), "n"), ((3, 4), "p"), ((3, 4), "p")][:arity]
    ours_in, theirs_in = _inputs(specs, seed=11)
    ours, theirs = make(tg.nn)(*ours_in), make(torch.nn)(*theirs_in)
    assert isinstance(ours, tg.Variable)
    assert close_for(ours, theirs, torch.float64) and graph_names(ours) == graph_names(theirs)
    ours.backward()
    theirs.backward()
    for a, b in zip(ours_in, theirs_in):
        assert close_for(a.grad, b.grad, torch.float64)


def test_torch_functional_called_with_variables_runs_teachgrads_losses():
    x, t = _inputs([((3, 4), "n"), ((3, 4), "n")], seed=12)[0]
    assert graph_names(torch.nn.functional.l1_loss(x, t))[:3] == ["MeanBackward0", "AbsBackward0", "SubBackward0"]
    assert type(torch.nn.functional.huber_loss(x, t).grad_fn).__name__ == "HuberLossBackward0"
    assert type(torch.logcumsumexp(x, 0).grad_fn).__name__ == "LogcumsumexpBackward0"
    assert type(x.logcumsumexp(0).grad_fn).__name__ == "LogcumsumexpBackward0"


# --- warnings and bad input: torch's --------------------------------------------------------------------------

def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).l1_loss(x, x[0]),
    lambda lib, x: F(lib).smooth_l1_loss(x, x[0]),
    lambda lib, x: F(lib).huber_loss(x, x[0]),
    lambda lib, x: F(lib).kl_div(x, x),
    lambda lib, x: F(lib).l1_loss(x, x, size_average=False),
])
def test_warnings_match_torch(call):
    ours_in, theirs_in = _inputs([((3, 4), "n")], seed=13)
    assert _warnings_of(lambda: call(tg, *ours_in)) == _warnings_of(lambda: call(torch, *theirs_in))


def _x(lib, shape=(3, 4)):
    data = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape) / 7 - 0.5
    return tg.Variable(data, requires_grad=True) if lib is tg else data.requires_grad_()


BAD = [
    ("l1_reduction", lambda lib: F(lib).l1_loss(_x(lib), _x(lib), reduction="avg")),
    ("l1_weight_size", lambda lib: F(lib).l1_loss(_x(lib), _x(lib), weight=torch.ones(4, dtype=torch.float64))),
    ("l1_shapes", lambda lib: F(lib).l1_loss(_x(lib), _x(lib, (2, 4)))),
    ("smooth_l1_reduction", lambda lib: F(lib).smooth_l1_loss(_x(lib), _x(lib), reduction="avg")),
    ("smooth_l1_negative_beta", lambda lib: F(lib).smooth_l1_loss(_x(lib), _x(lib), beta=-1.0)),
    ("huber_reduction", lambda lib: F(lib).huber_loss(_x(lib), _x(lib), reduction="avg")),
    ("huber_weighted_reduction", lambda lib: F(lib).huber_loss(_x(lib), _x(lib), reduction="avg",
                                                                 weight=torch.ones(3, 4, dtype=torch.float64))),
    ("kl_div_reduction", lambda lib: F(lib).kl_div(_x(lib), _x(lib), reduction="avg")),
    ("poisson_reduction", lambda lib: F(lib).poisson_nll_loss(_x(lib), _x(lib), reduction="avg")),
    ("gaussian_negative_var", lambda lib: F(lib).gaussian_nll_loss(_x(lib), _x(lib), _x(lib))),
    ("gaussian_negative_float_var", lambda lib: F(lib).gaussian_nll_loss(_x(lib), _x(lib), -1.0)),
    ("gaussian_var_size", lambda lib: F(lib).gaussian_nll_loss(_x(lib), _x(lib), torch.ones(2, 2, dtype=torch.float64))),
    ("gaussian_reduction", lambda lib: F(lib).gaussian_nll_loss(_x(lib), _x(lib), 1.0, reduction="avg")),
    ("margin_ranking_dims", lambda lib: F(lib).margin_ranking_loss(_x(lib), _x(lib), ROW_SIGNS)),
    ("margin_ranking_reduction", lambda lib: F(lib).margin_ranking_loss(_x(lib), _x(lib), SIGNS, reduction="avg")),
    ("hinge_reduction", lambda lib: F(lib).hinge_embedding_loss(_x(lib), SIGNS, reduction="avg")),
    ("soft_margin_target_requires_grad", lambda lib: F(lib).soft_margin_loss(_x(lib), _x(lib))),
    ("multilabel_reduction", lambda lib: F(lib).multilabel_soft_margin_loss(_x(lib), BITS, reduction="avg")),
    ("cosine_target_2d", lambda lib: F(lib).cosine_embedding_loss(_x(lib), _x(lib), SIGNS)),
    ("cosine_inputs_1d", lambda lib: F(lib).cosine_embedding_loss(_x(lib, (4,)), _x(lib, (4,)), ROW_SIGNS)),
    ("cosine_inputs_2d", lambda lib: F(lib).cosine_embedding_loss(_x(lib), _x(lib), ROW_SIGNS[0])),
    ("triplet_margin_zero", lambda lib: F(lib).triplet_margin_loss(_x(lib), _x(lib), _x(lib), margin=0.0)),
    ("triplet_dims", lambda lib: F(lib).triplet_margin_loss(_x(lib), _x(lib), _x(lib, (4,)))),
    ("meshgrid_none", lambda lib: lib.meshgrid(indexing="ij")),
    ("meshgrid_2d", lambda lib: lib.meshgrid(_x(lib), indexing="ij")),
    ("meshgrid_dtypes", lambda lib: lib.meshgrid(_x(lib, (3,)), _x(lib, (3,)).float(), indexing="ij")),
    ("meshgrid_indexing", lambda lib: lib.meshgrid(_x(lib, (3,)), indexing="ji")),
    ("logcumsumexp_dim", lambda lib: lib.logcumsumexp(_x(lib), 2)),
    ("logcumsumexp_long", lambda lib: lib.logcumsumexp(torch.arange(3), 0)),
    ("gaussian_int_var", lambda lib: F(lib).gaussian_nll_loss(_x(lib), _x(lib), 1)),
    ("conv_transpose2d_dims", lambda lib: F(lib).conv_transpose2d(_x(lib, (5, 5)), _x(lib, (3, 4, 3, 3)))),
    ("conv_transpose1d_dims", lambda lib: F(lib).conv_transpose1d(_x(lib, (2, 3, 5, 5)), _x(lib, (3, 4, 3)))),
    ("conv_transpose2d_padding_str", lambda lib: F(lib).conv_transpose2d(_x(lib, (1, 3, 5, 5)),
                                                                          _x(lib, (3, 4, 3, 3)), padding="same")),
    ("conv_transpose2d_output_padding", lambda lib: F(lib).conv_transpose2d(_x(lib, (1, 3, 5, 5)),
                                                                             _x(lib, (3, 4, 3, 3)), output_padding=1)),
]


@pytest.mark.parametrize("case", BAD, ids=[b[0] for b in BAD])
def test_bad_input_gives_torchs_error(case):
    _, fn = case
    result = same(fn)
    assert result[0] == "raised"


def test_meshgrid_without_indexing_is_ij_and_gives_back_a_tuple():
    a, b = _inputs([((3,), "n"), ((2,), "n")], seed=14)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grids = tg.meshgrid(a, b)
        theirs = torch.meshgrid(a.data, b.data)
    assert isinstance(grids, tuple) and len(grids) == 2
    assert all(torch.equal(g.data, t) for g, t in zip(grids, theirs))
    assert [type(g.grad_fn).__name__ for g in grids] == ["ExpandBackward0", "ExpandBackward0"]


def test_conv_transpose_double_backward_is_refused_with_a_clear_error():
    x, w = _inputs([((1, 2, 3, 3), "n"), ((2, 2, 2, 2), "n")], seed=15)[0]
    g, = tg.grad(tg.nn.functional.conv_transpose2d(x, w).sum(), [x], create_graph=True)
    with pytest.raises(NotImplementedError, match="second derivative of convolution"):
        g.sum().backward()


SAVED = ["smooth_l1_mean", "huber_delta_sum", "soft_margin_none", "logsigmoid", "logcumsumexp", "kl_div_sum",
         "pairwise_distance", "conv_transpose2d"]


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in SAVED], ids=lambda c: c[0])
def test_saved_tensors_match_torch(case):
    """Each tensor torch's node keeps as `_saved_<name>` is kept by ours under the same name, equal."""
    name, specs, fn = case
    ours_in, theirs_in = _inputs(specs, seed=2)
    ours, theirs = fn(tg, *ours_in), fn(torch, *theirs_in)
    nodes = [(ours.grad_fn, theirs.grad_fn)]
    if name == "kl_div_sum":   # the xlogy node, under the sum and the difference
        nodes = [(ours.grad_fn.next_functions[0][0].next_functions[0][0],
                  theirs.grad_fn.next_functions[0][0].next_functions[0][0])]
    checked = 0
    for mine, its in nodes:
        assert type(mine).__name__ == type(its).__name__
        for attribute in dir(its):
            value = getattr(its, attribute) if attribute.startswith("_saved_") else None
            if isinstance(value, torch.Tensor) and value.numel():
                assert torch.equal(getattr(mine, attribute).data, value.detach()), attribute
                checked += 1
    assert checked


def test_plain_torch_targets_and_variable_inputs_match_torch():
    """A loss between a Variable and a torch tensor (targets are often plain data): torch's values and gradients."""
    target = torch.rand(3, 4, dtype=torch.float64) + 0.1
    for call in (lambda lib, x: F(lib).l1_loss(x, target), lambda lib, x: F(lib).smooth_l1_loss(target, x),
                 lambda lib, x: F(lib).kl_div(x, target, reduction="batchmean"),
                 lambda lib, x: F(lib).poisson_nll_loss(x, target * 4, full=True),
                 lambda lib, x: F(lib).gaussian_nll_loss(x, target, target),
                 lambda lib, x: F(lib).gaussian_nll_loss(target, target, x.exp()),
                 lambda lib, x: F(lib).margin_ranking_loss(x, target, SIGNS),
                 lambda lib, x: F(lib).multilabel_soft_margin_loss(x, BITS, weight=target[0]),
                 lambda lib, x: F(lib).triplet_margin_loss(x, target, -target)):
        ours_in, theirs_in = _inputs([((3, 4), "n")], seed=16)
        ours, theirs = call(tg, *ours_in), call(torch, *theirs_in)
        assert close_for(ours, theirs, torch.float64) and graph_names(ours) == graph_names(theirs)
        ours.backward()
        theirs.backward()
        assert close_for(ours_in[0].grad, theirs_in[0].grad, torch.float64)


LABELLED_MODULES = [
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(margin=0.5), lambda x: (x, SIGNS)),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(reduction="sum"), lambda x: (x, SIGNS)),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(), lambda x: (x, BITS)),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(margin=0.2), lambda x: (x, x.flip(0), ROW_SIGNS)),
]


@pytest.mark.parametrize("case", LABELLED_MODULES, ids=[m[0] for m in LABELLED_MODULES])
def test_nn_loss_modules_with_labels_run_teachgrads_functions(case):
    _, make, arguments = case
    ours_in, theirs_in = _inputs([((3, 4), "n")], seed=17)
    ours, theirs = make(tg.nn)(*arguments(ours_in[0])), make(torch.nn)(*arguments(theirs_in[0]))
    assert isinstance(ours, tg.Variable)
    assert close_for(ours, theirs, torch.float64) and graph_names(ours) == graph_names(theirs)
    ours.backward()
    theirs.backward()
    assert close_for(ours_in[0].grad, theirs_in[0].grad, torch.float64)


def test_conv_transpose_module_runs_teachgrads_function():
    torch.manual_seed(0)
    layer = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1).double()
    x, t = _inputs([((1, 2, 4, 4), "n")], seed=18)
    ours, theirs = layer(x[0]), layer(t[0])
    assert type(ours.grad_fn).__name__ == "ConvolutionBackward0" and close_for(ours, theirs, torch.float64)
    ours.sum().backward()
    ours_weight_grad = layer.weight.grad.clone()
    layer.weight.grad = None
    theirs.sum().backward()
    assert torch.allclose(ours_weight_grad, layer.weight.grad) and close_for(x[0].grad, t[0].grad, torch.float64)
