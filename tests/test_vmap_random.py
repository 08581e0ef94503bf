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
