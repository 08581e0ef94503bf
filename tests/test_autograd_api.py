"""torch.autograd's API around the engine, under teachgrad: the modules `autograd.function` and
`autograd.graph`, `ctx.mark_dirty`, graph nodes as `Node`s, `register_multi_grad_hook`,
`allow_mutation_on_saved_tensors`, `register_post_accumulate_grad_hook`, the tangent object forward
mode keeps, and the order saved-tensor hooks see tensors in (issue 22, items 6, 7, 9, 10).

Each twin test runs the same program with `lib` bound to torch and to teachgrad (tests/twins.py).
"""
import importlib

import pytest
import torch

import teachgrad as tg
import teachgrad.nn.functional as TGF
import torch.nn.functional as TF
from tests.twins import same


def _name(x):
    return None if x.grad_fn is None else x.grad_fn.name()


def _edges(node):
    return [None if n is None else (n.name(), nr) for n, nr in node.next_functions]


# --- the modules (item 6) --------------------------------------------------------------------------

@pytest.mark.parametrize("module, names", [
    ("autograd.function", ["Function", "FunctionCtx", "once_differentiable"]),
    ("autograd.graph", ["Node", "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "saved_tensors_hooks",
                        "save_on_cpu", "disable_saved_tensors_hooks"]),
    ("autograd.forward_ad", ["dual_level", "make_dual", "unpack_dual"]),
    ("autograd.functional", ["jacobian", "hessian", "vjp", "jvp"]),
])
def test_autograd_submodules_import_as_torchs(module, names):
    ours = importlib.import_module("teachgrad." + module)
    theirs = importlib.import_module("torch." + module)
    for name in names:
        assert hasattr(ours, name) and hasattr(theirs, name), name
    assert ours is getattr(tg.autograd, module.split(".")[1])


def test_function_of_the_function_module_is_tg_function():
    from teachgrad.autograd.function import Function, once_differentiable
    assert Function is tg.autograd.Function is tg.Function
    assert once_differentiable is tg.autograd.once_differentiable


def _square(lib):
    FunctionCtx = importlib.import_module(lib.__name__ + ".autograd.function").FunctionCtx

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx: FunctionCtx, x):
            ctx.is_ctx = isinstance(ctx, FunctionCtx)
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 2 * x * grad

    return Square, FunctionCtx


def test_ctx_is_a_function_ctx_and_a_bare_one_runs_forward():
    def program(lib):
        Square, FunctionCtx = _square(lib)
        x = lib.tensor([1.0, -3.0], requires_grad=True)
        y = Square.apply(x)
        y.sum().backward()
        bare = FunctionCtx()
        by_hand = Square.forward(bare, lib.tensor([2.0]).data if lib is tg else torch.tensor([2.0]))
        return y.grad_fn.is_ctx, _name(y), x.grad, by_hand, bare.is_ctx, len(bare.to_save if lib is torch
                                                                               else bare._to_save)
    same(program)


# --- ctx.mark_dirty ---------------------------------------------------------------------------------

