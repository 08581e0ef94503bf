"""Misuses that once answered unlike torch (issue 46), each run under teachgrad and under torch: values,
gradients, node names, exception types and messages compared by tests/twins.py. Each failed before its fix."""
import pytest
import torch

import teachgrad as tg
from tests.twins import same


def leaf(lib, *shape):
    return lib.ones(*shape, requires_grad=True)


# --- an index torch reads as data: a string is refused as torch's tensor constructor refuses it --------------------

@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize("index", [["a"], "a", ("a",), ["1"], ["a", 1], [None, "a"], [[0, "b"]], [b"a"]],
                         ids=repr)
def test_a_string_in_an_index_is_torchs_type_error(index):
    same(lambda lib: leaf(lib, 3)[index])
    same(lambda lib: lib.ones(3).__setitem__(index, 0.0))


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize("index", [[1, 2.5], [1.5], [0.7, 2], [1, True], [True, False, True], [-1.5, 0]], ids=repr)
def test_a_list_index_is_read_as_torch_reads_it(index):
    """torch reads a list index as int64 (floats truncated), or as a mask when it holds only bools."""
    def example(lib):
        x = lib.arange(3.0).requires_grad_()
        y = x[index]
        y.sum().backward()
        return y, x.grad

    same(example)


# --- the autograd entry points' arguments ------------------------------------------------------------------------------

@pytest.mark.parametrize("call", ["grad", "backward"])
@pytest.mark.parametrize("given", [1, 2, 3])
def test_grad_outputs_are_zipped_with_the_outputs(call, given):
    """More gradients than outputs: torch uses the first ones; fewer: the engine's count error."""
    def example(lib):
        x = leaf(lib, 2)
        outputs = [x * 2, x * 3]
        gradients = [lib.ones(2), lib.ones(2) * 10, lib.ones(2)][:given]
        if call == "grad":
            return lib.autograd.grad(outputs, x, grad_outputs=gradients)
        lib.autograd.backward(outputs, gradients)
        return x.grad

    same(example)


def test_one_output_with_two_grad_outputs():
    same(lambda lib: (lambda x: lib.autograd.grad(x * 2, x, grad_outputs=[lib.ones(2), lib.ones(2)]))(leaf(lib, 2)))


@pytest.mark.parametrize("inputs", [None, 3.0, 7], ids=repr)
def test_grad_with_inputs_that_are_not_a_sequence_is_a_type_error(inputs):
    same(lambda lib: lib.autograd.grad((leaf(lib, 2) * 2).sum(), inputs=inputs))
    same(lambda lib: lib.autograd.grad((leaf(lib, 2) * 2).sum(), inputs))


def test_backward_with_inputs_that_are_a_number_is_a_type_error():
    same(lambda lib: (leaf(lib, 2) * 2).sum().backward(inputs=3.0))


def test_inputs_given_as_a_generator():
    def example(lib):
        x = leaf(lib, 2)
        g = lib.autograd.grad((x * 2).sum(), (t for t in [x]))
        y = leaf(lib, 2)
        (y * 3).sum().backward(inputs=(t for t in [y]))
        return g, y.grad

    same(example)


@pytest.mark.parametrize("where", ["grad inputs", "backward inputs"])
def test_a_number_among_the_inputs(where):
    def example(lib):
        x = leaf(lib, 2)
        if where == "grad inputs":
            return lib.autograd.grad((x * 2).sum(), [x, 3.0])
        (x * 2).sum().backward(inputs=[x, 3.0])

    same(example)


# --- a first derivative that is piecewise constant still has a graph under create_graph -------------------------

def _second_derivative(fn):
    def example(lib):
        x = lib.tensor([1.0, -2.0, 3.0, 0.0], dtype=torch.float64, requires_grad=True)
        g, = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
        name = None if g.grad_fn is None else type(g.grad_fn).__name__
        return g, g.requires_grad, name, lib.autograd.grad(g.sum(), x)

    return example


def test_relus_gradient_under_create_graph_has_a_graph():
    """torch records relu's gradient as ThresholdBackwardBackward0, whose derivative for the saved result is zeros:
    the second derivative is zeros, not "does not require grad"."""
    same(_second_derivative(lambda lib, x: x.relu()))
    same(_second_derivative(lambda lib, x: lib.relu(x * 2)))
    same(_second_derivative(lambda lib, x: lib.nn.functional.relu(x) * x))


def test_relus_gradient_of_a_gradient_that_requires_grad():
    def example(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
        v = lib.tensor([0.5, 2.0, -1.0], dtype=torch.float64, requires_grad=True)
        y = x.relu()
        g, = lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)
        return g, type(g.grad_fn).__name__, lib.autograd.grad((g * g).sum(), [x, v], allow_unused=True)

    same(example)


# --- torch's clip_grad functions over Variables --------------------------------------------------------------------

@pytest.mark.parametrize("foreach", [None, False, True])
def test_torchs_clip_grad_norm_over_variables(foreach):
    def example(lib):
        params = [lib.ones(3, requires_grad=True), lib.ones(2, 2, requires_grad=True), lib.ones(2, requires_grad=True)]
        ((params[0] * 2).sum() + (params[1] * 3).sum()).backward()
        norm = torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=foreach)
        return norm, [p.grad for p in params]

    ours, theirs = example(tg), example(torch)
    assert type(ours[0]) is torch.Tensor   # torch's function: torch's result
    torch.testing.assert_close(ours[0], theirs[0], rtol=0, atol=0)
    for o, t in zip(ours[1], theirs[1]):
        assert (o is None) == (t is None)
        if t is not None:
            assert isinstance(o, tg.Variable)
            torch.testing.assert_close(o.data, t, rtol=0, atol=0)


