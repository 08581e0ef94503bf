"""Ops where torch's op database found teachgrad raising an error that did not say why, where torch works:
div with a rounding_mode, the dtype methods given memory_format, the torch/functional.py functions teachgrad runs
on the data (broadcast_tensors, block_diag, cartesian_prod, cdist, tensordot), cat with a 1-D empty tensor.
Each snippet runs with lib=torch and lib=teachgrad (tests/twins.py) and compares values, gradients, node names
and errors."""
import pytest
import torch

import teachgrad as tg

from .twins import same


def _leaf(lib, values, requires_grad=True):
    return lib.tensor(values, dtype=torch.float64, requires_grad=requires_grad)


A = [[5.5, -7.25, 3.0], [-0.5, 9.0, -4.75]]
B = [[2.0, 2.5, -1.5], [0.75, -4.0, 3.0]]


# div(a, b, rounding_mode=...): torch records DivBackward2 and its derivative is zero for both inputs (for
# rounding_mode=None, DivBackward2 with the true quotient's derivative)
@pytest.mark.parametrize("mode", ["trunc", "floor", None])
@pytest.mark.parametrize("form", ["function", "method"])
def test_div_rounding_mode_values_gradients_and_node(mode, form):
    def run(lib):
        a, b = _leaf(lib, A), _leaf(lib, B)
        y = lib.div(a, b, rounding_mode=mode) if form == "function" else a.div(b, rounding_mode=mode)
        ga, gb = lib.autograd.grad(y, [a, b], lib.ones_like(y))
        return y, ga, gb, type(y.grad_fn).__name__, len(y.grad_fn.next_functions)
    same(run)


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_mode_by_a_number_and_broadcast(mode):
    def run(lib):
        a, b = _leaf(lib, A), _leaf(lib, [2.0, -3.0, 0.5])
        y = lib.div(a, 2.5, rounding_mode=mode)
        z = lib.div(a, b, rounding_mode=mode)
        ga, gb = lib.autograd.grad(z.sum() + y.sum(), [a, b])
        return y, z, ga, gb, type(y.grad_fn).__name__, y.grad_fn.next_functions[1][0]
    same(run)


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_mode_integers_and_in_place(mode):
    def run(lib):
        i = lib.tensor([5, -7, 9, -9])
        x = _leaf(lib, A).clone()
        x.div_(_leaf(lib, B, requires_grad=False), rounding_mode=mode)
        return lib.div(i, 2, rounding_mode=mode), i.div(lib.tensor(4), rounding_mode=mode), x, \
            type(x.grad_fn).__name__
    same(run)


def test_div_rounding_mode_forward_ad_tangent_is_zero():
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(_leaf(lib, A, False), _leaf(lib, B, False))
            return fw.unpack_dual(lib.div(d, 2.0, rounding_mode="floor")).tangent
    same(run)


def test_div_bad_rounding_mode_is_torchs_error():
    same(lambda lib: lib.div(_leaf(lib, A), _leaf(lib, B), rounding_mode="round"))
    same(lambda lib: _leaf(lib, A).div(2.0, rounding_mode="ceil"))


# x.float(memory_format=...) and the other dtype methods: torch's `to` with that memory format
@pytest.mark.parametrize("method", ["float", "double", "half", "int", "long", "bool"])
@pytest.mark.parametrize("memory_format", ["preserve_format", "contiguous_format", "channels_last", None])
def test_dtype_methods_take_memory_format(method, memory_format):
    def run(lib):
        x = lib.arange(120, dtype=torch.float64).reshape(2, 3, 4, 5).permute(0, 2, 3, 1).requires_grad_()
        fmt = None if memory_format is None else getattr(torch, memory_format)
        y = getattr(x, method)(memory_format=fmt)
        node = None if y.grad_fn is None else type(y.grad_fn).__name__
        grad = lib.autograd.grad(y.sum(), x)[0] if y.requires_grad else None
        return y, y.stride(), y is x, node, grad
    same(run)


