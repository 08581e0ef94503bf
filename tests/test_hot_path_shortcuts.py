"""The shortcuts issue 36 put on the hot path, each against torch on the line it draws (teachgrad/ops/shape.py's
batch picked from data, ops/indexing.py's and nn/functional.py's first-order kernels, ops/aten.py's kernels, a torch
leaf on the engine's plain path, arguments that are no inputs read in Function.apply's usual loop).
"""
import pytest
import torch

import teachgrad as tg

from .twins import same


def _from(lib, data, requires_grad=False):
    """A leaf of lib holding a copy of `data` (a torch tensor)."""
    return lib.tensor(data.tolist(), dtype=data.dtype, requires_grad=requires_grad)


# --- x[index tensor] on data that requires no grad: torch's indexing on the data ------------------------------------

@pytest.mark.parametrize("index", ["long", "bool", "long variable", "2-d long", "0-d long"])
def test_a_batch_picked_from_data_is_torchs(index):
    def snippet(lib):
        X = lib.arange(12.0, dtype=torch.float64).reshape(4, 3)
        ix = {"long": lambda: lib.tensor([3, 0, 3]), "bool": lambda: lib.tensor([True, False, True, False]),
              "long variable": lambda: lib.randint(0, 4, (5,), generator=torch.Generator().manual_seed(0)),
              "2-d long": lambda: lib.tensor([[1, 2], [0, 0]]), "0-d long": lambda: lib.tensor(2)}[index]()
        batch = X[ix]
        batch.mul_(2.0)   # a copy (a 0-d index makes a view, which writes through to X)
        return batch, X, batch.requires_grad, batch.is_leaf, batch._base is None
    same(snippet)


def test_a_batch_picked_from_data_then_used_in_a_graph():
    def snippet(lib):
        X = lib.arange(12.0, dtype=torch.float64).reshape(4, 3)
        w = lib.ones(3, dtype=torch.float64, requires_grad=True)
        loss = (X[lib.tensor([1, 1, 3])] * w).sum()
        loss.backward()
        return loss, w.grad, loss.grad_fn.name()
    same(snippet)


@pytest.mark.parametrize("index", [[5], [-5], [0.5]])
def test_a_bad_index_into_data_gets_torchs_error(index):
    def snippet(lib):
        X = lib.arange(12.0).reshape(4, 3)
        return X[lib.tensor(index)]
    same(snippet)


def test_indexing_data_that_requires_grad_still_records_index_backward():
    def snippet(lib):
        X = lib.arange(6.0, dtype=torch.float64).reshape(3, 2).requires_grad_()
        picked = X[lib.tensor([2, 2, 0])]
        picked.sum().backward()
        return picked.grad_fn.name(), X.grad
    same(snippet)


def test_indexing_a_dual_tensor_keeps_its_tangent():
    import torch.autograd.forward_ad as tfw
    X, T = torch.arange(6.0, dtype=torch.float64).reshape(3, 2), torch.ones(3, 2, dtype=torch.float64)
    with tg.autograd.forward_ad.dual_level():
        ours = tg.autograd.forward_ad.unpack_dual(tg.autograd.forward_ad.make_dual(tg.Variable(X), tg.Variable(T))[
            tg.tensor([2, 0])]).tangent
    with tfw.dual_level():
        theirs = tfw.unpack_dual(tfw.make_dual(X, T)[torch.tensor([2, 0])]).tangent
    assert torch.equal(ours.data, theirs)


# --- nll_loss and embedding: torch's own backward kernel at first order, the recorded formula under create_graph --

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradient_is_torchs_to_the_bit(reduction, weighted):
    def snippet(lib):
        g = torch.Generator().manual_seed(1)
        logits = _from(lib, torch.randn(6, 5, generator=g), True)
        target = lib.tensor([0, 4, -100, 2, 2, 1])
        weight = _from(lib, torch.rand(5, generator=g)) if weighted else None
        loss = lib.nn.functional.cross_entropy(logits, target, weight=weight, reduction=reduction)
        loss.sum().backward()
        return loss, logits.grad
    same(snippet)


def test_nll_loss_with_every_target_ignored_is_torchs():
    def snippet(lib):
        logp = _from(lib, torch.randn(3, 4, generator=torch.Generator().manual_seed(2)), True)
        loss = lib.nn.functional.nll_loss(logp, lib.tensor([-100, -100, -100]))
        loss.backward()
        return loss, logp.grad
    same(snippet)


def test_nll_loss_2d_gradient_is_torchs_to_the_bit():
    def snippet(lib):
        logp = _from(lib, torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(3)), True)
        target = _from(lib, torch.randint(0, 3, (2, 4, 5), generator=torch.Generator().manual_seed(4)))
        lib.nn.functional.nll_loss(logp, target).backward()
        return logp.grad
    same(snippet)


def test_cross_entropy_second_derivative_is_recorded_as_before():
    def snippet(lib):
        logits = _from(lib, torch.randn(4, 3, generator=torch.Generator().manual_seed(5), dtype=torch.float64), True)
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor([0, 2, 1, 2]))
        g, = lib.autograd.grad(loss, logits, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), logits)
        return g, h.round(decimals=12)
    same(snippet)


@pytest.mark.parametrize("options", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True}, {"padding_idx": -1}])
def test_embedding_gradient_is_torchs_to_the_bit(options):
    def snippet(lib):
        table = lib.nn.Embedding(5, 3, **options)
        with lib.no_grad():
            table.weight.copy_(torch.randn(5, 3, generator=torch.Generator().manual_seed(6)))
        out = table(lib.tensor([[1, 4, 1], [0, 1, 4]]))
        (out * lib.arange(18.0).reshape(2, 3, 3)).sum().backward()
        return out, table.weight.grad
    same(snippet)


def test_embedding_second_derivative_through_the_table():
    def snippet(lib):
        weight = _from(lib, torch.randn(4, 2, generator=torch.Generator().manual_seed(7), dtype=torch.float64), True)
        rows = lib.nn.functional.embedding(lib.tensor([3, 3, 0]), weight)
        g, = lib.autograd.grad((rows ** 3).sum(), weight, create_graph=True)
        h, = lib.autograd.grad(g.sum(), weight)
        return g, h
    same(snippet)


# --- ops/aten.py: torch's kernels called as torch's C++ binds them -----------------------------------------------

def test_aten_kernels_are_torchs_and_raise_torchs_errors():
    from teachgrad.ops import aten
    grad, result = torch.randn(3, 2), torch.randn(3, 2).relu()
    assert torch.equal(aten.threshold_backward(grad, result, 0),
                       torch.ops.aten.threshold_backward(grad, result, 0))
    with pytest.raises(RuntimeError) as ours:
        aten.threshold_backward(grad, torch.randn(4), 0)
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.threshold_backward(grad, torch.randn(4), 0)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(AttributeError):
        aten.no_such_kernel


# --- arguments that are no inputs (a shape, a dim, an exponent) among Variables and a torch leaf ------------------

def test_edges_with_arguments_that_are_no_inputs():
    def snippet(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
        y = (x ** 2).view(4).sum(0)
        torch.manual_seed(0)
        lin = torch.nn.Linear(2, 1).double()
        z = lin(x).sum()
        (y + z).backward()
        nodes = [y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions],
                 [n.name() for n, _ in y.grad_fn.next_functions[0][0].next_functions]]
        return nodes, x.grad, lin.weight.grad, lin.bias.grad
    same(snippet)
