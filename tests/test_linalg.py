"""torch.linalg under teachgrad (issue 42): each op twinned with torch (values, node names, gradients, second
derivatives, tangents, batches, vmap), gradcheck and gradgradcheck against finite differences, torch's named tuples
and errors, and the short programs a learner of linear algebra's backward writes (a Gaussian process, PCA, a
normalizing flow, ...), each run under both libraries and compared.
"""
import warnings

import pytest
import torch

import teachgrad as tg
from tests.twins import assert_twins, same

torch.manual_seed(0)
N = 4
_G = torch.randn(N, N, dtype=torch.float64)
SQUARE = (_G + 3 * torch.eye(N, dtype=torch.float64)).tolist()             # well conditioned
TALL = torch.randn(5, 3, dtype=torch.float64).tolist()
WIDE = torch.randn(3, 5, dtype=torch.float64).tolist()
RHS = torch.randn(N, 2, dtype=torch.float64).tolist()
VEC = torch.randn(N, dtype=torch.float64).tolist()
BATCH = (torch.randn(2, N, N, dtype=torch.float64) + 3 * torch.eye(N, dtype=torch.float64)).tolist()
BATCH_RHS = torch.randn(2, N, 3, dtype=torch.float64).tolist()
VEC3 = torch.randn(2, 3, dtype=torch.float64).tolist()


def _spd(lib, x):
    """A symmetric positive-definite matrix made from x (so its gradient reaches x through every entry)."""
    return x @ x.mT + 3 * lib.eye(x.shape[-1], dtype=torch.float64)


def _sym(x):
    return x + x.mT


def _projector(U, k):
    """U's first k columns' projector: the same whatever the vectors' signs."""
    return U[..., :k] @ U[..., :k].mT


# --- each op against torch: value, node, gradients, second derivatives, tangent ---------------------------------

