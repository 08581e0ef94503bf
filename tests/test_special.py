"""`tg.special` against `torch.special` (issue 42), as twin tests: the same lines under `lib=torch` and `lib=teachgrad`
give the same values, node names, gradients, second derivatives and forward-mode tangents (tests/twins.py:
assert_twins), on float64 inputs where each function is defined; gradcheck and gradgradcheck on teachgrad's ops;
torch's errors, by type and message, where torch has no derivative; vmap; torch's top-level aliases and Tensor
methods (`tg.i0`, `x.igamma(y)`, `x.mvlgamma(p)`); and a few whole programs a learner writes with them (a probit
regression, a von Mises log-density, an entropy, a quantile transform), compared with torch on values and
gradients. tests/test_op_db.py runs torch's own samples of the same functions.
"""
import math

import pytest
import torch

import teachgrad as tg

from .twins import assert_twins, same

NAN, INF = math.nan, math.inf
ANY = [0.3, -1.5, 2.0, 0.0, -0.25]
WITH_ZERO = [0.3, -1.5, 2.0, 0.0, -0.25, 1e-20]      # (i1, i1e: torch's own limit 1/2 at the origin)
POSITIVE = [0.3, 1.5, 2.0, 4.0, 0.25]
PROBABILITIES = [0.1, 0.5, 0.9, 0.3, 0.75]
ENTROPY = [0.3, 1.5, 0.0, 4.0, 0.25, -1.0]             # (0: -inf slope; below 0: -inf, as torch's)
ABOVE_ONE = [1.3, 1.5, 2.0, 4.0, 1.25]                 # (multigammaln with p = 3 needs x > 1)
UNIT = [0.1, -0.5, 0.7, 0.0, -0.9]
WIDE = [-6.0, -2.5, 0.3, 3.0, 8.5]                     # (log_ndtr far in its tail, ndtr near 0 and 1)

# name, the call under either library, inputs: each differentiable function of one tensor in torch.special
UNARY = [
    ("erf", lambda lib, x: lib.special.erf(x), ANY), ("erfc", lambda lib, x: lib.special.erfc(x), ANY),
    ("erfcx", lambda lib, x: lib.special.erfcx(x), ANY), ("erfinv", lambda lib, x: lib.special.erfinv(x), UNIT),
    ("expit", lambda lib, x: lib.special.expit(x), ANY), ("logit", lambda lib, x: lib.special.logit(x), PROBABILITIES),
    ("logit_eps", lambda lib, x: lib.special.logit(x, eps=0.2), [0.1, 0.5, 0.9, 0.3, 0.0]),
    ("exp2", lambda lib, x: lib.special.exp2(x), ANY), ("expm1", lambda lib, x: lib.special.expm1(x), ANY),
    ("log1p", lambda lib, x: lib.special.log1p(x), POSITIVE),
    ("log_softmax", lambda lib, x: lib.special.log_softmax(x, 0), ANY),
    ("log_softmax_dtype", lambda lib, x: lib.special.log_softmax(x.float(), 0, dtype=torch.float64), ANY),
    ("softmax", lambda lib, x: lib.special.softmax(x, dim=0), ANY),
    ("logsumexp", lambda lib, x: lib.special.logsumexp(x, 0), ANY),
    ("logsumexp_keepdim", lambda lib, x: lib.special.logsumexp(x.reshape(1, 5), 1, keepdim=True), ANY),
    ("gammaln", lambda lib, x: lib.special.gammaln(x), POSITIVE),
    ("digamma", lambda lib, x: lib.special.digamma(x), POSITIVE), ("psi", lambda lib, x: lib.special.psi(x), POSITIVE),
    ("polygamma", lambda lib, x: lib.special.polygamma(2, x), POSITIVE),
    ("multigammaln", lambda lib, x: lib.special.multigammaln(x, 3), ABOVE_ONE),
    ("i0", lambda lib, x: lib.special.i0(x), ANY), ("i0e", lambda lib, x: lib.special.i0e(x), ANY),
    ("i1", lambda lib, x: lib.special.i1(x), WITH_ZERO), ("i1e", lambda lib, x: lib.special.i1e(x), WITH_ZERO),
    ("ndtr", lambda lib, x: lib.special.ndtr(x), WIDE), ("ndtri", lambda lib, x: lib.special.ndtri(x), PROBABILITIES),
    ("log_ndtr", lambda lib, x: lib.special.log_ndtr(x), WIDE), ("entr", lambda lib, x: lib.special.entr(x), ENTROPY),
    ("sinc", lambda lib, x: lib.special.sinc(x), ANY), ("round", lambda lib, x: lib.special.round(x), ANY),
    ("round_decimals", lambda lib, x: lib.special.round(x, decimals=1), ANY),
    # torch's top-level names and Tensor methods for the same ops
    ("torch.i0", lambda lib, x: lib.i0(x), ANY), ("Tensor.i0", lambda lib, x: x.i0(), ANY),
    ("torch.mvlgamma", lambda lib, x: lib.mvlgamma(x, 2), ABOVE_ONE),
    ("Tensor.mvlgamma", lambda lib, x: x.mvlgamma(p=3), ABOVE_ONE),
    ("Tensor.erfinv", lambda lib, x: x.erfinv(), UNIT), ("Tensor.digamma", lambda lib, x: x.digamma(), POSITIVE),
    ("Tensor.logit", lambda lib, x: x.logit(0.1), PROBABILITIES),
    ("Tensor.lgamma", lambda lib, x: x.lgamma(), POSITIVE),
    ("Tensor.sinc", lambda lib, x: x.sinc(), ANY), ("Tensor.polygamma", lambda lib, x: x.polygamma(1), POSITIVE),
]

