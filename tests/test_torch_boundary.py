"""Where a learner's torch meets teachgrad (issue 21): torch tensors that require grad are leaves of
teachgrad's graph, torch's grad modes are teachgrad's, a custom Function's forward may use teachgrad
functions. Each program runs twice, once with `lib=teachgrad` (only the Variables made by `lib`;
torch.nn modules, nn.Parameters and torch.optim stay torch's) and once with `lib=torch`, comparing
values, gradients, node names, and exception types and messages."""
import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import teachgrad as tg
from tests.twins import same


def _grad_of(t):
    """A torch tensor's .grad: a plain torch tensor (no Variable, no graph), as torch.optim expects it."""
    assert t.grad is None or (type(t.grad) is torch.Tensor and t.grad.grad_fn is None and not t.grad.requires_grad)
    return t.grad


MIXES = {
    "t * v": lambda t, v, lib: t * v,
    "v * t": lambda t, v, lib: v * t,
    "torch.add": lambda t, v, lib: torch.add(t, v),
    "torch.mul": lambda t, v, lib: torch.mul(t, v),
    "torch.cat": lambda t, v, lib: torch.cat([t, v]) * torch.arange(1.0, 5.0),
    "lib.cat": lambda t, v, lib: lib.cat([v, t]) * torch.arange(1.0, 5.0),
    "t @ v": lambda t, v, lib: t @ v,
    "torch.where": lambda t, v, lib: torch.where(torch.tensor([True, False]), t, v) * 3,
    "t - v": lambda t, v, lib: (t - v) ** 2,
    "t.mul(v)": lambda t, v, lib: t.mul(v) / 2,
    "lib.sum(t)": lambda t, v, lib: lib.sum(t) * v,
    "torch.sigmoid(v) * t": lambda t, v, lib: torch.sigmoid(v) * t,
    "F.mse_loss": lambda t, v, lib: torch.nn.functional.mse_loss(v, t),
    "in-place on a non-leaf": lambda t, v, lib: (v * 1).mul_(t),
    "in-place into a tensor needing no grad": lambda t, v, lib: lib.zeros(2).add_(t) * v,
    "copy_ of a torch leaf": lambda t, v, lib: lib.zeros(2).copy_(t) * v,
}


@pytest.mark.parametrize("mix", MIXES)
def test_a_torch_leaf_mixed_with_a_variable_gets_torchs_gradient(mix):
    def snippet(lib):
        t = torch.tensor([1.0, -2.0], requires_grad=True)
        v = lib.tensor([3.0, 0.5], requires_grad=True)
        out = MIXES[mix](t, v, lib)
        out.sum().backward()
        return out, out.grad_fn.name(), _grad_of(t), v.grad, v.grad.requires_grad, v.grad.grad_fn is None
    same(snippet)


def test_torch_records_nothing_inside_teachgrads_ops():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    v = tg.tensor([3.0, 4.0], requires_grad=True)
    out = t * v
    assert type(out) is tg.Variable and out.data.grad_fn is None and not out.data.requires_grad
    assert out.grad_fn.next_functions[0][0].variable is t      # the torch tensor's own AccumulateGrad
    assert out.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"


def test_one_accumulate_grad_per_torch_tensor_in_a_graph():
    def snippet(lib):
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([3.0, 4.0], requires_grad=True)
        a, b = t * v, t + v
        out = a * b
        out.sum().backward()
        return (a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]), _grad_of(t), v.grad
    same(snippet)


def test_gradients_accumulate_into_a_torch_tensors_grad_as_torchs_do():
    def snippet(lib):
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([3.0, 4.0], requires_grad=True)
        (t * v).sum().backward()
        first = t.grad
        (t * v * 2).sum().backward()
        return first is t.grad, _grad_of(t)     # the second gradient is added in place
    same(snippet)


@pytest.mark.parametrize("make", [
    lambda: torch.nn.Linear(3, 2),
    lambda: torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2)),
    lambda: torch.nn.Sequential(torch.nn.Linear(3, 5, bias=False), torch.nn.ReLU(), torch.nn.Linear(5, 1)),
])
def test_torch_nn_modules_on_a_variable_get_torchs_gradients(make):
    def snippet(lib):
        torch.manual_seed(0)
        model = make()
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        out = model(x)
        (out * out).sum().backward()
        return out, x.grad, [_grad_of(p) for p in model.parameters()]
    same(snippet)