TWINS = [
    ("det", lambda lib, a: lib.linalg.det(a), [SQUARE]),
    ("det top-level", lambda lib, a: lib.det(a), [SQUARE]),
    ("det method", lambda lib, a: a.det(), [SQUARE]),
    ("det batch", lambda lib, a: lib.linalg.det(a), [BATCH]),
    ("slogdet logabsdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet, [SQUARE]),
    ("slogdet sign", lambda lib, a: lib.linalg.slogdet(a).sign * 1.0, [SQUARE]),
    ("slogdet batch", lambda lib, a: lib.slogdet(a)[1], [BATCH]),
    ("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), [SQUARE]),
    ("logdet method", lambda lib, a: a.logdet(), [BATCH]),
    ("inv", lambda lib, a: lib.linalg.inv(a), [SQUARE]),
    ("inverse", lambda lib, a: lib.inverse(a), [BATCH]),
    ("inverse method", lambda lib, a: a.inverse(), [SQUARE]),
    ("solve", lambda lib, a, b: lib.linalg.solve(a, b), [SQUARE, RHS]),
    ("solve vector", lambda lib, a, b: lib.linalg.solve(a, b), [SQUARE, VEC]),
    ("solve right", lambda lib, a, b: lib.linalg.solve(a, b.mT, left=False), [SQUARE, RHS]),
    ("solve batch", lambda lib, a, b: lib.linalg.solve(a, b), [BATCH, BATCH_RHS]),
    ("solve broadcast", lambda lib, a, b: lib.linalg.solve(a, b), [SQUARE, BATCH_RHS]),
    ("solve_triangular lower", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False), [SQUARE, RHS]),
    ("solve_triangular upper", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), [SQUARE, RHS]),
    ("solve_triangular right", lambda lib, a, b: lib.linalg.solve_triangular(a, b.mT, upper=True, left=False),
     [SQUARE, RHS]),
    ("solve_triangular unit", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
     [SQUARE, RHS]),
    ("solve_triangular batch", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), [BATCH, BATCH_RHS]),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), [SQUARE]),
    ("cholesky upper", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True), [SQUARE]),
    ("cholesky batch", lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), [BATCH]),
    ("cholesky_solve", lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(_spd(lib, a))), [SQUARE, RHS]),
    ("cholesky_solve upper",
     lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(_spd(lib, a), upper=True), upper=True),
     [SQUARE, RHS]),
    ("qr Q", lambda lib, a: lib.linalg.qr(a).Q, [TALL]),
    ("qr R", lambda lib, a: lib.linalg.qr(a).R, [TALL]),
    ("qr both", lambda lib, a: (lambda q: q.Q.sum(0) * q.R[:, 0])(lib.linalg.qr(a)), [SQUARE]),
    ("qr wide", lambda lib, a: (lambda q: q.Q.sum(0) + q.R.sum(-1))(lib.linalg.qr(a)), [WIDE]),
    ("qr complete square", lambda lib, a: lib.linalg.qr(a, mode="complete").Q, [SQUARE]),
    ("qr legacy", lambda lib, a: lib.qr(a)[1], [TALL]),
    ("qr batch", lambda lib, a: lib.linalg.qr(a).R, [BATCH]),
    ("svd S", lambda lib, a: lib.linalg.svd(a).S, [TALL]),
    ("svd U projector", lambda lib, a: _projector(lib.linalg.svd(a, full_matrices=False).U, 2), [TALL]),
    ("svd Vh projector", lambda lib, a: _projector(lib.linalg.svd(a, full_matrices=False).Vh.mT, 2), [WIDE]),
    ("svd all tall", lambda lib, a: (lambda r: r.U.sum(0) * r.S * r.Vh.sum(1))(lib.linalg.svd(a, False)), [TALL]),
    ("svd all wide", lambda lib, a: (lambda r: r.U.sum(0) * r.S * r.Vh.sum(1))(lib.linalg.svd(a, False)), [WIDE]),
    ("svd full", lambda lib, a: (lambda r: r.U.sum(0) * r.S)(lib.linalg.svd(a, True)), [SQUARE]),
    ("svd full tall", lambda lib, a: (lambda r: r.U[:, :3].sum(0) * r.S * r.Vh.sum(0))(lib.linalg.svd(a, True)),
     [TALL]),
    ("svd batch", lambda lib, a: lib.linalg.svd(a).S, [BATCH]),
    ("svd legacy V", lambda lib, a: (lambda r: r.V.sum(0) * r.S)(lib.svd(a)), [TALL]),
    ("svd method", lambda lib, a: a.svd().S, [WIDE]),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), [WIDE]),
    ("eigh values", lambda lib, a: lib.linalg.eigh(_sym(a)).eigenvalues, [SQUARE]),
    ("eigh vectors", lambda lib, a: (lambda r: r.eigenvectors * r.eigenvalues)(lib.linalg.eigh(_sym(a))), [SQUARE]),
    ("eigh upper", lambda lib, a: lib.linalg.eigh(a, UPLO="U").eigenvectors.sum(0), [SQUARE]),
    ("eigh batch", lambda lib, a: lib.linalg.eigh(_sym(a))[1].abs().sum(-2), [BATCH]),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a), [SQUARE]),
    ("eigvalsh upper", lambda lib, a: lib.linalg.eigvalsh(a, UPLO="U"), [BATCH]),
    ("matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a * 0.3), [SQUARE]),
    ("matrix_exp top-level", lambda lib, a: lib.matrix_exp(a * 0.3), [BATCH]),
    ("matrix_exp method", lambda lib, a: (a * 0.3).matrix_exp(), [SQUARE]),
    ("lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [TALL, TALL]),
    ("lstsq square", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [SQUARE, RHS]),
    ("lstsq batch", lambda lib, a, b: lib.linalg.lstsq(a, b)[0], [BATCH, BATCH_RHS]),
    ("pinv tall", lambda lib, a: lib.linalg.pinv(a), [TALL]),
    ("pinv wide", lambda lib, a: lib.linalg.pinv(a), [WIDE]),
    ("pinv hermitian", lambda lib, a: lib.linalg.pinv(_spd(lib, a), hermitian=True), [SQUARE]),
    ("pinverse", lambda lib, a: lib.pinverse(a), [WIDE]),
    ("pinverse method", lambda lib, a: a.pinverse(), [BATCH]),
    ("matrix_norm fro", lambda lib, a: lib.linalg.matrix_norm(a), [TALL]),
    ("matrix_norm nuc", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), [TALL]),
    ("matrix_norm 2", lambda lib, a: lib.linalg.matrix_norm(a, 2), [WIDE]),
    ("matrix_norm -2", lambda lib, a: lib.linalg.matrix_norm(a, -2), [WIDE]),
    ("matrix_norm inf", lambda lib, a: lib.linalg.matrix_norm(a, float("inf")), [TALL]),
    ("matrix_norm -inf", lambda lib, a: lib.linalg.matrix_norm(a, -float("inf")), [TALL]),
    ("matrix_norm 1", lambda lib, a: lib.linalg.matrix_norm(a, 1), [TALL]),
    ("matrix_norm -1", lambda lib, a: lib.linalg.matrix_norm(a, -1), [TALL]),
    ("matrix_norm nuc keepdim", lambda lib, a: lib.linalg.matrix_norm(a, "nuc", keepdim=True), [BATCH]),
    ("matrix_norm 2 dims", lambda lib, a: lib.linalg.matrix_norm(a, 2, dim=(0, 2)), [BATCH]),
    ("matrix_norm inf dims keepdim", lambda lib, a: lib.linalg.matrix_norm(a, float("inf"), dim=(2, 0),
                                                                            keepdim=True), [BATCH]),
    ("vector_norm", lambda lib, a: lib.linalg.vector_norm(a), [TALL]),
    ("vector_norm 3 dim", lambda lib, a: lib.linalg.vector_norm(a, 3, dim=1), [TALL]),
    ("vector_norm inf", lambda lib, a: lib.linalg.vector_norm(a, float("inf"), dim=(0,), keepdim=True), [TALL]),
    ("norm", lambda lib, a: lib.linalg.norm(a), [BATCH]),
    ("norm matrix nuc", lambda lib, a: lib.linalg.norm(a, "nuc"), [TALL]),
    ("norm vector 1", lambda lib, a: lib.linalg.norm(a, 1), [VEC]),
    ("norm dim", lambda lib, a: lib.linalg.norm(a, -float("inf"), dim=1), [TALL]),
    ("norm matrix dims", lambda lib, a: lib.linalg.norm(a, 2, dim=(1, 2)), [BATCH]),
    ("cross", lambda lib, a, b: lib.linalg.cross(a, b), [VEC3, VEC3[::-1]]),
    ("cross dim", lambda lib, a, b: lib.linalg.cross(a.mT, b.mT, dim=0), [VEC3, VEC3[::-1]]),
    ("cross top-level", lambda lib, a, b: lib.cross(a, b, dim=1), [VEC3, VEC3[::-1]]),
    ("multi_dot", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [TALL, WIDE, TALL]),
    ("multi_dot vectors", lambda lib, v, a, w: lib.linalg.multi_dot([v, a, a, w]), [VEC, SQUARE, VEC]),
    ("multi_dot two", lambda lib, a, b: lib.linalg.multi_dot([a, b]), [TALL, WIDE]),
    ("matrix_power 0", lambda lib, a: lib.linalg.matrix_power(a, 0), [SQUARE]),
    ("matrix_power 1", lambda lib, a: lib.linalg.matrix_power(a, 1), [SQUARE]),
    ("matrix_power 3", lambda lib, a: lib.linalg.matrix_power(a, 3), [SQUARE]),
    ("matrix_power 6", lambda lib, a: lib.matrix_power(a * 0.5, 6), [BATCH]),
    ("matrix_power -1", lambda lib, a: lib.linalg.matrix_power(a, -1), [SQUARE]),
    ("matrix_power -5", lambda lib, a: a.matrix_power(-5), [SQUARE]),
    ("lu L", lambda lib, a: lib.linalg.lu(a).L, [SQUARE]),
    ("lu U", lambda lib, a: lib.linalg.lu(a).U, [BATCH]),
    ("lu tall", lambda lib, a: (lambda r: r.L.sum(-1) * r.U.sum())(lib.linalg.lu(a)), [TALL]),
    ("lu wide", lambda lib, a: (lambda r: r.U.sum(-2) * r.L.sum())(lib.linalg.lu(a)), [WIDE]),
    ("lu_factor", lambda lib, a: lib.linalg.lu_factor(a).LU, [SQUARE]),
    ("lu_factor tall", lambda lib, a: lib.linalg.lu_factor(a).LU, [TALL]),
    ("lu_factor_ex wide", lambda lib, a: lib.linalg.lu_factor_ex(a).LU, [WIDE]),
    ("lu_unpack L", lambda lib, a: (lambda f: lib.lu_unpack(f.LU, f.pivots).L)(lib.linalg.lu_factor(a)), [WIDE]),
    ("lu_unpack U", lambda lib, a: (lambda f: lib.lu_unpack(f.LU, f.pivots).U)(lib.linalg.lu_factor(a)), [TALL]),
    ("lu_solve", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), [SQUARE, RHS]),
    ("lu_solve adjoint", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True),
     [SQUARE, RHS]),
    ("lu_solve right", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False),
     [SQUARE, RHS]),
    ("lu_solve right adjoint",
     lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False, adjoint=True), [BATCH, RHS]),
    ("torch.lu and lu_solve", lambda lib, a, b: lib.lu_solve(b, *lib.lu(a)), [SQUARE, RHS]),
    ("Tensor.lu", lambda lib, a: a.lu(get_infos=True)[0], [TALL]),
    ("householder_product", lambda lib, a, t: lib.linalg.householder_product(a, t), [TALL, VEC3[0]]),
    ("householder_product k < n", lambda lib, a, t: lib.linalg.householder_product(a, t), [TALL, VEC3[0][:2]]),
    ("householder_product no reflector", lambda lib, a: lib.linalg.householder_product(a, a[0, :0]), [TALL]),
    ("inv_ex", lambda lib, a: lib.linalg.inv_ex(a).inverse, [BATCH]),
    ("solve_ex", lambda lib, a, b: lib.linalg.solve_ex(a, b).result, [SQUARE, RHS]),
    ("cholesky_ex", lambda lib, a: lib.linalg.cholesky_ex(_spd(lib, a)).L, [SQUARE]),
    ("cholesky_inverse", lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(_spd(lib, a))), [SQUARE]),
    ("cholesky_inverse upper", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True).cholesky_inverse(True),
     [BATCH]),
    ("triangular_solve", lambda lib, b, a: lib.triangular_solve(b, a).solution, [RHS, SQUARE]),
    ("triangular_solve transpose lower",
     lambda lib, b, a: lib.triangular_solve(b, a.tril(), upper=False, transpose=True)[0], [RHS, SQUARE]),
    ("triangular_solve copy", lambda lib, b, a: lib.triangular_solve(b, a).cloned_coefficient, [RHS, SQUARE]),
    ("tensorinv", lambda lib, a: lib.linalg.tensorinv(a.reshape(2, 2, 4), ind=2), [SQUARE]),
    ("tensorsolve", lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 2, 2, 2), b.reshape(2, 2)),
     [SQUARE, VEC]),
    ("tensorsolve dims", lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 2, 2, 2), b.reshape(2, 2), dims=(0,)),
     [SQUARE, VEC]),
    ("vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b), [VEC, VEC]),
    ("vecdot dim", lambda lib, a, b: lib.linalg.vecdot(a, b, dim=0), [TALL, TALL]),
    ("diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=1), [BATCH]),
    ("cond", lambda lib, a: lib.linalg.cond(a), [SQUARE]),
    ("cond -2", lambda lib, a: lib.linalg.cond(a, -2), [BATCH]),
    ("vander", lambda lib, a: lib.linalg.vander(a), [VEC]),
    ("vander N", lambda lib, a: lib.linalg.vander(a, N=3), [VEC3]),
    ("mH", lambda lib, a: a.mH, [BATCH]),
    ("H", lambda lib, a: a.H * 1.0, [TALL]),
    ("adjoint", lambda lib, a: a.adjoint(), [TALL]),
    ("abs", lambda lib, a: abs(a), [TALL]),
    ("torch.norm nuc", lambda lib, a: lib.norm(a, "nuc"), [TALL]),
    ("norm nuc method dims", lambda lib, a: a.norm("nuc", dim=(0, 2), keepdim=True), [BATCH]),
    ("vector_norm 0.5 at zeros", lambda lib, a: lib.linalg.vector_norm(a * lib.tensor([0.0, 1.0, 1.0, 0.0],
                                                                                      dtype=torch.float64), 0.5),
     [VEC]),
    ("vector_norm 1.5 at zeros", lambda lib, a: lib.linalg.vector_norm(a * lib.tensor([0.0, 1.0, 1.0, 0.0],
                                                                                      dtype=torch.float64), 1.5),
     [VEC]),
]


@pytest.mark.parametrize("name, fn, data", TWINS, ids=[t[0] for t in TWINS])
def test_each_op_matches_torch(name, fn, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch.cholesky, torch.qr and torch.svd are deprecated in torch
        assert_twins(fn, *data)


@pytest.mark.parametrize("call, data", [
    (lambda lib, a: lib.cholesky(_spd(lib, a)), [SQUARE]),
    (lambda lib, a: _spd(lib, a).cholesky(upper=True), [SQUARE]),
    (lambda lib, a, t, c: lib.ormqr(a, t, c), [TALL, VEC3[0], TALL]),
    (lambda lib, a, t, c: lib.ormqr(a, t, c.mT, left=False, transpose=True), [TALL, VEC3[0], TALL]),
    (lambda lib, a, t, c: a.ormqr(t, c, transpose=True), [TALL, VEC3[0], TALL]),
    (lambda lib, a, t, c: lib.ormqr(a[:, :2].mT, t[:2], c[:2], transpose=True), [TALL, VEC3[0], TALL]),
], ids=["cholesky", "cholesky method upper", "ormqr", "ormqr right transposed", "ormqr method", "ormqr wide"])
def test_ops_without_forward_mode_in_torch_match_torch_and_refuse_it_in_both(call, data):
    """torch.cholesky (deprecated) and torch.ormqr have no forward-mode formula in torch: the value, node, gradients
    and second derivatives are compared, and forward mode is refused by both."""
    import torch.autograd.forward_ad as tfw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = []
        for lib in (tg, torch):
            leaves = [lib.tensor(d, dtype=torch.float64, requires_grad=True) for d in data]
            out = call(lib, *leaves)
            grads = lib.autograd.grad(out.sum(), leaves, create_graph=True)
            seconds = lib.autograd.grad(sum(g.sum() for g in grads), leaves)
            results.append((out.grad_fn.name(), out, *grads, *seconds))
            fw = tg.autograd.forward_ad if lib is tg else tfw
            with fw.dual_level(), pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
                call(lib, *[fw.make_dual(x.detach(), lib.ones(x.shape, dtype=torch.float64)) for x in leaves])
    (name, *ours), (torch_name, *theirs) = results
    assert name == torch_name
    _close(ours, theirs)


def test_cholesky_inverse_tangent_is_torchs_though_finite_differences_disagree_with_it():
    """torch's forward-mode formula for cholesky_inverse is not the derivative (its jvp differs from finite
    differences even along a lower-triangular direction); teachgrad gives torch's numbers, as promised, and this
    test records the disagreement so that a fix in torch shows up here."""
    L = torch.linalg.cholesky(torch.tensor(SQUARE, dtype=torch.float64) @ torch.tensor(SQUARE).mT.double()
                              + torch.eye(N, dtype=torch.float64))
    direction = torch.ones(N, N, dtype=torch.float64).tril()
    _, theirs = torch.func.jvp(torch.cholesky_inverse, (L,), (direction,))
    _, ours = tg.func.jvp(tg.cholesky_inverse, (tg.tensor(L.tolist(), dtype=torch.float64),),
                          (tg.tensor(direction.tolist(), dtype=torch.float64),))
    torch.testing.assert_close(ours.data, theirs)
    eps = 1e-6
    finite = (torch.cholesky_inverse(L + eps * direction) - torch.cholesky_inverse(L - eps * direction)) / (2 * eps)
    assert not torch.allclose(finite, theirs, atol=1e-4)


# --- gradcheck and gradgradcheck: the formulas against finite differences --------------------------------------

def _leaves(*data):
    return [tg.tensor(d, dtype=torch.float64, requires_grad=True) for d in data]


CHECKED = [
    ("det", lambda a: tg.linalg.det(a), [SQUARE]),
    ("slogdet", lambda a: tg.linalg.slogdet(a).logabsdet, [BATCH]),
    ("inv", lambda a: tg.linalg.inv(a), [SQUARE]),
    ("solve", lambda a, b: tg.linalg.solve(a, b), [SQUARE, RHS]),
    ("solve right", lambda a, b: tg.linalg.solve(a, b.mT, left=False), [SQUARE, RHS]),
    ("solve_triangular", lambda a, b: tg.linalg.solve_triangular(a, b, upper=True), [SQUARE, RHS]),
    ("solve_triangular unit right", lambda a, b: tg.linalg.solve_triangular(a, b.mT, upper=False, left=False,
                                                                            unitriangular=True), [SQUARE, RHS]),
    ("cholesky", lambda a: tg.linalg.cholesky(_spd(tg, a)), [SQUARE]),
    ("cholesky upper", lambda a: tg.linalg.cholesky(_spd(tg, a), upper=True), [SQUARE]),
    ("cholesky_solve", lambda a, b: tg.cholesky_solve(b, tg.linalg.cholesky(_spd(tg, a))), [SQUARE, RHS]),
    ("qr tall", lambda a: tg.linalg.qr(a), [TALL]),
    ("qr wide", lambda a: tg.linalg.qr(a), [WIDE]),
    ("svd tall", lambda a: (lambda r: (_projector(r.U, 2), r.S, _projector(r.Vh.mT, 2)))(tg.linalg.svd(a, False)),
     [TALL]),
    ("svd wide", lambda a: (lambda r: (_projector(r.U, 2), r.S, _projector(r.Vh.mT, 2)))(tg.linalg.svd(a, False)),
     [WIDE]),
    ("svdvals", lambda a: tg.linalg.svdvals(a), [SQUARE]),
    ("eigh", lambda a: (lambda r: (r.eigenvalues, _projector(r.eigenvectors, 2)))(tg.linalg.eigh(_sym(a))),
     [SQUARE]),
    ("eigvalsh", lambda a: tg.linalg.eigvalsh(_sym(a)), [BATCH]),
    ("matrix_exp", lambda a: tg.linalg.matrix_exp(a * 0.3), [SQUARE]),
    ("lstsq", lambda a, b: tg.linalg.lstsq(a, b).solution, [TALL, TALL]),
    ("pinv", lambda a: tg.linalg.pinv(a), [WIDE]),
    ("matrix_norm nuc", lambda a: tg.linalg.matrix_norm(a, "nuc"), [TALL]),
    ("cross", lambda a, b: tg.linalg.cross(a, b), [VEC3, VEC3[::-1]]),
    ("matrix_power -2", lambda a: tg.linalg.matrix_power(a, -2), [SQUARE]),
]


@pytest.mark.parametrize("name, fn, data", CHECKED, ids=[c[0] for c in CHECKED])
def test_gradcheck_and_gradgradcheck(name, fn, data):
    inputs = _leaves(*data)
    assert tg.autograd.gradcheck(fn, inputs)
    assert tg.autograd.gradgradcheck(fn, inputs)


# --- forward mode against torch.func.jvp -------------------------------------------------------------------------

JVPS = [
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a)),
    ("svd", lambda lib, a: tuple(lib.linalg.svd(a, full_matrices=False))),
    ("eigh", lambda lib, a: tuple(lib.linalg.eigh(_sym(a)))),
    ("qr", lambda lib, a: tuple(lib.linalg.qr(a))),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True)),
    ("lstsq", lambda lib, a: lib.linalg.lstsq(a, a[:, :2]).solution),
    ("pinv", lambda lib, a: lib.linalg.pinv(a)),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a)),
]


