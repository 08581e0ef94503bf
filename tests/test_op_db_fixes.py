"""Differences torch's op database found (tests/opdb.py, on torch's reference inputs: inf, nan, zeros, empty
tensors), each as a twin test against torch: values, node names, the gradient, the second derivative and the
forward-mode tangent of the same program under `lib=torch` and `lib=teachgrad`."""
import math

import pytest
import torch
import torch.autograd.forward_ad as tfw

import teachgrad as tg

from .twins import assert_twins, same

gfw = tg.autograd.forward_ad
INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, 1.0, -1.0, 2.5, -0.5, INF, -INF, NAN]


# ---- torch's reference inputs: each of these differed from torch ------------------------------------------

def test_relu_passes_the_gradient_at_nan():
    """torch's threshold_backward zeroes the gradient where the result is <= 0: at nan it passes."""
    assert_twins(lambda lib, x: lib.nn.functional.relu(x), EDGES)


def test_softplus_gradient_at_nan_is_nan():
    assert_twins(lambda lib, x: lib.nn.functional.softplus(x, beta=3, threshold=0.2), EDGES)
    assert_twins(lambda lib, x: lib.nn.functional.softplus(x), EDGES)


def test_elu_second_derivative_is_zero_at_zero():
    """torch's elu_double_backward is nonzero only where x < 0 (the first derivative there uses x <= 0)."""
    assert_twins(lambda lib, x: lib.nn.functional.elu(x), EDGES)
    assert_twins(lambda lib, x: lib.nn.functional.elu(x, alpha=0.5), EDGES)


def test_pow_tangent_where_the_exponent_is_zero():
    """0 ** 0: the tangent in the base is 0 where the exponent is 0 (not 0 * 0 ** -1 = nan), as its gradient."""
    exponents = [0.0, -0.0, 0.0, 0.5, -1.0, 2.0, 0.0, 3.0, 0.0]
    assert_twins(lambda lib, a, b: a ** b, EDGES, exponents)
    assert_twins(lambda lib, a, b: b.__rpow__(a), EDGES, exponents)


def test_logsumexp_tangent_of_an_empty_tensor_is_nan():
    """torch's logsumexp_jvp divides the weighted sum by the sum of the weights: 0 / 0 for an empty tensor."""
    def tangent(lib):
        fw = gfw if lib is tg else tfw
        with fw.dual_level():
            x = fw.make_dual(lib.zeros(0, dtype=torch.float64), lib.zeros(0, dtype=torch.float64))
            return fw.unpack_dual(lib.logsumexp(x, 0)).tangent
    assert math.isnan(same(tangent)[1][3])
    assert_twins(lambda lib, x: lib.logsumexp(x, 0).unsqueeze(0), [0.5, -INF, 2.0, 1.0, 0.0, 3.0, -1.0, 1e3, -1e3])


def test_rsub_called_unbound_with_a_number_as_self():
    """Tensor.__rsub__(2.0, x) (torch's op_db calls it so): NotImplemented, as torch's."""
    assert same(lambda lib: (lib.Tensor if lib is torch else tg.Variable).__rsub__(2.0, lib.ones(2))) \
        == ("returned", NotImplemented)


def test_rpow_called_unbound_with_a_number_as_self():
    """Tensor.__rpow__(2.0, x) is torch.pow(x, 2.0): PowBackward0."""
    def rpow(lib):
        x = lib.tensor([1.0, 2.0, -3.0], dtype=torch.float64, requires_grad=True)
        y = (lib.Tensor if lib is torch else tg.Variable).__rpow__(2.0, x)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    same(rpow)


def test_rsub_of_two_tensors_records_rsub():
    def rsub(lib):
        x, y = (lib.tensor(d, dtype=torch.float64, requires_grad=True) for d in ([1.0, 2.0], [3.0, 5.0]))
        z = x.__rsub__(y)
        z.backward(lib.tensor([1.0, 2.0], dtype=torch.float64))
        return z, type(z.grad_fn).__name__, x.grad, y.grad
    same(rsub)


def test_contiguous_takes_a_memory_format():
    def contiguous(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True).t()
        y = x.contiguous(memory_format=torch.contiguous_format)
        return y, y.is_contiguous(), type(y.grad_fn).__name__, x.contiguous(memory_format=torch.preserve_format)
    same(contiguous)


# ---- what crashed on torch's samples -----------------------------------------------------------------------

@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_of_an_empty_input(training, affine):
    """torch's batch_norm of an input with no elements: the input cloned (times weight[0], plus bias[0])."""
    def bn(lib):
        x = lib.zeros(0, 3, dtype=torch.float64, requires_grad=True)
        w = torch.tensor([2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True) if affine else None
        b = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64, requires_grad=True) if affine else None
        y = lib.nn.functional.batch_norm(x, torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64),
                                         w, b, training=training)
        z = lib.batch_norm(x, w, b, torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64),
                           training, 0.1, 1e-5, False)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, z, type(z.grad_fn).__name__, x.grad, w.grad if affine else None
    same(bn)


def test_norm_nuc_says_teachgrad_does_not_compute_it():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="teachgrad.*nuclear norm"):
        tg.norm(x, "nuc")
