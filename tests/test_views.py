"""Views and in-place writes through them, compared with torch: values, `_base`, shared `_version`,
node names along the graph, gradients after writing through the view, and every refusal."""
import re

import pytest
import torch
from hypothesis import given, settings, strategies as st

import teachgrad as tg
from tests.helpers import close, graph_names

LIBS = [tg, torch]


def both(fn):
    """fn(lib) under teachgrad and torch."""
    return fn(tg), fn(torch)


def message(e):
    return re.sub(r" Hint:.*", "", str(e)).replace("Variable", "Tensor")


def raises_like_torch(fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(tg)
    assert message(ours.value) == message(theirs.value)


def root(lib, shape=(3, 4)):
    return lib.arange(float(torch.Size(shape).numel()), dtype=lib.float64).reshape(shape).requires_grad_()


VIEWS = {
    "select": lambda y: y[1],
    "slice": lambda y: y[1:3],
    "step slice": lambda y: y[:, ::2],
    "index then slice": lambda y: y[0][1:],
    "ellipsis (alias)": lambda y: y[...],
    "all slices (alias)": lambda y: y[:, :],
    "none": lambda y: y[None, 1],
    "0-dim tensor index": lambda y: y[y.new_tensor(1).long() if hasattr(y, "new_tensor") else 1],
    "view": lambda y: y.view(12),
    "view_as": lambda y: y.view_as(y),
    "reshape (a view)": lambda y: y.reshape(2, 6),
    "flatten": lambda y: y.flatten(),
    "t": lambda y: y.t(),
    "transpose": lambda y: y.transpose(0, 1),
    "permute": lambda y: y.permute(1, 0),
    "T": lambda y: y.T,
    "narrow": lambda y: y.narrow(1, 1, 2),
    "select method": lambda y: y.select(1, 2),
    "unsqueeze": lambda y: y.unsqueeze(0),
    "squeeze": lambda y: y.unsqueeze(1).squeeze(),
    "squeeze dim": lambda y: y.unsqueeze(0).squeeze(0),
    "diagonal": lambda y: y.diagonal(),
    "diagonal offset": lambda y: y.diagonal(1),
    "view of view of view": lambda y: y.t()[1:3].unsqueeze(0),
}


@pytest.mark.parametrize("name", VIEWS)
def test_view_ops_know_their_base_and_share_the_version(name):
    make = VIEWS[name]

    def run(lib):
        y = root(lib) * 1
        v = make(y)
        other = y[0:1]
        before = (v._version, y._version, other._version)
        with lib.no_grad():
            v.mul_(1)
        return v, v._base is y, v._is_view(), y._is_view(), before, (v._version, y._version, other._version)

    ours, theirs = both(run)
    assert close(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert ours[1] is True and ours[4] != ours[5]


@pytest.mark.parametrize("name", VIEWS)
@pytest.mark.parametrize("write", ["mul_", "add_ tensor", "zero_", "fill_", "copy_", "div_ by tensor"])
def test_write_through_a_view_gives_torch_gradients(name, write):
    make = VIEWS[name]

    def run(lib):
        x = root(lib)
        s = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        y = x * 1
        v = make(y)
        if write == "mul_":
            v.mul_(3)
        elif write == "add_ tensor":
            v.add_(s * 2)
        elif write == "zero_":
            v.zero_()
        elif write == "fill_":
            v.fill_(7.0)
        elif write == "copy_":
            v.copy_(s.expand(v.shape) * 1)
        elif write == "div_ by tensor":
            v.div_(s)
        out = (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum() + (v * v).sum()
        out.backward()
        return y, v, x.grad, s.grad, graph_names(y), graph_names(v)

    ours, theirs = both(run)
    for a, b in zip(ours[:4], theirs[:4]):
        assert (a is None) == (b is None) and (a is None or close(a, b)), (a, b)
    assert ours[4] == theirs[4], "the base's graph after the write"
    assert ours[5] == theirs[5], "the view's graph after the write"


def test_the_issue_example():
    """A write into a row of a non-leaf: torch gives [[3, 6], [3, 4]] (teachgrad once ignored the write)."""
    def run(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        y = x * 1
        y[0].mul_(3)
        (y * w).sum().backward()
        return x.grad, y.grad_fn.name(), y[0].grad_fn.name()

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and ours[0].tolist() == [[3.0, 6.0], [3.0, 4.0]]
    assert ours[1:] == theirs[1:] == ("torch::autograd::CopySlices", "SelectBackward0")


def test_copyslices_edges_and_the_regenerated_view_node():
    def run(lib):
        x = root(lib)
        s = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        y = x * 1
        v = y[1:3]
        v.mul_(s)
        edges = [(n.name() if n is not None else None, i) for n, i in y.grad_fn.next_functions]
        view_edges = [(n.name() if n is not None else None, i) for n, i in v.grad_fn.next_functions]
        return type(y.grad_fn).__name__, y.grad_fn.name(), edges, type(v.grad_fn).__name__, view_edges

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[0] == "CopySlices" and ours[3] == "AsStridedBackward0"


def test_writing_into_the_base_remakes_its_views_history():
    def run(lib):
        x = root(lib)
        y = x * 1
        v = y[1:]
        y.mul_(2)
        name = v.grad_fn.name()
        v.sum().backward()
        return name, x.grad

    ours, theirs = both(run)
    assert ours[0] == theirs[0] == "AsStridedBackward0"
    assert close(ours[1], theirs[1])


def test_a_write_makes_a_base_that_needed_no_grad_require_it():
    def run(lib):
        r = lib.ones(2, dtype=lib.float64, requires_grad=True)
        x = lib.zeros(3, 2, dtype=lib.float64)
        v = x.select(0, 1)
        flags = [v.requires_grad, v.grad_fn is None, x.is_leaf]
        v.add_(r * 5)
        flags += [x.requires_grad, x.is_leaf, v.requires_grad]
        (x * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum().backward()
        return flags, r.grad, [(n.name() if n else None) for n, _ in x.grad_fn.next_functions]

    ours, theirs = both(run)
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    assert close(ours[1], theirs[1])


def test_a_view_made_in_no_grad_mode_of_a_base_that_requires_grad():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            v = x[1:]
        return v.requires_grad, v.is_leaf, v.grad_fn is None, v._base is x, (v * 2).requires_grad

    ours, theirs = both(run)
    assert ours == theirs


SETITEMS = {
    "int, number": lambda y, s: y.__setitem__(1, 5.0),
    "slice, number": lambda y, s: y.__setitem__(slice(1, 3), 5.0),
    "slice, 0-dim variable": lambda y, s: y.__setitem__(slice(1, 3), s),
    "slice, vector": lambda y, s: y.__setitem__(slice(1, 3), s * y.new_ones(2, 4) if hasattr(y, "new_ones") else None),
    "row, broadcast [1] value": lambda y, s: y.__setitem__((0, slice(1, 3)), (s * 2).reshape(1)),
    "row, [1, 2] value": lambda y, s: y.__setitem__((0, slice(1, 3)), (s * 2).expand(1, 2)),
    "column": lambda y, s: y.__setitem__((slice(None), 1), s),
    "int tensor index": lambda y, s: y.__setitem__(torch.tensor([0, 2]) if isinstance(y, torch.Tensor) else tg.tensor([0, 2]), s),
    "list index": lambda y, s: y.__setitem__([0, 2], s * 3),
    "boolean mask, number": lambda y, s: y.__setitem__(y > 5, 0.0),
    "boolean mask, variable": lambda y, s: y.__setitem__(y > 5, s),
    "mixed int and list": lambda y, s: y.__setitem__((0, [0, 2]), s),
    "mixed list and slice": lambda y, s: y.__setitem__(([0, 1], slice(1, None)), s),
    "ellipsis": lambda y, s: y.__setitem__(Ellipsis, s),
    "all": lambda y, s: y.__setitem__(slice(None), s),
    "plain tensor value": lambda y, s: y.__setitem__(slice(0, 1), torch.ones(1, 4, dtype=torch.float64)),
}


@pytest.mark.parametrize("name", SETITEMS)
@pytest.mark.parametrize("base_requires_grad", [True, False])
def test_setitem_is_recorded_as_torch_records_it(name, base_requires_grad):
    write = SETITEMS[name]

    def run(lib):
        x = root(lib)
        s = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        y = x * 1 if base_requires_grad else lib.arange(12.0, dtype=lib.float64).reshape(3, 4)
        write(y, s)
        grads = None
        if y.requires_grad:
            (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum().backward()
            grads = x.grad, s.grad
        return y, y.requires_grad, y.is_leaf, graph_names(y) if y.requires_grad else None, grads, y._version

    ours, theirs = both(run)
    assert close(ours[0], theirs[0])
    assert ours[1:4] == theirs[1:4]
    assert ours[5] == theirs[5]
    if ours[4] is not None:
        for a, b in zip(ours[4], theirs[4]):
            assert (a is None) == (b is None) and (a is None or close(a, b)), (a, b)


def test_saved_tensor_version_check_sees_writes_through_any_view():
    def sin_then_write_through_view(lib):
        x = lib.randn(3, requires_grad=True)
        y = x * 1
        w = y.sin()
        y.view(3)[1:].add_(1)
        w.sum().backward()

    def exp_output_then_write_through_view(lib):
        x = lib.randn(2, 2, requires_grad=True)
        y = x.exp()
        y.t()[0].mul_(2)
        y.sum().backward()

    def exp_in_place_then_write(lib):
        x = lib.randn(3, requires_grad=True)
        y = x * 1
        y.exp_()
        y[0:1].zero_()
        y.sum().backward()

    for fn in (sin_then_write_through_view, exp_output_then_write_through_view, exp_in_place_then_write):
        raises_like_torch(fn)


def test_refusals_match_torch():
    def view_of_leaf(lib):
        x = lib.ones(3, requires_grad=True)
        x[0].mul_(2)

    def setitem_into_leaf(lib):
        x = lib.ones(3, requires_grad=True)
        x[0] = 2.0

    def detach_a_view(lib):
        y = lib.ones(3, requires_grad=True) * 1
        y[0:2].detach_()

    def detach_a_view_of_a_leaf(lib):
        lib.ones(3, requires_grad=True).view(3).detach_()

    def no_grad_view_then_write(lib):
        y = lib.ones(3, requires_grad=True) * 1
        with lib.no_grad():
            v = y[1:]
        v.mul_(2)

    def view_of_no_grad_view_then_write(lib):
        y = lib.ones(3, requires_grad=True) * 1
        with lib.no_grad():
            a = y.view(3)
        a[1:].mul_(2)

    def no_grad_view_of_a_plain_base_written_with_a_grad_operand(lib):
        x = lib.ones(2, requires_grad=True)
        y = lib.zeros(3)
        with lib.no_grad():
            v = y[1:]
        v.add_(x)

    def base_written_after_a_no_grad_view(lib):
        y = lib.ones(3, requires_grad=True) * 1
        with lib.no_grad():
            v = y[1:]
        y.mul_(2)
        return v.grad_fn

    def base_written_in_no_grad_mode_too(lib):
        y = lib.ones(3, requires_grad=True) * 1
        with lib.no_grad():
            v = y[1:]
            v.mul_(2)
        return v.grad_fn

    def one_output_of_unbind(lib):
        y = lib.ones(3, requires_grad=True) * 1
        a, b, c = y.unbind()
        b.mul_(2)

    def view_of_an_unbind_output(lib):
        y = lib.ones(3, requires_grad=True) * 1
        a = y.unbind()[1]
        a.view(1).mul_(2)

    def unbind_outputs_after_the_base_changed(lib):
        y = lib.ones(3, requires_grad=True) * 1
        a, b, c = y.unbind()
        y.mul_(2)
        return a.grad_fn

    def split_output(lib):
        y = lib.ones(3, requires_grad=True) * 1
        p, q = y.split([1, 2])
        q.mul_(2)

    def split_int_output(lib):
        y = lib.ones(4, requires_grad=True) * 1
        p, q = y.split(2)
        p.add_(1)

    def chunk_output(lib):
        y = lib.ones(4, requires_grad=True) * 1
        p, q = y.chunk(2)
        p.add_(1)

    def iterate_and_write(lib):
        y = lib.ones(2, 2, requires_grad=True) * 1
        for row in y:
            row.mul_(2)

    def write_into_an_expanded_view(lib):
        y = (lib.ones(1, requires_grad=True) * 1).expand(3)
        y.mul_(2)

    for fn in (view_of_leaf, setitem_into_leaf, detach_a_view, detach_a_view_of_a_leaf, no_grad_view_then_write,
               view_of_no_grad_view_then_write, no_grad_view_of_a_plain_base_written_with_a_grad_operand,
               base_written_after_a_no_grad_view, base_written_in_no_grad_mode_too, one_output_of_unbind,
               view_of_an_unbind_output, unbind_outputs_after_the_base_changed, split_output, split_int_output,
               chunk_output, iterate_and_write, write_into_an_expanded_view):
        raises_like_torch(fn)


def test_writes_that_are_allowed_in_no_grad_mode():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            x[0] = 5.0
            x[1:].mul_(2)
            a, b, c = (x * 1).unbind()
            a.mul_(3)
        return x, x.is_leaf, x._version

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and ours[1:] == theirs[1:]


@pytest.mark.parametrize("op", ["unbind", "split", "split sizes", "chunk"])
def test_multi_output_views_names_and_gradients(op):
    make = {"unbind": lambda y: y.unbind(1), "split": lambda y: y.split(2, 1),
            "split sizes": lambda y: y.split([1, 3], 1), "chunk": lambda y: y.chunk(3, 1)}[op]

    def run(lib):
        x = root(lib)
        pieces = make(x * 1)
        out = sum((p * (k + 1)).sum() for k, p in enumerate(pieces[:-1]))   # the last piece gets no gradient
        out.backward()
        return [p.grad_fn.name() for p in pieces], [p.output_nr for p in pieces], x.grad, [p._is_view() for p in pieces]

    ours, theirs = both(run)
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[3] == theirs[3]
    assert close(ours[2], theirs[2])


def test_second_backward_through_a_write_that_saved_tensors_raises():
    def run(lib):
        x = lib.randn(3, requires_grad=True)
        s = lib.randn(2, requires_grad=True)
        y = x * 1
        y[1:].mul_(s)
        y.sum().backward()
        y.sum().backward()

    raises_like_torch(run)


def test_retain_graph_through_copyslices():
    def run(lib):
        x = lib.randn(3, dtype=lib.float64, requires_grad=True)
        s = lib.randn(2, dtype=lib.float64, requires_grad=True)
        y = x * 1
        y[1:].mul_(s)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return x.grad, s.grad

    lib_ours = both(lambda lib: (lib.manual_seed(0), run(lib))[1])
    for a, b in zip(*lib_ours):
        assert close(a, b)


def test_double_backward_through_a_write():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * x
        y[1:].mul_(x[:2])
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return g, h

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])


def test_retain_grad_follows_an_in_place_op():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return y.grad, x.grad

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])


def test_gradcheck_of_writes_through_views():
    a = tg.randn(4, 4, dtype=tg.float64, requires_grad=True)
    b = tg.randn(2, 2, dtype=tg.float64, requires_grad=True)

    def func(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x[0, :2] = b[0] * 2
        x[x > 1] = 0.5
        return x

    assert tg.check.gradcheck(func, (a, b))


# --- random programs mixing views and in-place writes, first order, float64 -------------------

VIEW_STEPS = [
    lambda v: v[1:],
    lambda v: v[:, 1],
    lambda v: v.t(),
    lambda v: v.narrow(0, 0, 1),
    lambda v: v.unsqueeze(0),
    lambda v: v.view(-1),
    lambda v: v.diagonal(),
    lambda v: v[...],
]
WRITES = [
    lambda v, w, lib: v.mul_(2.5),
    lambda v, w, lib: v.add_(w.sum()),
    lambda v, w, lib: v.mul_(w.sum().tanh()),
    lambda v, w, lib: v.sub_(v.detach().sin()),
    lambda v, w, lib: v.zero_(),
    lambda v, w, lib: v.copy_((w.sum() * 3).expand(v.shape)),
    lambda v, w, lib: v.fill_(1.5),
]


def _usable(view, shape, contiguous):
    return 0 not in shape and (view is not VIEW_STEPS[5] or contiguous) and (view is not VIEW_STEPS[1] or (len(shape) == 2 and shape[1] > 1)) and \
        (view is not VIEW_STEPS[2] or len(shape) <= 2) and (view is not VIEW_STEPS[6] or len(shape) >= 2)


@settings(max_examples=int(__import__("os").environ.get("TG_EXAMPLES", 60)), deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, len(VIEW_STEPS) - 1), max_size=3),
                          st.integers(0, len(WRITES) - 1), st.booleans()), min_size=1, max_size=4))
