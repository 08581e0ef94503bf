"""Results that once differed from torch's with no error (issue 21), each run twice: under teachgrad
and under torch, comparing values, gradients, shapes, and exception types and messages."""
import pytest
import torch

import teachgrad as tg
from tests.twins import same


# --- dimension arguments: out of range is torch's IndexError, never a wrap onto another dimension ---

@pytest.mark.parametrize("call", [
    lambda x: x.select(2, 0), lambda x: x.select(-3, 0), lambda x: x.select(0, 5), lambda x: x.select(1, -4),
    lambda x: x.select(1, -1),
    lambda x: x.narrow(2, 0, 1), lambda x: x.narrow(-3, 0, 1), lambda x: x.narrow(1, 2, 2),
    lambda x: x.narrow(1, -1, 1), lambda x: x.narrow(1, 0, -1), lambda x: x.narrow(1, 4, 0),
    lambda x: x.unbind(2), lambda x: x.unbind(-3), lambda x: x.unbind(-1),
    lambda x: x.split(1, 2), lambda x: x.split([1, 2], 2), lambda x: x.split(2, -1), lambda x: x.split(0, 1),
    lambda x: x.split(-1, 1),
    lambda x: x.chunk(2, 2), lambda x: x.chunk(-2), lambda x: x.chunk(0), lambda x: x.chunk(2, -1),
], ids=lambda call: None)
def test_dimension_and_index_checks(call):
    same(lambda lib: call(lib.ones(2, 3)))


@pytest.mark.parametrize("call", [
    lambda x: x.select(0, 0), lambda x: x.narrow(0, 0, 1), lambda x: x.unbind(0), lambda x: x.split(1),
    lambda x: x.chunk(2),
])
def test_zero_dim_tensors_refuse_dimension_ops(call):
    same(lambda lib: call(lib.tensor(1.0)))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.cat(x), lambda lib, x: lib.stack(x), lambda lib, x: lib.cat([x, x], 2),
    lambda lib, x: lib.cat([x, x], -3), lambda lib, x: lib.cat([x, x], -1), lambda lib, x: lib.cat([]),
])
def test_cat_and_stack_arguments(call):
    same(lambda lib: call(lib, lib.ones(2, 3)))


