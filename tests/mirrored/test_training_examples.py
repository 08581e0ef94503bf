"""Small models trained with raw autograd, and micrograd's checks against torch, twin against torch.

Mirrors (behaviour, not text):
- pytorch/tutorials beginner_source/examples_autograd/ ("Learning PyTorch with Examples"): a cubic fitted to
  sin(x) by hand-written gradient descent; the same with a custom Function for the Legendre polynomial P3; the
  earlier two-layer ReLU network, with autograd and with a custom ReLU Function (same sizes, rates, step counts)
- karpathy/micrograd test/test_engine.py: scalar expressions of +, *, relu, powers and division whose value and
  gradients micrograd's Value is checked against torch with (the same start values, our own expressions)
"""
import math

import pytest

from .harness import check, snippets


def _descend(torch, params, lr):
    """One step of plain gradient descent, then forget the gradients (as the tutorials do, by assigning None)."""
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def cubic_fit_by_hand(torch):
    xs = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float)
    target = torch.sin(xs)
    coeffs = [torch.randn((), dtype=torch.float, requires_grad=True) for _ in range(4)]
    recorded = []
    for step in range(2000):
        c0, c1, c2, c3 = coeffs
        fit = c0 + c1 * xs + c2 * xs ** 2 + c3 * xs ** 3
        loss = (fit - target).pow(2).sum()
        if step % 100 == 99:
            recorded.append(loss.item())
        loss.backward()
        _descend(torch, coeffs, 1e-6)
    return recorded, coeffs, " + ".join(f"{c.item():.6f}" for c in coeffs)


def cubic_fit_through_custom_function(torch):
    class P3(torch.autograd.Function):
        """Legendre's P3(t) = (5t^3 - 3t) / 2, with P3'(t) = 3 (5t^2 - 1) / 2."""

        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return 0.5 * (5 * t ** 3 - 3 * t)

        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            return grad * 1.5 * (5 * t ** 2 - 1)

    xs = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float)
    target = torch.sin(xs)
    coeffs = [torch.full((), start, dtype=torch.float, requires_grad=True) for start in (0.0, -1.0, 0.0, 0.3)]
    recorded = []
    for step in range(2000):
        c0, c1, c2, c3 = coeffs
        fit = c0 + c1 * P3.apply(c2 + c3 * xs)
        loss = (fit - target).pow(2).sum()
        if step % 100 == 99:
            recorded.append(loss.item())
        loss.backward()
        _descend(torch, coeffs, 5e-6)
    return recorded, fit, coeffs


def _two_layer(torch, relu):
    batch, n_in, hidden, n_out = 64, 1000, 100, 10
    inputs, targets = torch.randn(batch, n_in), torch.randn(batch, n_out)
    first = torch.randn(n_in, hidden, requires_grad=True)
    second = torch.randn(hidden, n_out, requires_grad=True)
    recorded = []
    for step in range(500):
        predicted = relu(inputs.mm(first)).mm(second)
        loss = (predicted - targets).pow(2).sum()
        if step % 100 == 99:
            recorded.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for w in (first, second):
                w -= 1e-6 * w.grad
                w.grad.zero_()
    return recorded, loss, predicted.grad_fn, first, second


def two_layer_net_clamp(torch):
    return _two_layer(torch, lambda h: h.clamp(min=0))


def two_layer_net_custom_relu(torch):
    class Rectify(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h):
            ctx.save_for_backward(h)
            return h.clamp(min=0)

        @staticmethod
        def backward(ctx, grad):
            (h,) = ctx.saved_tensors
            passed = grad.clone()
            passed[h < 0] = 0            # an in-place masked write inside backward
            return passed

    return _two_layer(torch, Rectify.apply)


def _double_leaf(torch, value):
    leaf = torch.Tensor([value]).double()     # the legacy constructor, then a dtype change, as micrograd's test does
    leaf.requires_grad = True
    return leaf


def micrograd_relu_and_products(torch):
    a = _double_leaf(torch, -4.0)
    s = a * 3 + 2                             # -10
    t = s.relu() + s * a                      # 40
    u = (s * s).relu() + t * a                # 100 - 160
    u.backward()
    return u.data.item(), a.grad.item(), u


def micrograd_mixed_expression(torch):
    a, b = _double_leaf(torch, -4.0), _double_leaf(torch, 2.0)
    c = (a + b) * 2 + 1
    c = c + (-a) + 1
    d = a * b + b ** 3
    d = d * 3 + (b + a).relu() + (b - a).relu()
    e = (c - d) ** 2
    g = e / 2.0 + 10.0 / e
    g.backward()
    return g.data.item(), a.grad.item(), b.grad.item(), g


ALL = snippets(cubic_fit_by_hand, cubic_fit_through_custom_function, two_layer_net_clamp, two_layer_net_custom_relu,
               micrograd_relu_and_products, micrograd_mixed_expression)


@pytest.mark.parametrize("scenario", ALL)
def test_scenario(scenario):
    check(scenario)
