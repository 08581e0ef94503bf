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


def test_norm_nuc_is_torchs_sum_of_singular_values():
    """tg.norm(x, 'nuc') was refused (no SVD); with tg.linalg it is torch's: the same value, node and gradient."""
    def program(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
        y = lib.norm(x, "nuc")
        y.backward()
        return y, y.grad_fn.name(), x.grad
    ours, theirs = program(tg), program(torch)
    torch.testing.assert_close(ours[0].data, theirs[0].detach())
    assert ours[1] == theirs[1]
    torch.testing.assert_close(ours[2].data, theirs[2])


# ---- torch's reference inputs, the last three differences (issue #34) -------------------------------------------

# addcdiv's reference sample of mixed dtypes: self float64, tensor1 bfloat16, tensor2 float32 broadcast from [1, 5]
ADDCDIV_SELF = [[-3.482348206895267, -1.375948934787745, 5.86103946712661, -1.4801335879891662, 1.4205255103467125],
                [4.541997331086259, 1.8795684469903584, -2.236700182837372, -2.3902696052157824, -1.3410448245343904],
                [-3.1543543256822737, -6.859923782424634, 0.375612559227011, -5.822629117489227, 7.726572523808081],
                [-3.5860536996982173, -8.06945706155007, -6.302530557448737, -4.390587745376902, 4.127064075945592],
                [0.14487088604252918, -1.992779109859876, -4.1879369338280235, 0.763958849210687, 0.3442047283531018]]
ADDCDIV_T1 = [[-4.53125, 0.8515625, 8.125, 8.0625, -1.7578125], [8.4375, 3.28125, 8.1875, 0.267578125, -7.625],
              [-2.453125, 2.703125, 4.8125, -8.9375, 7.0], [-8.0625, 5.28125, 8.875, 2.21875, -1.6953125],
              [4.96875, -2.671875, -6.65625, -6.375, 4.21875]]
ADDCDIV_T2 = [[6.873517036437988, 0.36443495750427246, -8.726309776306152, -8.84347152709961, -2.032266855239868]]


def _addcdiv_leaves(lib, fw=None):
    """The three inputs (with tangents from a fixed generator under forward mode `fw`)."""
    generator = torch.Generator().manual_seed(3)
    leaves = []
    for data, dtype in ((ADDCDIV_SELF, torch.float64), (ADDCDIV_T1, torch.bfloat16), (ADDCDIV_T2, torch.float32)):
        leaf = lib.tensor(data, dtype=dtype)
        if fw is None:
            leaves.append(leaf.requires_grad_())
        else:
            tangent = torch.randn(leaf.shape, generator=generator).to(dtype)
            leaves.append(fw.make_dual(leaf, tangent if lib is torch else tg.Variable(tangent)))
    return leaves


@pytest.mark.parametrize("value", [1, True, 3, 3.14, -3, 0.5])
def test_addcdiv_gradient_and_tangent_in_torchs_dtypes(value):
    """torch's derivatives.yaml: tensor1's gradient grad * (value / tensor2), tensor2's -grad * (value * tensor1 /
    (tensor2 * tensor2)): value * tensor1 stays bfloat16, divided by a float32 it is float32, and only then times
    the float64 grad; `value / tensor2` is a tensor of value divided (its second derivative is div's). Its
    tangent: self_t + t1_t / t2 * value - t2_t * (t1 / t2) / t2 * value, in those dtypes."""
    def gradient(lib):
        a, t1, t2 = _addcdiv_leaves(lib)
        out = lib.addcdiv(a, t1, t2, value=value)
        cotangent = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(1))
        grads = lib.autograd.grad(out, (a, t1, t2), cotangent if lib is torch else tg.Variable(cotangent),
                                  create_graph=True)
        generator = torch.Generator().manual_seed(2)
        cotangents = [torch.randn(g.shape, generator=generator).to(g.dtype) for g in grads[1:]]
        seconds = lib.autograd.grad(grads[1:], (t1, t2), cotangents if lib is torch else
                                    [tg.Variable(c) for c in cotangents])
        return (out, type(out.grad_fn).__name__) + tuple(grads) + tuple(seconds)

    def tangent(lib):
        fw = gfw if lib is tg else tfw
        with fw.dual_level():
            return fw.unpack_dual(lib.addcdiv(*_addcdiv_leaves(lib, fw), value=value)).tangent
    same(gradient)
    same(tangent)


ELU_WITH_NANS = [NAN if i % 3 == 0 else (i - 18) / 4 for i in range(37)] + [INF, -INF, 0.0, -0.0]


@pytest.mark.parametrize("alpha", [1.0, 0.8])
def test_elu_second_derivative_at_nan_is_torchs(alpha):
    """torch's second derivative of elu is elu_double_backward: elu_backward (the kernel) of grad * grad_output *
    input_scale, times (x < 0). At nan that is the kernel's value times 0: nan where the kernel gives nan (its
    vectorized loop), 0 where it gives a number (its scalar loop, on the tail)."""
    assert_twins(lambda lib, x: lib.nn.functional.elu(x, alpha=alpha), ELU_WITH_NANS)

    def first_gradient_node(lib):
        x = lib.tensor(ELU_WITH_NANS, dtype=torch.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.elu(x, alpha=alpha).sum(), x, create_graph=True)
        return g, type(g.grad_fn).__name__
    same(first_gradient_node)


