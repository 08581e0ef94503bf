""""Automatic Differentiation with torch.autograd" (Learn the Basics).

Source: https://pytorch.org/tutorials/beginner/basics/autogradqs_tutorial.html
        pytorch/tutorials: beginner_source/basics/autogradqs_tutorial.py
Prints became return values (a printed gradient that later changes is returned as a clone).
"""
import pytest

from .harness import check, snippets


def _setup(torch):
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return x, y, w, b


def tensors_functions_graph(torch):
    x, y, w, b = _setup(torch)
    z = torch.matmul(x, w)+b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    return z, loss, z.grad_fn, loss.grad_fn, f"Gradient function for z = {type(z.grad_fn).__name__}"


def computing_gradients(torch):
    x, y, w, b = _setup(torch)
    z = torch.matmul(x, w)+b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    loss.backward()
    return w.grad, b.grad


def disabling_gradient_tracking(torch):
    x, y, w, b = _setup(torch)
    z = torch.matmul(x, w)+b
    printed = [z.requires_grad]

    with torch.no_grad():
        z = torch.matmul(x, w)+b
    printed.append(z.requires_grad)

    z = torch.matmul(x, w)+b
    z_det = z.detach()
    printed.append(z_det.requires_grad)
    return printed


def backward_only_once(torch):
    # "we can only perform gradient calculations using backward once on a given graph"
    x, y, w, b = _setup(torch)
    z = torch.matmul(x, w)+b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    loss.backward()
    loss.backward()


def tensor_gradients_and_jacobian_products(torch):
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp+1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    first = inp.grad.clone()
    out.backward(torch.ones_like(out), retain_graph=True)
    second = inp.grad.clone()
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    return out, first, second, inp.grad


ALL = snippets(tensors_functions_graph, computing_gradients, disabling_gradient_tracking, backward_only_once,
               tensor_gradients_and_jacobian_products)


@pytest.mark.parametrize("snippet", ALL)
def test_snippet(snippet):
    check(snippet)
