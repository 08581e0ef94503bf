"""inference_mode and the grad-mode names real code uses, compared with torch."""
import threading

import numpy as np

import pytest
import torch

import teachgrad as tg

from .twins import same


def test_inside_inference_mode():
    def snippet(lib):
        w = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            x = lib.ones(2)
            y = w * 2
            inside = (lib.is_grad_enabled(), lib.is_inference_mode_enabled(), x.is_inference(), y.is_inference(),
                      y.requires_grad, y.grad_fn is None)
            with lib.enable_grad():    # grad mode on, still nothing recorded
                z = w * 2
                with_grad = (lib.is_grad_enabled(), z.requires_grad, z.grad_fn is None, z.is_inference())
            with lib.inference_mode(False):
                q = w * 2
                normal = (lib.is_grad_enabled(), q.requires_grad, q.is_inference())
        return inside, with_grad, normal, w.is_inference(), lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    same(snippet)


def inference_tensor(lib):
    with lib.inference_mode():
        return lib.ones(2)


@pytest.mark.parametrize("use", [
    lambda lib, x, w: (x * w).sum().backward(),           # MulBackward0 saves x: refused
    lambda lib, x, w: (w * x).sum().backward(),
    lambda lib, x, w: lib.autograd.grad((x * w).sum(), w),
    lambda lib, x, w: ((x + w).sum().backward(), w.grad),  # Add saves nothing: fine, as in torch
    lambda lib, x, w: ((x.clone() * w).sum().backward(), w.grad),   # the workaround
    lambda lib, x, w: x.exp(),
    lambda lib, x, w: x.add_(1),                           # in place outside inference mode
    lambda lib, x, w: x.requires_grad_(),
    lambda lib, x, w: setattr(x, "requires_grad", True),
], ids=["save-mul", "save-rmul", "grad", "add", "clone", "exp", "in-place", "requires_grad_", "requires_grad"])
def test_inference_tensors_outside_inference_mode(use):
    same(lambda lib: use(lib, inference_tensor(lib), lib.ones(2, requires_grad=True)))


def test_in_place_on_inference_tensor_refused_under_no_grad_too():
    def snippet(lib):
        x = inference_tensor(lib)
        with lib.no_grad():
            x.add_(1)
    same(snippet)


def test_requires_grad_inside_inference_mode():
    def snippet(lib):
        with lib.inference_mode():
            a = lib.ones(2)
            a.requires_grad_()
            return a.requires_grad, (a * 2).requires_grad
    same(snippet)


@pytest.mark.parametrize("decorate", [
    lambda lib: lib.inference_mode,
    lambda lib: lib.inference_mode(),
    lambda lib: lib.no_grad,
    lambda lib: lib.no_grad(),
    lambda lib: lib.enable_grad,
    lambda lib: lib.set_grad_enabled(False),
    lambda lib: lib.autograd.grad_mode.no_grad,
    lambda lib: lib.autograd.grad_mode.inference_mode(),
], ids=["inference_mode", "inference_mode()", "no_grad", "no_grad()", "enable_grad", "set_grad_enabled(False)",
        "grad_mode.no_grad", "grad_mode.inference_mode()"])
def test_decorators_bare_and_called_on_functions_and_generators(decorate):
    def snippet(lib):
        @decorate(lib)
        def f():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        @decorate(lib)
        def gen():
            yield lib.is_grad_enabled(), lib.is_inference_mode_enabled()
            yield lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        with lib.no_grad():
            in_no_grad = f(), list(gen())
        return f(), list(gen()), in_no_grad, lib.is_grad_enabled()
    same(snippet)


def test_generator_mode_holds_only_while_it_runs():
    def snippet(lib):
        @lib.no_grad()
        def gen():
            for _ in range(2):
                yield lib.is_grad_enabled()
        outside = []
        for inside in gen():
            outside.append((inside, lib.is_grad_enabled()))
        return outside
    same(snippet)


def test_set_grad_enabled_as_function_and_context():
    def snippet(lib):
        states = []
        lib.set_grad_enabled(False)
        states.append(lib.is_grad_enabled())
        with lib.set_grad_enabled(True):
            states.append(lib.is_grad_enabled())
        states.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)
        states.append(lib.is_grad_enabled())
        return states
    same(snippet)
    same(lambda lib: lib.set_grad_enabled(None))


def test_inference_mode_is_per_thread():
    seen = []
    with tg.inference_mode():
        thread = threading.Thread(target=lambda: seen.append((tg.is_inference_mode_enabled(), tg.is_grad_enabled())))
        thread.start()
        thread.join()
    assert seen == [(False, True)]


def test_inference_mode_false_turns_grad_mode_on_as_torch():
    def snippet(lib):
        with lib.no_grad():
            with lib.inference_mode(False):
                inside = lib.is_grad_enabled()
            return inside, lib.is_grad_enabled()
    same(snippet)