def test_a_module_with_tanh_and_sigmoid_gets_torchs_gradients_within_round_off():
    """(teachgrad's tanh and sigmoid backward formulas may round differently from torch's fused kernels)"""
    def run(lib):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1), torch.nn.Sigmoid())
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        out = model(x)
        (out * out).sum().backward()
        return [out.data if isinstance(out, tg.Variable) else out.detach(), x.grad.data if lib is tg else x.grad,
                *[_grad_of(p) for p in model.parameters()]]
    for ours, theirs in zip(run(tg), run(torch)):
        torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_matmul_with_an_nn_parameter():
    def snippet(lib):
        w = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]]))
        x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        out = x @ w
        out.sum().backward()
        return out, out.grad_fn.name(), x.grad, _grad_of(w)
    same(snippet)


@pytest.mark.parametrize("optimizer", [
    lambda ps: torch.optim.SGD(ps, lr=0.1),
    lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=1e-3),
    lambda ps: torch.optim.Adam(ps, lr=0.01),
])
def test_torch_optim_trains_a_torch_nn_model_step_by_step_as_torch(optimizer):
    def snippet(lib):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        opt = optimizer(model.parameters())
        x = lib.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        y = lib.tensor([[0.0], [1.0], [1.0], [0.0]])
        losses, params = [], []
        for _ in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            params.append([p.detach().clone() for p in model.parameters()])
        return losses, params
    same(snippet)


def test_backward_with_inputs_and_grad_take_torch_tensors():
    def snippet(lib):
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([3.0, 4.0], requires_grad=True)
        out = (t * v * v).sum()
        g_t, g_v = lib.autograd.grad(out, (t, v), retain_graph=True)
        out.backward(inputs=[t])
        return g_t, type(g_t) is torch.Tensor, g_v, _grad_of(t), v.grad
    same(snippet)


# --- where torch's exact behaviour cannot be had: a clear error, never a silent difference ---

def test_a_torch_non_leaf_is_refused_with_a_clear_error():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    v = tg.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"computed \(grad_fn=<ExpBackward0>\) was passed to a teachgrad op"):
        torch.exp(t) * v


def test_create_graph_with_a_torch_leaf_is_refused():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    v = tg.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot accumulate into a torch tensor's .grad with create_graph=True"):
        (t * v * v).sum().backward(create_graph=True)
    with pytest.raises(RuntimeError, match="create_graph=True"):
        tg.autograd.grad((t * v).sum(), t, create_graph=True)


def test_hooks_registered_through_torch_are_refused():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    t.register_hook(lambda g: g * 100)
    v = tg.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="teachgrad's engine does not run torch's hooks"):
        (t * v).sum().backward()


def test_post_accumulate_grad_hooks_registered_through_torch_run_as_torch_runs_them():
    """torch's AccumulateGrad calls them with the tensor once its .grad holds the sum, in the order registered,
    on every backward (the optimizer-in-backward pattern, and teachgrad.nn.parallel's reducer, rely on it)."""
    def run(lib):
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        t.register_post_accumulate_grad_hook(lambda p: seen.append(("first", p is t, p.grad.tolist())))
        handle = t.register_post_accumulate_grad_hook(lambda p: seen.append(("second", p.grad.tolist())))
        v = lib.tensor([3.0, 4.0], requires_grad=True)
        (t * v + t).sum().backward()
        handle.remove()
        (t * t).sum().backward()
        return seen
    assert run(tg) == run(torch) == [("first", True, [4.0, 5.0]), ("second", [4.0, 5.0]),
                                     ("first", True, [6.0, 9.0])]


def test_a_post_accumulate_grad_hook_registered_through_torch_must_return_none():
    for lib in (torch, tg):
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        t.register_post_accumulate_grad_hook(lambda p: p.grad)
        with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
            (t * lib.tensor([3.0, 4.0])).sum().backward()


def test_a_module_using_an_op_teachgrad_lacks_keeps_the_clear_type_error():
    bilinear = torch.nn.Bilinear(2, 2, 1)   # teachgrad has no bilinear
    x = tg.ones(1, 2)
    with pytest.raises(TypeError, match="bilinear was called with a torch tensor that requires grad"):
        bilinear(x, x)


