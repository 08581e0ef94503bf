"""matmul and linear record torch's decomposition: the same chain of nodes, every rounding the same.

torch's matmul and linear are not one autograd node each: aten decomposes them into views, copies and
mm/mv/bmm/addmm. Each twin here walks the whole graph (grad_fn, then next_functions recursively) and
compares node names, the output and the gradients, in float32 so that a different order of rounding shows.
"""
import itertools

import pytest
import torch

from tests.twins import same

pytestmark = pytest.mark.filterwarnings("ignore:To copy construct from a tensor")   # lib.tensor(a torch tensor)

_MATRIX_SHAPES = {   # a factor of each rank; the batch dims broadcast against each other
    ("a", 1): (3,), ("a", 2): (2, 3), ("a", 3): (4, 2, 3), ("a", 4): (5, 4, 2, 3),
    ("b", 1): (3,), ("b", 2): (3, 2), ("b", 3): (4, 3, 2), ("b", 4): (5, 4, 3, 2),
}


def graph(fn):
    """The recorded graph below `fn` as nested (node name, inputs) tuples."""
    if fn is None:
        return None
    return type(fn).__name__, tuple(graph(next_fn) for next_fn, _ in fn.next_functions)


def _twin(lib, shapes, needs_grad, op, make=None):
    """Run op on float32 leaves of `shapes` (made from one seed): its graph, output (and its version), gradients."""
    gen = torch.Generator().manual_seed(0)
    data = [torch.randn(shape, generator=gen) for shape in shapes]
    leaves = [lib.tensor(d, requires_grad=r) for d, r in zip(data, needs_grad)]
    inputs = make(leaves) if make else leaves
    out = op(lib, *inputs)
    version = out._version
    grad_out = lib.tensor(torch.randn(out.shape, generator=gen))
    out.backward(grad_out)
    return graph(out.grad_fn), version, out, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("rank_a,rank_b", list(itertools.product((1, 2, 3, 4), repeat=2)))
@pytest.mark.parametrize("needs_grad", [(True, True), (True, False), (False, True)])
def test_matmul_every_rank(rank_a, rank_b, needs_grad):
    shapes = _MATRIX_SHAPES["a", rank_a], _MATRIX_SHAPES["b", rank_b]
    same(lambda lib: _twin(lib, shapes, needs_grad, lambda lib, a, b: lib.matmul(a, b)))


@pytest.mark.parametrize("shape_a,shape_b", [
    ((1, 2, 3), (4, 3, 2)), ((4, 1, 2, 3), (5, 3, 2)), ((2, 1, 2, 3), (1, 4, 3, 2)), ((5, 4, 2, 3), (1, 3, 2)),
    ((1, 4, 2, 3), (3,)), ((3,), (2, 1, 3, 2)), ((2, 3), (2, 1, 3, 5)), ((0, 2, 3), (3, 2)), ((4, 2, 0), (0, 2)),
])
@pytest.mark.parametrize("needs_grad", [(True, True), (True, False), (False, True)])
def test_matmul_broadcast_batch(shape_a, shape_b, needs_grad):
    same(lambda lib: _twin(lib, (shape_a, shape_b), needs_grad, lambda lib, a, b: a @ b))


