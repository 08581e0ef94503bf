"""The engine as torch's engine.cpp runs it: gradient validation, what grad() runs, hooks, threads.

Each test runs the same snippet under torch and teachgrad (`lib` is one or the other) and compares
values, dtypes and errors (type and message).
"""
import threading

import pytest
import torch

import teachgrad as tg

from .twins import same


def function_returning(make_grad):
    """A Function whose backward returns `make_grad(grad_output)` (torch's or teachgrad's class)."""
    def build(lib):
        class Custom(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad_output):
                return make_grad(grad_output)
        return Custom
    return build


# --- 1. every gradient is validated against its input: dtype, shape, device --------------------

def test_root_gradient_is_cast_to_the_output_dtype():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2).backward(lib.ones(2, dtype=lib.float64))
        return x.grad
    same(snippet)


def test_mixed_precision_gradients_come_back_in_each_input_dtype():
    def snippet(lib):
        a = lib.ones(2, dtype=lib.float16, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        (a * b).sum().backward()
        return a.grad, b.grad
    same(snippet)


def test_mixed_precision_through_grad():
    def snippet(lib):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        return lib.autograd.grad((a * b + b.exp()).sum(), (a, b))
    same(snippet)


@pytest.mark.parametrize("make_grad", [
    lambda g: torch.ones(3, 2),                      # expandable: summed to the input's shape
    lambda g: torch.ones(3),                         # not expandable: torch's message
    lambda g: torch.ones(()),                        # a scalar for a [2] input is not expandable either
    lambda g: g.double(),                            # cast to the input's dtype
    lambda g: g.long(),                              # even from an integer dtype
    lambda g: (g, None, None),                       # trailing Nones beyond the inputs are dropped
    lambda g: (g, torch.ones(2)),                    # but not a tensor
    lambda g: 3.0,                                   # a number is not a gradient
    lambda g: (g, 1.0),
], ids=["expandable", "wrong-shape", "scalar", "double", "long", "trailing-none", "extra-tensor",
        "number", "extra-number"])
def test_custom_function_gradients_validated_as_torch(make_grad):
    build = function_returning(make_grad)

    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        build(lib).apply(x).sum().backward()
        return x.grad
    same(snippet)


def test_validation_applies_to_built_in_nodes_too():
    """A scalar gradient for a [1, 1] input is refused for any node (here through a hook on AccumulateGrad's input)."""
    def snippet(lib):
        x = lib.ones(1, 3, requires_grad=True)
        y = x * lib.ones(2, 3, dtype=lib.float64)       # broadcast and promoted: MulBackward0 sums and casts
        y.sum().backward()
        return x.grad
    same(snippet)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gradient_on_the_wrong_device_is_refused():
    build = function_returning(lambda g: g.cuda())

    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        build(lib).apply(x).sum().backward()
        return x.grad
    same(snippet)


def test_gradient_on_the_wrong_device_is_refused_meta():
    build = function_returning(lambda g: torch.ones(2, device="meta"))

    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        build(lib).apply(x).sum().backward()
        return x.grad
    same(snippet)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_scalar_gradient_on_another_device_is_moved():
    build = function_returning(lambda g: torch.ones((), device="cuda"))

    def snippet(lib):
        x = lib.ones((), requires_grad=True)
        build(lib).apply(x).backward()
        return x.grad.device.type
    same(snippet)


def test_root_gradient_must_be_a_tensor():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2).backward([1.0, 1.0])
    same(snippet)


@pytest.mark.parametrize("inputs", [[], [1]], ids=["empty", "number"])
def test_bad_inputs_refused_as_torch(inputs):
    same(lambda lib: lib.autograd.grad((lib.ones(2, requires_grad=True) * 2).sum(), inputs))
    same(lambda lib: (lib.ones(2, requires_grad=True) * 2).sum().backward(inputs=inputs))


# --- 2. grad() and backward(inputs=) run only what leads to the inputs --------------------------

def test_grad_fires_only_the_hooks_on_a_path_to_its_inputs():
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        y, z = a * 2, b * 3
        fired = []
        y.register_hook(lambda g: fired.append("y"))
        z.register_hook(lambda g: fired.append("z"))
        out = (y + z).sum()
        first = lib.autograd.grad(out, a)
        after_first = list(fired)
        second = lib.autograd.grad(out, b)       # z's node did not run, so it was not freed either
        return first, after_first, second, fired
    same(snippet)


