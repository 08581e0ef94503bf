"""Random factories under tg.func.vmap against torch.func.vmap, seeded: randomness='different' draws one batch of
values (torch's bits: one draw of the batched shape; randperm one permutation per example), 'same' one draw
shared by the batch, 'error' torch's error; nested levels each as their own randomness says.
teachgrad/features/vmap.py (draw_random) and teachgrad/rules/batching.py."""
import pytest
import torch

import teachgrad as tg
from tests.twins import same

X = torch.zeros(3, 4, dtype=torch.float64)
DRAWS = {
    "randn": lambda lib, x: lib.randn(4, dtype=torch.float64) + x,
    "randn_tuple": lambda lib, x: lib.randn((2, 2), dtype=torch.float64) + x.view(2, 2),
    "randn_size_kw": lambda lib, x: lib.randn(size=(4,), dtype=torch.float64) + x,
    "rand": lambda lib, x: lib.rand(4, dtype=torch.float64) * x.exp(),
    "randn_like": lambda lib, x: lib.randn_like(x) + x,
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like_unbatched": lambda lib, x: lib.randn_like(lib.as_tensor(X[0])) + x,
    "randint": lambda lib, x: lib.randint(0, 10, (4,)) + x,
    "randint_high": lambda lib, x: lib.randint(7, (4,)) + x,
    "randperm": lambda lib, x: lib.randperm(4) + x,
}


def seeded(run):
    def snippet(lib):
        torch.manual_seed(0)
        return run(lib)
    return snippet


@pytest.mark.parametrize("randomness", ["different", "same", "error"])
@pytest.mark.parametrize("name", DRAWS)
def test_random_factories_as_torch_draws_them(name, randomness):
    draw = DRAWS[name]
    same(seeded(lambda lib: lib.func.vmap(lambda x: draw(lib, x), randomness=randomness)(lib.as_tensor(X))))


@pytest.mark.parametrize("outer", ["different", "same", "error"])
@pytest.mark.parametrize("inner", ["different", "same", "error"])
def test_nested_levels(outer, inner):
    xs = torch.zeros(3, 5, 2, dtype=torch.float64)
    same(seeded(lambda lib: lib.func.vmap(lib.func.vmap(lambda x: lib.randn(2, dtype=torch.float64) + x,
                                                         randomness=inner), randomness=outer)(lib.as_tensor(xs))))


def test_different_draws_differ_per_example_and_gradients_flow():
    same(seeded(lambda lib: lib.func.vmap(lib.func.grad(lambda x: (x * lib.randn(4, dtype=torch.float64)).sin().sum()),
                                          randomness="different")(lib.as_tensor(X))))


# --- reverse mode called from inside vmap: torch's errors -------------------------------------------------------

W = torch.randn(4, dtype=torch.float64)


@pytest.mark.parametrize("call", [
    lambda lib, w: lambda x: (x * w).sum().backward(),
    lambda lib, w: lambda x: x.clone().requires_grad_(),
    lambda lib, w: lambda x: x.detach().requires_grad_(),
], ids=["backward", "requires_grad_", "detach_requires_grad_"])
def test_backward_and_requires_grad_inside_vmap_are_torchs_errors(call):
    same(lambda lib: lib.func.vmap(call(lib, lib.tensor(W, requires_grad=True)))(lib.as_tensor(X + 1)))


@pytest.mark.parametrize("call", [
    lambda lib, w: lambda x: (w * 2).sum().backward() or x,                        # an unbatched result
    lambda lib, w: lambda x: lib.autograd.backward([(w * 2).sum()]) or x,
    lambda lib, w: lambda x: lib.autograd.grad((x * w).sum(), w)[0],              # a batched output
    lambda lib, w: lambda x: lib.autograd.grad([(x * w).sum()], [w], [lib.ones(())])[0],
    lambda lib, w: lambda x: lib.autograd.grad((x * 2).sum(), x)[0],
    lambda lib, w: lambda x: lib.autograd.grad((w * 2).sum(), w)[0] + x,          # unbatched: torch runs it
], ids=["backward_unbatched", "autograd_backward_unbatched", "grad_of_batched", "grad_of_batched_with_seed",
        "grad_wrt_example", "grad_of_unbatched"])
def test_the_engine_called_inside_vmap_as_torchs(call):
    """Torch refuses backward() anywhere inside a transform, and autograd.grad of a batched output (it has no
    grad_fn at the outer level); teachgrad ran the first and named torch.ones_like for the second."""
    same(lambda lib: lib.func.vmap(call(lib, lib.tensor(W, requires_grad=True)))(lib.as_tensor(X + 1)))
