"""The ops of teachgrad/api/op_families.py against torch, each as a twin test: the same program under `lib=torch`
and `lib=teachgrad` gives the same value, node name, gradient of every input, second derivative and forward-mode
tangent (tests/twins.py: assert_twins). Inputs in float64, with ties, zeros, nan and inf where the op meets them.
tests/test_op_db.py runs torch's own samples of the same ops."""
import math

import pytest
import torch

import teachgrad as tg

from .twins import assert_twins, same

NAN, INF = math.nan, math.inf
UNIT = [0.1, -0.5, 0.7, 0.0, -0.9]                   # inside (-1, 1)
ANY = [0.3, -1.5, 2.0, 0.0, -0.25]
POSITIVE = [0.3, 1.5, 2.0, 4.0, 0.25]
ABOVE_ONE = [1.3, 1.5, 2.0, 4.0, 1.25]
EDGES = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN]
M = [[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]]
N = [[0.5, 2.0, -1.0], [1.5, -0.5, 2.0]]
TIES = [[1.0, 3.0, 3.0], [-2.0, -2.0, 0.0]]
SQ = [[1.0, 2.0, 0.5], [-1.0, 3.0, 2.0], [0.0, 1.0, -2.0]]

UNARY = [
    ("tan", lambda lib, x: lib.tan(x), UNIT), ("asin", lambda lib, x: lib.asin(x), UNIT),
    ("acos", lambda lib, x: x.acos(), UNIT), ("atan", lambda lib, x: lib.atan(x), ANY),
    ("sinh", lambda lib, x: lib.sinh(x), ANY), ("cosh", lambda lib, x: x.cosh(), ANY),
    ("asinh", lambda lib, x: lib.asinh(x), ANY), ("acosh", lambda lib, x: lib.acosh(x), ABOVE_ONE),
    ("atanh", lambda lib, x: lib.atanh(x), UNIT), ("arcsin", lambda lib, x: lib.arcsin(x), UNIT),
    ("deg2rad", lambda lib, x: lib.deg2rad(x), ANY), ("rad2deg", lambda lib, x: x.rad2deg(), ANY),
    ("sinc", lambda lib, x: lib.sinc(x), ANY), ("exp2", lambda lib, x: lib.exp2(x), ANY),
    ("erfc", lambda lib, x: lib.erfc(x), ANY), ("erfinv", lambda lib, x: lib.erfinv(x), UNIT),
    ("lgamma", lambda lib, x: lib.lgamma(x), POSITIVE), ("digamma", lambda lib, x: lib.digamma(x), POSITIVE),
    ("polygamma", lambda lib, x: lib.polygamma(2, x), POSITIVE), ("polygamma_method", lambda lib, x: x.polygamma(1),
                                                                  POSITIVE),
    ("logit", lambda lib, x: lib.logit(x), [0.1, 0.5, 0.9, 1.5, -0.5]),
    ("logit_eps", lambda lib, x: lib.logit(x, eps=0.2), [0.1, 0.5, 0.9, 0.3, 0.0]),
    ("nan_to_num", lambda lib, x: lib.nan_to_num(x, posinf=3.0), EDGES), ("frac", lambda lib, x: lib.frac(x), ANY),
    ("ceil", lambda lib, x: lib.ceil(x), ANY), ("floor", lambda lib, x: x.floor(), ANY),
    ("trunc", lambda lib, x: lib.trunc(x), ANY), ("round", lambda lib, x: lib.round(x), ANY),
    ("round_decimals", lambda lib, x: lib.round(x, decimals=1), ANY), ("sgn", lambda lib, x: lib.sgn(x), ANY),
    ("sign", lambda lib, x: lib.sign(x), ANY), ("reciprocal", lambda lib, x: lib.reciprocal(x), POSITIVE),
    ("amax", lambda lib, x: lib.amax(x, 1), TIES), ("amin_all", lambda lib, x: x.amin(), TIES),
    ("amax_keepdim", lambda lib, x: lib.amax(x, (0, 1), keepdim=True), TIES),
    ("aminmax_max", lambda lib, x: lib.aminmax(x, dim=0).max, TIES),
    ("nansum", lambda lib, x: lib.nansum(x), [1.0, NAN, 2.0]), ("nanmean", lambda lib, x: lib.nanmean(x),
                                                                 [1.0, NAN, 2.0]),
    ("prod", lambda lib, x: lib.prod(x), [2.0, 0.0, 3.0, -1.0]), ("prod_two_zeros", lambda lib, x: x.prod(),
                                                                   [2.0, 0.0, 3.0, 0.0]),
    ("prod_dim", lambda lib, x: lib.prod(x, 1), M),
    ("var_mean", lambda lib, x: lib.var_mean(x, 1)[0] + lib.var_mean(x, 1)[1], M),
    ("std_mean", lambda lib, x: lib.std_mean(x, 0, correction=0)[0], M),
    ("median", lambda lib, x: lib.median(x), [3.0, 1.0, 2.0, 2.0]), ("median_dim", lambda lib, x: x.median(1).values,
                                                                      N),
    ("nanmedian", lambda lib, x: lib.nanmedian(x), [3.0, NAN, 1.0]), ("mode", lambda lib, x: lib.mode(x).values,
                                                                       TIES),
    ("kthvalue", lambda lib, x: lib.kthvalue(x, 2, 1).values, N), ("cummax", lambda lib, x: lib.cummax(x, 1).values,
                                                                   N),
    ("cummin", lambda lib, x: x.cummin(0).values, N), ("msort", lambda lib, x: lib.msort(x), N),
    ("ravel", lambda lib, x: lib.ravel(x.t()), M), ("unflatten", lambda lib, x: x.unflatten(1, (3, 1)), M),
    ("narrow", lambda lib, x: lib.narrow(x, 1, 1, 2), M), ("select", lambda lib, x: lib.select(x, 1, 2), M),
    ("permute", lambda lib, x: lib.permute(x, (1, 0)), M), ("diagonal", lambda lib, x: lib.diagonal(x, 1), M),
    ("clone", lambda lib, x: lib.clone(x), M), ("broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 2, 3)), M),
    ("fliplr", lambda lib, x: lib.fliplr(x), M), ("flipud", lambda lib, x: x.flipud(), M),
    ("atleast_3d", lambda lib, x: lib.atleast_3d(x), M), ("hstack", lambda lib, x: lib.hstack([x, x * 2]), M),
    ("vstack", lambda lib, x: lib.vstack([x[0], x[1]]), M), ("dstack", lambda lib, x: lib.dstack([x, x]), M),
    ("column_stack", lambda lib, x: lib.column_stack([x[0], x[1]]), M),
    ("tensor_split", lambda lib, x: lib.tensor_split(x, 2, 1)[0], M),
    ("hsplit", lambda lib, x: lib.hsplit(x, [1])[1], M), ("diff", lambda lib, x: lib.diff(x, n=2), M),
    ("diff_zero", lambda lib, x: lib.diff(x, n=0), M),
    ("take_along_dim", lambda lib, x: lib.take_along_dim(x, torch.tensor([[2], [-1]]), 1), M),
    ("trace", lambda lib, x: lib.trace(x), SQ), ("rot90", lambda lib, x: lib.rot90(x, 3), M),
]

BINARY = [
    ("atan2", lambda lib, x, y: lib.atan2(x, y), M, N), ("hypot", lambda lib, x, y: lib.hypot(x, y), M, N),
    ("logaddexp", lambda lib, x, y: lib.logaddexp(x, y), M, N),
    ("logaddexp2", lambda lib, x, y: x.logaddexp2(y), M, N),
    ("fmod", lambda lib, x, y: lib.fmod(x, y), M, N), ("fmod_number", lambda lib, x, y: lib.fmod(x, 0.75) * y, M, N),
    ("remainder", lambda lib, x, y: lib.remainder(x, y), M, N),
    ("remainder_number", lambda lib, x, y: x.remainder(0.75) + y, M, N),
    ("fmax", lambda lib, x, y: lib.fmax(x, y), [1.0, NAN, 2.0], [1.0, 3.0, NAN]),
    ("fmin", lambda lib, x, y: lib.fmin(x, y), [1.0, NAN, 2.0], [0.0, 3.0, NAN]),
    ("copysign", lambda lib, x, y: lib.copysign(x, y), [1.0, 0.0, -2.0], [-1.0, 3.0, NAN]),
    ("copysign_number", lambda lib, x, y: lib.copysign(x, -1.0) + y, [1.0, 0.0, -2.0], [-1.0, 3.0, 1.0]),
    ("ldexp", lambda lib, x, y: lib.ldexp(x, y), M, N), ("xlogy", lambda lib, x, y: lib.xlogy(x, y), M, [0.3, 1.5, -2.0]),
    ("lerp", lambda lib, x, y: lib.lerp(x, y, 0.3), M, N), ("lerp_tensor", lambda lib, x, y: lib.lerp(x, y, y), M, N),
    ("addcmul", lambda lib, x, y: lib.addcmul(x, x, y, value=0.5), M, N),
    ("addcdiv", lambda lib, x, y: lib.addcdiv(x, x, y, value=2), M, N),
    ("float_power", lambda lib, x, y: lib.float_power(x, y), POSITIVE[:3], N[0]),
    ("true_divide", lambda lib, x, y: lib.true_divide(x, y), M, N), ("rsub", lambda lib, x, y: lib.rsub(x, y), M, N),
    ("clamp_min", lambda lib, x, y: lib.clamp_min(x, y), [1.0, NAN, -1.0], [0.0, 0.0, NAN]),
    ("clamp_max", lambda lib, x, y: x.clamp_max(y), [1.0, NAN, -1.0], [0.0, 0.0, NAN]),
    ("outer", lambda lib, x, y: lib.outer(x, y), UNIT, ANY), ("vdot", lambda lib, x, y: lib.vdot(x, y), UNIT, ANY),
    ("mv", lambda lib, x, y: lib.mv(x, y), M, UNIT[:3]),
    ("addmm", lambda lib, x, y: lib.addmm(x, y.t(), y, beta=0.5, alpha=2), SQ, M),
    ("addmv", lambda lib, x, y: lib.addmv(x[0, :2], y, x[1], beta=2, alpha=0.5), M, M),
    ("addr", lambda lib, x, y: lib.addr(x, x[:, 0], y[0], alpha=3), M, N),
    ("baddbmm", lambda lib, x, y: lib.baddbmm(x.unsqueeze(0)[:, :, :2], x.unsqueeze(0), y.t().unsqueeze(0), beta=2),
     M, N),
    ("addbmm", lambda lib, x, y: lib.addbmm(x[:, :2], x.unsqueeze(0), y.t().unsqueeze(0), alpha=0.5), M, N),
]


@pytest.mark.parametrize("name, fn, data", UNARY, ids=[case[0] for case in UNARY])
def test_unary_op_matches_torch(name, fn, data):
    assert_twins(fn, data)


@pytest.mark.parametrize("name, fn, x, y", BINARY, ids=[case[0] for case in BINARY])
def test_binary_op_matches_torch(name, fn, x, y):
    assert_twins(fn, x, y)


def test_positive_is_the_input_itself():
    same(lambda lib: (lambda x: (lib.positive(x) is x, x.positive() is x))(lib.ones(2, requires_grad=True)))


def test_remainder_of_a_number_is_refused_by_name():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="teachgrad's remainder"):
        tg.remainder(2.0, x)


