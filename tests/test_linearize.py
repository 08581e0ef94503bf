"""tg.func.linearize against torch.func.linearize, and reverse mode as the transpose of forward mode
(tg.func.linear_transpose) against the engine's VJP."""
import pytest
import torch

import teachgrad as tg
from tests.twins import same

torch.manual_seed(0)
X = torch.randn(3, dtype=torch.float64)
T = torch.randn(3, dtype=torch.float64)
U = torch.randn(2, dtype=torch.float64)
A = torch.randn(2, 3, dtype=torch.float64)


def f(lib, x):
    return (lib.tensor(A) @ x.sin()) * x.exp().sum()


def test_linearize_gives_the_output_and_the_jvp_at_the_point():
    same(lambda lib: lib.func.linearize(lambda x: f(lib, x), lib.tensor(X))[0])
    same(lambda lib: lib.func.linearize(lambda x: f(lib, x), lib.tensor(X))[1](lib.tensor(T)))
    same(lambda lib: lib.func.linearize(lambda x, y: x * y.cos(), lib.tensor(X), lib.tensor(T))[1](
        lib.tensor(T), lib.tensor(X)))


def test_jvp_fn_is_linear():
    _, jvp_fn = tg.func.linearize(lambda x: f(tg, x), tg.tensor(X))
    both = jvp_fn(tg.tensor(2 * T + X)).data
    assert torch.allclose(both, 2 * jvp_fn(tg.tensor(T)).data + jvp_fn(tg.tensor(X)).data)


def test_tangents_of_another_shape_are_refused():
    _, jvp_fn = tg.func.linearize(lambda x: x.sin(), tg.tensor(X))
    with pytest.raises(RuntimeError, match=r"Expected tangent to have shape \(3,\)"):
        jvp_fn(tg.tensor(U))


def test_transposing_forward_mode_gives_the_vjp():
    x = tg.tensor(X)
    _, jvp_fn = tg.func.linearize(lambda x: f(tg, x), x)
    transposed = tg.func.linear_transpose(jvp_fn, x)
    ours = transposed(tg.tensor(U))[0].data
    engine = tg.func.vjp(lambda x: f(tg, x), x)[1](tg.tensor(U))[0].data
    theirs = torch.func.vjp(lambda x: f(torch, x), X)[1](U)[0]
    assert torch.allclose(ours, engine) and torch.allclose(ours, theirs)
    # and <u, J t> = <Jᵀ u, t>: the transpose, for any t
    assert torch.allclose((U * jvp_fn(tg.tensor(T)).data).sum(), (ours * T).sum())
