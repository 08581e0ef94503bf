""""A Gentle Introduction to torch.autograd" (60-minute blitz), current and earlier versions.

Source: https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html
        pytorch/tutorials: beginner_source/blitz/autograd_tutorial.py (the 2018-2020 text is the
        "Autograd: automatic differentiation" version of the same file)
Prints became return values; nothing else changed.
"""
import pytest

from .harness import check, snippets


def differentiation_in_autograd(torch):
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)
    Q = 3*a**3 - b**2
    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    return Q, 9*a**2 == a.grad, -2*b == b.grad, a.grad, b.grad


def exclusion_from_the_dag(torch):
    x = torch.rand(5, 5)
    y = torch.rand(5, 5)
    z = torch.rand((5, 5), requires_grad=True)
    a = x + y
    b = x + z
    return f"Does `a` require gradients?: {a.requires_grad}", f"Does `b` require gradients?: {b.requires_grad}"


def tensor_requires_grad(torch):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return x, y, y.grad_fn, z, out


def requires_grad_in_place(torch):
    a = torch.randn(2, 2)
    a = ((a * 3) / (a - 1))
    before = a.requires_grad
    a.requires_grad_(True)
    after = a.requires_grad
    b = (a * a).sum()
    return before, after, b.grad_fn


def gradients_backprop(torch):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    return x.grad


def crazy_things_with_autograd(torch):
    x = torch.randn(3, requires_grad=True)

    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2

    gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
    y.backward(gradients)
    return y, x.grad


def stop_tracking_with_no_grad(torch):
    x = torch.randn(3, requires_grad=True)
    printed = [x.requires_grad, (x ** 2).requires_grad]
    with torch.no_grad():
        printed.append((x ** 2).requires_grad)
    return printed


def stop_tracking_with_detach(torch):
    x = torch.randn(3, requires_grad=True)
    printed = [x.requires_grad]
    y = x.detach()
    printed.append(y.requires_grad)
    printed.append(x.eq(y).all())
    return printed


ALL = snippets(differentiation_in_autograd, exclusion_from_the_dag, tensor_requires_grad, requires_grad_in_place,
               gradients_backprop, crazy_things_with_autograd, stop_tracking_with_no_grad, stop_tracking_with_detach)


@pytest.mark.parametrize("snippet", ALL)
def test_snippet(snippet):
    check(snippet)