def _add_one(lib, save=False, twice=False):
    class AddOne(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            if save:
                ctx.save_for_backward(x)
            return (x, x * 2) if twice else x

        @staticmethod
        def backward(ctx, grad, *more):
            if save:
                x, = ctx.saved_tensors
                return grad * x
            return grad * 3 + (2 * more[0] if more else 0)

    return AddOne


def test_mark_dirty_hands_back_the_input_with_the_functions_history():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a.clone()
        out = _add_one(lib).apply(b)
        same_object = out is b
        (out * out).sum().backward()
        return same_object, b._version, _name(b), _edges(b.grad_fn), b.is_leaf, out.detach(), a.grad
    same(program)


def test_mark_dirty_makes_a_tensor_saved_before_stale():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        b = a * a
        _add_one(lib).apply(a)
        b.sum().backward()
    same(program)


def test_mark_dirty_on_a_leaf_that_requires_grad_is_refused_after_forward_ran():
    def program(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        try:
            _add_one(lib).apply(leaf)
        except RuntimeError as error:
            return str(error), leaf.detach(), leaf._version
    same(program)


@pytest.mark.parametrize("grad", [True, False])
def test_mark_dirty_of_an_input_not_returned_is_refused(grad):
    def program(lib):
        class Forgets(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                x.add_(1)
                ctx.mark_dirty(x)
                return y.clone()

            @staticmethod
            def backward(ctx, g):
                return g, g

        return Forgets.apply(lib.ones(2, requires_grad=grad) * 1, lib.ones(2, requires_grad=grad))
    same(program)


def test_mark_dirty_without_anything_to_record():
    def program(lib):
        x = lib.tensor([1.0, 2.0])
        out = _add_one(lib).apply(x)
        return out is x, x._version, out.requires_grad, out
    same(program)


def test_mark_dirty_gives_a_tensor_that_required_no_grad_a_history():
    def program(lib):
        class AddInto(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                x.add_(y)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g, g * 5

        x, y = lib.zeros(2), lib.ones(2, requires_grad=True)
        out = AddInto.apply(x, y)
        out.sum().backward()
        return out is x, x.requires_grad, x.is_leaf, _name(x), x._version, y.grad
    same(program)


def test_mark_dirty_and_save_the_written_input():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        out = _add_one(lib, save=True).apply(b)
        out.sum().backward()
        return out is b, a.grad
    same(program)


def test_mark_dirty_with_two_outputs():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        p, q = _add_one(lib, twice=True).apply(b)
        (p + q).sum().backward()
        return p is b, p.output_nr, q.output_nr, p.grad_fn is q.grad_fn, a.grad
    same(program)


def test_mark_dirty_through_a_view_rewrites_the_bases_history():
    def program(lib):
        leaf = lib.zeros(2, 3, requires_grad=True)
        base = leaf * 1
        row = base[0]
        out = _add_one(lib).apply(row)
        (base * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return out is row, _name(row), _name(base), base.detach(), leaf.grad
    same(program)


def test_increment_version_makes_a_saved_tensor_stale():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        c = b.exp()
        lib.autograd.graph.increment_version(c)
        lib.autograd.graph.increment_version([b, c])
        versions = b._version, c._version
        c.sum().backward()
        return versions
    same(program)


# --- Node (item 7) ----------------------------------------------------------------------------------

def test_every_node_is_a_node():
    def program(lib):
        Node = lib.autograd.graph.Node
        Square, _ = _square(lib)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a.clone()
        c = b * 2
        b[0].mul_(3)
        d = Square.apply(c)
        nodes = [b.grad_fn, c.grad_fn, d.grad_fn, c.grad_fn.next_functions[0][0], a.clone().grad_fn.next_functions[0][0]]
        return ([isinstance(n, Node) for n in nodes], [n.name() for n in nodes], isinstance(a, Node),
                issubclass(int, Node), isinstance(None, Node))
    same(program)


def test_node_next_functions_and_metadata_match_torch():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (a * 2).exp()
        node = y.grad_fn
        first = node.metadata
        node.metadata["note"] = 1
        return _edges(node), _edges(node.next_functions[0][0]), first is node.metadata, node.metadata
    same(program)


def test_node_hooks_as_torchs_docs_show_them():
    def program(lib):
        a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        b = a.clone()
        seen = []
        handle = b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_outputs[0] * 2,))
        pre = b.grad_fn.register_prehook(lambda grad_outputs: seen.append(grad_outputs[0].tolist()))
        b.sum().backward(retain_graph=True)
        first = a.grad.clone()
        handle.remove()
        pre.remove()
        a.grad = None
        b.sum().backward(retain_graph=True)
        return first, a.grad, seen
    same(program)


# --- register_multi_grad_hook ---------------------------------------------------------------------

def test_multi_grad_hook_all_as_torchs_docs_show_it():
    def program(lib):
        lib.manual_seed(0)
        a = lib.rand(2, 3, requires_grad=True)
        b = lib.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        calls = []
        lib.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda grads: calls.append(
            [None if g is None else g.tolist() for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        return calls
    same(program)


def test_multi_grad_hook_all_on_leaves_under_autograd_grad_is_refused_as_torch_refuses_it():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        calls = []
        lib.autograd.graph.register_multi_grad_hook((a, b), calls.append)
        try:
            lib.autograd.grad(b.sum(), (a,))
        except RuntimeError as error:
            return str(error), calls
    same(program)


def test_multi_grad_hook_all_on_non_leaves_under_autograd_grad():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b, c = a * 2, a * 3
        d = b * c
        calls = []
        lib.autograd.graph.register_multi_grad_hook((b, c, d), lambda gs: calls.append(
            [None if g is None else g.tolist() for g in gs]))
        lib.autograd.grad(d.sum(), (b,), retain_graph=True)
        lib.autograd.grad(d.sum(), (a,))
        return calls
    same(program)


def test_multi_grad_hook_any_runs_once_per_backward():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        calls = []
        handle = lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: calls.append(g.tolist()), mode="any")
        (a * b).sum().backward()
        (a * 5).sum().backward()
        handle.remove()
        (a * b).sum().backward()
        return calls
    same(program)


def test_multi_grad_hook_handle_removes_every_hook_and_bad_modes_are_refused():
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        calls = []
        handle = lib.autograd.graph.register_multi_grad_hook((a,), calls.append)
        handle.remove()
        (a * 2).sum().backward()
        try:
            lib.autograd.graph.register_multi_grad_hook((a,), calls.append, mode="some")
        except ValueError as error:
            return calls, str(error)
    same(program)


def test_multi_grad_hook_sees_a_non_leafs_gradient_through_several_paths():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        y = x.exp()
        calls = []
        lib.autograd.graph.register_multi_grad_hook((h, y, x), lambda gs: calls.append([g.tolist() for g in gs]))
        (h * y).sum().backward()
        return calls
    same(program)


# --- allow_mutation_on_saved_tensors ----------------------------------------------------------------

def test_allow_mutation_on_saved_tensors_as_torchs_docs_show_it():
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
        return a.grad, b.detach(), _name(b)
    same(program)


def test_allow_mutation_keeps_each_saved_tensor_written_several_times():
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a * 1
            c = b * b        # saves b (twice: self and other)
            b.mul_(10)
            d = b.exp()      # saves its result
            b.add_(1)
            (c + d).sum().backward()
        return a.grad
    same(program)


def test_allow_mutation_contexts_do_not_nest():
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                pass
    same(program)


def test_backward_outside_the_allow_mutation_context_is_refused():
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.ones(2, requires_grad=True)
            out = (a.clone() ** 2).sum()
        out.backward()
    same(program)


def test_without_allow_mutation_the_write_is_an_error():
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
    same(program)


# --- register_post_accumulate_grad_hook ------------------------------------------------------------

def test_post_accumulate_grad_hook_sees_the_leaf_after_accumulation():
    def program(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        handle = w.register_post_accumulate_grad_hook(lambda p: seen.append((p is w, p.grad.tolist())))
        (w * 2).sum().backward()
        (w * 3).sum().backward()
        lib.autograd.grad((w * 4).sum(), w)          # no accumulation: no call
        handle.remove()
        (w * 5).sum().backward()
        return seen, w.grad
    same(program)


def test_post_accumulate_grad_hook_can_step_an_optimizer_in_backward():
    """The pattern torch's tutorial on fusing the optimizer step into backward uses."""
    def program(lib):
        w = lib.tensor([1.0, -1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)

        def step(p):
            opt.step()
            opt.zero_grad()

        w.register_post_accumulate_grad_hook(step)
        (w ** 2).sum().backward()
        return w.detach(), w.grad
    same(program)


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, requires_grad=True) * 2,        # not a leaf
    lambda lib: lib.ones(2),                                 # needs no grad
])
def test_post_accumulate_grad_hook_refusals_match_torch(make):
    same(lambda lib: make(lib).register_post_accumulate_grad_hook(print))


@pytest.mark.parametrize("returns", [
    lambda lib, p: 5, lambda lib, p: lib.ones(5), lambda lib, p: p.double(), lambda lib, p: p * 2,
])
def test_post_accumulate_grad_hook_result_is_checked_as_torch_checks_it(returns):
    def program(lib):
        w = lib.ones(2, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: returns(lib, p))
        (w * 2).sum().backward()
        return w.grad
    same(program)


def test_post_accumulate_grad_hook_as_torchs_docs_show_it():
    def program(lib):
        v = lib.tensor([0., 0., 0.], requires_grad=True)
        lr = 0.01
        h = v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-lr))
        v.backward(lib.tensor([1., 2., 3.]))
        h.remove()
        return v
    same(program)


def test_mark_dirty_as_torchs_docs_show_it():
    """A forward that writes through numpy: only mark_dirty tells autograd (and bumps the version)."""
    def program(lib):
        once_differentiable = importlib.import_module(lib.__name__ + ".autograd.function").once_differentiable

        class Inplace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x_npy = x.numpy()
                x_npy += 1
                ctx.mark_dirty(x)
                return x

            @staticmethod
            @once_differentiable
            def backward(ctx, grad_output):
                return grad_output

        a = lib.tensor(1., requires_grad=True, dtype=torch.double).clone()
        b = a * a
        out = Inplace.apply(a)
        try:
            b.backward()
        except RuntimeError as error:
            return out, _name(out), str(error)
    same(program)


# --- forward mode keeps the tangent object (item 9) -------------------------------------------------

@pytest.mark.parametrize("tangent", [
    lambda lib: lib.tensor([0.5, 1.0, -1.0]),
    lambda lib: torch.tensor([0.5, 1.0, -1.0]),
    lambda lib: lib.randn(6)[3:],                                 # another layout in memory: copied
    lambda lib: lib.randn(1, 3).expand(1, 3)[0],
    lambda lib: lib.tensor([0.5, 1.0, -1.0], dtype=torch.float64),
])
def test_unpack_dual_gives_back_the_tangent_make_dual_was_given(tangent):
    def program(lib):
        fw = lib.autograd.forward_ad
        lib.manual_seed(0)
        t = tangent(lib)
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), t)
            first = fw.unpack_dual(dual).tangent
            again = fw.unpack_dual(dual).tangent
            y = dual * 2
            out = fw.unpack_dual(y).tangent
            return first is t, first is again, fw.unpack_dual(y).tangent is out, first, out
    same(program)