@pytest.mark.parametrize("needs_grad", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("transposed", ["a", "b", "both"])
def test_matmul_non_contiguous_factors(needs_grad, transposed):
    """A transposed batch cannot be folded into rows without a copy: torch then goes through bmm (or copies)."""
    def make(leaves):
        a, b = leaves
        a = a.transpose(0, 1) if transposed in ("a", "both") else a
        b = b.transpose(0, 1) if transposed in ("b", "both") else b
        return a, b
    shape_b = (2, 4, 3, 3) if transposed == "both" else (4, 2, 3, 3)
    same(lambda lib: _twin(lib, ((2, 4, 3, 3), shape_b), needs_grad, lambda lib, a, b: a @ b, make))
    same(lambda lib: _twin(lib, ((2, 4, 3), (3,)), needs_grad, lambda lib, a, b: lib.matmul(a, b),
                           lambda leaves: (leaves[0].transpose(0, 1), leaves[1])))


def test_attention_gradients_bit_for_bit():
    """Attention's att @ v with v a transposed view: the gradient reaching att rounds as torch's."""
    def attention(lib, qkv):
        q, k, v = (t.view(2, 5, 2, 4).transpose(1, 2) for t in qkv.split(8, dim=2))
        att = ((q @ k.transpose(-2, -1)) * 0.5).softmax(dim=-1)
        return (att @ v).transpose(1, 2).contiguous().view(2, 5, 8)
    same(lambda lib: _twin(lib, [(2, 5, 24)], [True], attention))


@pytest.mark.parametrize("shape_a,shape_b", [
    ((4, 2, 3), (5, 3, 2)), ((2, 4, 2, 3), (3, 3, 2)), ((), (3,)), ((3,), ()), ((4, 2, 3), (4, 4, 2)),
    ((4, 2, 3), (4,)), ((2, 3), (4, 4, 2)), ((4, 2, 3), (4, 2)), ((5,), (4, 3, 2)), ((4, 2, 3, 3), (2, 4, 3, 3)),
])
def test_matmul_errors(shape_a, shape_b):
    same(lambda lib: lib.matmul(lib.randn(shape_a, requires_grad=True), lib.randn(shape_b)))


def _strided_like(leaf, contiguous):
    """`leaf` itself, or a non-contiguous view of the same shape's rank: every other element of a vector,
    the last two dims of a matrix or batch swapped (the leaf is made with them swapped)."""
    if contiguous:
        return leaf
    return leaf[::2] if leaf.dim() == 1 else leaf.transpose(-2, -1)


def _leaf_shape(input_shape, contiguous):
    if contiguous:
        return input_shape
    if len(input_shape) == 1:
        return (2 * input_shape[0],)
    return (*input_shape[:-2], input_shape[-1], input_shape[-2])


@pytest.mark.parametrize("input_shape", [(3,), (2, 3), (4, 2, 3), (5, 4, 2, 3)])
@pytest.mark.parametrize("bias_shape", [None, (2,), (1, 2), (1, 1, 2)])
@pytest.mark.parametrize("contiguous", [True, False])
def test_linear(input_shape, bias_shape, contiguous):
    """Rows with a bias: Addmm. Contiguous input of another rank with a bias: reshape, Addmm, View.
    Otherwise matmul with weightᵀ and an in-place add of the bias; a bias that does not fit gets torch's error."""
    shapes = [_leaf_shape(input_shape, contiguous), (2, 3)] + ([bias_shape] if bias_shape else [])

    def make(leaves):
        return (_strided_like(leaves[0], contiguous), *leaves[1:])

    def linear(lib, x, w, b=None):
        assert x.shape == input_shape and x.is_contiguous() == contiguous
        out = lib.nn.functional.linear(x, w, b)
        return out
    same(lambda lib: _twin(lib, shapes, [True] * len(shapes), linear, make))


@pytest.mark.parametrize("input_shape", [(3,), (2, 3), (4, 2, 3)])
@pytest.mark.parametrize("contiguous", [True, False])
def test_linear_output_version(input_shape, contiguous):
    """torch adds the bias in place after matmul where it does not fold it into addmm (and squeezes
    a vector's product in place): the output's version counter shows it."""
    def version(lib):
        x = _strided_like(lib.randn(_leaf_shape(input_shape, contiguous), requires_grad=True), contiguous)
        return lib.nn.functional.linear(x, lib.randn(2, 3), lib.randn(2, requires_grad=True))._version
    same(version)


@pytest.mark.parametrize("input_shape,weight_shape", [((), (2, 3)), ((3,), ()), ((4, 3), (2, 4))])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_errors(input_shape, weight_shape, with_bias):
    same(lambda lib: lib.nn.functional.linear(lib.randn(input_shape, requires_grad=True), lib.randn(weight_shape),
                                              lib.randn(2) if with_bias else None))


@pytest.mark.parametrize("needs_grad", [(True, True), (True, False), (False, True)])
def test_linear_vector_weight(needs_grad):
    same(lambda lib: _twin(lib, ((4, 3), (3,)), needs_grad, lambda lib, x, w: lib.nn.functional.linear(x, w)))


@pytest.mark.parametrize("shape_a,shape_b", [((3,), (3, 2)), ((4, 2, 3), (3, 2)), ((2, 3), (4, 3, 2)), ((4, 2, 3), (4, 3, 2)),
                                             ((1, 2, 3), (4, 3, 2)), ((4, 2, 3), (3,))])
def test_matmul_forward_mode_and_double_backward(shape_a, shape_b):
    """The decomposition carries tangents (each step's jvp) and differentiates again under create_graph."""
    def twice(lib):
        gen = torch.Generator().manual_seed(0)
        a, b, ta, tb = (lib.tensor(torch.randn(s, generator=gen), requires_grad=True)
                        for s in (shape_a, shape_b, shape_a, shape_b))
        out, tangent = lib.func.jvp(lib.matmul, (a.detach(), b.detach()), (ta.detach(), tb.detach()))
        ga, gb = lib.autograd.grad(lib.matmul(a, b).sin().sum(), (a, b), create_graph=True)
        return out, tangent, lib.autograd.grad((ga * gb.sum()).sum(), (a, b))
    same(twice)
