"""What PyTorch's notes on autograd mechanics and on extending autograd describe, checked twin against torch.

Mirrors (behaviour, not text):
- pytorch/pytorch docs/source/notes/autograd.rst ("Autograd mechanics": saved tensors, requires_grad, grad modes,
  in-place correctness checks, multithreaded backward, retain_grad, hooks, the graph behind grad_fn), with the
  grad-mode examples of torch/autograd/grad_mode.py's docstrings
- pytorch/pytorch docs/source/notes/extending.rst ("Extending torch.autograd": a linear Function with a separate
  setup_context and with ctx in forward, gradcheck on it, a constant factor passed positionally and by keyword,
  a cube whose derivative is an output so that double backward works, set_materialize_grads(False), an
  exponential that saves its output)
"""
import threading

import pytest

from .harness import check, snippets


# --- autograd mechanics --------------------------------------------------------------------------------------------

def saved_input_is_the_input(torch):
    leaf = torch.randn(5, requires_grad=True)
    squared = leaf.pow(2)
    saved = squared.grad_fn._saved_self
    return leaf.equal(saved), leaf is saved


def saved_output_is_the_output(torch):
    leaf = torch.randn(5, requires_grad=True)
    grown = leaf.exp()
    saved = grown.grad_fn._saved_result
    return grown.equal(saved), grown is saved


def saved_tensor_read_after_backward(torch):
    leaf = torch.randn(5, requires_grad=True)
    squared = leaf.pow(2)
    squared.sum().backward()
    return squared.grad_fn._saved_self


def requires_grad_of_results(torch):
    a, b = torch.randn(5, 5), torch.randn(5, 5)
    w = torch.randn((5, 5), requires_grad=True)
    return (a + b).requires_grad, (a + w).requires_grad, (a * b + w).requires_grad


def grad_mode_no_grad(torch):
    leaf = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        inside = leaf * 2

    @torch.no_grad()
    def double(t):
        return t * 2

    @torch.no_grad
    def triple(t):                 # the bare decorator, without calling no_grad
        return t * 3

    return inside.requires_grad, double(leaf).requires_grad, triple(leaf).requires_grad, double(leaf)


def grad_mode_enable_grad(torch):
    leaf = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            doubled = leaf * 2
    doubled.backward()

    @torch.enable_grad()
    def double(t):
        return t * 2

    with torch.no_grad():
        inside = double(leaf)
    return doubled.requires_grad, leaf.grad, inside.requires_grad, inside.grad_fn


def grad_mode_set_grad_enabled(torch):
    leaf = torch.tensor([1.0], requires_grad=True)
    seen = []
    with torch.set_grad_enabled(False):
        seen.append((leaf * 2).requires_grad)
    for mode in (True, False):
        torch.set_grad_enabled(mode)            # used as a plain call, it switches the mode until switched back
        seen.append((leaf * 2).requires_grad)
    torch.set_grad_enabled(True)
    return seen


def in_place_change_of_a_saved_output(torch):
    leaf = torch.randn(3, requires_grad=True)
    squashed = leaf.sigmoid()         # sigmoid's backward needs its output ...
    squashed.mul_(2)                  # ... which is then changed in place
    squashed.sum().backward()


def backward_in_many_threads(torch):
    grads = []

    def step():
        w = torch.ones(5, 5, requires_grad=True)
        ((w + 3) * (w + 4) * 0.5).sum().backward()
        grads.append(w.grad)

    workers = [threading.Thread(target=step) for _ in range(10)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return grads


def retain_grad_on_a_non_leaf(torch):
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    middle = leaf * 3
    middle.retain_grad()
    middle.sum().backward()
    return leaf.grad, middle.grad, leaf.is_leaf, middle.is_leaf


def tensor_hook_replaces_the_gradient(torch):
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    middle = leaf * 2
    middle.register_hook(lambda g: g * 10)
    middle.sum().backward()
    return leaf.grad


def graph_reached_from_grad_fn(torch):
    p = torch.tensor([2.0], requires_grad=True)
    q = torch.tensor([3.0], requires_grad=True)
    top = (p * q).exp()
    below = top.grad_fn.next_functions[0][0]
    return top.grad_fn, below, below.next_functions, top.grad_fn.name()


# --- extending torch.autograd --------------------------------------------------------------------------------------

def _linear_backward(ctx, grad):
    """Shared by both linear Functions: the gradient of input @ weight.T + bias for the inputs that need one."""
    inputs, weight, bias = ctx.saved_tensors
    wants_input, wants_weight, wants_bias = ctx.needs_input_grad[:3]
    return (grad.mm(weight) if wants_input else None,
            grad.t().mm(inputs) if wants_weight else None,
            grad.sum(0) if bias is not None and wants_bias else None)


def _linear_with_setup_context(torch):
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(inputs, weight, bias):
            out = inputs.mm(weight.t())
            if bias is not None:
                out += bias.unsqueeze(0).expand_as(out)     # in place on forward's own result
            return out

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        backward = staticmethod(_linear_backward)

    return Affine


def _linear_with_ctx_in_forward(torch):
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inputs, weight, bias=None):
            ctx.save_for_backward(inputs, weight, bias)
            out = inputs.mm(weight.t())
            if bias is not None:
                out += bias.unsqueeze(0).expand_as(out)
            return out

        backward = staticmethod(_linear_backward)

    return Affine