# --- results made under inference_mode, used afterwards as data (issue 34) ---------------------------------

def plain(array):
    return str(array.dtype), array.shape, array.tolist()


def inference_result(lib):
    """A result computed from a parameter under inference_mode, as an evaluate function returns it."""
    w = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    with lib.inference_mode():
        return w * 2 + 1


@pytest.mark.parametrize("use", [
    lambda lib, y: plain(y.numpy()),
    lambda lib, y: y.tolist(),
    lambda lib, y: plain(np.asarray(y)),
    lambda lib, y: plain(np.asarray(y[1])),
    lambda lib, y: y[0].item(),
    lambda lib, y: float(y[1]),
    lambda lib, y: [v.item() for v in y],                   # iterating: unbind gives views
    lambda lib, y: (y[1:], y[1:].is_inference(), y[1:]._is_view(), y[1:]._base is None),
    lambda lib, y: (y.view(3, 1), y.t(), y.unsqueeze(0), y.expand(2, 3), y.reshape(3), y[None].mT),
    lambda lib, y: y.split(2),
    lambda lib, y: y + lib.ones(3, dtype=lib.float64),      # arithmetic with a normal tensor
    lambda lib, y: (y[0] * lib.ones(3, dtype=lib.float64)).is_inference(),
    lambda lib, y: (y.exp(), y.sum(), y.max(), y.argmax(), y > 0),
    lambda lib, y: y[y > 0],
    lambda lib, y: y.detach()[0],
    lambda lib, y: y.clone()[0].add_(1),                      # a clone is a normal tensor
    lambda lib, y: y[0]._version,                           # torch: no version counter
    lambda lib, y: y[0].add_(1),                            # in place outside the mode: torch's refusal
    lambda lib, y: y[0].requires_grad_(),
], ids=["numpy", "tolist", "asarray", "asarray-of-view", "item-of-view", "float-of-view", "iterate", "slice",
        "views", "split", "add-normal", "mul-view", "no-grad-ops", "mask", "detach-view", "clone", "version",
        "in-place-view", "requires_grad-view"])
def test_inference_result_used_outside_the_mode(use):
    same(lambda lib: use(lib, inference_result(lib)))


@pytest.mark.parametrize("use", [
    lambda lib, y, w: (y[0] * w).sum().backward(),            # saving a view of it for backward: refused
    lambda lib, y, w: ((y[0] + w).sum().backward(), w.grad),    # adding saves nothing: fine
    lambda lib, y, w: ((y[:2] * 1).sum(), y[1:].sum()),
], ids=["save-view", "add-view", "no-grad"])
def test_inference_result_in_recorded_ops(use):
    same(lambda lib: use(lib, inference_result(lib), lib.ones(2, dtype=lib.float64, requires_grad=True)))


def test_views_inside_inference_mode():
    def snippet(lib):
        w = lib.ones(3, requires_grad=True)
        n = lib.ones(3)
        with lib.inference_mode():
            y = w * 2
            v = y[0]
            nv = n[1:]
            return (v, v._is_view(), v.is_inference(), y.unbind(0), nv._is_view(), nv._base is n, nv.is_inference(),
                    y.view(3, 1).add_(1), y)
    same(snippet)


def test_inference_result_printed():
    ours, theirs = repr(inference_result(tg)[1:]), repr(inference_result(torch)[1:])
    assert ours.replace("Variable(", "tensor(") == theirs
    assert str(list(inference_result(tg))) == str(list(inference_result(torch))).replace("tensor(", "Variable(")


def test_evaluate_decorated_with_inference_mode_in_a_training_loop():
    def snippet(lib):
        lib.manual_seed(0)
        w = lib.randn(4, 1, dtype=lib.float64, requires_grad=True)
        x = lib.randn(8, 4, dtype=lib.float64)
        target = lib.randn(8, 1, dtype=lib.float64)

        @lib.inference_mode()
        def evaluate():
            prediction = x @ w
            return ((prediction - target) ** 2).mean(), prediction

        history = []
        for _ in range(3):
            loss = ((x @ w - target) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
            eval_loss, prediction = evaluate()
            history.append((eval_loss.item(), prediction[:, 0].tolist(), [p.item() for p in prediction]))
        return history, w
    same(snippet)


def test_scatter_plot_of_an_inference_result():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def snippet(lib):
        x = lib.linspace(0, 1, 5, dtype=lib.float64).unsqueeze(1)
        w = lib.tensor([[2.0]], dtype=lib.float64, requires_grad=True)
        with lib.inference_mode():
            y_pred = x @ w
        figure = plt.figure()
        points = plt.scatter(x, y_pred)
        line, = plt.plot(x[:, 0], y_pred[:, 0])
        plt.close(figure)
        return points.get_offsets().data.tolist(), line.get_ydata().tolist()
    same(snippet)