M = [[0.5, 2.0, 0.0], [1.5, 0.0, 3.0]]        # (zeros: xlogy's and xlog1py's rule at x = 0)
N = [[0.25, -0.5, -1.0], [2.0, 0.5, -2.0]]    # (xlog1py: y <= -1 where x is 0)
BINARY = [
    ("xlogy", lambda lib, x, y: lib.special.xlogy(x, y.abs()), M, N),
    ("xlogy_number_self", lambda lib, x, y: lib.special.xlogy(2.0, y.abs()) * x, M, N),
    ("xlogy_number_other", lambda lib, x, y: lib.special.xlogy(x, 3.0) * y, M, N),
    ("xlog1py", lambda lib, x, y: lib.special.xlog1py(x, y), M, N),
    ("xlog1py_number_self", lambda lib, x, y: lib.special.xlog1py(2.0, y) + x, M, N),
    ("xlog1py_number_other", lambda lib, x, y: lib.special.xlog1py(x, 0.5) * y, M, N),
    ("xlog1py_number_other_below", lambda lib, x, y: lib.special.xlog1py(x, -1.5) + y, M, N),
    ("Tensor.xlogy", lambda lib, x, y: x.xlogy(y.abs()), M, N),
]


@pytest.mark.parametrize("name, fn, data", UNARY, ids=[case[0] for case in UNARY])
def test_unary_special_function_matches_torch(name, fn, data):
    assert_twins(fn, data)


@pytest.mark.parametrize("name, fn, x, y", BINARY, ids=[case[0] for case in BINARY])
def test_binary_special_function_matches_torch(name, fn, x, y):
    assert_twins(fn, x, y)


# --- node names, as torch records them for the special spelling ------------------------------------------------------