def test_grad_frees_only_what_it_ran():
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        out = (a * a + b * b).sum()
        first = lib.autograd.grad(out, a)
        second = lib.autograd.grad(out, b)       # b * b saved its inputs, still there
        return first, second
    same(snippet)


def test_grad_twice_with_the_same_input_needs_retain_graph():
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        out = (a * a + b * b).sum()
        lib.autograd.grad(out, a)
        return lib.autograd.grad(out, a)
    same(snippet)


def test_grad_catches_a_non_leaf_after_its_hooks_without_running_it():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        z = y * 3
        y.register_hook(lambda g: g * 7)
        x.register_hook(lambda g: g * 5)
        caught = lib.autograd.grad(z.sum(), y)       # y's node is not run: x's hook does not fire
        return caught, x.grad
    same(snippet)


def test_grad_catches_a_non_leaf_after_retain_grad_too():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        z = (y * 3).sum()
        caught = lib.autograd.grad(z, y, retain_graph=True)
        retained = y.grad
        again = lib.autograd.grad(z, x)              # y's node runs this time: retain_grad adds again
        return caught, retained, y.grad, again
    same(snippet)


def test_grad_catches_a_leaf_after_its_hooks():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 7)
        return lib.autograd.grad((x * 2).sum(), x)
    same(snippet)


def test_grad_catches_a_needed_node_before_its_hooks():
    """torch's quirk: a node also on the way to another input is caught before its tensor hooks."""
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        z = (y * 3).sum()
        y.register_hook(lambda g: g * 7)
        return lib.autograd.grad(z, [y, x])
    same(snippet)


def test_backward_inputs_runs_only_what_leads_there():
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        fired = []
        y, z = a * b, b * 3
        z.register_hook(lambda g: fired.append("z"))
        (y + z).sum().backward(inputs=[a])
        return a.grad, b.grad, fired
    same(snippet)


def test_backward_inputs_with_a_non_leaf_retains_its_grad():
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        y = a * b
        (y * 2).sum().backward(inputs=[y])
        return y.retains_grad, y.grad, a.grad
    same(snippet)


def test_backward_inputs_that_need_no_grad_refused_as_torch():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        c = lib.ones(2)
        (x * c).sum().backward(inputs=[c])
    same(snippet)


# --- 3. hooks --------------------------------------------------------------------------------

def test_retain_grad_runs_after_all_tensor_hooks():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 10)      # registered after retain_grad, runs before it
        y.sum().backward()
        return y.grad, x.grad
    same(snippet)


def test_retain_grad_follows_an_in_place_op():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(g.sum().item()))   # stays with the node before mul_
        y.mul_(3)
        y.sum().backward()
        return y.grad, x.grad, seen
    same(snippet)


def test_retained_grad_is_replaced_not_changed_in_place():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.sum().backward(retain_graph=True)
        first = y.grad
        y.sum().backward()
        return first, y.grad
    same(snippet)


def hook_named_double_it(g):
    return g.double()


@pytest.mark.parametrize("hook", [
    lambda g: lib_ones_like(g, 3),
    hook_named_double_it,
    lambda g: 1.0,
    lambda g: g * 2,
], ids=["size", "dtype", "number", "fine"])
@pytest.mark.parametrize("where", ["leaf", "non-leaf"])
def test_tensor_hook_results_checked_as_torch(hook, where):
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        (x if where == "leaf" else y).register_hook(hook)
        (y * 1).sum().backward()
        return x.grad
    same(snippet)


def lib_ones_like(g, n):
    return g.new_ones(n)


@pytest.mark.parametrize("hook", [
    lambda gi, go: (gi[0] * 100, None),
    lambda gi, go: (gi[0] * 100,),
    lambda gi, go: gi[0] * 100,
    lambda gi, go: (gi[0], gi[0]),
    lambda gi, go: (1.0, None),
    lambda gi, go: None,
], ids=["replace", "too-few", "not-a-tuple", "replace-none", "number", "none"])
def test_node_post_hook_return_value_replaces_the_gradients(hook):
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(hook)
        y.sum().backward()
        return x.grad
    same(snippet)