def test_random_programs_of_views_and_writes_match_torch(program):
    def run(lib):
        x = lib.arange(1.0, 13.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        w = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        y = x.sin() * 1
        names = []
        for view_steps, write, use_base in program:
            v = y
            for k in view_steps:
                data = v.data if isinstance(v, tg.Variable) else v
                if _usable(VIEW_STEPS[k], tuple(v.shape), data.is_contiguous()):
                    v = VIEW_STEPS[k](v)
            WRITES[write](v, w, lib)
            names.append(graph_names(y))
            if use_base:
                y = y * 1 + 0.25
        (y * y).sum().backward()
        return y, x.grad, w.grad, names

    ours, theirs = both(run)
    assert close(ours[0], theirs[0])
    for a, b in zip(ours[1:3], theirs[1:3]):
        assert (a is None) == (b is None) and (a is None or close(a, b)), (a, b)
    assert ours[3] == theirs[3]


def test_drawings_of_writes_through_views_match_torchs():
    from teachgrad import viz

    def program(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        s = lib.tensor(2.0, requires_grad=True)
        y = x * 1
        y[0].mul_(s)
        y[1, 1] = s
        y[y > 3] = 0.0
        v = y.t()[1]
        return v, dict(x=x, s=s, y=y, v=v)

    (ours, our_names), (theirs, their_names) = both(program)
    dot = viz.draw(ours, names=our_names).source
    assert dot == viz.draw(theirs, names=their_names).source
    assert "CopySlices" in dot and "IndexPutBackward0" in dot and "AsStridedBackward0" not in dot


GETITEMS = {
    "index tensor": lambda y, lib: y[lib.tensor([0, 2, 0])],
    "list": lambda y, lib: y[[2, 1]],
    "mask": lambda y, lib: y[y > 4],
    "row mask": lambda y, lib: y[lib.tensor([True, False, True])],
    "slice then list": lambda y, lib: y[:, [0, 2, 2]],
    "int then list": lambda y, lib: y[0, [0, 2]],
    "list then slice": lambda y, lib: y[[0, 1], 1:],
    "list, slice, list": lambda y, lib: y[[0, 2], :, None][:, 1:] if False else y[[0, 2], 1:3],
    "two lists": lambda y, lib: y[[0, 2], [1, 3]],
    "ellipsis then list": lambda y, lib: y[..., [3, 0]],
}


@pytest.mark.parametrize("name", GETITEMS)
def test_tensor_indexing_mixed_with_basic_indexing(name):
    """Mixed indices (`y[:, [0, 2]]`) once broke backward: index_put_ was handed a slice."""
    read = GETITEMS[name]

    def run(lib):
        x = root(lib)
        y = x * 1
        r = read(y, lib)
        (r * r).sum().backward()
        return r, x.grad, graph_names(r), r._is_view()

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])
    assert ours[2:] == theirs[2:]