NODES = {   # function: (call, torch's node for it)
    "expit": "SigmoidBackward0", "gammaln": "LgammaBackward0", "psi": "DigammaBackward0", "i0": "I0Backward0",
    "i0e": "SpecialI0EBackward0", "i1": "SpecialI1Backward0", "i1e": "SpecialI1EBackward0",
    "ndtr": "MulBackward1", "ndtri": "SpecialNdtriBackward0", "log_ndtr": "SpecialLogNdtrBackward0",
    "entr": "SpecialEntrBackward0", "erfcx": "SpecialErfcxBackward0", "round": "RoundBackward1",
    "multigammaln": "MvlgammaBackward0", "log1p": "Log1PBackward0",
}


@pytest.mark.parametrize("name", sorted(NODES))
def test_node_names_are_torchs(name):
    call = (lambda lib, x: getattr(lib.special, name)(x, 2)) if name == "multigammaln" else \
        (lambda lib, x: getattr(lib.special, name)(x))
    ours = call(tg, tg.tensor([0.6, 0.7], dtype=torch.float64, requires_grad=True))
    theirs = call(torch, torch.tensor([0.6, 0.7], dtype=torch.float64, requires_grad=True))
    assert ours.grad_fn.name() == theirs.grad_fn.name() == NODES[name]


def test_ndtr_records_torchs_composition():
    """torch computes ndtr as (1 + erf(x / sqrt 2)) * 0.5, node by node: the same nodes, the same bits."""
    def chain(node):
        names = []
        while node is not None and node.next_functions:
            names.append(node.name())
            node = node.next_functions[0][0]
        return names
    data = torch.linspace(-5, 5, 41, dtype=torch.float64)
    ours = tg.special.ndtr(tg.tensor(data, requires_grad=True))
    theirs = torch.special.ndtr(data.clone().requires_grad_())
    assert chain(ours.grad_fn) == chain(theirs.grad_fn) == ["MulBackward1", "AddBackward1", "ErfBackward0",
                                                           "MulBackward1"]
    assert torch.equal(ours.data, theirs.detach()) and torch.equal(tg.special.ndtr(tg.tensor(data)).data,
                                                                   torch.special.ndtr(data))


def test_the_special_spelling_is_the_same_op_as_torchs_top_level_one():
    x = tg.tensor([0.2, 0.7], dtype=torch.float64, requires_grad=True)
    assert type(tg.special.expit(x).grad_fn) is type(tg.sigmoid(x).grad_fn)
    assert tg.special.erf is tg.erf and tg.special.expm1 is tg.expm1 and tg.special.i0 is tg.i0
    assert type(tg.special.gammaln(x).grad_fn) is type(tg.lgamma(x).grad_fn)
    assert type(tg.special.psi(x).grad_fn) is type(tg.digamma(x).grad_fn)
    assert type(tg.special.gammainc(x, x).grad_fn) is type(tg.igamma(x, x).grad_fn)
    assert type(tg.special.multigammaln(x + 1, 2).grad_fn) is type(tg.mvlgamma(x + 1, 2).grad_fn)


def test_every_function_of_torch_special_is_in_tg_special():
    public = {name for name in dir(torch.special) if not name.startswith("_") and callable(getattr(torch.special, name))
              and name not in ("Tensor",)}
    assert len(public) >= 56
    missing = sorted(name for name in public if not callable(getattr(tg.special, name, None)))
    assert not missing, missing
    assert sorted(tg.special.__all__) == sorted(public)


# --- gradcheck and gradgradcheck, on teachgrad's own ops -------------------------------------------------------------