def test_a_kept_tangent_is_the_same_tensor_an_in_place_op_writes():
    def program(lib):
        fw = lib.autograd.forward_ad
        t = lib.tensor([1.0, 1.0])
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor([1.0, 2.0]), t)
            dual.mul_(3)
            return fw.unpack_dual(dual).tangent is t, t
    same(program)


# --- saved-tensor hooks see tensors in torch's order (item 10) --------------------------------------

def _f(lib):
    return TGF if lib is tg else TF


PACK_CASES = {
    "mul": lambda L, a, b, c: a * b, "div": lambda L, a, b, c: a / b, "pow": lambda L, a, b, c: a ** 2,
    "pow_tensor": lambda L, a, b, c: a.abs() ** b, "rpow": lambda L, a, b, c: 2 ** a,
    "reciprocal": lambda L, a, b, c: a.reciprocal(), "rdiv": lambda L, a, b, c: 3 / a,
    "exp": lambda L, a, b, c: a.exp(), "log": lambda L, a, b, c: a.abs().log(), "sqrt": lambda L, a, b, c: a.abs().sqrt(),
    "sin": lambda L, a, b, c: a.sin(), "cos": lambda L, a, b, c: a.cos(), "tanh": lambda L, a, b, c: a.tanh(),
    "sigmoid": lambda L, a, b, c: a.sigmoid(), "relu": lambda L, a, b, c: a.relu(), "abs": lambda L, a, b, c: a.abs(),
    "clamp": lambda L, a, b, c: a.clamp(-0.5, 0.5), "clamp_min": lambda L, a, b, c: a.clamp_min(0.1),
    "clamp_tensor": lambda L, a, b, c: a.clamp(b, c), "clamp_min_tensor": lambda L, a, b, c: a.clamp_min(b),
    "clamp_max_tensor": lambda L, a, b, c: a.clamp_max(b), "maximum": lambda L, a, b, c: L.maximum(a, b),
    "minimum": lambda L, a, b, c: L.minimum(a, b), "where": lambda L, a, b, c: L.where(a > 0, a, b),
    "masked_fill": lambda L, a, b, c: a.masked_fill(b > 0, 1.0), "max": lambda L, a, b, c: a.max(),
    "max_dim": lambda L, a, b, c: a.max(1)[0], "min": lambda L, a, b, c: a.min(), "min_dim": lambda L, a, b, c: a.min(1)[0],
    "norm": lambda L, a, b, c: a.norm(), "norm_dim": lambda L, a, b, c: a.norm(dim=1),
    "mm": lambda L, a, b, c: a @ b.t(), "matmul_batched": lambda L, a, b, c: a.reshape(1, 3, 4) @ b.t(),
    "mv": lambda L, a, b, c: a.mv(b[0]), "dot": lambda L, a, b, c: a[0].dot(b[0]),
    "addmm": lambda L, a, b, c: c[:, 0].addmm(a, b.t()), "linear": lambda L, a, b, c: _f(L).linear(a, b, c[:, 0]),
    "index": lambda L, a, b, c: a[L.tensor([0, 2])], "index_pair": lambda L, a, b, c: a[[0, 1], [1, 2]],
    "softmax": lambda L, a, b, c: a.softmax(1), "log_softmax": lambda L, a, b, c: a.log_softmax(1),
    "mse": lambda L, a, b, c: _f(L).mse_loss(a, b),
    "bce": lambda L, a, b, c: _f(L).binary_cross_entropy(a.sigmoid(), b.sigmoid()),
    "bce_logits": lambda L, a, b, c: _f(L).binary_cross_entropy_with_logits(a, b.sigmoid(),
                                                                                   pos_weight=c[0].abs().detach()),
    "cross_entropy": lambda L, a, b, c: _f(L).cross_entropy(a, L.tensor([0, 1, 3])),
    "mul_": lambda L, a, b, c: (a * 1).mul_(b), "div_": lambda L, a, b, c: (a * 1).div_(b),
    "pow_": lambda L, a, b, c: (a * 1).pow_(2),
}