def test_index_nodes_show_and_free_their_indices_as_torch():
    def run(lib):
        x = root(lib)
        r = (x * 1)[:, lib.tensor([0, 2])]
        shown = [None if i is None else i.tolist() for i in r.grad_fn._saved_indices]
        r.sum().backward(retain_graph=True)
        r.sum().backward()
        return shown, x.grad

    ours, theirs = both(run)
    assert ours[0] == theirs[0] == [None, [0, 2]]
    assert close(ours[1], theirs[1])

    def twice(lib):
        x = root(lib)
        r = (x * 1)[lib.tensor([0, 2])]
        r.sum().backward()
        r.sum().backward()

    raises_like_torch(twice)

    def saved_after_free(lib):
        x = root(lib)
        r = (x * 1)[lib.tensor([0, 2])]
        r.sum().backward()
        return r.grad_fn._saved_indices

    raises_like_torch(saved_after_free)


def test_gradients_through_copyslices_are_fitted_to_the_base_like_any_node():
    """A float64 gradient seeded into a float32 base written through a view comes back float32 (as torch)."""
    def run(lib):
        x = lib.ones(2, 3, requires_grad=True)
        s = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        y = x * 1
        y[0].mul_(s)
        v = y[1:]
        (v.sum() + y.sum()).backward()
        return x.grad, s.grad

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[1], theirs[1])