def test_a_conv_module_trains_through_teachgrad_as_through_torch():
    """Once teachgrad has the op (conv1d, issue 22), the module's parameters get torch's gradients."""
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(2, 3, 3, padding=1, dtype=torch.float64)
    twin = copy.deepcopy(conv)
    x = torch.randn(4, 2, 7, dtype=torch.float64)
    conv(tg.Variable(x)).square().sum().backward()
    twin(x).square().sum().backward()
    for ours, theirs in zip(conv.parameters(), twin.parameters()):
        assert type(ours.grad) is torch.Tensor and torch.allclose(ours.grad, theirs.grad, atol=1e-12, rtol=0)


# --- torch's grad modes are teachgrad's ---

GRAD_OFF = {
    "torch.no_grad": lambda lib: torch.no_grad(),
    "torch.set_grad_enabled(False)": lambda lib: torch.set_grad_enabled(False),
    "torch.inference_mode": lambda lib: torch.inference_mode(),
    "lib.no_grad": lambda lib: lib.no_grad(),
}


@pytest.mark.parametrize("mode", GRAD_OFF)
def test_torchs_grad_modes_turn_recording_off(mode):
    def snippet(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        p = torch.tensor([0.5, 0.5], requires_grad=True)
        with GRAD_OFF[mode](lib):
            y = w * 2 + p
            inside = (lib.is_grad_enabled(), torch.is_grad_enabled())
        return y.requires_grad, y.grad_fn is None, inside, lib.is_grad_enabled(), torch.is_grad_enabled()
    same(snippet)


@pytest.mark.parametrize("mode", ["torch.no_grad", "torch.set_grad_enabled(False)", "lib.no_grad"])
def test_an_sgd_step_under_torchs_no_grad(mode):
    def snippet(lib):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        p = torch.nn.Parameter(torch.tensor([0.5, 3.0]))
        for _ in range(3):
            loss = ((w * p) ** 2).sum()
            loss.backward()
            with GRAD_OFF[mode](lib):
                w -= 0.1 * w.grad
                p -= 0.1 * p.grad
            w.grad.zero_()
            p.grad = None
        return w, p.detach(), w.is_leaf, w.requires_grad
    same(snippet)


def test_grad_mode_as_a_decorator_and_nested():
    def snippet(lib):
        w = lib.tensor([1.0], requires_grad=True)

        @torch.no_grad()
        def frozen():
            with lib.enable_grad():
                inner = (w * 2).requires_grad
            return (w * 2).requires_grad, inner

        with lib.no_grad():
            with torch.enable_grad():
                y = w * 3
        return frozen(), y.requires_grad, y.grad_fn.name()
    same(snippet)


# --- a custom Function's forward may compute with the library's functions ---

def test_a_custom_functions_forward_may_use_the_librarys_functions():
    def snippet(lib):
        class SoftClip(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale):
                y = lib.tanh(x / scale) * scale        # lib's functions on the inputs, as torch code does
                ctx.save_for_backward(y)
                ctx.scale = scale
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * (1 - (y / ctx.scale) ** 2), None

        x = lib.tensor([0.5, -2.0, 3.0], requires_grad=True)
        out = SoftClip.apply(x, 2.0)
        out.sum().backward()
        return out, type(out.grad_fn).__name__, x.grad, out.requires_grad
    same(snippet)


def test_gradcheck_of_a_custom_function_computing_with_teachgrad():
    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return tg.pow(x, 3)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 3 * x * x * grad

    x = tg.tensor([0.5, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    assert tg.autograd.gradcheck(Cube.apply, (x,))
    assert Cube.apply(x).grad_fn.next_functions[0][0].variable is x


# --- random graphs mixing torch leaves and Variables ---

UNARY = {"exp": lambda lib, a: lib.exp(a), "tanh": lambda lib, a: lib.tanh(a), "sigmoid": lambda lib, a: lib.sigmoid(a),
         "square": lambda lib, a: a * a, "neg": lambda lib, a: -a, "sin": lambda lib, a: lib.sin(a),
         "torch.exp": lambda lib, a: torch.exp(a), "a.tanh()": lambda lib, a: a.tanh()}
BINARY = {"add": lambda lib, a, b: a + b, "mul": lambda lib, a, b: a * b, "sub": lambda lib, a, b: a - b,
          "lib.mul": lambda lib, a, b: lib.mul(a, b), "lib.maximum": lambda lib, a, b: lib.maximum(a, b),
          "torch.add": lambda lib, a, b: torch.add(a, b), "torch.mul": lambda lib, a, b: torch.mul(a, b),
          "torch.maximum": lambda lib, a, b: torch.maximum(a, b),
          "torch.where": lambda lib, a, b: torch.where(a > b, a, b), "torch.cat": lambda lib, a, b: torch.cat([a, b])[1:4]}
@st.composite
def mixed_graphs(draw):
    n_leaves = draw(st.integers(2, 4))
    is_torch = [draw(st.booleans()) for _ in range(n_leaves)]
    values = [draw(st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=3, max_size=3))
              for _ in range(n_leaves)]
    steps = []
    for k in range(draw(st.integers(1, 6))):
        available = n_leaves + k
        if draw(st.booleans()):
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, available - 1))))
        else:
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), draw(st.integers(0, available - 1)),
                          draw(st.integers(0, available - 1))))
    return is_torch, values, steps