def _pack_order(lib, build):
    """What the pack hook is handed, in order, each named for what it is: an input (a, b, c), the output
    (result), a view or copy of an input, or another tensor (by shape and dtype)."""
    g = torch.Generator().manual_seed(0)
    raw = [torch.randn(3, 4, generator=g, dtype=torch.float64) for _ in range(3)]
    inputs = [tg.Variable(r.clone(), requires_grad=True) if lib is tg else r.clone().requires_grad_() for r in raw]
    packed = []

    def pack(x):
        packed.append(x)
        return x

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        out = build(lib, *inputs)
    names = []
    for x in packed:
        data = x.data if lib is tg else x.detach()
        same_object = [n for i, n in zip(inputs, "abc") if i is x]
        shares = [n for i, n in zip(inputs, "abc")
                  if (i.data if lib is tg else i).untyped_storage().data_ptr() == data.untyped_storage().data_ptr()]
        copies = [n for r, n in zip(raw, "abc") if r.shape == data.shape and torch.equal(r, data)]
        if same_object:
            names.append(same_object[0])
        elif x is out:
            names.append("result")
        elif shares:
            names.append(shares[0] + " viewed")
        elif copies:
            names.append(copies[0] + " copied")
        else:
            names.append(f"other {tuple(data.shape)} {data.dtype}")
    return names