@pytest.mark.parametrize("name, fn", JVPS, ids=[j[0] for j in JVPS])
def test_tangents_match_torch_func_jvp_for_a_random_direction(name, fn):
    a = torch.tensor(SQUARE, dtype=torch.float64)
    v = torch.randn(N, N, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    theirs = torch.func.jvp(lambda x: fn(torch, x), (a,), (v,))
    ours = tg.func.jvp(lambda x: fn(tg, x), (tg.tensor(a.tolist(), dtype=torch.float64),),
                       (tg.tensor(v.tolist(), dtype=torch.float64),))
    for o, t in zip(ours, theirs):
        for x, y in zip(o if isinstance(o, tuple) else (o,), t if isinstance(t, tuple) else (t,)):
            torch.testing.assert_close(x.data, y)


# --- named tuples, batches and vmap ------------------------------------------------------------------------------

@pytest.mark.parametrize("call, fields", [
    (lambda lib, a: lib.linalg.slogdet(a), ("sign", "logabsdet")),
    (lambda lib, a: lib.slogdet(a), ("sign", "logabsdet")),
    (lambda lib, a: lib.linalg.qr(a), ("Q", "R")),
    (lambda lib, a: lib.qr(a), ("Q", "R")),
    (lambda lib, a: lib.linalg.svd(a), ("U", "S", "Vh")),
    (lambda lib, a: lib.svd(a), ("U", "S", "V")),
    (lambda lib, a: lib.linalg.eigh(a), ("eigenvalues", "eigenvectors")),
    (lambda lib, a: lib.linalg.lstsq(a, a), ("solution", "residuals", "rank", "singular_values")),
])
def test_results_are_torchs_named_tuples_of_variables(call, fields):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = call(torch, torch.tensor(SQUARE, dtype=torch.float64, requires_grad=True))
        ours = call(tg, tg.tensor(SQUARE, dtype=torch.float64, requires_grad=True))
    assert type(ours) is type(theirs) and len(ours) == len(theirs) == len(fields)
    for field in fields:
        o, t = getattr(ours, field), getattr(theirs, field)
        assert isinstance(o, tg.Variable)
        assert o.requires_grad == t.requires_grad
        assert (o.grad_fn and o.grad_fn.name()) == (t.grad_fn and t.grad_fn.name())
        torch.testing.assert_close(o.data, t.detach())


@pytest.mark.parametrize("call, data", [
    (lambda lib, a: lib.linalg.det(a), BATCH),
    (lambda lib, a: lib.linalg.inv(a), BATCH),
    (lambda lib, a: lib.linalg.svd(a).S, BATCH),
    (lambda lib, a: lib.linalg.eigvalsh(_sym(a)), BATCH),
    (lambda lib, a: lib.linalg.matrix_exp(a * 0.2), BATCH),
    (lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), BATCH),
    (lambda lib, a: lib.linalg.solve(a, a[0]), BATCH),
])
def test_vmap_over_a_batch_of_matrices_matches_torch(call, data):
    x = torch.tensor(data, dtype=torch.float64)
    theirs = torch.func.vmap(lambda a: call(torch, a))(x)
    ours = tg.func.vmap(lambda a: call(tg, a))(tg.tensor(data, dtype=torch.float64))
    torch.testing.assert_close(ours.data, theirs)
    grads = tg.func.vmap(tg.func.grad(lambda a: call(tg, a).sum()))(tg.tensor(data, dtype=torch.float64))
    torch.testing.assert_close(grads.data, torch.func.vmap(torch.func.grad(lambda a: call(torch, a).sum()))(x))