def test_dtype_method_memory_format_of_the_wrong_type_is_torchs_error():
    same(lambda lib: lib.ones(2, 3).float(memory_format=3))
    same(lambda lib: lib.ones(2, 3).long(memory_format="contiguous"))


# torch's functions of torch/functional.py that teachgrad runs on the data: torch's Python signatures (not the ATen
# function's below them), refused by name where an input requires grad, as before
def _plain_leaf(lib, shape, seed, requires_grad=False):
    data = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return lib.tensor(data.tolist(), dtype=torch.float64, requires_grad=requires_grad)


FUNCTIONAL_CALLS = {
    "broadcast_tensors": lambda lib, a, b: lib.broadcast_tensors(a[:1, :1], b),
    "block_diag": lambda lib, a, b: lib.block_diag(a, b),
    "cartesian_prod": lambda lib, a, b: lib.cartesian_prod(a[0], b[0]),
    "cdist": lambda lib, a, b: lib.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
    "cdist_p1": lambda lib, a, b: lib.cdist(a, b, p=1.0),
    "tensordot": lambda lib, a, b: lib.tensordot(a, b.T, dims=1),
    "tensordot_pairs": lambda lib, a, b: lib.tensordot(a, b, dims=([0, 1], [0, 1])),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL_CALLS))
def test_functional_py_functions_take_torchs_arguments(name):
    same(lambda lib: FUNCTIONAL_CALLS[name](lib, _plain_leaf(lib, (2, 3), 0), _plain_leaf(lib, (2, 3), 1)))


def test_functional_py_functions_under_no_grad_and_bad_input():
    def run(lib):
        with lib.no_grad():
            return lib.cdist(_plain_leaf(lib, (2, 3), 0, True), _plain_leaf(lib, (4, 3), 1, True))
    same(run)
    same(lambda lib: lib.cdist(_plain_leaf(lib, (2, 3), 0), _plain_leaf(lib, (2, 3), 1), compute_mode="fast"))
    same(lambda lib: lib.tensordot(_plain_leaf(lib, (2, 3), 0), _plain_leaf(lib, (2, 3), 1), dims=-1))


@pytest.mark.parametrize("name", ["block_diag", "cartesian_prod", "cdist", "tensordot"])
def test_functional_py_functions_refuse_by_name_what_they_cannot_record(name):
    a, b = _plain_leaf(tg, (2, 3), 0, True), _plain_leaf(tg, (2, 3), 1)
    with pytest.raises(TypeError, match=f"torch.{name} was called with a teachgrad Variable that requires grad, "
                                        "and teachgrad has no op of that name to record it"):
        FUNCTIONAL_CALLS[name](tg, a, b)


# cat: torch's legacy rule skips a 1-D tensor of 0 elements among tensors of any shape (its gradient: empty)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_skips_a_1d_empty_tensor(dim):
    def run(lib):
        a, e = _plain_leaf(lib, (2, 3), 0, True), lib.zeros(0, dtype=torch.float64, requires_grad=True)
        y = lib.cat([e, a, e, a * 2], dim=dim)
        ga, ge = lib.autograd.grad(y, [a, e], _plain_leaf(lib, tuple(y.shape), 2))
        return y, ga, ge, type(y.grad_fn).__name__, len(y.grad_fn.next_functions)
    same(run)


def test_cat_of_1d_empty_tensors_only_and_forward_ad():
    def run(lib):
        e = lib.zeros(0, dtype=torch.float64, requires_grad=True)
        y = lib.cat([e, e])
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(_plain_leaf(lib, (2, 3), 0), _plain_leaf(lib, (2, 3), 1))
            t = fw.unpack_dual(lib.cat([lib.zeros(0, dtype=torch.float64), d], dim=1)).tangent
        return y, lib.autograd.grad(y.sum(), e)[0], t
    same(run)
    same(lambda lib: lib.cat([lib.zeros(0), lib.ones(2, 3)], dim=2))
