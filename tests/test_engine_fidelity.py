"""The engine as torch's engine.cpp runs it: gradient validation, what grad() runs, hooks, threads.

Each test runs the same snippet under torch and teachgrad (`lib` is one or the other) and compares
values, dtypes and errors (type and message).
"""
import threading

import pytest
import torch

import teachgrad as tg

from .twins import same


def function_returning(make_grad):
    """A Function whose backward returns `make_grad(grad_output)` (torch's or teachgrad's class)."""
    def build(lib):
        class Custom(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad_output):
                return make_grad(grad_output)
        return Custom
    return build


# --- 1. every gradient is validated against its input: dtype, shape, device --------------------

def test_root_gradient_is_cast_to_the_output_dtype():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2).backward(lib.ones(2, dtype=lib.float64))
        return x.grad
    same(snippet)


def test_mixed_precision_gradients_come_back_in_each_input_dtype():
    def snippet(lib):
        a = lib.ones(2, dtype=lib.float16, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        (a * b).sum().backward()
        return a.grad, b.grad
    same(snippet)


def test_mixed_precision_through_grad():
    def snippet(lib):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        return lib.autograd.grad((a * b + b.exp()).sum(), (a, b))
    same(snippet)


@pytest.mark.parametrize("make_grad", [
    lambda g: torch.ones(3, 2),                      # expandable: summed to the input's shape
    lambda g: torch.ones(3),                         # not expandable: torch's message
    lambda g: torch.ones(()),                        # a scalar for a [2] input is not expandable either
    lambda g: g.double(),                            # cast to the input's dtype
    lambda g: g.long(),                              # even from an integer dtype
    lambda g: (g, None, None),                       # trailing Nones beyond the inputs are dropped
    lambda g: (g, torch.ones(2)),                    # but not a tensor
    lambda g: 3.0,                                   # a number is not a gradient
    lambda g: (g, 1.0),
], ids=["expandable", "wrong-shape", "scalar", "double", "long", "trailing-none", "extra-tensor",
        "number", "extra-number"])
def test_custom_function_gradients_validated_as_torch(make_grad):
    build = function_returning(make_grad)

    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        build(lib).apply(x).sum().backward()
        return x.grad
    same(snippet)


def test_validation_applies_to_built_in_nodes_too():
    """A scalar gradient for a [1, 1] input is refused for any node (here through a hook on AccumulateGrad's input)."""
    def snippet(lib):
        x = lib.ones(1, 3, requires_grad=True)
        y = x * lib.ones(2, 3, dtype=lib.float64)       # broadcast and promoted: MulBackward0 sums and casts
        y.sum().backward()
        return x.grad
    same(snippet)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gradient_on_the_wrong_device_is_refused():
    build = function_returning(lambda g: g.cuda())

    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        build(lib).apply(x).sum().backward()
        return x.grad
    same(snippet)


def test_gradient_on_the_wrong_device_is_refused_meta():
    build = function_returning(lambda g: torch.ones(2, device="meta"))

    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        build(lib).apply(x).sum().backward()
        return x.grad
    same(snippet)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_scalar_gradient_on_another_device_is_moved():
    build = function_returning(lambda g: torch.ones((), device="cuda"))

    def snippet(lib):
        x = lib.ones((), requires_grad=True)
        build(lib).apply(x).backward()
        return x.grad.device.type
    same(snippet)
