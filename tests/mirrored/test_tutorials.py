"""What PyTorch's beginner autograd tutorials and d2l's autograd section show, checked twin against torch.

Mirrors (behaviour, not text):
- pytorch/tutorials beginner_source/basics/autogradqs_tutorial.py ("Automatic differentiation with torch.autograd")
- pytorch/tutorials beginner_source/blitz/autograd_tutorial.py (the 60-minute blitz, current and 2018-2020 versions)
- d2l-ai/d2l-en chapter_preliminaries/autograd.md (2.5, the pytorch tab)
The scenarios are ours; each returns what the tutorial prints or shows at that point.
"""
import pytest

from .harness import check, snippets


# --- autogradqs: a one-layer logistic model ------------------------------------------------------------------------

def _logistic(torch):
    inputs, labels = torch.ones(5), torch.zeros(3)
    weight = torch.randn(5, 3, requires_grad=True)
    bias = torch.randn(3, requires_grad=True)
    logits = torch.matmul(inputs, weight) + bias
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
    return weight, bias, logits, loss


def logistic_graph_nodes(torch):
    _, _, logits, loss = _logistic(torch)
    return logits, loss, logits.grad_fn, loss.grad_fn, type(loss.grad_fn).__name__


def logistic_gradients(torch):
    weight, bias, _, loss = _logistic(torch)
    loss.backward()
    return weight.grad, bias.grad


def logistic_tracking_switched_off(torch):
    inputs, weight = torch.ones(5), torch.randn(5, 3, requires_grad=True)
    tracked = inputs @ weight
    with torch.no_grad():
        untracked = inputs @ weight
    return tracked.requires_grad, untracked.requires_grad, tracked.detach().requires_grad


def logistic_second_backward_is_refused(torch):
    _, _, _, loss = _logistic(torch)
    loss.backward()
    loss.backward()


def vector_jacobian_products_accumulate(torch):
    # a non-scalar output needs the vector of the product; calling backward again adds, zero_() resets
    start = torch.eye(4, 5, requires_grad=True)
    squared = (start + 1).pow(2).t()
    grads = []
    for reset in (False, False, True):
        if reset:
            start.grad.zero_()
        squared.backward(torch.ones_like(squared), retain_graph=True)
        grads.append(start.grad.clone())
    return squared, grads


# --- the blitz -------------------------------------------------------------------------------------------------------

def blitz_external_gradient(torch):
    p = torch.tensor([2.0, 3.0], requires_grad=True)
    q = torch.tensor([6.0, 4.0], requires_grad=True)
    out = 3 * p ** 3 - q ** 2
    out.backward(gradient=torch.tensor([1.0, 1.0]))
    return out, p.grad, q.grad, p.grad == 9 * p ** 2, q.grad == -2 * q


def blitz_requires_grad_spreads(torch):
    plain1, plain2 = torch.rand(5, 5), torch.rand(5, 5)
    tracked = torch.rand((5, 5), requires_grad=True)
    return (plain1 + plain2).requires_grad, (plain1 + tracked).requires_grad


def blitz_mean_of_squares(torch):
    ones = torch.ones(2, 2, requires_grad=True)
    shifted = ones + 2
    cube = shifted * shifted * 3
    average = cube.mean()
    shown = [ones, shifted, shifted.grad_fn, cube, average]
    average.backward()
    return shown, ones.grad      # 4.5 everywhere


def blitz_requires_grad_switched_on_later(torch):
    values = torch.randn(2, 2)
    values = (values * 3) / (values - 1)
    before = values.requires_grad
    values.requires_grad_(True)
    return before, values.requires_grad, (values * values).sum().grad_fn


def blitz_doubling_loop_then_vector_backward(torch):
    start = torch.randn(3, requires_grad=True)
    grown = start * 2
    while grown.data.norm() < 1000:
        grown = grown * 2
    grown.backward(torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float))
    return grown, start.grad


def blitz_no_grad_and_detach(torch):
    leaf = torch.randn(3, requires_grad=True)
    seen = [leaf.requires_grad, (leaf ** 2).requires_grad]
    with torch.no_grad():
        seen.append((leaf ** 2).requires_grad)
    cut = leaf.detach()
    return seen, cut.requires_grad, leaf.eq(cut).all()


# --- d2l 2.5 -----------------------------------------------------------------------------------------------------------

def d2l_gradient_of_two_x_dot_x(torch):
    v = torch.arange(4.0)
    shown = [v]
    v.requires_grad_(True)
    shown.append(v.grad)                      # None before any backward
    f = 2 * torch.dot(v, v)
    f.backward()
    return shown, f, v.grad, v.grad == 4 * v


def d2l_reset_then_sum(torch):
    v = torch.arange(4.0, requires_grad=True)
    (2 * torch.dot(v, v)).backward()
    v.grad.zero_()
    v.sum().backward()
    return v.grad


def d2l_non_scalar_backward(torch):
    v = torch.arange(4.0, requires_grad=True)
    squares = v * v
    squares.backward(gradient=torch.ones(len(squares)))
    by_sum = v.grad.clone()
    v.grad.zero_()
    (v * v).sum().backward()
    return by_sum, v.grad


def d2l_detached_factor_is_a_constant(torch):
    v = torch.arange(4.0, requires_grad=True)
    squares = v * v
    constant = squares.detach()
    (constant * v).sum().backward()
    first = (v.grad.clone(), v.grad == constant)
    v.grad.zero_()
    squares.sum().backward()
    return first, v.grad, v.grad == 2 * v


def d2l_control_flow(torch):
    def grow(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        return b if b.sum() > 0 else 100 * b

    start = torch.randn(size=(), requires_grad=True)
    result = grow(start)
    result.backward()
    return result, start.grad, start.grad == result / start


def d2l_exercise_backward_twice(torch):
    v = torch.arange(4.0, requires_grad=True)
    f = 2 * torch.dot(v, v)
    f.backward()
    f.backward()


ALL = snippets(
    logistic_graph_nodes, logistic_gradients, logistic_tracking_switched_off, logistic_second_backward_is_refused,
    vector_jacobian_products_accumulate, blitz_external_gradient, blitz_requires_grad_spreads, blitz_mean_of_squares,
    blitz_requires_grad_switched_on_later, blitz_doubling_loop_then_vector_backward, blitz_no_grad_and_detach,
    d2l_gradient_of_two_x_dot_x, d2l_reset_then_sum, d2l_non_scalar_backward, d2l_detached_factor_is_a_constant,
    d2l_control_flow, d2l_exercise_backward_twice)


@pytest.mark.parametrize("scenario", ALL)
def test_scenario(scenario):
    check(scenario)