def test_torchs_clip_grad_value_and_total_norm_over_variables():
    def example(lib):
        params = [lib.ones(3, requires_grad=True), lib.ones(2, 2, requires_grad=True)]
        ((params[0] * 2).sum() + (params[1] * 0.05).sum()).backward()
        torch.nn.utils.clip_grad_value_(params, 0.1)
        total = torch.nn.utils.get_total_norm([p.grad for p in params], norm_type=3.0)
        return total, [p.grad for p in params]

    ours, theirs = example(tg), example(torch)
    torch.testing.assert_close(ours[0], theirs[0], rtol=0, atol=0)
    for o, t in zip(ours[1], theirs[1]):
        torch.testing.assert_close(o.data, t, rtol=0, atol=0)


def test_torchs_clip_grad_norm_on_torch_tensors_is_untouched():
    params = [torch.ones(3, requires_grad=True)]
    (params[0] * 2).sum().backward()
    assert torch.nn.utils.clip_grad_norm_(params, 1.0).item() == pytest.approx(12 ** 0.5)
    with pytest.raises(TypeError, match="incompatible function arguments"):   # torch's own error for non-tensors
        torch.nn.utils.clip_grad._group_tensors_by_device_and_dtype([[object()]])


# --- tensor() of a list of tensors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("elements", [
    lambda lib: [lib.tensor([1.0]), lib.tensor([2.0])],
    lambda lib: [lib.tensor([[1.0]]), lib.tensor([[2.0]])],
    lambda lib: [lib.tensor(1.0), lib.tensor(2.0)],
    lambda lib: [lib.tensor([1.0, 3.0]), lib.tensor([2.0, 4.0])],
    lambda lib: [[lib.tensor([1], dtype=torch.int64)], [lib.tensor(2)]],
    lambda lib: [lib.tensor([1.0]), 2.0],
    lambda lib: [torch.tensor([1.0]), lib.tensor([2.0])],
], ids=["one-element", "1x1", "0-dim", "two-element", "nested ints", "with a number", "mixed"])
def test_tensor_of_a_list_of_tensors_is_read_as_torch_reads_it(elements):
    same(lambda lib: lib.tensor(elements(lib)))


# --- ctx.mark_non_differentiable, cat's elements, .data after saving -----------------------------------------------

@pytest.mark.parametrize("marked", [3, None, "x", [1]], ids=repr)
def test_mark_non_differentiable_takes_only_tensors(marked):
    def example(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(marked)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        return F.apply(leaf(lib, 2))

    same(example)


@pytest.mark.parametrize("call", ["cat", "stack", "concat", "hstack"])
def test_cat_with_a_list_among_its_tensors_is_torchs_type_error(call):
    same(lambda lib: getattr(lib, call)([leaf(lib, 2), [1.0, 2.0]]))
    same(lambda lib: getattr(lib, call)([lib.ones(2), 3.0]))


def test_data_assigned_after_the_tensor_was_saved_is_what_backward_reads():
    """torch's `y.data = t` changes the tensor's contents, and the saved tensor is the same tensor: backward reads
    the new values (and no version counter moves)."""
    def example(lib):
        x = leaf(lib, 2)
        y = x * 1
        z = y * y
        y.data = torch.tensor([3.0, 5.0])
        z.sum().backward()
        return x.grad, y._version

    same(example)


def test_data_assigned_to_a_leaf_saved_by_an_op():
    def example(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        z = (w * w).sum()
        w.data = torch.tensor([10.0, 20.0])
        z.backward()
        return w.grad, w

    same(example)


def test_data_assigned_keeps_other_variables_that_share_memory_apart():
    def example(lib):
        x = lib.tensor([1.0, 2.0])
        d = x.detach()
        x.data = torch.tensor([7.0, 8.0, 9.0])
        return x, d

    same(example)


@pytest.mark.parametrize("activation", [
    lambda F, x: F.hardtanh(x), lambda F, x: F.hardtanh(x, -0.5, 2.5), lambda F, x: F.relu6(x * 3),
    lambda F, x: F.threshold(x, 0.5, 2.0), lambda F, x: F.hardshrink(x), lambda F, x: F.softshrink(x, 0.5),
    lambda F, x: F.leaky_relu(x), lambda F, x: F.leaky_relu(x, 0.2), lambda F, x: F.hardswish(x),
    lambda F, x: F.elu(x), lambda F, x: F.hardsigmoid(x),
], ids=["hardtanh", "hardtanh(-0.5, 2.5)", "relu6", "threshold", "hardshrink", "softshrink", "leaky_relu",
        "leaky_relu(0.2)", "hardswish", "elu", "hardsigmoid"])
def test_a_piecewise_activations_gradient_under_create_graph_has_torchs_graph(activation):
    """As relu's: torch records the gradient as the backward kernel's own node (HardtanhBackwardBackward0, ...),
    whose derivative for the input is zeros; hardsigmoid's it refuses to differentiate."""
    same(_second_derivative(lambda lib, x: activation(lib.nn.functional, x)))


@pytest.mark.parametrize("call", ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"])
def test_torchs_clip_grad_functions_given_one_variable(call):
    """One tensor given alone is one parameter to torch; a Variable given alone was walked row by row (no row has a
    .grad), and the norm came back 0 with nothing clipped."""
    def example(lib):
        v = lib.ones(2, 3, requires_grad=True)
        (v * 5).sum().backward()
        if call == "get_total_norm":
            return torch.nn.utils.get_total_norm(v.grad), v.grad
        result = getattr(torch.nn.utils, call)(v, 1.0)
        return result, v.grad

    ours, theirs = example(tg), example(torch)
    if theirs[0] is not None:
        torch.testing.assert_close(ours[0], theirs[0], rtol=0, atol=0)
    torch.testing.assert_close(ours[1].data, theirs[1], rtol=0, atol=0)
