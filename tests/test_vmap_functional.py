"""tg.autograd.functional.jacobian / hessian with vectorize=True compute under tg.func.vmap, as torch's do (the
function runs on a batch, not once per row), with torch's values; gradcheck's check_batched_grad compares vmap's
gradients with a loop's. teachgrad/autograd/functional.py and gradcheck.py."""
import pytest
import torch

import teachgrad as tg
from teachgrad.rules import batching
from tests.test_vmap import same

torch.manual_seed(7)
X = torch.randn(3, 2, dtype=torch.float64)
Y = torch.randn(2, dtype=torch.float64)


def two_out(a, b):
    return (a @ b).sin() * a.sum(), (a.exp() * b).sum(0)


def scalar(a, b):
    return ((a @ b).tanh() * b.sum()).sum()


CASES = {
    "jacobian": lambda F, lib: F.jacobian(two_out, (lib.as_tensor(X), lib.as_tensor(Y)), vectorize=True),
    "jacobian_create_graph": lambda F, lib: F.jacobian(two_out, (lib.as_tensor(X), lib.as_tensor(Y)),
                                                       vectorize=True, create_graph=True),
    "jacobian_forward": lambda F, lib: F.jacobian(two_out, (lib.as_tensor(X), lib.as_tensor(Y)), vectorize=True,
                                                  strategy="forward-mode"),
    "hessian": lambda F, lib: F.hessian(scalar, (lib.as_tensor(X), lib.as_tensor(Y)), vectorize=True),
    "hessian_forward_over_reverse": lambda F, lib: F.hessian(scalar, (lib.as_tensor(X), lib.as_tensor(Y)),
                                                             vectorize=True, outer_jacobian_strategy="forward-mode"),
}


@pytest.mark.parametrize("name", CASES)
def test_vectorized_values_as_torch(name):
    same(lambda lib: CASES[name](lib.autograd.functional, lib))


def test_second_derivative_through_a_vectorized_jacobian():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        jac = lib.autograd.functional.jacobian(lambda a: a.sin() * a.sum(), x, vectorize=True, create_graph=True)
        return lib.autograd.grad(jac.cos().sum(), x)
    same(run)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorize_runs_the_function_under_vmap_not_once_per_row(strategy):
    seen = []

    def f(a):
        seen.append(batching.vmap_depth)
        return a.exp() * a.sum()
    x = tg.as_tensor(torch.randn(5, 4, dtype=torch.float64))
    vectorized = tg.autograd.functional.jacobian(f, x, vectorize=True, strategy=strategy)
    assert len(seen) == 2 and seen[-1] == 1          # once for the outputs' shapes, once batched over 20 rows
    if strategy == "reverse-mode":
        seen.clear()
        looped = tg.autograd.functional.jacobian(f, x)
        assert len(seen) == 1 and torch.allclose(vectorized.data, looped.data, atol=1e-12)


def test_vmap_of_grad_with_an_input_the_output_does_not_depend_on():
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a, b: (a * 2).sum(), argnums=(0, 1)))(
        lib.as_tensor(X), lib.as_tensor(X.cos())))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a, b: (a * 2).sum(), argnums=(0, 1)), in_dims=(0, None))(
        lib.as_tensor(X), lib.as_tensor(Y)))
