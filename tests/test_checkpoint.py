"""`tg.utils.checkpoint` against `torch.utils.checkpoint`: gradients, how often the segment runs,
random numbers preserved, nesting, inputs that need no grad, warnings and errors."""
import importlib
import warnings

import pytest
import torch

import teachgrad as tg
from tests.helpers import close


def both(fn):
    return fn(tg), fn(torch)


def ckpt(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def grad_of(x):
    return None if x.grad is None else (x.grad.data if isinstance(x, tg.Variable) else x.grad).clone()


def dropout_block(lib, calls):
    def block(x, w):
        calls.append(1)
        h = (x @ w).tanh()
        keep = (torch.rand(h.shape) > 0.5).to(h.dtype)
        return (h * (tg.Variable(keep) if lib is tg else keep)).sin()
    return block


@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("preserve", [True, False])
def test_gradients_and_recompute_counts_match_torch(reentrant, preserve):
    def run(lib):
        torch.manual_seed(0)
        x = lib.randn(4, 3, dtype=lib.float64, requires_grad=True)
        w = lib.randn(3, 5, dtype=lib.float64, requires_grad=True)
        calls = []
        y = ckpt(lib).checkpoint(dropout_block(lib, calls), x, w, use_reentrant=reentrant,
                                 preserve_rng_state=preserve)
        y.sum().backward(retain_graph=not reentrant)
        first = grad_of(x), grad_of(w)
        if not reentrant:
            y.sum().backward()
        return y, first, grad_of(x), len(calls)

    ours, theirs = both(run)
    assert close(ours[0], theirs[0])
    for a, b in zip(ours[1] + (ours[2],), theirs[1] + (theirs[2],)):
        assert close(a, b)
    assert ours[3] == theirs[3] == (3 if not reentrant else 2)


def test_preserved_random_state_gives_the_gradient_of_the_forward_that_ran():
    """Without preserve_rng_state the rerun draws other numbers: a different (wrong) gradient."""
    def run(lib, preserve):
        torch.manual_seed(0)
        x = lib.randn(4, 3, dtype=lib.float64, requires_grad=True)
        w = lib.randn(3, 5, dtype=lib.float64, requires_grad=True)
        y = ckpt(lib).checkpoint(dropout_block(lib, []), x, w, use_reentrant=False, preserve_rng_state=preserve)
        y.sum().backward()
        return grad_of(x)

    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    dropout_block(torch, [])(x, w).sum().backward()
    assert close(run(tg, True), x.grad)
    assert not close(run(tg, False), x.grad)


def test_nested_checkpoints():
    def run(lib):
        calls = {"outer": 0, "inner": 0}

        def inner(x):
            calls["inner"] += 1
            return x.exp() * x

        def outer(x):
            calls["outer"] += 1
            return ckpt(lib).checkpoint(inner, x.sin(), use_reentrant=False).cos()

        x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        y = ckpt(lib).checkpoint(outer, x, use_reentrant=False)
        y.sum().backward()
        return grad_of(x), calls

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and ours[1] == theirs[1]


def test_inputs_that_need_no_grad_and_parameters_in_the_segment():
    def run(lib):
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        z = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        y = ckpt(lib).checkpoint(lambda a: (a * w).exp(), z, use_reentrant=False)
        y.sum().backward()
        return grad_of(w), y.requires_grad

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and ours[1] == theirs[1]

    def reentrant(lib):
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        z = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = ckpt(lib).checkpoint(lambda a: (a * w).exp(), z, use_reentrant=True)
        return y.requires_grad, [str(c.message) for c in caught]

    assert both(reentrant)[0] == both(reentrant)[1]


def test_grad_and_double_backward_through_a_non_reentrant_checkpoint():
    def run(lib):
        x = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
        y = ckpt(lib).checkpoint(lambda a: (a * a).sin(), x, use_reentrant=False)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g, h

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])


def test_checkpoint_sequential():
    def run(lib):
        fs = [lambda a: a.sin(), lambda a: a * 2, lambda a: a.exp(), lambda a: a.tanh(), lambda a: a * a]
        x = lib.tensor([0.1, 0.2, -0.3], dtype=lib.float64, requires_grad=True)
        out = ckpt(lib).checkpoint_sequential(fs, 2, x, use_reentrant=False)
        out.sum().backward()
        return out, grad_of(x)

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])


def test_warnings_and_errors_match_torch():
    def messages(lib, call):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call(lib)
                error = None
            except Exception as e:
                error = (type(e).__name__, str(e))
        return [str(c.message) for c in caught], error

    x_of = lambda lib: lib.ones(2, requires_grad=True)

    def grad_through_reentrant(lib):
        x = x_of(lib)
        lib.autograd.grad(ckpt(lib).checkpoint(lambda a: a.sin(), x, use_reentrant=True).sum(), x)

    calls = [
        lambda lib: ckpt(lib).checkpoint(lambda a: a.sin(), x_of(lib)),
        lambda lib: ckpt(lib).checkpoint_sequential([lambda a: a.sin()], 1, x_of(lib)),
        lambda lib: ckpt(lib).checkpoint(lambda a: a.sin(), x_of(lib), use_reentrant=True, foo=1),
        lambda lib: ckpt(lib).checkpoint_sequential([lambda a: a.sin()], 1, x_of(lib), use_reentrant=False, foo=1),
        grad_through_reentrant,
    ]
    for call in calls:
        assert messages(tg, call) == messages(torch, call)


def test_the_segment_saves_nothing_but_placeholders():
    """What the graph holds after a checkpointed forward: no tensor of the segment (drawn as recomputed)."""
    x = tg.randn(3, requires_grad=True)
    y = tg.utils.checkpoint.checkpoint(lambda a: a.sin().exp(), x, use_reentrant=False)
    dot = tg.viz.draw(y, names={"x": x, "y": y}).source
    assert dot.count("recomputed in backward") == 2
    assert all(s.data is None and s.packed is not None for s in y.grad_fn._saved)


@pytest.mark.parametrize("segments", [1, 2, 4])
def test_hooks_around_a_checkpoint_see_what_torch_keeps(segments):
    """Outer pack hooks see the tensors saved outside checkpoints and each checkpoint's inputs, as in torch."""
    def run(lib):
        g = torch.Generator().manual_seed(1)
        ws = [torch.randn(6, 6, generator=g, dtype=torch.float64) for _ in range(8)]
        ws = [lib.Variable(w, requires_grad=True) if lib is tg else w.requires_grad_() for w in ws]
        x = lib.ones(3, 6, dtype=lib.float64)
        kept = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: kept.append(tuple(t.shape)) or t, lambda t: t):
            layers = [(lambda w: (lambda h: (h @ w).tanh()))(w) for w in ws]
            out = ckpt(lib).checkpoint_sequential(layers, segments, x, use_reentrant=False)
        out.sum().backward()
        return sorted(kept), grad_of(ws[0])

    ours, theirs = both(run)
    assert ours[0] == theirs[0] and close(ours[1], theirs[1])