def _run_graph(graph, lib):
    """The graph with `lib`: under teachgrad, the leaves marked torch stay torch tensors (nn.Parameters, say).

    A step whose operands are all torch leaves first passes one through `lib.mul(a, 1.0)` (in both runs, so the
    graphs stay the same): torch computing on torch tensors alone gives a torch non-leaf, which teachgrad
    refuses, saying so (test_a_torch_non_leaf_is_refused_with_a_clear_error)."""
    is_torch, values, steps = graph
    leaves = [(torch if own else lib).tensor(v, dtype=torch.float64, requires_grad=True)
              for own, v in zip(is_torch, values)]
    nodes, torch_only = list(leaves), list(is_torch)
    for kind, name, *operands in steps:
        args = [nodes[i] for i in operands]
        if all(torch_only[i] for i in operands):
            args[0] = lib.mul(args[0], 1.0)
        nodes.append((UNARY if kind == "unary" else BINARY)[name](lib, *args))
        torch_only.append(False)
    out = sum((k + 1) * node.sum() for k, node in enumerate(nodes[len(leaves):]))
    out.backward()
    return [leaf.grad for leaf in leaves]


@settings(max_examples=60, deadline=None)
@given(mixed_graphs())
def test_random_graphs_mixing_torch_leaves_and_variables(graph):
    ours = _run_graph(graph, tg)
    theirs = _run_graph(graph, torch)
    for own, g, expected in zip(graph[0], ours, theirs):
        if expected is None:
            assert g is None
            continue
        assert (type(g) is torch.Tensor) if own else isinstance(g, tg.Variable)
        data = g.data if isinstance(g, tg.Variable) else g
        torch.testing.assert_close(data, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


class _PassOn(torch.autograd.Function):
    """Two outputs, None left as None (no zeros made): the second input's leaf is reached without a gradient."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.set_materialize_grads(False)
        return x.clone(), y.clone()

    @staticmethod
    def backward(ctx, gx, gy):
        return gx, gy


def test_post_accumulate_grad_hooks_run_on_a_leaf_reached_without_a_gradient_as_torch_runs_them():
    def run(lib, torch_leaves):
        make = (lambda: torch.ones(2, requires_grad=True)) if torch_leaves else (lambda: lib.ones(2, requires_grad=True))
        a, b = make(), make()
        seen = []
        a.register_post_accumulate_grad_hook(lambda p: seen.append(("a", None if p.grad is None else p.grad.tolist())))
        b.register_post_accumulate_grad_hook(lambda p: seen.append(("b", None if p.grad is None else p.grad.tolist())))
        Function = tg.autograd.Function if lib is tg else torch.autograd.Function
        PassOn = type("PassOn", (Function,), {"forward": _PassOn.forward, "backward": _PassOn.backward})
        x, _ = PassOn.apply(a * lib.ones(2), b * lib.ones(2))
        x.sum().backward()
        return seen
    theirs = run(torch, True)
    assert theirs == [("b", None), ("a", [1.0, 1.0])]
    assert run(tg, True) == theirs       # torch tensors as leaves of teachgrad's graph
    assert run(tg, False) == theirs      # teachgrad's own leaves
