"""Classes of difference found by running torch code under teachgrad (tests/mirrored, scripts/whole_programs.py).

Each test runs the same lines with torch and with teachgrad and compares values, gradients,
node names and errors (type and message); each failed before the fix it guards.
"""
import shutil
import subprocess

import pytest
import torch

import teachgrad as tg

INF, NAN = float("inf"), float("nan")
FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
         "you need to access saved tensors after calling backward.")


def both(example):
    """example(lib) under teachgrad and torch; returns (ours, theirs)."""
    return example(tg), example(torch)


def plain(x):
    return x.data if isinstance(x, tg.Variable) else x


def same(ours, theirs):
    assert type(ours) is not torch.Tensor or type(theirs) is torch.Tensor
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t)
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tg.Variable), f"expected a Variable, got {type(ours).__name__}"
        torch.testing.assert_close(plain(ours), theirs.detach(), equal_nan=True)
        assert ours.requires_grad == theirs.requires_grad
        name = lambda t: None if t.grad_fn is None else type(t.grad_fn).__name__  # noqa: E731
        assert name(ours) == name(theirs)
    else:
        assert ours == theirs


def error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def same_error(example):
    ours, theirs = error(lambda: example(tg)), error(lambda: example(torch))
    assert theirs is not None
    assert ours == theirs


# --- backward formulas: masks, not products, as tools/autograd/derivatives.yaml -----------------

MASKED = {
    "relu": lambda lib, x: x.relu(),
    "relu_fn": lambda lib, x: lib.relu(x),
    "sign": lambda lib, x: x.sign(),
    "abs": lambda lib, x: x.abs(),
    "pow_0": lambda lib, x: x.pow(0),
    "pow_2": lambda lib, x: x.pow(2),
    "pow_half": lambda lib, x: x.pow(0.5),
    "clamp": lambda lib, x: x.clamp(-0.5, 1.0),
    "clamp_min": lambda lib, x: x.clamp(min=0.0),
    "clamp_min_method": lambda lib, x: x.clamp_min(0.0),
    "clamp_max": lambda lib, x: x.clamp(max=0.0),
    "where": lambda lib, x: lib.where(x > 0, x, lib.zeros(4)),
    "masked_fill": lambda lib, x: x.masked_fill(x > 0, 0.0),
    "max_all": lambda lib, x: x.max(),
    "min_all": lambda lib, x: x.min(),
    "max_dim": lambda lib, x: x.reshape(2, 2).max(1)[0],
    "min_dim_keepdim": lambda lib, x: x.reshape(2, 2).min(0, keepdim=True)[0],
    "maximum": lambda lib, x: lib.maximum(x, lib.tensor([0., 2., 0., 5.])),
    "minimum": lambda lib, x: lib.minimum(x, lib.tensor([0., 2., 0., 5.])),
    "norm": lambda lib, x: x.norm(),
}


@pytest.mark.parametrize("seed", [INF, -INF, NAN, 1.0])
@pytest.mark.parametrize("op", sorted(MASKED))
def test_inf_and_nan_gradients_are_masked_as_torch(op, seed):
    def example(lib):
        x = lib.tensor([-1., 2., 0., 2.], requires_grad=True)
        y = MASKED[op](lib, x)
        y.backward(lib.full(y.shape, seed))
        return y, x.grad

    same(*both(example))


@pytest.mark.parametrize("values", [[1., 3., 3., 2.], [1., NAN, 3., NAN], [NAN, 0., 0., 0.], [-INF, -INF, 0., 1.]])
@pytest.mark.parametrize("reduce", ["max", "min"])
def test_max_min_of_all_elements_share_the_gradient_among_ties_and_nans(reduce, values):
    def example(lib):
        x = lib.tensor(values, requires_grad=True)
        y = getattr(x, reduce)()
        y.backward()
        return y, x.grad

    same(*both(example))


def test_maximum_minimum_ties_and_nan_as_torch():
    def example(lib):
        a = lib.tensor([NAN, 1., 2., 3.], requires_grad=True)
        b = lib.tensor([1., 1., NAN, 0.], requires_grad=True)
        out = [lib.maximum(a, b), lib.minimum(a, b)]
        (out[0] * 2 + out[1]).sum().backward()
        return out, a.grad, b.grad

    same(*both(example))


@pytest.mark.parametrize("bounds", ["min", "max", "both", "crossed"])
def test_clamp_with_tensor_bounds_that_require_grad(bounds):
    def example(lib):
        x = lib.tensor([-2., 0.3, 0.7, 3.], requires_grad=True)
        low = lib.tensor([0., 0.5, 0.5, 0.], requires_grad=True)
        high = lib.tensor([1., 1., 0.6, 2.], requires_grad=True) if bounds != "crossed" else lib.tensor([-1., 0., 0., -1.], requires_grad=True)
        kwargs = {"min": {"min": low}, "max": {"max": high}}.get(bounds, {"min": low, "max": high})
        y = x.clamp(**kwargs)
        (y * lib.tensor([1., 2., 3., 4.])).sum().backward()
        return y, x.grad, low.grad, high.grad

    same(*both(example))


