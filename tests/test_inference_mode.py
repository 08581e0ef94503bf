"""inference_mode and the grad-mode names real code uses, compared with torch."""
import threading

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
