"""Saved-tensor hooks (`tg.autograd.graph`) against torch's: what is packed for every op, when unpack
runs, how transforms in the hooks change gradients, and every error."""
import pytest
import torch

import teachgrad as tg
from tests.helpers import close
from tests.test_ops_vs_torch import CASES, _inputs


def both(fn):
    return fn(tg), fn(torch)


def raises_like_torch(fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(tg)
    assert str(ours.value).replace("Variable", "Tensor") == str(theirs.value)


def packed_by(lib, fn, inputs):
    seen = []

    def pack(t):
        seen.append((tuple(t.shape), t.dtype, t.requires_grad))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(lib, *inputs)
    return sorted(seen, key=str)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_op_packs_what_torch_packs(case):
    """The same number of saved tensors, with the same shapes, dtypes and requires_grad, as torch."""
    _, shapes, fn = case
    ours_in, theirs_in = _inputs(shapes, seed=1)
    assert packed_by(tg, fn, ours_in) == packed_by(torch, fn, theirs_in)


def test_pack_gets_the_tensor_itself_and_unpack_runs_at_each_read():
    def run(lib):
        x = lib.randn(3, requires_grad=True)
        packed, unpacked = [], []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                     lambda t: unpacked.append(1) or t):
            s = x.sin()
            e = x.exp()
        s.grad_fn._saved_self
        s.grad_fn._saved_self
        (s + e).sum().backward()
        return packed[0] is x, packed[1] is e, len(packed), len(unpacked)

    ours, theirs = both(run)
    assert ours == theirs == (True, True, 2, 4)


def test_only_the_innermost_hooks_apply_and_they_nest():
    def run(lib):
        calls = []
        x = lib.randn(3, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
            x.sin()
            with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t):
                x.cos()
            x.exp()
        x.tanh()
        return calls

    ours, theirs = both(run)
    assert ours == theirs == ["outer", "inner", "outer"]


@pytest.mark.parametrize("transform", ["scale", "to_float16", "offload", "numpy"])
def test_transforms_in_hooks_change_gradients_exactly_as_in_torch(transform):
    pack, unpack = {
        "scale": (lambda t: t * 2, lambda t: t),
        "to_float16": (lambda t: (t.dtype, t.detach().half()), lambda p: p[1].to(p[0])),
        "offload": (lambda t: (t.device, t.detach().cpu().clone()), lambda p: p[1].to(p[0])),
        "numpy": (lambda t: t.detach().numpy().copy(), lambda a: torch.from_numpy(a)),
    }[transform]

    def run(lib):
        torch.manual_seed(0)
        x = lib.randn(4, 3, requires_grad=True)
        w = lib.randn(3, 2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x @ w).tanh() * x.sum(1, keepdim=True).exp()
        y.sum().backward()
        return {"x": x, "w": w}

    ours, theirs = both(run)
    for k in ours:
        assert close(ours[k].grad, theirs[k].grad, atol=1e-6, rtol=1e-5)


def test_hooks_skip_the_version_check_as_torch_does():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = x * 1
            z = y.sin()
        y.add_(1)
        z.sum().backward()
        return x.grad

    ours, theirs = both(run)
    assert close(ours, theirs)


def test_double_backward_through_unpacked_tensors():
    def run(lib):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
            y = (x * x).sin()
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g, h

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])


def test_save_on_cpu_gives_the_same_gradients():
    def run(lib):
        torch.manual_seed(1)
        x = lib.randn(5, 3, requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        return x.grad

    ours, theirs = both(run)
    assert close(ours, theirs)


def test_register_hooks_on_a_raw_saved_tensor():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 0, lambda t: t)
        shown = y.grad_fn._saved_self
        y.sum().backward()
        return shown, x.grad

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])
    assert ours[0].requires_grad == theirs[0].requires_grad and ours[0].grad_fn is None


def test_errors_match_torch():
    def unpack_returns_a_number(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x.sin()
        y.sum().backward()

    def pack_writes_in_place(lib):
        x = lib.ones(2, requires_grad=True) * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            x.sin()

    def hooks_set_twice(lib):
        y = lib.ones(2, requires_grad=True).sin()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    def disabled(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here, please"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    def read_after_free(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.sin()
        y.sum().backward()
        y.grad_fn._saved_self

    for fn in (unpack_returns_a_number, pack_writes_in_place, hooks_set_twice, disabled, read_after_free):
        raises_like_torch(fn)


def test_disable_saved_tensors_hooks_as_decorator_and_restored():
    def run(lib):
        @lib.autograd.graph.disable_saved_tensors_hooks("off")
        def f():
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

        try:
            f()
        except RuntimeError as error:
            message = str(error)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        return message

    assert both(run) == ("off", "off")


def test_raw_saved_tensor_unpacks_as_torch():
    """`node._raw_saved_<name>.unpack()`: the saved input itself (the same tensor); after backward, torch's message."""
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        raw = y.grad_fn._raw_saved_self
        unpacked = raw.unpack()
        same_object = unpacked is x
        y.sum().backward()
        try:
            raw.unpack()
        except RuntimeError as error:
            return same_object, unpacked.requires_grad, str(error)
        return same_object, unpacked.requires_grad, None

    ours, theirs = both(run)
    assert ours == theirs and ours[0] and ours[2] is not None