@pytest.mark.parametrize("name", sorted(PACK_CASES))
def test_pack_hook_sees_saved_tensors_in_torchs_order(name):
    assert _pack_order(tg, PACK_CASES[name]) == _pack_order(torch, PACK_CASES[name])


def _unpack_order(lib, build):
    """During backward, which packed tensors (by their position in pack order) the unpack hook gets, in order."""
    g = torch.Generator().manual_seed(0)
    raw = [torch.randn(3, 4, generator=g, dtype=torch.float64) for _ in range(3)]
    inputs = [tg.Variable(r.clone(), requires_grad=True) if lib is tg else r.clone().requires_grad_() for r in raw]
    packed, unpacked = [], []

    def pack(x):
        packed.append(x)
        return len(packed) - 1, x

    def unpack(tagged):
        unpacked.append(tagged[0])
        return tagged[1]

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = build(lib, *inputs)
    out.sum().backward()
    return unpacked


@pytest.mark.parametrize("name", sorted(PACK_CASES))
def test_unpack_hook_sees_saved_tensors_in_torchs_order(name):
    """torch unpacks in the order it packed (the saved-tensor hooks tutorial prints it for a * b)."""
    assert _unpack_order(tg, PACK_CASES[name]) == _unpack_order(torch, PACK_CASES[name])


def test_a_custom_functions_saved_tensors_are_packed_in_the_order_saved():
    def program(lib):
        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                out = x * y
                ctx.save_for_backward(y, out, x)
                return out

            @staticmethod
            def backward(ctx, g):
                y, out, x = ctx.saved_tensors
                return g * y, g * x

        x, y = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0], requires_grad=True)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            out = Both.apply(x, y)
        return [t is x for t in seen], [t is y for t in seen], [t is out for t in seen]
    same(program)


def test_region_activation_memory_budget_refuses_eager_mode_as_torch():
    """torch's region_activation_memory_budget only works under torch.compile: in eager mode both raise
    torch's RuntimeError, and refuse a budget outside [0, 1] with torch's ValueError first."""
    for budget, error in ((0.5, RuntimeError), (1.5, ValueError), (True, TypeError)):
        messages = []
        for lib in (tg, torch):
            with pytest.raises(error) as raised:
                lib.autograd.graph.region_activation_memory_budget(budget)
            messages.append(str(raised.value))
        assert messages[0] == messages[1]


def test_grad_modes_live_at_torchs_path_and_name_it():
    """`torch.autograd.grad_mode` holds the grad modes; `set_grad_enabled`'s repr names that module."""
    import teachgrad.autograd.grad_mode as ours
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode"):
        assert getattr(ours, name) is getattr(tg, name)
    try:
        assert repr(tg.set_grad_enabled(False)).replace("teachgrad", "torch") == repr(torch.set_grad_enabled(False))
    finally:
        torch.set_grad_enabled(True)
