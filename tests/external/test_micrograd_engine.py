"""micrograd's engine tests, the torch side (what micrograd's Value is checked against).

Source: https://github.com/karpathy/micrograd/blob/master/test/test_engine.py
"""
import pytest

from .harness import check, snippets


def sanity_check(torch):
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y
    return ypt.data.item(), xpt.grad.item(), ypt


def more_ops(torch):
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g
    tol = 1e-6
    return gpt.data.item(), apt.grad.item(), bpt.grad.item(), gpt


ALL = snippets(sanity_check, more_ops)


@pytest.mark.parametrize("snippet", ALL)
def test_snippet(snippet):
    check(snippet)