def linear_function_with_setup_context(torch):
    affine = _linear_with_setup_context(torch)
    x = torch.randn(20, 20, dtype=torch.double, requires_grad=True)
    w = torch.randn(30, 20, dtype=torch.double, requires_grad=True)
    b = torch.randn(30, dtype=torch.double, requires_grad=True)
    out = affine.apply(x, w, b)
    out.sum().backward()
    return out, x.grad, w.grad, b.grad


def linear_function_passes_gradcheck(torch):
    affine = _linear_with_ctx_in_forward(torch)
    args = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
            torch.randn(30, 20, dtype=torch.double, requires_grad=True))
    return torch.autograd.gradcheck(affine.apply, args, eps=1e-6, atol=1e-4)


def linear_function_without_bias(torch):
    affine = _linear_with_ctx_in_forward(torch)
    x, w = torch.randn(4, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True)
    out = affine.apply(x, w)
    out.backward(torch.ones(4, 2))
    return out, out.grad_fn, x.grad, w.grad


def constant_factor_with_setup_context(torch):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(t, factor):
            return t * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.factor = inputs[1]

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None      # no gradient for the number

    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = Scale.apply(v, 5.5)
    out.sum().backward()
    return out, v.grad


def constant_factor_by_keyword(torch):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t, factor):
            ctx.factor = factor
            return t * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None

    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = Scale.apply(v, factor=0.5)
    out.sum().backward()
    return out, v.grad


def cube_twice_differentiable(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(t):
            return t ** 3, 3 * t ** 2          # the derivative is an output, so backward can be differentiated

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, grad_value, grad_slope):
            t, slope = ctx.saved_tensors
            return grad_value * slope + grad_slope * 6 * t

    def cube(t):
        return Cube.apply(t)[0]

    t = torch.randn([], dtype=torch.double, requires_grad=True)
    value = cube(t)
    (first,) = torch.autograd.grad(value, t, create_graph=True)
    (second,) = torch.autograd.grad(first, t)
    return value, first, second, torch.autograd.gradcheck(cube, (t,)), torch.autograd.gradgradcheck(cube, (t,))


def gradients_not_materialized(torch):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(t)
            return t.clone(), t.clone()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g_first, g_second):
            (t,) = ctx.saved_tensors
            seen.append((g_first is None, g_second is None))
            total = torch.zeros_like(t)
            for g in (g_first, g_second):
                if g is not None:
                    total += g
            return total

    seen = []
    v = torch.tensor(1.0, requires_grad=True)
    used, _ = Twice.apply(v)
    used.backward()                   # the unused output's gradient arrives as None
    return used, v.grad, seen


def exp_saves_its_output(torch):
    class Exponential(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            out = t.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * out

    v = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    out = Exponential.apply(v)
    out.sum().backward()
    return out, v.grad, type(out.grad_fn).__name__


ALL = snippets(
    saved_input_is_the_input, saved_output_is_the_output, saved_tensor_read_after_backward, requires_grad_of_results,
    grad_mode_no_grad, grad_mode_enable_grad, grad_mode_set_grad_enabled, in_place_change_of_a_saved_output,
    backward_in_many_threads, retain_grad_on_a_non_leaf, tensor_hook_replaces_the_gradient, graph_reached_from_grad_fn,
    linear_function_with_setup_context, linear_function_passes_gradcheck, linear_function_without_bias,
    constant_factor_with_setup_context, constant_factor_by_keyword, cube_twice_differentiable,
    gradients_not_materialized, exp_saves_its_output)


@pytest.mark.parametrize("scenario", ALL)
def test_scenario(scenario):
    check(scenario)