def test_clamp_with_broadcast_tensor_bound():
    def example(lib):
        x = lib.tensor([[-2., 0.3], [0.7, 3.]], requires_grad=True)
        low = lib.tensor([0.5], requires_grad=True)
        y = lib.clamp(x, low)
        y.sum().backward()
        return y, x.grad, low.grad

    same(*both(example))


@pytest.mark.parametrize("case", ["tensor_tensor", "scalar_base_0", "scalar_base_2", "tensor_exp_0"])
def test_pow_at_zero_as_torch(case):
    def example(lib):
        a = lib.tensor([0., 2., -1., 0.], requires_grad=True)
        b = lib.tensor([0., 1., 2., -1.], requires_grad=True)
        y = {"tensor_tensor": lambda: a ** b, "scalar_base_0": lambda: 0 ** b, "scalar_base_2": lambda: 2 ** b,
             "tensor_exp_0": lambda: a ** lib.zeros(4)}[case]()
        y.backward(lib.tensor([1., INF, 1., 1.]))
        return y, a.grad, b.grad

    same(*both(example))


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_with_every_target_ignored(fn, reduction):
    def example(lib):
        x = lib.tensor([[0.1, 0.2, 0.7], [1., 2., 3.]], requires_grad=True)
        loss = getattr(lib.nn.functional, fn)(x, lib.tensor([-100, -100]), reduction=reduction)
        loss.sum().backward()
        return loss, x.grad

    same(*both(example))


def test_nll_loss_some_ignored_with_weights():
    def example(lib):
        x = lib.tensor([[0.1, 0.2, 0.7], [1., 2., 3.], [0., 0., 1.]], requires_grad=True)
        loss = lib.nn.functional.nll_loss(x, lib.tensor([2, -100, 0]), weight=lib.tensor([1., 2., 3.]))
        loss.backward()
        return loss, x.grad

    same(*both(example))


@pytest.mark.parametrize("p", [1, 2, 3, INF, 0])
def test_norm_as_torch(p):
    def example(lib):
        x = lib.tensor([[3., -4., 0.], [0., 0., 0.]], requires_grad=True)
        whole = x.norm(p)
        rows = lib.norm(x, p, dim=1)
        (whole + rows.sum()).backward()
        return whole, rows, x.grad

    same(*both(example))


# --- what nodes keep: masks and indices are saved tensors, freed with the graph -----------------

KEEPERS = {
    "where": lambda lib, x: lib.where(x > 0, x, lib.zeros(3)),
    "index": lambda lib, x: x[lib.tensor([0, 1, 1])],
    "bool_index": lambda lib, x: x[x > 0],
    "max_dim": lambda lib, x: x.max(0)[0],
    "min_dim": lambda lib, x: x.min(0)[0],
    "masked_fill": lambda lib, x: x.masked_fill(x > 0, 1.0),
    "nll_loss": lambda lib, x: lib.nn.functional.nll_loss(x.reshape(1, 3), lib.tensor([1])),
}


@pytest.mark.parametrize("op", sorted(KEEPERS))
def test_second_backward_through_a_node_that_kept_indices_raises(op):
    def example(lib):
        x = lib.tensor([1., -2., 3.], requires_grad=True)
        y = KEEPERS[op](lib, x).sum()
        y.backward()
        y.backward()

    same_error(example)


@pytest.mark.parametrize("op", sorted(KEEPERS))
def test_nodes_keep_no_tensor_outside_their_saved_tensors(op):
    x = tg.tensor([1., -2., 3.], requires_grad=True)
    node = KEEPERS[op](tg, x).grad_fn
    kept = [k for k, v in vars(node).items() if isinstance(v, torch.Tensor) and v.dim() > 0]
    assert kept == []


# --- names real code uses ------------------------------------------------------------------------

def test_autograd_module_names():
    assert tg.autograd.Variable is tg.Variable
    assert tg.autograd.function.once_differentiable is tg.once_differentiable
    assert tg.autograd.function.Function is tg.Function
    v = tg.autograd.Variable(torch.ones(2), requires_grad=True)
    assert v.requires_grad and v.is_leaf