def test_torchs_own_linalg_functions_on_variables_record_teachgrads_ops():
    a = tg.tensor(SQUARE, dtype=torch.float64, requires_grad=True)
    out = torch.linalg.det(a)
    assert isinstance(out, tg.Variable) and out.grad_fn.name() == "LinalgDetBackward0"
    out.backward()
    t = torch.tensor(SQUARE, dtype=torch.float64, requires_grad=True)
    torch.linalg.det(t).backward()
    torch.testing.assert_close(a.grad.data, t.grad)


# --- errors, and torch's values where the derivative is not defined ----------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.det(lib.ones(2, 3, requires_grad=True)),
    lambda lib: lib.det(lib.ones(3, requires_grad=True)),
    lambda lib: lib.linalg.cholesky(-lib.eye(3).requires_grad_()),
    lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), -lib.eye(2)]).requires_grad_()),
    lambda lib: lib.linalg.inv(lib.zeros(2, 2, requires_grad=True)),
    lambda lib: lib.linalg.solve(lib.eye(3).requires_grad_(), lib.ones(2, 1)),
    lambda lib: lib.linalg.qr(lib.ones(3, 2, requires_grad=True), mode="r").R.sum().backward(),
    lambda lib: lib.linalg.qr(lib.ones(3, 2, requires_grad=True) + lib.eye(3, 2), mode="complete").Q.sum().backward(),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, requires_grad=True)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3, requires_grad=True), 3),
    lambda lib: lib.linalg.norm(lib.ones(2, 2, 2, requires_grad=True), 2),
    lambda lib: lib.linalg.cross(lib.ones(2, 2, requires_grad=True), lib.ones(2, 2)),
    lambda lib: lib.linalg.multi_dot([lib.ones(2, 2, requires_grad=True)]),
])
def test_errors_match_torchs(call):
    ours = same(call)
    assert ours[0] == "raised"


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.inv_ex(lib.zeros(2, 2, requires_grad=True)).info,
    lambda lib: lib.linalg.inv_ex(lib.zeros(2, 2, requires_grad=True), check_errors=True),
    lambda lib: lib.linalg.cholesky_ex(-lib.eye(2).requires_grad_()).info,
    lambda lib: lib.linalg.cholesky_ex(-lib.eye(2).requires_grad_(), check_errors=True),
    lambda lib: lib.linalg.solve_ex(lib.zeros(2, 2, requires_grad=True), lib.ones(2)).info,
    lambda lib: lib.linalg.solve(lib.zeros(2, 2, requires_grad=True), lib.ones(2)),
    lambda lib: lib.linalg.matrix_rank(lib.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)),
    lambda lib: lib.linalg.matrix_rank(lib.eye(3).requires_grad_(), hermitian=True, atol=0.5),
    lambda lib: lib.linalg.vander(lib.ones(2), N=-1),
    lambda lib: lib.ones(2, 2, 2).H,
    lambda lib: lib.ones(2).H,
    lambda lib: lib.linalg.lu(lib.eye(2).requires_grad_(), pivot=False),
    lambda lib: lib.linalg.lu_factor(lib.zeros(2, 2, requires_grad=True)),
    lambda lib: lib.linalg.lu_factor_ex(lib.zeros(2, 2, requires_grad=True)).info,
])
def test_the_ex_variants_and_integer_results_match_torch(call):
    same(call)


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.geqrf(a),
    lambda lib, a: a.geqrf(),
    lambda lib, a: lib.linalg.ldl_factor(_sym(a)),
    lambda lib, a: lib.linalg.ldl_factor_ex(_sym(a)),
    lambda lib, a: (lib.linalg.ldl_solve(*lib.linalg.ldl_factor(_sym(a).detach()), a),),
])
def test_factorizations_torch_cannot_differentiate_are_recorded_and_refuse_as_torchs(call):
    """geqrf and the LDLᵀ functions: torch's values, its node name, and torch's error when differentiated."""
    def program(lib):
        a = lib.tensor(SQUARE, dtype=torch.float64, requires_grad=True)
        out = call(lib, a)
        names = [o.grad_fn.name() if o.grad_fn is not None else None for o in out]
        try:
            out[0].sum().backward()
        except Exception as error:   # noqa: BLE001  (torch's error is the point)
            return out, names, type(error), str(error)
        return out, names, None
    same(program)