def test_bad_input_gets_torchs_error():
    same(lambda lib: lib.fliplr(lib.ones(3)))
    same(lambda lib: lib.vsplit(lib.ones(3), 1))
    same(lambda lib: lib.hsplit(lib.ones(3, 4), 3))
    same(lambda lib: lib.tensor_split(lib.ones(3, 4), 0, 1))


ACT = [-4.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 4.0, 7.0, NAN]
ACTIVATIONS = [
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 1.0)), ("relu6", lambda F, x: F.relu6(x)),
    ("hardshrink", lambda F, x: F.hardshrink(x, 0.5)), ("softshrink", lambda F, x: F.softshrink(x, 0.5)),
    ("threshold", lambda F, x: F.threshold(x, 0.5, 2.0)), ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("softsign", lambda F, x: F.softsign(x)), ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("softmin", lambda F, x: F.softmin(x[:10], 0)),
]


@pytest.mark.parametrize("name, fn", ACTIVATIONS, ids=[case[0] for case in ACTIVATIONS])
def test_activation_matches_torch(name, fn):
    assert_twins(lambda lib, x: fn(lib.nn.functional, x), ACT, second=name != "hardsigmoid")   # (torch has none)


def test_glu_and_prelu_match_torch():
    assert_twins(lambda lib, x: lib.nn.functional.glu(x, 1), [[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]])
    assert_twins(lambda lib, x, w: lib.nn.functional.prelu(x, w), [[[1.0, -2.0], [-0.5, 3.0]]], [0.25, -0.5])
    assert_twins(lambda lib, x, w: lib.nn.functional.prelu(x, w), 1.5, [0.25])
    same(lambda lib: lib.nn.functional.glu(lib.ones(2, 3), 1))
    same(lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)))