CHECKED = [
    ("erfcx", lambda x: tg.special.erfcx(x), ANY), ("i0", lambda x: tg.special.i0(x), ANY),
    ("i0e", lambda x: tg.special.i0e(x), [0.3, -1.5, 2.0, -0.25]),   # (|x| has a kink at 0)
    ("i1", lambda x: tg.special.i1(x), ANY), ("i1e", lambda x: tg.special.i1e(x), [0.3, -1.5, 2.0, -0.25]),
    ("ndtr", lambda x: tg.special.ndtr(x), WIDE), ("ndtri", lambda x: tg.special.ndtri(x), PROBABILITIES),
    ("log_ndtr", lambda x: tg.special.log_ndtr(x), WIDE), ("entr", lambda x: tg.special.entr(x), POSITIVE),
    ("multigammaln", lambda x: tg.special.multigammaln(x, 3), ABOVE_ONE),
    ("xlog1py", lambda x: tg.special.xlog1py(x, x * 0.5), POSITIVE),
    ("gammainc_other", lambda x: tg.special.gammainc(tg.tensor(POSITIVE, dtype=torch.float64), x), POSITIVE),
    ("gammaincc_other", lambda x: tg.special.gammaincc(tg.tensor(POSITIVE, dtype=torch.float64), x), POSITIVE),
    ("zeta_other", lambda x: tg.special.zeta(tg.tensor(ABOVE_ONE, dtype=torch.float64) + 1, x), POSITIVE),
    ("zeta_number", lambda x: tg.special.zeta(3.0, x), POSITIVE),
]


@pytest.mark.parametrize("name, fn, data", CHECKED, ids=[case[0] for case in CHECKED])
def test_gradcheck_and_gradgradcheck(name, fn, data):
    x = tg.tensor(data, dtype=torch.float64, requires_grad=True)
    assert tg.autograd.gradcheck(fn, (x,))
    assert tg.autograd.gradgradcheck(fn, (x,))


def _reverse(lib, fn, data):
    """fn's value, node name, gradient and second derivative (no tangent: torch has no forward AD for these)."""
    x = lib.tensor(data, dtype=torch.float64, requires_grad=True)
    out = fn(lib, x)
    grad, = lib.autograd.grad(out.sum(), x, create_graph=True)
    second, = lib.autograd.grad(grad.sum(), x)
    plain = [t.data if isinstance(t, tg.Variable) else t.detach() for t in (out, grad, second)]
    return out.grad_fn.name(), plain


@pytest.mark.parametrize("name, fn", [
    ("gammainc", lambda lib, x: lib.special.gammainc(lib.tensor(POSITIVE, dtype=torch.float64), x)),
    ("gammaincc", lambda lib, x: lib.special.gammaincc(lib.tensor(POSITIVE, dtype=torch.float64), x)),
    ("igamma_method", lambda lib, x: lib.tensor(POSITIVE, dtype=torch.float64).igamma(x)),
    ("igammac", lambda lib, x: lib.igammac(lib.tensor(POSITIVE, dtype=torch.float64), x)),
    ("zeta", lambda lib, x: lib.special.zeta(lib.tensor(ABOVE_ONE, dtype=torch.float64) + 1, x)),
    ("zeta_number_self", lambda lib, x: lib.special.zeta(2.5, x)),
])
def test_functions_without_forward_mode_match_torch_backward(name, fn):
    ours, theirs = _reverse(tg, fn, POSITIVE), _reverse(torch, fn, POSITIVE)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        torch.testing.assert_close(a, b)


# --- torch's errors where torch has no derivative ---------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.special.gammainc(x, x.detach() + 1),
    lambda lib, x: lib.special.gammaincc(x, x.detach() + 1),
    lambda lib, x: lib.igamma(x, x.detach()), lambda lib, x: x.igammac(x.detach()),
    lambda lib, x: lib.special.zeta(x + 1, x.detach()),
    lambda lib, x: lib.special.zeta(x + 1, 2.0),
    lambda lib, x: lib.special.gammainc(x, x),   # (the gradient torch has for `other` is not given either)
])
def test_no_derivative_in_self_is_torchs_error(call):
    def backward(lib):
        x = lib.tensor([1.5, 2.5], dtype=torch.float64, requires_grad=True)
        out = call(lib, x)
        node = out.grad_fn.name()
        out.sum().backward()
        return node
    outcome = same(backward)
    assert outcome[0] == "raised" and outcome[1][0] is NotImplementedError


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.special.gammainc(x + 1, x), lambda lib, x: lib.special.gammaincc(x, x + 1),
    lambda lib, x: lib.special.zeta(x + 1, x), lambda lib, x: lib.special.zeta(2.0, x),
    lambda lib, x: lib.special.zeta(x + 1, 2.0),
])
def test_forward_mode_where_torch_has_none_is_torchs_error(call):
    def forward_mode(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([1.5, 2.5], dtype=torch.float64), lib.ones(2, dtype=torch.float64))
            return fw.unpack_dual(call(lib, x)).tangent
    outcome = same(forward_mode)
    assert outcome[0] == "raised" and outcome[1][0] is NotImplementedError


