"""Dive into Deep Learning, 2.5 Automatic Differentiation (PyTorch version).

Source: https://d2l.ai/chapter_preliminaries/autograd.html
        d2l-ai/d2l-en: chapter_preliminaries/autograd.md (the `#@tab pytorch` cells)
Each cell's displayed value became a return value; cells that build on earlier ones repeat them.
"""
import pytest

from .harness import check, snippets


def a_simple_function(torch):
    x = torch.arange(4.0)
    shown = [x]
    x.requires_grad_(True)
    shown.append(x.grad)  # The gradient is None by default
    y = 2 * torch.dot(x, x)
    shown.append(y)
    y.backward()
    shown.append(x.grad)
    shown.append(x.grad == 4 * x)
    return shown


def another_function(torch):
    x = torch.arange(4.0)
    x.requires_grad_(True)
    y = 2 * torch.dot(x, x)
    y.backward()
    x.grad.zero_()  # Reset the gradient
    y = x.sum()
    y.backward()
    return x.grad


def backward_for_non_scalar_variables(torch):
    x = torch.arange(4.0)
    x.requires_grad_(True)
    y = x.sum()
    y.backward()
    x.grad.zero_()
    y = x * x
    y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
    return x.grad


def detaching_computation(torch):
    x = torch.arange(4.0)
    x.requires_grad_(True)
    y = x * x
    y.backward(gradient=torch.ones(len(y)))  # the cell before
    x.grad.zero_()
    y = x * x
    u = y.detach()
    z = u * x

    z.sum().backward()
    shown = [x.grad == u]

    x.grad.zero_()
    y.sum().backward()
    shown.append(x.grad == 2 * x)
    return shown


def gradients_and_python_control_flow(torch):
    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:
            c = b
        else:
            c = 100 * b
        return c

    a = torch.randn(size=(), requires_grad=True)
    d = f(a)
    d.backward()
    return d, a.grad, a.grad == d / a


def exercise_backward_twice(torch):
    # Exercise 2: "What happens if we run the backward function twice?"
    x = torch.arange(4.0)
    x.requires_grad_(True)
    y = 2 * torch.dot(x, x)
    y.backward()
    y.backward()


ALL = snippets(a_simple_function, another_function, backward_for_non_scalar_variables, detaching_computation,
               gradients_and_python_control_flow, exercise_backward_twice)


@pytest.mark.parametrize("snippet", ALL)
def test_snippet(snippet):
    check(snippet)