IMAGE = [[[[1.0, -2.0, 0.5, 3.0], [0.0, 4.0, -1.0, 2.0], [2.5, -0.5, 1.5, -3.0]]]]   # (1, 1, 3, 4)
LAYERS = [
    ("pad_reflect", lambda F, x: F.pad(x[0], (2, 1), mode="reflect")),
    ("pad_replicate_2d", lambda F, x: F.pad(x, (1, 2, 2, 0), mode="replicate")),
    ("pad_replicate_negative", lambda F, x: F.pad(x, (-1, 2, 1, -1), mode="replicate")),
    ("avg_pool1d", lambda F, x: F.avg_pool1d(x[0], 2, 1, 1)), ("max_pool1d", lambda F, x: F.max_pool1d(x[0], 2)),
    ("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (2, 3))),
    ("adaptive_avg_pool2d_one", lambda F, x: F.adaptive_avg_pool2d(x, 1)),
    ("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x[0], 3)),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, (2, None))),
    ("adaptive_max_pool1d", lambda F, x: F.adaptive_max_pool1d(x[0], 2)),
    ("lp_pool2d", lambda F, x: F.lp_pool2d(x.abs() + 1, 2, 2)), ("lp_pool1d", lambda F, x: F.lp_pool1d(x[0] * x[0], 3, 2)),
    ("conv3d", lambda F, x: F.conv3d(x.unsqueeze(0), x[:, :, :2, :2].unsqueeze(0))),
    ("conv_transpose3d", lambda F, x: F.conv_transpose3d(x.unsqueeze(0), x[:, :, :2, :2].unsqueeze(0))),
]


@pytest.mark.parametrize("name, fn", LAYERS, ids=[case[0] for case in LAYERS])
def test_padding_and_pooling_match_torch(name, fn):
    second = not name.startswith("conv")   # (teachgrad has no second derivative of convolution)
    assert_twins(lambda lib, x: fn(lib.nn.functional, x), IMAGE, second=second)


def test_padding_refusals():
    same(lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1), mode="reflect", value=2.0))
    same(lambda lib: lib.nn.functional.pad(lib.ones(1, 1, 3, 4), (1, 1), mode="reflect"))
    same(lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1), mode="circular", value=2.0))
    same(lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3, requires_grad=True), (1, 1), mode="wrap"))