def test_new_methods_and_functions_as_torch():
    def example(lib):
        x = lib.arange(6.).requires_grad_()
        a, b, c = x.chunk(3)
        p, q = lib.split(x, [2, 4]) if lib is torch else x.split(2)[0], None
        d = lib.dot(a, b) + x.norm() + lib.chunk(x, 4)[1].sum()
        d.backward()
        return (a, b, c, d, x.grad, x.eq(x), lib.eq(x, 2.), x.equal(x.detach()), lib.equal(x, x + 1),
                lib.LongTensor([1, 2]), lib.FloatTensor([1, 2]))

    same(*both(example))


IN_PLACE = ["exp_", "log_", "sqrt_", "sin_", "cos_", "tanh_", "sigmoid_", "relu_", "abs_", "neg_"]


@pytest.mark.parametrize("method", IN_PLACE + ["clamp_", "pow_", "masked_fill_"])
def test_in_place_unary_ops(method):
    args = {"clamp_": (0.5, 1.5), "pow_": (3,), "masked_fill_": None}.get(method, ())

    def example(lib):
        x = lib.tensor([0.5, 1., 2.], requires_grad=True)
        y = x * 1
        call_args = (y > 1, 0.) if args is None else args
        out = getattr(y, method)(*call_args)
        out.sum().backward()
        refused = error(lambda: getattr(x, method)(*call_args))
        with lib.no_grad():
            z = x.detach().clone()
            getattr(z, method)(*call_args)
        return out is y, y, x.grad, refused, z

    same(*both(example))


def test_function_setup_context_and_keyword_arguments():
    def example(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, factor=2.0, offset=None):
                return x * factor if offset is None else x * factor + offset

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, factor, offset = inputs
                ctx.factor = factor
                ctx.save_for_backward(x)
                ctx.seen = (len(inputs), ctx.needs_input_grad)

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return grad * ctx.factor, None, None

        class OldStyle(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, factor):
                ctx.factor = factor
                return x * factor

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.factor, None

        x = lib.tensor([1., 2.], requires_grad=True)
        y = Scale.apply(x)
        z = Scale.apply(x, factor=3.0)
        w = OldStyle.apply(x, factor=5.0)
        (y + z + w).sum().backward()
        return y, z, w, x.grad, y.grad_fn.seen, w.grad_fn.needs_input_grad

    same(*both(example))


