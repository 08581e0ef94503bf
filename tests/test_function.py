"""Custom Functions: one class body runs under teachgrad and torch; ctx API; gradcheck."""
import pytest
import torch

import teachgrad as tg
from teachgrad.check import GradcheckError, gradcheck

from .helpers import close, pair


class CubeBody:
    """The class body a learner writes once; mixed into both libraries' Function."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad[0] and not ctx.needs_input_grad[1]
        return grad_output * 3 * ctx.scale * x ** 2, None


class Cube(CubeBody, tg.Function):
    pass


class TorchCube(CubeBody, torch.autograd.Function):
    pass


def test_same_body_same_results():
    x_ours, x_theirs = pair([0.5, -1.0, 2.0])
    y_ours, y_theirs = Cube.apply(x_ours, 2.0), TorchCube.apply(x_theirs, 2.0)
    assert close(y_ours, y_theirs)
    assert type(y_ours.grad_fn).__name__ == "CubeBackward"
    assert len(y_ours.grad_fn.next_functions) == len(y_theirs.grad_fn.next_functions) == 1
    y_ours.sum().backward()
    y_theirs.sum().backward()
    assert close(x_ours.grad, x_theirs.grad)


def test_custom_function_twice_differentiable():
    x_ours, x_theirs = pair([0.5, -1.0])
    (g1,) = tg.grad(Cube.apply(x_ours, 1.0).sum(), x_ours, create_graph=True)
    (g2,) = torch.autograd.grad(TorchCube.apply(x_theirs, 1.0).sum(), x_theirs, create_graph=True)
    assert close(tg.grad(g1.sum(), x_ours)[0], torch.autograd.grad(g2.sum(), x_theirs)[0])


def test_gradcheck_passes_and_catches_a_wrong_backward():
    x = tg.tensor([0.3, -0.7, 1.1], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda v: Cube.apply(v, 1.5), (x,))

    class WrongCube(tg.Function):
        forward = CubeBody.forward

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 2 * x ** 2, None

    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0") as e:
        gradcheck(lambda v: WrongCube.apply(v, 1.0), (x,))
    assert "d output[0][0] / d input[0][0]" in str(e.value)
    assert gradcheck(lambda v: WrongCube.apply(v, 1.0), (x,), raise_exception=False) is False


def test_gradcheck_warns_about_float32_as_torch_does():
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        assert gradcheck(lambda v: v * 2, (tg.ones(2, requires_grad=True),), eps=1e-2, atol=1e-2)


def test_wrong_number_of_gradients():
    class Bad(tg.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    class TorchBad(torch.autograd.Function):
        forward, backward = Bad.forward, Bad.backward

    x_ours, x_theirs = pair([1.0])
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"):
        Bad.apply(x_ours, x_ours).sum().backward()
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"):
        TorchBad.apply(x_theirs, x_theirs).sum().backward()


def test_gradient_of_wrong_shape_from_backward():
    class Bad(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    with pytest.raises(RuntimeError, match="returned an invalid gradient at index 0"):
        Bad.apply(tg.ones(3, requires_grad=True)).sum().backward()


def test_mark_non_differentiable_and_multiple_outputs():
    class SortWithIndex(tg.Function):
        @staticmethod
        def forward(ctx, x):
            values, index = x.sort()
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(index)
            return values, index

        @staticmethod
        def backward(ctx, grad_values, grad_index):
            (index,) = ctx.saved_tensors
            return grad_values.new_zeros(grad_values.shape).scatter(0, index, grad_values)

    x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, index = SortWithIndex.apply(x)
    assert values.requires_grad and not index.requires_grad
    (values * tg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]


class Double(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @tg.once_differentiable
    def backward(ctx, g):
        assert isinstance(g, tg.Variable) and not tg.is_grad_enabled()   # as torch's: tensors, under no_grad
        return g * 2


def test_once_differentiable():
    x = tg.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    (g,) = tg.grad((Double.apply(x) ** 2).sum(), x, create_graph=True)
    assert g.requires_grad and type(g.grad_fn).__name__ == "Error"
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_forward_runs_without_recording():
    seen = []

    class Peek(tg.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(tg.is_grad_enabled())
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    Peek.apply(tg.ones(1, requires_grad=True))
    assert seen == [False]


def test_save_for_backward_names_the_wrong_argument():
    class Bad(tg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 2.0)
            return x * 2

    with pytest.raises(TypeError, match="argument 1 is of type float"):
        Bad.apply(tg.ones(1, requires_grad=True))


def test_once_differentiable_error_node_name():
    x = tg.ones(2, requires_grad=True)
    (g,) = tg.grad((Double.apply(x) ** 2).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::Error"