# ---- second derivatives by forward over reverse (tg.func.hessian) through the kernel ops -----------------------

KERNEL_OPS = {
    "reflect_pad": lambda lib, a: lib.nn.functional.pad(a, (1, 1, 2, 1), mode="reflect"),
    "replicate_pad": lambda lib, a: lib.nn.functional.pad(a, (2, 0, 1, 1), mode="replicate"),
    "adaptive_avg": lambda lib, a: lib.nn.functional.adaptive_avg_pool2d(a, (2, 3)),
    "adaptive_max": lambda lib, a: lib.nn.functional.adaptive_max_pool2d(a, (2, 2)),
    "avg_pool": lambda lib, a: lib.nn.functional.avg_pool2d(a, 2),
}


@pytest.mark.parametrize("name", KERNEL_OPS)
def test_hessian_through_a_kernel_op_is_torchs(name):
    """jacfwd(jacrev(f)) runs forward mode through the recorded gradient of an op torch computes with a kernel
    (reflection_pad2d_backward, ...): the tangent of that gradient is the kernel again. It raised a TypeError."""
    op = KERNEL_OPS[name]
    x = torch.linspace(-1, 1, 40, dtype=torch.float64).reshape(1, 2, 4, 5)

    def f(lib):
        return lambda a: (op(lib, a) ** 3).sum()
    ours = tg.func.hessian(f(tg))(tg.tensor(x))
    theirs = torch.func.hessian(f(torch))(x)
    assert torch.allclose(ours.data, theirs, atol=1e-12)


@pytest.mark.parametrize("name", ["reflect_pad", "replicate_pad", "adaptive_avg"])
def test_the_recorded_gradient_of_a_kernel_op_has_torchs_node_name(name):
    """Under create_graph the gradient of reflection_pad2d is torch's ReflectionPad2DBackwardBackward0 (and so on for
    each op); teachgrad named every one KernelBackwardBackward0."""
    op = KERNEL_OPS[name]

    def run(lib):
        x = lib.tensor(torch.linspace(-1, 1, 40, dtype=torch.float64).reshape(1, 2, 4, 5), requires_grad=True)
        g, = lib.autograd.grad((op(lib, x) ** 2).sum(), x, create_graph=True)
        return type(g.grad_fn).__name__
    same(run)