# --- the functions torch records no derivative for: the result never requires grad -----------------------------------

NO_DERIVATIVE = [
    ("airy_ai", lambda lib, x: lib.special.airy_ai(x)), ("bessel_j0", lambda lib, x: lib.special.bessel_j0(x)),
    ("bessel_j1", lambda lib, x: lib.special.bessel_j1(x)), ("bessel_y0", lambda lib, x: lib.special.bessel_y0(x)),
    ("bessel_y1", lambda lib, x: lib.special.bessel_y1(x)),
    ("modified_bessel_i0", lambda lib, x: lib.special.modified_bessel_i0(x)),
    ("modified_bessel_i1", lambda lib, x: lib.special.modified_bessel_i1(x)),
    ("modified_bessel_k0", lambda lib, x: lib.special.modified_bessel_k0(x)),
    ("modified_bessel_k1", lambda lib, x: lib.special.modified_bessel_k1(x)),
    ("scaled_modified_bessel_k0", lambda lib, x: lib.special.scaled_modified_bessel_k0(x)),
    ("scaled_modified_bessel_k1", lambda lib, x: lib.special.scaled_modified_bessel_k1(x)),
    ("spherical_bessel_j0", lambda lib, x: lib.special.spherical_bessel_j0(x)),
] + [(f"{name}{form}", (lambda name, n: lambda lib, x: getattr(lib.special, name)(x, n))(name, n))
     for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                  "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                  "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                  "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")
     for form, n in (("", 3), ("_n_tensor", torch.tensor([0, 1, 2, 3, 7])))] + [
    ("chebyshev_polynomial_t_x_number", lambda lib, x: lib.special.chebyshev_polynomial_t(0.5, x.detach() * 2)),
    ("hermite_polynomial_h_n_keyword", lambda lib, x: lib.special.hermite_polynomial_h(x, n=2)),
]


@pytest.mark.parametrize("name, fn", NO_DERIVATIVE, ids=[case[0] for case in NO_DERIVATIVE])
def test_functions_without_derivative_give_torchs_values_and_no_gradient(name, fn):
    def run(lib):
        x = lib.tensor([0.3, 0.9, 1.5, 2.0, 0.75], dtype=torch.float64, requires_grad=True)
        out = fn(lib, x)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(x.detach(), lib.ones(5, dtype=torch.float64))
            tangent = fw.unpack_dual(fn(lib, dual)).tangent
        return out, out.requires_grad, out.grad_fn is None, tangent is None
    same(run)


def test_a_function_without_derivative_refuses_backward_as_torch():
    same(lambda lib: lib.special.bessel_j0(lib.tensor([0.5, 1.0], requires_grad=True)).sum().backward())


def test_bad_input_gets_torchs_error():
    x = [0.5, 1.5]
    same(lambda lib: lib.special.softmax(lib.tensor(x)))
    same(lambda lib: lib.special.logsumexp(lib.tensor(x)))
    same(lambda lib: lib.special.multigammaln(lib.tensor(x), 0))
    same(lambda lib: lib.special.polygamma(-1, lib.tensor(x)))
    same(lambda lib: lib.mvlgamma(lib.tensor(x), 2))


# --- vmap, and torch's own functions called with Variables -----------------------------------------------------------