def test_materialize_grads_false_gives_none_for_unused_outputs():
    def example(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x.clone(), x.clone()

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append(g2 is None)
                return g1

        x = lib.tensor([1., 2.], requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        return seen, x.grad

    same(*both(example))


def test_duplicate_outputs_are_the_same_variable():
    def example(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                return y, y

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + g2

        x = lib.tensor([1., 2.], requires_grad=True)
        a, b = Twice.apply(x)
        (a + b).sum().backward()
        with lib.no_grad():
            c, d = Twice.apply(x)
        return a is b, c is d, x.grad

    same(*both(example))


def test_calling_a_node_checks_the_number_of_gradients():
    def example(lib):
        x = lib.ones(1, requires_grad=True)
        y = x ** 2
        return (error(lambda: y.grad_fn(x.detach(), x.detach())), error(lambda: y.grad_fn()),
                y.grad_fn(lib.ones(1)))

    ours, theirs = both(example)
    assert ours[:2] == theirs[:2]
    torch.testing.assert_close(plain(ours[2]), theirs[2])


def test_once_differentiable_graph_is_torch_s():
    def desc(fn):
        if fn is None:
            return "None"
        return type(fn).__name__ + "(" + ", ".join(desc(n) for n, _ in fn.next_functions) + ")"

    def example(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                ctx.save_for_backward(a, b)
                return a * b * k

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad * b, None, grad * a

        a = lib.tensor([1., 2.], requires_grad=True)
        b = lib.tensor([3., 4.], requires_grad=True)
        F.apply(a, 2, b).sum().backward(lib.ones((), requires_grad=True), create_graph=True)
        return desc(a.grad.grad_fn), error(lambda: a.grad.sum().backward())

    ours, theirs = both(example)
    assert ours == theirs


def test_first_gradient_under_create_graph_is_a_copy():
    def example(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = (x * x).sum()
        y.backward(create_graph=True)
        first = x.grad
        names = [type(first.grad_fn).__name__, [type(n).__name__ if n else None for n, _ in first.grad_fn.next_functions]]
        (x * 3).sum().backward(create_graph=True)
        return names, type(x.grad.grad_fn).__name__, x.grad

    ours, theirs = both(example)
    assert ours[:2] == theirs[:2]
    same(ours[2], theirs[2])


def test_gradgradcheck_checks_second_derivatives():
    x = tg.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda x: (x ** 3).sum(), (x,))

    class WrongSecond(tg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x.detach() ** 2   # right first derivative, no second

    assert tg.autograd.gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(tg.check.GradcheckError):
        tg.autograd.gradgradcheck(WrongSecond.apply, (x,))
    assert tg.autograd.gradgradcheck(WrongSecond.apply, (x,), raise_exception=False) is False


# --- setters and validation -----------------------------------------------------------------------

GRAD_ASSIGNMENTS = {
    "size": lambda lib, x: lib.randn(2, 2),
    "dtype": lambda lib, x: lib.randn(5, 5, dtype=torch.float64),
    "integer": lambda lib, x: lib.ones(5, 5, dtype=torch.long),
    "half": lambda lib, x: lib.ones(5, 5, dtype=torch.float16),
    "dtype_and_size": lambda lib, x: lib.ones(2, dtype=torch.float64),
    "number": lambda lib, x: 3,
    "list": lambda lib, x: [1.0],
    "itself": lambda lib, x: x,
}


@pytest.mark.parametrize("case", sorted(GRAD_ASSIGNMENTS))
def test_assigning_a_wrong_grad_raises_as_torch(case):
    def example(lib):
        x = lib.randn(5, 5, requires_grad=True)
        x.grad = GRAD_ASSIGNMENTS[case](lib, x)

    same_error(example)


def test_assigning_good_grads_and_deleting_grad():
    def example(lib):
        x = lib.zeros(3, requires_grad=True)
        x.grad = lib.ones(3)
        x.sum().backward()
        kept = x.grad.clone()
        del x.grad
        return kept, x.grad

    same(*both(example))


@pytest.mark.parametrize("value", ["none", "number", "long_on_requires_grad"])
def test_assigning_wrong_data_raises_as_torch(value):
    def example(lib):
        x = lib.randn(3, requires_grad=True)
        x.data = {"none": None, "number": 3, "long_on_requires_grad": torch.ones(3, dtype=torch.long)}[value]

    same_error(example)


def test_assigning_data_swaps_values_and_shape():
    def example(lib):
        x = lib.randn(3, requires_grad=True)
        x.data = torch.arange(4.)
        y = lib.zeros(2)
        y.data = torch.ones(2, dtype=torch.long)
        return x, y

    same(*both(example))
    same_error(lambda lib: delattr(lib.ones(2), "data"))


def test_requires_grad_on_a_non_leaf():
    def example(lib):
        z = lib.ones(2, requires_grad=True) * 2
        return z.requires_grad_() is z, z.requires_grad_(True) is z, error(lambda: z.requires_grad_(False))

    assert both(example)[0] == both(example)[1]


# --- complex tensors: refused, with a clear message -----------------------------------------------

@pytest.mark.parametrize("how", ["factory", "setter", "method", "op_output"])
def test_complex_tensors_require_grad_as_torchs_do(how):
    """Complex tensors are differentiated with torch's convention (tests/test_complex.py): each way of making one
    that requires grad gives what torch gives."""
    def make(lib):
        if how == "factory":
            x = lib.tensor([1 + 2j], requires_grad=True)
        elif how == "setter":
            x = lib.tensor([1 + 2j])
            x.requires_grad = True
        elif how == "method":
            x = lib.tensor([1 + 2j]).requires_grad_()
        else:
            x = lib.tensor([1.], requires_grad=True) * 1j
        return x.requires_grad, x.dtype, None if x.grad_fn is None else x.grad_fn.name(), x.tolist()

    assert make(tg) == make(torch)
    assert not tg.tensor([1 + 2j]).requires_grad   # complex values without grad work as before
    assert (tg.tensor([1 + 2j]) * 2).tolist() == [2 + 4j]


# --- drawing: any name --------------------------------------------------------------------------

ODD_NAMES = ['q"uote', "trailing\\", "<b>&amp;</b>", "two\nlines", "ünïcode €", "back\\slash \\N", "node"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs graphviz's dot program")
def test_draw_shows_any_name_as_given():
    import html
    import re

    leaves = {name: tg.tensor(float(i), requires_grad=True) for i, name in enumerate(ODD_NAMES)}
    total = sum(leaves.values())
    graph = tg.viz.draw(total, names=leaves, title='a "title" \\ <with> & more')
    out = subprocess.run(["dot", "-Tsvg"], input=graph.source.encode(), capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", out.stdout.decode())]
    for name in ODD_NAMES:
        for line in name.split("\n"):
            assert line in texts, (name, line)
    assert 'a "title" \\ <with> & more' in texts


def test_grad_materialize_grads():
    def example(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        unused = lib.tensor([3.], requires_grad=True)
        y = (x * x).sum()
        return (lib.autograd.grad(y, [x, unused], retain_graph=True, materialize_grads=True),
                lib.autograd.grad(y, [x, unused], retain_graph=True, allow_unused=True),
                error(lambda: lib.autograd.grad(y, [x, unused], materialize_grads=True, allow_unused=False)))

    same(*both(example))