@pytest.mark.parametrize("hook", [
    lambda go: (go[0] * 5,),
    lambda go: 3.0,
    lambda go: None,
], ids=["replace", "number", "none"])
def test_node_prehook(hook):
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.grad_fn.register_prehook(hook)
        y.register_hook(lambda g: g * 3)
        y.sum().backward()
        return x.grad, y.grad
    same(snippet)


def test_saved_tensors_freed_only_after_post_hooks_ran():
    def snippet(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * x
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append(y.grad_fn._saved_self.sum().item()))
        y.sum().backward()
        return seen
    same(snippet)


def test_tensor_hook_sees_none_for_an_output_that_got_no_gradient():
    def snippet(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone(), a.clone()

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + g2
        x = lib.ones(2, requires_grad=True)
        u, v = Two.apply(x)
        seen = []
        v.register_hook(lambda g: seen.append(g))
        u.sum().backward()
        return seen, x.grad
    same(snippet)


# --- 4. threads ------------------------------------------------------------------------------

def test_threads_accumulating_into_one_leaf_lose_no_update():
    x = tg.zeros(200_000, requires_grad=True)
    rounds, threads = 40, 4

    def work():
        for _ in range(rounds):
            (x * 1.0).sum().backward()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert torch.equal(x.grad.data, torch.full((200_000,), float(rounds * threads)))


def test_record_backward_is_per_thread_and_nests():
    from teachgrad.core.engine import record_backward

    def names(steps):
        return [s.node.name() for s in steps]

    x = tg.ones(2, requires_grad=True)
    with record_backward() as outer:
        (x * 2).sum().backward()
        with record_backward() as inner:
            (x * 2).sum().backward()
        other = []
        thread = threading.Thread(target=lambda: (x.exp().sum().backward()))
        thread.start()
        thread.join()
    assert names(inner) == ["SumBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert names(outer) == names(inner) * 2
    assert other == []


def test_backward_steps_in_two_threads():
    pytest.importorskip("graphviz")
    errors, results = [], {}
    start = threading.Barrier(2)

    def work(k):
        try:
            x = tg.tensor([1.0, 2.0], requires_grad=True)
            y = x
            for _ in range(300):
                y = y * 1.0
            start.wait()
            steps = tg.viz.backward_steps(y.sum())
            results[k] = len(steps), steps[len(steps) - 1].source.count("->")
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == [] and results[0] == results[1] and results[0][0] == 302


# --- gradient layout: a matrix stored column by column gets its gradient in the same layout ------

MATRIX_PRODUCTS = {
    "linear": lambda lib, x, w: lib.nn.functional.linear(x, w, lib.zeros(3, requires_grad=True)),
    "x @ w.t()": lambda lib, x, w: x @ w.t(),
    "w.t() as the first operand": lambda lib, x, w: (w.t() @ x.t()).t(),
    "linear without bias": lambda lib, x, w: lib.nn.functional.linear(x, w),
}


@pytest.mark.parametrize("name", MATRIX_PRODUCTS)
def test_weight_gradient_has_the_weights_layout(name):
    """torch's mm backward (mm_mat1/mat2_backward) makes a column-major input's gradient column-major,
    so F.linear's weight.grad comes back contiguous, like the weight."""
    def snippet(lib):
        x = lib.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]] * 4) * lib.arange(4.0).reshape(4, 1)
        x.requires_grad_()
        w = lib.tensor([[0.5, -1.0, 2.0, 0.0, 1.5]] * 3) + lib.arange(3.0).reshape(3, 1)
        w.requires_grad_()
        MATRIX_PRODUCTS[name](lib, x, w).sum().backward()
        return w.grad, w.grad.stride(), x.grad, x.grad.stride()
    same(snippet)


@pytest.mark.parametrize("op", ["a - b", "b - a", "a + b", "b + a", "lib.where(a > b, a, b)", "lib.where(a > b, b, a)",
                                "a.clamp(min=b)", "b.clamp(min=a)", "b.clamp(max=a)", "lib.dot(a, b)", "lib.dot(b, a)"])