@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "entr", "erfcx",
                                  "bessel_j0", "expit", "gammaln"])
def test_vmap_as_torchs(name):
    data = torch.rand(3, 4, dtype=torch.float64) * 0.8 + 0.1
    ours = tg.func.vmap(getattr(tg.special, name))(tg.tensor(data))
    theirs = torch.func.vmap(getattr(torch.special, name))(data)
    torch.testing.assert_close(ours.data, theirs)


def test_vmap_of_a_binary_function_and_of_a_gradient():
    x, y = torch.rand(3, 4, dtype=torch.float64), torch.rand(4, dtype=torch.float64) + 0.5
    ours = tg.func.vmap(tg.special.xlog1py, in_dims=(0, None))(tg.tensor(x), tg.tensor(y))
    torch.testing.assert_close(ours.data, torch.func.vmap(torch.special.xlog1py, in_dims=(0, None))(x, y))
    ours = tg.func.vmap(tg.func.grad(lambda v: tg.special.i1e(v).sum()))(tg.tensor(x))
    theirs = torch.func.vmap(torch.func.grad(lambda v: torch.special.i1e(v).sum()))(x)
    torch.testing.assert_close(ours.data, theirs)


def test_torchs_own_special_functions_given_variables_record_teachgrads_ops():
    x = tg.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    out = torch.special.i0e(x)
    assert isinstance(out, tg.Variable) and out.grad_fn.name() == "SpecialI0EBackward0"
    out = torch.special.log_ndtr(x) + torch.special.xlog1py(x, x)
    grad, = tg.autograd.grad(out.sum(), x)
    t = x.data.clone().requires_grad_()
    expected, = torch.autograd.grad((torch.special.log_ndtr(t) + torch.special.xlog1py(t, t)).sum(), t)
    torch.testing.assert_close(grad.data, expected)


# --- whole programs a learner writes -----------------------------------------------------------------------------

def _program_twins(program):
    """program(lib) returns (a scalar loss, the leaves): the same loss and gradients under teachgrad and torch."""
    loss, leaves = program(tg)
    grads = tg.autograd.grad(loss, leaves)
    t_loss, t_leaves = program(torch)
    t_grads = torch.autograd.grad(t_loss, t_leaves)
    torch.testing.assert_close(loss.data, t_loss.detach())
    for ours, theirs in zip(grads, t_grads):
        torch.testing.assert_close(ours.data, theirs)


def _data(seed, *shape):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def test_probit_regression_with_ndtr_and_log_ndtr():
    """The likelihood of a probit model: P(y = 1) = Phi(x w), written with ndtr and, stably, with log_ndtr."""
    features, labels = _data(0, 32, 3), (_data(1, 32) > 0).double()

    def program(lib):
        w = lib.tensor([0.5, -1.0, 0.25], dtype=torch.float64, requires_grad=True)
        z = lib.tensor(features.tolist(), dtype=torch.float64) @ w
        y = lib.tensor(labels.tolist(), dtype=torch.float64)
        stable = -(y * lib.special.log_ndtr(z) + (1 - y) * lib.special.log_ndtr(-z)).mean()
        naive = -(y * lib.special.ndtr(z).log() + (1 - y) * (1 - lib.special.ndtr(z)).log()).mean()
        return stable + naive, [w]
    _program_twins(program)


def test_von_mises_log_density_with_i0e_and_i0():
    """log p(theta) = kappa cos(theta - mu) - log(2 pi I0(kappa)), with log I0(kappa) = log i0e(kappa) + kappa."""
    angles = _data(2, 20)

    def program(lib):
        mu = lib.tensor(0.3, dtype=torch.float64, requires_grad=True)
        kappa = lib.tensor([2.0, 0.5], dtype=torch.float64, requires_grad=True)
        theta = lib.tensor(angles.tolist(), dtype=torch.float64).reshape(10, 2)
        log_i0 = lib.special.i0e(kappa).log() + kappa
        density = kappa * (theta - mu).cos() - math.log(2 * math.pi) - log_i0
        plain = kappa * (theta - mu).cos() - (2 * math.pi * lib.special.i0(kappa)).log()
        return -(density.sum() + plain.sum()), [mu, kappa]
    _program_twins(program)