def test_elu_third_derivative_and_forward_over_reverse_at_nan():
    """elu_double_backward is itself elu_backward (differentiable again); the first gradient's tangent is
    elu_backward(grad_output_t) + elu_double_backward(x_t) (derivatives.yaml), nan where torch's is."""
    def third(lib):
        x = lib.tensor(ELU_WITH_NANS, dtype=torch.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.elu(x, alpha=0.8).sum(), x, create_graph=True)
        g2, = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return g, g2, g3

    def forward_over_reverse(lib):
        fw = gfw if lib is tg else tfw
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(ELU_WITH_NANS, dtype=torch.float64),
                             lib.ones(len(ELU_WITH_NANS), dtype=torch.float64) * 0.5).requires_grad_()
            g, = lib.autograd.grad(lib.nn.functional.elu(x, alpha=0.8).sum(), x, create_graph=True)
            return fw.unpack_dual(g).tangent
    same(third)
    same(forward_over_reverse)


# two elements of sinc's reference sample where teachgrad's second derivative differed (8e-7), and a few others
SINC_NEAR_ZERO = [1.1781659787768461e-06, -7.482292343707897e-06, 0.0, -0.0, 3e-9, 0.5, -2.5, 1e-3, INF, NAN]


def test_sinc_first_and_second_derivative_near_zero_are_torchs_bits():
    """torch's sinc_backward: grad * ((pi x cos(pi x) - sin(pi x)) / (pi x²)), 0 where pi x² is 0; near 0 the
    numerator cancels, so the grouping and the order in which the second derivative's terms are summed show."""
    def derivatives(lib):
        x = lib.tensor(SINC_NEAR_ZERO, dtype=torch.float64, requires_grad=True)
        y = lib.sinc(x)
        generator = torch.Generator().manual_seed(1)
        ct, ct2 = (torch.randn(len(SINC_NEAR_ZERO), dtype=torch.float64, generator=generator) for _ in range(2))
        wrap = (lambda t: t) if lib is torch else tg.Variable
        g, = lib.autograd.grad(y, x, wrap(ct), create_graph=True)
        g2, = lib.autograd.grad(g, x, wrap(ct2))
        return y, type(y.grad_fn).__name__, g, g2
    same(derivatives)


@pytest.mark.parametrize("value", [1, True, 3, 3.14, -3, 0.5])
def test_addcmul_gradient_and_tangent_in_torchs_dtypes(value):
    """torch's derivatives.yaml (issue #42): tensor1's gradient grad * (tensor2 * value), tensor2's grad * (tensor1 *
    value): tensor1 * value is rounded in bfloat16 before the float64 grad multiplies it (grouped as teachgrad had
    it, (grad * tensor1) * value, tensor2's gradient differed by up to 0.14 near 44). Its tangent: self_t +
    maybe_multiply(t1_t * t2, value) + maybe_multiply(t2_t * t1, value), in those dtypes. Inputs: addcdiv's sample."""
    def gradient(lib):
        a, t1, t2 = _addcdiv_leaves(lib)
        out = lib.addcmul(a, t1, t2, value=value)
        cotangent = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(1)) * 16
        grads = lib.autograd.grad(out, (a, t1, t2), cotangent if lib is torch else tg.Variable(cotangent),
                                  create_graph=True)
        return (out, type(out.grad_fn).__name__) + tuple(grads)

    def tangent(lib):
        fw = gfw if lib is tg else tfw
        with fw.dual_level():
            return fw.unpack_dual(lib.addcmul(*_addcdiv_leaves(lib, fw), value=value)).tangent
    same(gradient)
    same(tangent)


def test_addcmul_tensor2_gradient_rounds_tensor1_times_value_in_bfloat16():
    """The issue's case (#42): value=3 and tensor1 values whose triple is not a bfloat16 (14.6875 * 3 = 44.0625,
    rounded to 44): torch's tensor2 gradient sums grad * bfloat16(tensor1 * 3) over the broadcast rows."""
    def gradient(lib):
        a = lib.tensor([[0.5, -1.25, 2.0, 3.5, -0.75], [1.0, 2.0, -3.0, 0.25, 4.0]], dtype=torch.float64,
                       requires_grad=True)
        t1 = lib.tensor([[14.6875, -13.9375, 7.34375, -14.4375, 11.6875], [-14.6875, 13.9375, 14.4375, 7.34375, -11.6875]],
                        dtype=torch.bfloat16, requires_grad=True)
        t2 = lib.tensor([[0.25, -1.5, 2.75, 0.125, -3.0]], dtype=torch.float32, requires_grad=True)
        out = lib.addcmul(a, t1, t2, value=3)
        return lib.autograd.grad(out.sum(), (a, t1, t2))
    same(gradient)