def test_a_node_called_directly_gives_none_for_an_input_that_needs_no_gradient(op):
    """Nodes compute only the gradients their inputs need (and keep an edge for a bound left out), as torch's."""
    def snippet(lib):
        a, b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True), lib.tensor([2.0, 2.0, 2.0])
        y = eval(op)
        return y.grad_fn(lib.ones_like(y) * 2), [n is None for n, _ in y.grad_fn.next_functions]
    same(snippet)


@pytest.mark.parametrize("op", ["a.clamp_min(b)", "a.clamp_max(b)", "a.clamp_min(2.5)", "a.clamp_max(2.5)",
                                "a.clamp(min=b)", "a.clamp(max=b)", "a.clamp(max=2.5)"])
def test_clamp_variants_record_torchs_nodes(op):
    def snippet(lib):
        a, b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True), lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        y = eval(op)
        return y.grad_fn.name(), len(y.grad_fn.next_functions), lib.autograd.grad(y.sum(), (a, b), allow_unused=True)
    same(snippet)


@pytest.mark.parametrize("op", ["x + b", "x - b", "x * b", "x / b", "b * x"])
def test_a_broadcast_gradient_is_summed_by_the_engine_not_the_node(op):
    """torch's AddBackward0 & co. return the output-shaped gradient; the engine sums it to b's shape."""
    def snippet(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        b = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
        y = eval(op)
        direct = y.grad_fn(lib.ones(2, 3))
        y.sum().backward()
        return [tuple(g.shape) for g in direct], b.grad
    same(snippet)


# --- the gradient layout contract: a leaf's first .grad is laid out as the leaf (torch's accumulate_grad.h) ---

def _first_grad_layouts(lib, make_leaf, enforce=True):
    """The strides of a leaf's first .grad, for a fresh gradient (stolen when it obeys the contract) and for a
    gradient the caller holds (always copied), with torch's enforce_grad_layout_policy as given."""
    seen = []
    for given in (False, True):
        leaf = make_leaf(lib)
        with torch.autograd.enforce_grad_layout_policy(enforce) if lib is torch else \
                tg.autograd.enforce_grad_layout_policy(enforce):
            if given:
                leaf.backward(torch.ones(leaf.shape).t().contiguous().t() if leaf.dim() == 2 else torch.ones(leaf.shape))
            else:
                (leaf * 2).sum().backward()
        seen.append((tuple(leaf.grad.stride()), leaf.grad.is_contiguous()))
    return seen


_LEAVES = {
    "permuted": lambda lib: lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_(),
    "transposed": lambda lib: lib.empty(3, 5).t().requires_grad_(),
    "with gaps": lambda lib: lib.empty(4, 6)[:, ::2].requires_grad_(),
    "contiguous": lambda lib: lib.empty(3, 5).requires_grad_(),
    "size-1 dims": lambda lib: lib.empty(1, 5, 1).requires_grad_(),
}


@pytest.mark.parametrize("enforce", [True, False])
@pytest.mark.parametrize("leaf", sorted(_LEAVES))
def test_first_gradient_layout_is_torchs(leaf, enforce):
    assert _first_grad_layouts(tg, _LEAVES[leaf], enforce) == _first_grad_layouts(torch, _LEAVES[leaf], enforce)


def test_a_gradient_strided_as_a_leaf_with_gaps_is_still_copied_contiguous():
    """The contract for a leaf that is not dense (a slice with gaps) asks for a contiguous gradient: one laid
    out with the leaf's own gapped strides is copied, though its strides equal the leaf's."""
    from teachgrad.rules import grad_layout
    leaf = torch.empty(4, 6)[:, ::2]
    grad = torch.ones(4, 6)[:, ::2]
    assert not grad_layout.obeys_contract(grad, leaf)
    kept = grad_layout.first_grad(leaf, grad, owned=True)
    assert kept is not grad and kept.is_contiguous()


def _backward_copies(lib, program):
    """How many times `program`'s backward copies a gradient (aten's copy_), and whether any two of the leaves'
    .grad share memory: what a leaf keeping a gradient uncopied shows from outside."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Copies(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.copy_.default:
                Copies.count += 1
            return func(*args, **(kwargs or {}))

    leaves, loss = program(lib)
    with Copies():
        loss.backward()
    storages = [leaf.grad.untyped_storage().data_ptr() for leaf in leaves]
    return Copies.count, len(set(storages)) < len(storages), [leaf.grad.tolist() for leaf in leaves]


_VIEWED_GRADIENTS = {
    # nn.Linear's weight: its gradient reaches the leaf through addmm's column-major product and TBackward0 as a
    # view of a fresh product, which torch keeps without a copy
    "linear weight": lambda lib: _with_leaves(lib, lambda w, b: lib.nn.functional.linear(
        lib.arange(12.0).reshape(4, 3), w, b).tanh().sum(), (2, 3), (2,)),
    "linear weight, torch Parameters": lambda lib: _with_leaves(lib, lambda w, b: lib.nn.functional.linear(
        lib.arange(12.0).reshape(4, 3), w, b).tanh().sum(), (2, 3), (2,), parameters=True),
    # the same view of one gradient sent to two leaves: each must get memory of its own
    "transpose beside a leaf": lambda lib: _with_leaves(lib, lambda w, v: (w.t() + v).sum(), (3, 3), (3, 3)),
    "transpose of a transpose": lambda lib: _with_leaves(lib, lambda w, v: (w.t().t() * 2 + v).sum(), (3, 3), (3, 3)),
    "a leaf used twice through transposes": lambda lib: _with_leaves(
        lib, lambda w, v: (w.t() @ v + w.t() * 3).sum(), (3, 3), (3, 3)),
    # the gradient a transpose is given is also kept by retain_grad (as a copy): the leaf keeps its own uncopied
    "a transpose whose gradient is retained": lambda lib: _transposed_and_watched(lib, "retain_grad"),
}


def _with_leaves(lib, body, *shapes, parameters=False):
    gen = torch.Generator().manual_seed(0)
    values = [torch.randn(shape, generator=gen) for shape in shapes]
    if parameters:
        leaves = [torch.nn.Parameter(v) for v in values]
    else:
        leaves = [lib.tensor(v.tolist(), requires_grad=True) for v in values]
    return leaves, body(*leaves)


def _transposed_and_watched(lib, how):
    """A leaf's transpose whose gradient someone else also holds; its .grad is listed with the leaves' (a hook's
    copy of it is kept in a tensor's .grad too) so that shared memory shows."""
    (w, v), _ = _with_leaves(lib, lambda w, v: None, (3, 3), (3, 3))
    y = w.t().t()   # (twice: the leaf's gradient is then laid out as the leaf, and kept if nobody else held it)
    if how == "retain_grad":
        y.retain_grad()
        watched = y
    else:
        watched = lib.zeros(3, 3, requires_grad=True)
        y.register_hook(lambda grad: setattr(watched, "grad", grad))
    return [w, v, watched], (y * v).sum()


@pytest.mark.parametrize("case", sorted(_VIEWED_GRADIENTS))
def test_a_gradient_reaching_a_leaf_as_a_view_is_copied_only_where_torch_copies(case):
    """torch keeps a leaf's first gradient uncopied when nobody else holds it, a view of a fresh product included
    (torch/csrc/autograd/functions/accumulate_grad.h asks the tensor's use count); teachgrad proves the same from the
    graph (teachgrad/rules/grad_layout.py, track_owner), and never lets two leaves share memory."""
    ours, theirs = _backward_copies(tg, _VIEWED_GRADIENTS[case]), _backward_copies(torch, _VIEWED_GRADIENTS[case])
    assert all(torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-6) for a, b in zip(ours[2], theirs[2]))
    assert not ours[1] and not theirs[1], "two leaves' .grad share memory"
    assert ours[0] == theirs[0], f"teachgrad copied {ours[0]} gradient(s), torch {theirs[0]}"


def test_a_view_of_a_gradient_a_hook_kept_is_copied_where_torch_lets_two_tensors_share_memory():
    """torch asks only the view's own use count, so a leaf keeps a view of the gradient a tensor hook stored
    elsewhere, and the two share memory (a later in-place change of one shows in the other); teachgrad copies it."""
    ours, theirs = (_backward_copies(lib, lambda lib: _transposed_and_watched(lib, "hook")) for lib in (tg, torch))
    assert theirs[:2] == (0, True)
    assert ours[:2] == (1, False)
    assert all(torch.allclose(torch.tensor(a), torch.tensor(b)) for a, b in zip(ours[2], theirs[2]))


def _profiled_rows(lib):
    """What torch's profiler counts while a small program runs backward (the docstring of
    torch.autograd.profiler.profile does the same): each row's name and number of calls, without its times."""
    x = lib.randn((1, 1), requires_grad=True)
    w = lib.randn((1, 1), requires_grad=True)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(3):
            y = (x ** 2 + w).sum()
            y.backward()
    return sorted((event.key, event.count) for event in prof.key_averages())


def test_a_profile_of_backward_lists_torchs_rows():
    """torch's profiler sees each node teachgrad's engine runs under torch's names (teachgrad/rules/profiling.py)."""
    ours, theirs = _profiled_rows(tg), _profiled_rows(torch)
    assert ("autograd::engine::evaluate_function: PowBackward0", 3) in theirs
    assert ours == theirs


def _broadcast_ops(lib, tensor):
    """Ops whose inputs broadcast: (name, output), each made from a (3, 1) and a (3,) input that require grad."""
    a = tensor(torch.linspace(0.5, 1.5, 3).reshape(3, 1), requires_grad=True)
    b = tensor(torch.linspace(0.6, 1.4, 3), requires_grad=True)
    base = tensor(torch.zeros(3, 3))
    return [("pow", a ** b), ("where", lib.where(a > b, a, b)), ("maximum", lib.maximum(a, b)),
            ("minimum", lib.minimum(a, b)), ("clamp", a.clamp(min=b)), ("masked_fill", a.masked_fill(b > 1, 0.0)),
            ("copy_", base.clone().copy_(b)), ("linear", lib.nn.functional.linear(base + 1, base + 2, b)), ("index_put_", base.clone().index_put_((torch.tensor([0, 1]),), b[:1]))]


def test_a_node_called_directly_leaves_broadcast_gradients_to_the_engine():
    """As torch's nodes: a broadcast input's gradient comes back in the output's shape; the engine sums it back
    (validate_outputs), not the formula. Backward itself gives the input's shape."""
    ours = _broadcast_ops(tg, tg.Variable)
    theirs = _broadcast_ops(torch, lambda t, requires_grad=False: t.clone().requires_grad_(requires_grad))
    for (name, y), (_, t) in zip(ours, theirs):
        grads, torch_grads = y.grad_fn(tg.ones(3, 3)), t.grad_fn(torch.ones(3, 3))
        shapes = [None if g is None else tuple(g.shape) for g in (grads if isinstance(grads, tuple) else (grads,))]
        torch_shapes = [None if g is None else tuple(g.shape)
                        for g in (torch_grads if isinstance(torch_grads, tuple) else (torch_grads,))]
        assert shapes == torch_shapes, name
        y.sum().backward()
        t.sum().backward()
    a, b = ours[0][1].grad_fn.next_functions[0][0].variable, ours[0][1].grad_fn.next_functions[1][0].variable
    ta, tb = theirs[0][1].grad_fn.next_functions[0][0].variable, theirs[0][1].grad_fn.next_functions[1][0].variable
    assert torch.equal(a.grad.data, ta.grad) and torch.equal(b.grad.data, tb.grad)   # summed back, the same bits


# --- a gradient that does not fit its input: summed back, or refused with torch's message (validate_outputs) ---

@pytest.mark.parametrize("returned", [
    lambda g: torch.ones(3),                           # a shape that is no broadcast of the input's
    lambda g: torch.ones((), device="meta"),           # a scalar on another device: its shape is refused first
    lambda g: torch.ones(2, device="meta"),            # another device
    lambda g: torch.ones(4, 2),                        # a broadcast of the input's shape: summed back
    lambda g: torch.ones(2, dtype=torch.float64),      # another dtype: cast to the input's
], ids=["shape", "scalar-device", "device", "broadcast", "dtype"])
def test_a_custom_functions_gradient_is_fitted_or_refused_as_torchs(returned):
    def run(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return returned(grad)
        x = lib.ones(2, requires_grad=True)
        try:
            Bad.apply(x).sum().backward()
        except RuntimeError as error:
            return str(error)
        grad = x.grad.data if isinstance(x.grad, tg.Variable) else x.grad
        return grad, grad.dtype
    theirs, ours = run(torch), run(tg)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        torch.testing.assert_close(ours[0], theirs[0])
        assert ours[1] == theirs[1]
