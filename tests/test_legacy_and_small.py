"""Issue 34 against torch: the legacy constructors and types old tutorials use (`tg.Tensor(4, 2)`,
`tg.FloatTensor([...])`, `x.type(...)`), and small differences: indexing errors, `requires_grad` given a
non-bool, grad()'s `only_inputs` and `is_grads_batched`, mm of a 1-D tensor, a number first in
add/sub/mul/div, `x.to(other)`, max(dim)'s saved indices after backward."""
import warnings

import numpy as np
import pytest
import torch

import teachgrad as tg

from .helpers import graph_names
from .twins import same


def X(lib, requires_grad=True):
    return lib.tensor([[1.0, 5.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=requires_grad)


# --- the legacy constructor tg.Tensor(...) ---

@pytest.mark.parametrize("make", [
    lambda lib: lib.Tensor(4, 2).shape,
    lambda lib: lib.Tensor(4, 2).dtype,
    lambda lib: (lib.Tensor(4, 2).requires_grad, lib.Tensor(4, 2).is_leaf),
    lambda lib: lib.Tensor(lib.Size([2, 3])).shape,
    lambda lib: lib.Tensor(3).shape,
    lambda lib: lib.Tensor(2, 0).shape,
    lambda lib: lib.Tensor(),
    lambda lib: lib.Tensor([]),
    lambda lib: lib.Tensor([[1, 2], [3, 4]]),
    lambda lib: lib.Tensor((2, 3)),
    lambda lib: lib.Tensor([True, False]),
    lambda lib: lib.Tensor(np.array([1, 2])),
    lambda lib: lib.Tensor(torch.tensor([1, 2])),
    lambda lib: lib.Tensor(lib.tensor([1, 2])),
    lambda lib: lib.Tensor(lib.tensor([1.0, 2.0], dtype=lib.float64)),
    lambda lib: lib.Tensor([lib.tensor(1.0), lib.tensor(2.0)]),
    lambda lib: lib.Tensor(2, device="cpu").shape,
    lambda lib: lib.Tensor(3.0),
    lambda lib: lib.Tensor(True),
    lambda lib: lib.Tensor(-1),
    lambda lib: lib.Tensor("a"),
    lambda lib: lib.Tensor(2, 3.0),
    lambda lib: lib.Tensor([[1, 2], [3]]),
    lambda lib: lib.Tensor([1, 2], requires_grad=True),
    lambda lib: lib.Tensor([1, 2], dtype=lib.float64),
])
def test_legacy_tensor_constructor(make):
    same(make)


def test_legacy_tensor_of_a_tensor_that_requires_grad_is_an_alias():
    def run(lib):
        x = X(lib)
        y = lib.Tensor(x)
        (y * y).sum().backward()
        return y, y._base is x, y.is_leaf, type(y.grad_fn).__name__, x.grad
    same(run)


def test_legacy_tensor_then_requires_grad():
    # micrograd's test: torch.Tensor([value]).double(), then requires_grad = True
    def run(lib):
        leaf = lib.Tensor([2]).double()
        leaf.requires_grad = True
        (leaf * leaf).sum().backward()
        return leaf, leaf.grad
    same(run)


def test_isinstance_and_issubclass_keep_working():
    x = tg.ones(2)
    assert isinstance(x, tg.Tensor) and isinstance(tg.Tensor(2), tg.Variable) and isinstance(tg.Tensor(2), tg.Tensor)
    assert issubclass(tg.Variable, tg.Tensor) and issubclass(tg.Tensor, tg.Variable) and not issubclass(int, tg.Tensor)
    assert not isinstance(torch.ones(2), tg.Tensor) and not isinstance(3.0, tg.Tensor)
    assert tg.Tensor.add is tg.Variable.add and tg.Tensor.backward is tg.Variable.backward   # unbound methods
    assert tg.Tensor.__name__ == "Tensor" and type(tg.Tensor(2)) is tg.Variable


def test_a_subclass_of_tensor_is_made_as_a_variable_is():
    class Mine(tg.Tensor):
        __slots__ = ()
    m = Mine(torch.tensor([1.0, 2.0]), requires_grad=True)
    assert type(m) is Mine and isinstance(m, tg.Tensor) and isinstance(m, Mine) and m.requires_grad
    assert not isinstance(tg.ones(2), Mine) and issubclass(Mine, tg.Tensor) and not issubclass(tg.Variable, Mine)
    (m * m).sum().backward()
    assert m.grad.tolist() == [2.0, 4.0]


def test_variable_keeps_its_own_signature():
    t = torch.tensor([1.0, 2.0])
    v = tg.Variable(t, requires_grad=True)
    assert v.data is t and v.requires_grad and v.is_leaf
    assert tg.Variable([1, 2]).dtype == torch.int64   # the contract: a list through torch.as_tensor
    assert tg.Variable(4).shape == () and tg.Variable(4).item() == 4


# --- the legacy typed constructors ---

@pytest.mark.parametrize("make", [
    lambda lib: lib.FloatTensor(2, 3).shape,
    lambda lib: lib.FloatTensor([1, 2]),
    lambda lib: lib.FloatTensor(),
    lambda lib: lib.LongTensor([1.5, 2]),
    lambda lib: lib.LongTensor(2).dtype,
    lambda lib: lib.DoubleTensor([1, 2]),
    lambda lib: lib.DoubleTensor(lib.Size([2, 2])).dtype,
    lambda lib: lib.BoolTensor([1, 0]),
    lambda lib: lib.FloatTensor(lib.tensor([1, 2])),
    lambda lib: lib.FloatTensor(3.0),
    lambda lib: lib.FloatTensor([1.0], requires_grad=True),
    lambda lib: (isinstance(lib.ones(2), lib.FloatTensor), isinstance(lib.ones(2), lib.DoubleTensor),
                 isinstance(X(lib), lib.DoubleTensor), isinstance(lib.ones(2).long(), lib.LongTensor)),
    lambda lib: (lib.FloatTensor.__name__, lib.FloatTensor.dtype, lib.LongTensor.dtype, lib.BoolTensor.dtype),
])
def test_legacy_typed_constructors(make):
    same(make)


def test_legacy_typed_constructor_of_a_tensor_that_requires_grad():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.FloatTensor(x)
        (y * 3).sum().backward()
        return y, y._base is x, type(y.grad_fn).__name__, x.grad
    same(run)


# --- x.type(...) ---

@pytest.mark.parametrize("make", [
    lambda lib: X(lib).type(),
    lambda lib: lib.ones(2).type(),
    lambda lib: lib.ones(2).long().type(),
    lambda lib: lib.ones(2, dtype=lib.bool).type(),
    lambda lib: lib.ones(2, dtype=lib.float16).type(),
    lambda lib: X(lib).type(lib.FloatTensor),
    lambda lib: X(lib).type(lib.LongTensor),
    lambda lib: X(lib).type(lib.Tensor),
    lambda lib: lib.ones(2).long().type(lib.Tensor),
    lambda lib: lib.ones(2).type(lib.DoubleTensor),
    lambda lib: X(lib).type("torch.FloatTensor"),
    lambda lib: lib.ones(2).type("torch.DoubleTensor"),
    lambda lib: X(lib).type(lib.float32),
    lambda lib: X(lib).type(dtype=lib.float32),
    lambda lib: X(lib).type(lib.float32, non_blocking=True),
    lambda lib: X(lib).type(lib.int64),
    lambda lib: X(lib).type("float"),
    lambda lib: X(lib).type(3),
])
def test_type(make):
    same(make)


@pytest.mark.parametrize("target", [
    lambda lib: lib.float32, lambda lib: "torch.FloatTensor", lambda lib: lib.FloatTensor, lambda lib: lib.Tensor,
])
def test_type_is_differentiable_like_to(target):
    def run(lib):
        x = X(lib)
        y = x.type(target(lib))
        (y * y).sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    same(run)


@pytest.mark.parametrize("target", [lambda lib: lib.float64, lambda lib: "torch.DoubleTensor", lambda lib: lib.DoubleTensor])
def test_type_to_its_own_type_is_itself(target):
    same(lambda lib: (lambda x: x.type(target(lib)) is x)(X(lib)))


def test_type_to_an_integer_type_records_nothing():
    same(lambda lib: (lambda y: (y, y.requires_grad, y.grad_fn))(X(lib).type(lib.int64)))


# --- x.to(other) ---

@pytest.mark.parametrize("make", [
    lambda lib: X(lib, requires_grad=False).to(X(lib)),
    lambda lib: (lambda y: (y, type(y.grad_fn).__name__))(X(lib).to(X(lib).float())),
    lambda lib: (lambda x: x.to(x) is x)(X(lib)),
    lambda lib: (lambda y: type(y.grad_fn).__name__)(X(lib).to(X(lib), copy=True)),
    lambda lib: lib.ones(2).to(X(lib), lib.float16),
    lambda lib: lib.ones(2).to(other=X(lib)),
])
def test_to_other(make):
    same(make)


def test_to_other_backward():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.to(X(lib))
        (y * y).sum().backward()
        return y, x.grad
    same(run)


# --- max(dim)'s indices after backward ---

def test_max_dim_saved_indices_freed_after_backward():
    def run(lib):
        values = X(lib).max(dim=1)[0]
        values.sum().backward()
        return values.grad_fn._saved_indices
    same(run)


def test_max_dim_saved_indices_kept_with_retain_graph():
    def run(lib):
        values = X(lib).max(dim=1)[0]
        values.sum().backward(retain_graph=True)
        saved = values.grad_fn._saved_indices
        return saved, saved.requires_grad, saved.grad_fn
    same(run)


# --- indexing errors ---

@pytest.mark.parametrize("index", [
    (0, 0, 0), (0, 0, 0, 0), (Ellipsis, 0, 0, 0), (None, 0, 0, 0), (0, 0, Ellipsis, 0),
    (slice(None), slice(None), slice(None)), (0, slice(None), 0),
])
def test_too_many_indices(index):
    same(lambda lib: X(lib)[index])
    same(lambda lib: X(lib, requires_grad=False)[index])


@pytest.mark.parametrize("index", [0, -1, slice(None), (0,), (None, 0), (Ellipsis, 0), True])
def test_index_of_a_0_dim_tensor(index):
    same(lambda lib: X(lib)[0, 0][index])
    same(lambda lib: lib.tensor(3.0)[index])


@pytest.mark.parametrize("index", [None, Ellipsis, (None, None), ()])
def test_index_of_a_0_dim_tensor_that_works(index):
    same(lambda lib: X(lib)[0, 0][index])


@pytest.mark.parametrize("index", [0, slice(None), (0, 0), True, None])
def test_setitem_of_a_0_dim_tensor(index):
    def run(lib):
        x = lib.tensor(3.0, dtype=lib.float64)
        x[index] = 7.0
        return x
    same(run)


@pytest.mark.parametrize("index", [(0, 0, 0), (slice(None),) * 3])
def test_setitem_with_too_many_indices(index):
    same(lambda lib: X(lib, requires_grad=False).__setitem__(index, 7.0))


@pytest.mark.parametrize("index", [True, False, (0, True), (0, False, 0), (True, 0, 0), (None, True, 1, slice(None))])
def test_a_bool_index_adds_a_dimension(index):
    # (with requires_grad, a bool was read as the integer 1: x[True] was x[1])
    def run(lib):
        x = X(lib)
        y = x[index]
        y.sum().backward()
        return y, graph_names(y), x.grad
    same(run)
    same(lambda lib: (lambda y: (y, graph_names(y)))(X(lib)[0, 0][index] if isinstance(index, bool) else lib.ones(1)))


# --- requires_grad must be a bool ---

@pytest.mark.parametrize("value", [0, 1, 1.0, None, np.bool_(True), torch.tensor(True)])
def test_requires_grad_setter_refuses_a_non_bool(value):
    def run(lib):
        x = X(lib, requires_grad=False)
        x.requires_grad = value
        return x.requires_grad
    same(run)
    same(lambda lib: setattr(X(lib), "requires_grad", value))


@pytest.mark.parametrize("value", [0, 1, 1.0, None])
def test_requires_grad_call_refuses_a_non_bool(value):
    same(lambda lib: X(lib, requires_grad=False).requires_grad_(value))


@pytest.mark.parametrize("factory", [
    lambda lib, rg: lib.ones(2, requires_grad=rg),
    lambda lib, rg: lib.zeros(2, requires_grad=rg),
    lambda lib, rg: lib.tensor([1.0], requires_grad=rg),
    lambda lib, rg: lib.full((2,), 1.0, requires_grad=rg),
    lambda lib, rg: lib.eye(2, requires_grad=rg),
    lambda lib, rg: lib.arange(3.0, requires_grad=rg),
    lambda lib, rg: lib.ones_like(lib.ones(2), requires_grad=rg),
])
@pytest.mark.parametrize("value", [0, 1, 1.0, None, True, False])
def test_factory_requires_grad_keyword_refuses_a_non_bool(factory, value):
    same(lambda lib: (lambda x: (x, x.requires_grad))(factory(lib, value)))


def test_randn_requires_grad_keyword_refuses_a_non_bool():
    # torch's randn says the call matched none of its signatures: the type and the first line are compared
    def first_line(lib):
        try:
            lib.randn(2, requires_grad=1)
        except TypeError as e:
            return str(e).split("\n")[0]
    assert first_line(tg) == first_line(torch)


# --- grad(only_inputs=..., is_grads_batched=...) ---

@pytest.mark.parametrize("only_inputs", [True, False])
def test_grad_only_inputs_is_accepted_and_warns_when_false(only_inputs):
    def run(lib):
        x = X(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g = lib.autograd.grad((x * x).sum(), x, only_inputs=only_inputs)
        return g, [(w.category, str(w.message)) for w in caught]
    same(run)


B64 = dict(dtype=torch.float64)


@pytest.mark.parametrize("make", [
    lambda lib, x: lib.autograd.grad(x * x, x, torch.eye(4, **B64).reshape(4, 2, 2), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x.exp(), x, torch.arange(12.0).reshape(3, 2, 2), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad((x * x).sum(), x, torch.arange(3.0, **B64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad([x * x, x.sum()], [x], [torch.ones(3, 2, 2, **B64), torch.arange(3.0)],
                                     is_grads_batched=True),
    lambda lib, x: lib.autograd.grad([x * x, x * 2], [x], [torch.ones(3, 2, 2), lib.ones(3, 2, 2)],
                                     is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x * x, [x, lib.ones(2, requires_grad=True)], torch.ones(3, 2, 2, **B64),
                                     is_grads_batched=True, allow_unused=True),
    lambda lib, x: lib.autograd.grad(x * x, [x, lib.ones(2, requires_grad=True)], torch.ones(3, 2, 2, **B64),
                                     is_grads_batched=True, allow_unused=True, materialize_grads=True),
    lambda lib, x: lib.autograd.grad(x * x, [x, lib.ones(2, requires_grad=True)], torch.ones(3, 2, 2, **B64),
                                     is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x.sum(), x, torch.ones(3, dtype=torch.int64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x * x, x, torch.ones(2, 2, **B64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x * x, x, torch.ones(3, 2, 3, **B64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x.sum(), x, torch.ones(3, 1, **B64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad([x * x, x.sum()], [x], [torch.ones(3, 2, 2, **B64), torch.arange(4.0)],
                                     is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x * x, x, None, is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x.sum(), x, None, is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x * x, x, torch.ones(0, 2, 2, **B64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x.sum(), x, torch.tensor(1.0, **B64), is_grads_batched=True),
    lambda lib, x: lib.autograd.grad(x * x, x, torch.ones(3, 2, 2, **B64), is_grads_batched=False),
    lambda lib, x: lib.autograd.grad(x * x, x, torch.ones(3, 2, 2, **B64), is_grads_batched=True, retain_graph=False),
])
def test_grad_is_grads_batched(make):
    same(lambda lib: make(lib, X(lib)))


def test_grad_is_grads_batched_of_a_torch_tensor():
    def run(lib):
        w = torch.tensor([1.0, 2.0], **B64, requires_grad=True)
        y = lib.ones(2, **B64) * w * w
        return lib.autograd.grad(y, w, torch.eye(2, **B64), is_grads_batched=True), w.grad
    same(run)


def test_grad_is_grads_batched_frees_the_graph_unless_retained():
    def run(lib, retain_graph):
        x = X(lib)
        y = x.exp()
        lib.autograd.grad(y, x, torch.ones(3, 2, 2, **B64), is_grads_batched=True, retain_graph=retain_graph)
        return lib.autograd.grad(y.sum(), x)
    same(lambda lib: run(lib, None))
    same(lambda lib: run(lib, True))


def test_grad_is_grads_batched_with_create_graph_is_refused_clearly():
    x = X(tg)
    with pytest.raises(NotImplementedError, match=r"grad\(is_grads_batched=True\) with create_graph=True"):
        tg.autograd.grad(x * x, x, torch.ones(3, 2, 2, **B64), is_grads_batched=True, create_graph=True)


# --- mm of a 1-D tensor ---

@pytest.mark.parametrize("make", [
    lambda lib, x, v: lib.mm(v, x), lambda lib, x, v: lib.mm(x, v), lambda lib, x, v: v.mm(x),
    lambda lib, x, v: x.mm(v), lambda lib, x, v: lib.mm(v, v), lambda lib, x, v: lib.mm(x[None], x),
    lambda lib, x, v: lib.mm(x, x[None]),
])
def test_mm_of_a_1d_tensor(make):
    same(lambda lib: make(lib, X(lib), lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)))


# --- a Python number first in add/sub/mul/div ---

@pytest.mark.parametrize("make", [
    lambda lib, x: lib.add(0.1, x), lambda lib, x: lib.sub(0.1, x), lambda lib, x: lib.mul(0.1, x),
    lambda lib, x: lib.div(0.1, x), lambda lib, x: lib.add(0.1, x, alpha=2), lambda lib, x: lib.sub(0.1, x, alpha=0.3),
    lambda lib, x: lib.add(1, x), lambda lib, x: lib.div(1, x),
])
def test_number_first_is_exact_in_float64(make):
    def run(lib):
        x = X(lib)
        y = make(lib, x)
        y.backward(lib.ones_like(y) / 3)
        return y, type(y.grad_fn).__name__, x.grad
    ours = same(run)
    assert ours[1][0][1] == torch.float64


@pytest.mark.parametrize("make", [
    lambda lib: lib.add(0.5, lib.tensor([1, 2])), lambda lib: lib.add(1, lib.tensor([1, 2])),
    lambda lib: lib.div(1, lib.tensor([1, 2])), lambda lib: lib.mul(2, lib.tensor([1, 2])),
    lambda lib: lib.sub(3, lib.tensor([1, 2])), lambda lib: lib.add(0.1, 0.2), lambda lib: lib.mul(0.1, 3),
    lambda lib: lib.sub(True, lib.tensor([True])), lambda lib: lib.add(0.1, lib.tensor([1.0], dtype=lib.float16)),
])
def test_number_first_dtypes(make):
    same(make)


def test_number_first_saved_self_is_the_number_as_a_tensor():
    same(lambda lib: lib.div(0.1, X(lib)).grad_fn._saved_self)
    same(lambda lib: lib.mul(0.1, X(lib)).grad_fn._saved_self)


@pytest.mark.parametrize("make", [lambda lib, x: lib.div(0.1, x), lambda lib, x: lib.sub(0.1, x, alpha=0.3) * x,
                                  lambda lib, x: lib.mul(0.1, x) * x])
def test_number_first_double_backward(make):
    def run(lib):
        x = X(lib)
        g, = lib.autograd.grad(make(lib, x).sum(), x, create_graph=True)
        g.sum().backward()
        return g, type(g.grad_fn).__name__, x.grad
    same(run)


# ---- squeeze with a tuple of dims, and sum_to_size (torch's op database found both) ---------------------------

@pytest.mark.parametrize("dims", [(1, 3), (0,), (), [1], (-1, 1)])
def test_squeeze_with_a_tuple_of_dims_records_torchs_node(dims):
    """squeeze(dims) with a sequence is torch's squeeze.dims overload: SqueezeBackward2 (an int: SqueezeBackward1)."""
    def run(lib):
        x = lib.tensor(torch.arange(6.0, dtype=torch.float64).reshape(2, 1, 3, 1), requires_grad=True)
        y = x.squeeze(dims)
        (y * y).sum().backward()
        return y, type(y.grad_fn).__name__, y._base is x, x.grad
    same(run)


@pytest.mark.parametrize("size", [(), (1,), (3,), (2, 3), (1, 3), (2, 1), (1, 1, 3)])
def test_sum_to_size_as_torch(size):
    """torch's sum_to: to the empty size it is sum() (SumBackward0) whatever the input; else the broadcast dims
    summed (SumBackward1) and the leading ones viewed away, or the input itself when nothing is summed."""
    def run(lib):
        x = lib.tensor(torch.arange(6.0, dtype=torch.float64).reshape(2, 3), requires_grad=True)
        y = x.sum_to_size(size)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, y is x, x.grad
    same(run)
    same(lambda lib: type(lib.tensor(2.0, requires_grad=True).sum_to_size(()).grad_fn).__name__)


@pytest.mark.parametrize("size", [(3, 3), (4,), (2, 3, 1), (1, 2, 3, 1)])
def test_sum_to_size_of_a_size_it_does_not_expand_to_is_torchs_error(size):
    """teachgrad gave a result of another shape for (3, 3) silently; torch refuses."""
    same(lambda lib: lib.tensor(torch.ones(2, 3)).sum_to_size(size))


# ---- the gradient shared evenly among the elements that reach a reduction (torch's evenly_distribute_backward) --

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("name", ["max", "min", "median", "nanmedian", "amax"])
@pytest.mark.parametrize("values", [[1.0, NAN, 2.0, NAN], [3.0, 1.0, 3.0, 2.0], [2.0, 2.0, 2.0]])
def test_whole_reductions_share_gradient_and_tangent_as_torch(name, values):
    """max/min/median of all elements: the gradient (and the tangent, read back) shared evenly among the elements
    equal to the result, or the NaNs when the result is NaN; the others get exactly 0 even for an infinite gradient.
    teachgrad had two copies of this rule: max's tangent at a NaN result was NaN, median's gradient NaN elsewhere
    for an infinite incoming gradient."""
    def run(lib):
        x = lib.tensor(values, dtype=torch.float64, requires_grad=True)
        y = getattr(x, name)()
        g, = lib.autograd.grad(y, x, lib.tensor(INF, dtype=torch.float64))
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(values, dtype=torch.float64), lib.arange(1.0, len(values) + 1, dtype=torch.float64))
            tangent = fw.unpack_dual(getattr(dual, name)()).tangent
        return y, g, tangent
    same(run)