def test_gradients_through_checked_dimension_ops():
    def snippet(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        parts = x.chunk(2, -1) + x.split(1, -2) + x.unbind(-1) + (x.narrow(-1, 1, 2), x.select(-2, 1))
        sum(((k + 1) * p.sum() for k, p in enumerate(parts)), lib.tensor(0.0)).backward()
        return x.grad
    same(snippet)


# --- special values ---

def test_zero_to_the_power_nan_has_nan_gradient():
    def snippet(lib):
        e = lib.tensor([float("nan"), 0.0, 1.0, -1.0], requires_grad=True)
        (0.0 ** e).sum().backward()
        return e.grad
    same(snippet)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_mse_loss_gradient_stays_finite_near_the_dtype_limit(dtype):
    def snippet(lib):
        big = torch.finfo(dtype).max / 2
        x = lib.tensor([big, -big, 0.0], dtype=dtype, requires_grad=True)
        t = lib.tensor([-big / 2, big / 2, 1.0], dtype=dtype)
        lib.nn.functional.mse_loss(x, t).backward(lib.tensor(1e-6, dtype=dtype))
        return x.grad
    same(snippet)


# --- shapes and copies ---

@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_sum_and_mean_over_all_dims_keepdim(reduce):
    def snippet(lib):
        x = lib.ones(2, 3, requires_grad=True)
        y = getattr(x, reduce)(None, keepdim=True)
        z = getattr(lib, reduce)(x, None, keepdim=True)
        (y * 2 + z).sum().backward()
        return y.shape, z.shape, x.grad, y.grad_fn.name()
    same(snippet)


def test_to_channels_last_and_copy_true_make_copies():
    def snippet(lib):
        w = lib.ones(1, 2, 3, 4, requires_grad=True)
        a = w.to(memory_format=torch.channels_last)
        b = w.to(torch.float32, copy=True)
        c = w.to(memory_format=torch.contiguous_format)
        d = w.to(torch.float64, memory_format=torch.channels_last)
        (a.sum() + 2 * b.sum() + 3 * d.sum()).backward()
        return (a is w, a.stride(), a.grad_fn.name(), b is w, b.grad_fn.name(), c is w, d.stride(), d.dtype,
                b.data_ptr() == w.data_ptr(), w.grad)
    same(snippet)


def test_to_channels_last_needs_rank_4():
    same(lambda lib: lib.ones(2, 3).to(memory_format=torch.channels_last))


@pytest.mark.parametrize("flag", [1, 0, 1.0, None, "yes"])
def test_requires_grad_takes_only_bool(flag):
    same(lambda lib: lib.ones(2).requires_grad_(flag).requires_grad)


# --- a chain of views: each view links to the one before (O(1) a view), and writes through the last still
# replay the whole chain back to the base ---

def test_an_in_place_write_through_a_long_chain_of_views():
    def snippet(lib):
        x = lib.arange(1.0, 7.0).requires_grad_()
        y = x * 1
        v = y
        for k in range(300):
            v = v[:] if k % 2 else v.view(6)
        v[1:3].mul_(5)
        (y * y).sum().backward()
        return y, x.grad, y.grad_fn.name(), v.grad_fn.name(), v._base is y
    same(snippet)


def test_a_view_keeps_a_link_not_a_copy_of_the_chain_before_it():
    y = tg.ones(4, requires_grad=True) * 1
    views = [y]
    for _ in range(1000):
        views.append(views[-1][:])
    last = views[-1]._view
    assert last.parent is views[-2]._view and last.base is y
    assert len(last.chain) == 1000 and all(step[0].__name__ == "Slice" for step in last.chain)


@pytest.mark.parametrize("wrt", ["input", "weight"])
@pytest.mark.parametrize("conv", ["conv1d", "conv_transpose1d"])
def test_a_convolutions_second_derivative_is_refused_never_none(conv, wrt):
    """teachgrad computes a convolution's first derivative only: a second one, asked of autograd.grad with respect
    to the input or the weight (allow_unused or not), raises NotImplementedError; it used to give None (torch
    gives the derivative)."""
    x = tg.randn(1, 2, 5, dtype=tg.float64, requires_grad=True)
    w = tg.randn(*((3, 2, 2) if conv == "conv1d" else (2, 3, 2)), dtype=tg.float64, requires_grad=True)
    y = getattr(tg.nn.functional, conv)(x, w)
    g, = tg.autograd.grad((y ** 2).sum(), x, create_graph=True)
    for allow_unused in (False, True):
        with pytest.raises(NotImplementedError, match="second derivative of"):
            tg.autograd.grad(g.sum(), {"input": x, "weight": w}[wrt], allow_unused=allow_unused)


# --- found by torch's op database (tests/test_op_db.py) ---

@pytest.mark.parametrize("x_has_tangent", [True, False])
def test_masked_fill_tangent_of_a_tensor_value_fills_the_masked_positions(x_has_tangent):
    """torch's jvp of masked_fill with a 0-dim tensor `value`: the tangent of x where the mask is False, the
    tangent of value where it is True (teachgrad used to give 0 there)."""
    def snippet(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=lib.float64)
        value = lib.tensor(7.5, dtype=lib.float64)
        mask = lib.tensor([[True, False, True], [False, False, True]])
        with fw.dual_level():
            if x_has_tangent:
                x = fw.make_dual(x, lib.tensor([[0.5, 1.5, -2.5], [3.5, -4.5, 5.5]], dtype=lib.float64))
            value = fw.make_dual(value, lib.tensor(-1.25, dtype=lib.float64))
            out = fw.unpack_dual(x.masked_fill(mask, value))
            return out.primal, out.tangent
    same(snippet)


def test_masked_fill_tensor_value_tangent_is_differentiable():
    """The tangent of masked_fill, recorded when an input requires grad (reverse over forward), as torch's."""
    def snippet(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        value = lib.tensor(7.5, dtype=lib.float64, requires_grad=True)
        value_t = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        mask = lib.tensor([True, False, True])
        with fw.dual_level():
            out = fw.unpack_dual(x.masked_fill(mask, fw.make_dual(value, value_t)))
            (out.tangent * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
            return out.primal, out.tangent, value_t.grad
    same(snippet)


@pytest.mark.parametrize("value", [lambda lib: 7.5, lambda lib: lib.tensor(7.5, dtype=lib.float64),
                                   lambda lib: lib.tensor(7.5, dtype=lib.float64, requires_grad=True)])
def test_masked_fill_node_names_and_gradients(value):
    """torch records MaskedFillBackward0 for a number `value` and MaskedFillBackward1 for a 0-dim tensor."""
    def snippet(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        v = value(lib)
        out = x.masked_fill(lib.tensor([True, False, True]), v)
        (out * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return out, type(out.grad_fn).__name__, x.grad, getattr(v, "grad", None)
    same(snippet)


NORM_INPUTS = {
    "distinct": [[1.5, -3.0, 2.0], [-0.5, 4.0, -1.0]],
    "ties": [[3.0, -3.0, 1.0], [-2.0, 2.0, -2.0]],
    "zeros": [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]],
    "negative zero ties": [[-0.0, 2.0, 0.0], [5.0, -5.0, 1.0]],
    "inf and nan": [[float("inf"), -2.0, float("-inf")], [float("nan"), 5.0, 1.0]],
}


@pytest.mark.parametrize("dim", [None, 1, 0, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("p", [float("inf"), float("-inf")])
@pytest.mark.parametrize("values", NORM_INPUTS.values(), ids=NORM_INPUTS.keys())
def test_inf_norms_value_and_gradient(values, p, keepdim, dim):
    """torch's derivative of the inf and -inf norms: grad / (the number of elements whose |x| is the norm) times
    sign(x), on those elements only (teachgrad used p's general formula for -inf)."""
    def snippet(lib):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        y = x.norm(p, dim, keepdim)
        (y * lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(y.shape)).sum().backward()
        return y, x.grad, type(y.grad_fn).__name__
    same(snippet)


@pytest.mark.parametrize("p", [float("inf"), float("-inf"), 2, 1, 3, 0])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
@pytest.mark.parametrize("values", NORM_INPUTS.values(), ids=NORM_INPUTS.keys())
def test_norm_tangent(values, dim, p):
    """The tangent of norm (torch's linalg_vector_norm jvp): for inf and -inf, the mean of sign(x) * tangent over
    the elements whose |x| is the norm (teachgrad's norm had no jvp: forward AD raised)."""
    def snippet(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor(values, dtype=lib.float64)
        with fw.dual_level():
            tangent = lib.tensor([[0.5, 1.5, -2.5], [3.5, -4.5, 5.5]], dtype=lib.float64)
            out = fw.unpack_dual(lib.norm(fw.make_dual(x, tangent), p, dim))
            return out.primal, out.tangent
    same(snippet)


def test_rmatmul_called_directly_with_a_variable_computes_other_at_self():
    """x.__rmatmul__(y) is y @ x in torch, for y a tensor of the same kind (Python's `y @ x` never calls it)."""
    def snippet(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[0.5, -1.0], [2.0, 1.5]], dtype=lib.float64, requires_grad=True)
        out = x.__rmatmul__(y)
        out.sum().backward()
        return out, x.grad, y.grad, type(out.grad_fn).__name__
    same(snippet)