def test_a_matrix_that_is_not_positive_definite_raises_torchs_linalg_error():
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        tg.linalg.cholesky(-tg.eye(3).requires_grad_())
    assert tg.linalg.LinAlgError is torch.linalg.LinAlgError


def test_eig_and_eigvals_are_refused_while_a_gradient_is_asked_for():
    a = tg.tensor(SQUARE, dtype=torch.float64, requires_grad=True)
    for call in (tg.linalg.eig, tg.linalg.eigvals):
        with pytest.raises(RuntimeError, match="teachgrad does not differentiate eig and eigvals yet"):
            call(a)
    with tg.no_grad():   # no gradient asked for: torch's values
        torch.testing.assert_close(tg.linalg.eigvals(a).data, torch.linalg.eigvals(a.data))
        assert type(tg.linalg.eig(a)) is torch.return_types.linalg_eig


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.linalg.svd(a).U.sum(),                       # repeated singular values: nan, as torch
    lambda lib, a: lib.linalg.svd(a).S.sum(),                       # the values alone are fine
    lambda lib, a: lib.linalg.eigh(a).eigenvectors.sum(),           # repeated eigenvalues: nan, as torch
    lambda lib, a: lib.linalg.eigh(a).eigenvalues.sum(),
    lambda lib, a: lib.linalg.det(a - lib.eye(3, dtype=torch.float64)),   # a singular matrix's det: its cofactors
    lambda lib, a: lib.linalg.det(a * lib.tensor([1.0, 1.0, 0.0], dtype=torch.float64)),
])
def test_repeated_singular_values_and_eigenvalues_give_torchs_values(call):
    def program(lib):
        a = lib.eye(3, dtype=torch.float64).requires_grad_()
        call(lib, a).backward()
        return a.grad
    same(program)