def test_von_mises_concentration_from_i1e_over_i0e():
    """The mean resultant length A(kappa) = I1(kappa) / I0(kappa) = i1e / i0e, fitted to a target by least squares."""
    def program(lib):
        kappa = lib.tensor([0.1, 1.0, 4.0], dtype=torch.float64, requires_grad=True)
        ratio = lib.special.i1e(kappa) / lib.special.i0e(kappa)
        return ((ratio - lib.tensor([0.2, 0.5, 0.8], dtype=torch.float64)) ** 2).sum(), [kappa]
    _program_twins(program)


def test_entropy_of_a_softmax_with_entr():
    """H(p) = sum entr(p) for p = softmax(logits): the entropy bonus of a policy."""
    logits = _data(3, 4, 6)

    def program(lib):
        z = lib.tensor(logits.tolist(), dtype=torch.float64, requires_grad=True)
        p = lib.special.softmax(z, dim=1)
        entropy = lib.special.entr(p).sum(1)
        return -entropy.mean(), [z]
    _program_twins(program)


def test_geometric_log_likelihood_with_xlog1py():
    """log P(k failures before a success) = k log(1 - p) + log p = xlog1py(k, -p) + log p."""
    counts = torch.tensor([0.0, 3.0, 1.0, 0.0, 7.0], dtype=torch.float64)

    def program(lib):
        logit_p = lib.tensor([0.2, -1.0, 0.5, 2.0, -0.3], dtype=torch.float64, requires_grad=True)
        p = lib.special.expit(logit_p)
        return -(lib.special.xlog1py(lib.tensor(counts.tolist(), dtype=torch.float64), -p) + p.log()).sum(), [logit_p]
    _program_twins(program)


def test_gaussian_quantile_transform_with_ndtri():
    """Samples mu + sigma ndtri(u) for fixed uniforms u: the reparameterized Gaussian, through its quantile."""
    uniforms = torch.tensor([0.05, 0.3, 0.5, 0.8, 0.99], dtype=torch.float64)

    def program(lib):
        mu = lib.tensor(1.0, dtype=torch.float64, requires_grad=True)
        log_sigma = lib.tensor(-0.5, dtype=torch.float64, requires_grad=True)
        u = lib.tensor(uniforms.tolist(), dtype=torch.float64, requires_grad=True)
        samples = mu + log_sigma.exp() * lib.special.ndtri(u)
        return (samples ** 2).mean(), [mu, log_sigma, u]
    _program_twins(program)


@pytest.mark.parametrize("name, data", [("i0", ANY[:3]), ("i0e", ANY[:3]), ("i1", ANY[:3]), ("i1e", ANY[:3]),
                                        ("ndtri", PROBABILITIES[:3]), ("log_ndtr", WIDE[:3]),
                                        ("entr", POSITIVE[:3]), ("erfcx", ANY[:3])])
def test_reverse_over_forward_as_torchs(name, data):
    """A tangent that requires grad records how it was computed (the op's formula, with teachgrad's special
    functions in it): its gradients with respect to the primal and to the tangent are torch's."""
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor(data, dtype=torch.float64, requires_grad=True)
        v = lib.tensor([1.0, 0.5, -2.0], dtype=torch.float64, requires_grad=True)
        with fw.dual_level():
            tangent = fw.unpack_dual(getattr(lib.special, name)(fw.make_dual(x, v))).tangent
            return (tangent, *lib.autograd.grad(tangent.sum(), (x, v)))
    ours, theirs = run(tg), run(torch)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a.data, b.detach())