# --- views returned by a custom Function (torch's CreationMeta::IN_CUSTOM_FUNCTION) ---------------

def _custom_functions(lib):
    class ViewOfInput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class InputAsIs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class SliceOfSecond(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 1, y[1:]

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a, lib.cat([grad_b[:1] * 0, grad_b])

    return ViewOfInput, InputAsIs, SliceOfSecond


CUSTOM_VIEW_PROGRAMS = {
    "view of the input, written": lambda lib, F, x: F[0].apply(x).mul_(3),
    "input as-is, written": lambda lib, F, x: F[1].apply(x).add_(1),
    "view of a leaf input, written": lambda lib, F, x: F[0].apply(lib.ones(3, requires_grad=True)).mul_(2),
    "second output, a view, written": lambda lib, F, x: F[2].apply(x * 2, x)[1].mul_(2),
    "a view of the output, written": lambda lib, F, x: F[0].apply(x)[1:].mul_(2),
    "the base written, then the view read": lambda lib, F, x: (lambda y: (x.mul_(2), y.grad_fn))(F[0].apply(x)),
}


@pytest.mark.parametrize("name", CUSTOM_VIEW_PROGRAMS)
def test_a_view_a_custom_function_returns_cannot_be_written_in_place(name):
    """torch refuses: the in-place would override the custom backward (teachgrad once gave a number)."""
    from tests.twins import same

    def snippet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        CUSTOM_VIEW_PROGRAMS[name](lib, _custom_functions(lib), x)
    same(snippet)


def test_a_custom_functions_view_outputs_know_their_base():
    from tests.twins import same

    def snippet(lib):
        ViewOfInput, InputAsIs, SliceOfSecond = _custom_functions(lib)
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        a, b, (c, d) = ViewOfInput.apply(x), InputAsIs.apply(x), SliceOfSecond.apply(x, x)
        out = [(v._is_view(), v._base is x, v is x, v.requires_grad, v.grad_fn.name() if v.grad_fn else None)
               for v in (a, b, c, d)]
        (a.sum() + b.sum() + d.sum()).backward()
        return out, x.grad_fn.name(), a._version, lib.autograd.grad((a * b).sum(), x, allow_unused=True)
    same(snippet)


def test_an_index_of_several_basic_items_in_no_grad_mode_is_torchs_view():
    """`x[1, 2:, None]` with nothing recorded: the kernels run on the data and the result is marked a view once per
    view op (teachgrad/rules/views.py, apply_view_ops); it must be the same view torch makes, with the same refusals."""
    def run(lib):
        y = lib.arange(24.0).view(2, 3, 4) * 1
        with lib.no_grad():
            v = y[1, 1:, None, ..., ::2]
        w = y[0][1:].unsqueeze(1)[..., ::2]   # the same view, one op at a time, outside no_grad
        y.add_(1)                                 # both see the write, through the shared version counter
        return v, v._base is y, v._version == y._version, w, v.shape, v.stride(), v.storage_offset()

    ours, theirs = both(run)
    assert close(ours[0], theirs[0]) and close(ours[3], theirs[3])
    assert ours[1:3] == theirs[1:3] == (True, True) and ours[4:] == theirs[4:]

    def written_in_grad_mode_with_a_grad_operand(lib):
        x = lib.ones(2, 1, 2, requires_grad=True)
        y = lib.zeros(2, 3, 4)
        with lib.no_grad():
            v = y[1, 1:, None, ..., ::2]
        v.add_(x)

    def of_a_base_that_requires_grad_then_written(lib):
        y = lib.ones(2, 3, 4, requires_grad=True) * 1
        with lib.no_grad():
            v = y[1, 1:, None]
        v.mul_(2)

    for fn in (written_in_grad_mode_with_a_grad_operand, of_a_base_that_requires_grad_then_written):
        raises_like_torch(fn)