def test_a_real_loss_of_a_singular_vectors_sign_is_not_refused_as_torch():
    """torch checks a loss's dependence on the vectors' phase only for complex inputs; a real input's sign is left to
    the user (both libraries give the gradient of the sign LAPACK chose)."""
    def program(lib):
        a = lib.tensor(TALL, dtype=torch.float64, requires_grad=True)
        lib.linalg.svd(a, full_matrices=False).U[0, 0].backward()
        return (a.grad,)
    _run_both(program)


# --- the learners' programs ------------------------------------------------------------------------------------

def _close(ours, theirs):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        torch.testing.assert_close(o.data if isinstance(o, tg.Variable) else o, t.detach() if t is not None else t)


def _run_both(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(program(tg), program(torch))


def test_gaussian_process_negative_log_likelihood():
    """A GP's NLL: K = k(x, x) + σ²I, L = chol(K), α = K⁻¹ y (cholesky_solve and solve_triangular both),
    NLL = ½ yᵀα + ½ logdet K + n/2 log 2π; its gradient in the kernel's length scale, noise and the inputs."""
    def program(lib):
        g = torch.Generator().manual_seed(1)
        x = lib.tensor(torch.linspace(-2, 2, 7, dtype=torch.float64).tolist(), dtype=torch.float64,
                       requires_grad=True)
        y = lib.tensor(torch.randn(7, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64)
        log_scale = lib.tensor(0.1, dtype=torch.float64, requires_grad=True)
        log_noise = lib.tensor(-1.0, dtype=torch.float64, requires_grad=True)
        K = lib.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / lib.exp(2 * log_scale))
        K = K + lib.exp(2 * log_noise) * lib.eye(7, dtype=torch.float64)
        L = lib.linalg.cholesky(K)
        alpha = lib.cholesky_solve(y[:, None], L)
        z = lib.linalg.solve_triangular(L, y[:, None], upper=False)
        nll = 0.5 * (y[:, None] * alpha).sum() + 0.5 * lib.logdet(K) + 3.5 * torch.log(torch.tensor(2 * torch.pi))
        nll2 = 0.5 * (z * z).sum() + L.diagonal().log().sum()
        grads = lib.autograd.grad(nll + nll2, (x, log_scale, log_noise))
        return (nll, nll2, *grads)
    _run_both(program)


def test_pca_through_svd():
    """PCA: centre the data, take the top-2 right singular vectors, project; the reconstruction error's gradient."""
    def program(lib):
        g = torch.Generator().manual_seed(2)
        X = lib.tensor(torch.randn(20, 5, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64,
                       requires_grad=True)
        centred = X - X.mean(0)
        U, S, Vh = lib.linalg.svd(centred, full_matrices=False)
        components = Vh[:2]
        reconstruction = centred @ components.T @ components
        loss = ((centred - reconstruction) ** 2).sum() + S[:2].sum()
        loss.backward()
        return loss, S, X.grad
    _run_both(program)


def test_normalizing_flow_slogdet():
    """A linear flow z = W x + b: log p(x) = log N(z) + log|det W|; the gradient in W and b."""
    def program(lib):
        g = torch.Generator().manual_seed(3)
        W = lib.tensor((torch.randn(3, 3, dtype=torch.float64, generator=g) + 2 * torch.eye(3)).tolist(),
                       dtype=torch.float64, requires_grad=True)
        b = lib.zeros(3, dtype=torch.float64, requires_grad=True)
        x = lib.tensor(torch.randn(10, 3, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64)
        z = x @ W.T + b
        sign, logabsdet = lib.slogdet(W)
        log_p = (-0.5 * (z ** 2).sum(1) - 1.5 * torch.log(torch.tensor(2 * torch.pi))).mean() + logabsdet
        (-log_p).backward()
        return log_p, sign, W.grad, b.grad
    _run_both(program)


def test_eigh_of_a_covariance():
    """The spectrum of a sample covariance: the top eigenvalue's share, and the top eigenvector's projector."""
    def program(lib):
        g = torch.Generator().manual_seed(4)
        X = lib.tensor(torch.randn(30, 4, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64,
                       requires_grad=True)
        C = (X - X.mean(0)).T @ (X - X.mean(0)) / 29
        values, vectors = lib.linalg.eigh(C)
        top = vectors[:, -1:]
        loss = values[-1] / values.sum() + (top @ top.T).trace()
        loss.backward()
        return loss, values, X.grad
    _run_both(program)


def test_matrix_exp_rotation():
    """exp of a skew matrix is a rotation: rotate a point and pull it towards a target; the angle's gradient."""
    def program(lib):
        theta = lib.tensor(0.7, dtype=torch.float64, requires_grad=True)
        generator = lib.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64)
        R = lib.matrix_exp(theta * generator)
        point = R @ lib.tensor([1.0, 0.0], dtype=torch.float64)
        loss = ((point - lib.tensor([0.0, 1.0], dtype=torch.float64)) ** 2).sum()
        loss.backward()
        return loss, R, theta.grad
    _run_both(program)


def test_lstsq_line_fit():
    """Fit a line by least squares; the gradient of the fit's loss in the data."""
    def program(lib):
        g = torch.Generator().manual_seed(5)
        t = torch.linspace(0, 1, 9, dtype=torch.float64)
        A = lib.tensor(torch.stack([t, torch.ones(9, dtype=torch.float64)], 1).tolist(), dtype=torch.float64,
                       requires_grad=True)
        y = lib.tensor((2 * t + 1 + 0.1 * torch.randn(9, dtype=torch.float64, generator=g)).tolist(),
                       dtype=torch.float64, requires_grad=True)
        solution = lib.linalg.lstsq(A, y[:, None]).solution
        loss = ((A @ solution - y[:, None]) ** 2).sum() + solution.sum()
        loss.backward()
        return solution, A.grad, y.grad
    _run_both(program)


def test_pinv_min_norm_solution():
    """The minimum-norm solution of an underdetermined system through pinv; gradients in A and b."""
    def program(lib):
        g = torch.Generator().manual_seed(6)
        A = lib.tensor(torch.randn(2, 4, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64,
                       requires_grad=True)
        b = lib.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
        x = lib.linalg.pinv(A) @ b
        loss = (x ** 2).sum() + lib.linalg.vector_norm(A @ x - b)
        loss.backward()
        return x, A.grad, b.grad
    _run_both(program)


def test_solve_triangular_back_substitution():
    """Back substitution with an upper-triangular system (the R of a QR), for least squares by QR."""
    def program(lib):
        g = torch.Generator().manual_seed(7)
        A = lib.tensor(torch.randn(6, 3, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64,
                       requires_grad=True)
        y = lib.tensor(torch.randn(6, 1, dtype=torch.float64, generator=g).tolist(), dtype=torch.float64)
        Q, R = lib.linalg.qr(A)
        x = lib.linalg.solve_triangular(R, Q.T @ y, upper=True)
        x.sum().backward()
        return x, A.grad
    _run_both(program)
