"""The engine and Variable rules, each compared with torch: accumulation, retain_graph, hooks,
inputs=, tg.grad, create_graph, in-place rules, version checks, grad modes and errors."""
import re
import threading

import pytest
import torch

import teachgrad as tg

from .helpers import close, pair


def both(fn):
    """Run fn(lib) for teachgrad and torch; return both results."""
    return fn(tg), fn(torch)


def raises_like_torch(fn):
    """fn(lib) raises under both libraries: same exception type, same message (up to the class name)."""
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(tg)
    norm = lambda e: str(e.value).replace("Variable", "Tensor").split("\n")[0]
    assert norm(ours) == norm(theirs), (str(ours.value), str(theirs.value))


def test_p_q_s_example():
    def run(lib):
        p, q, s = (lib.tensor(v, requires_grad=True) for v in (3.0, 5.0, 2.0))
        t = (p + q) * s
        t.backward()
        return t, p.grad, q.grad, s.grad
    ours, theirs = both(run)
    assert [float(x) for x in ours] == [float(x) for x in theirs] == [16.0, 2.0, 2.0, 8.0]


def test_accumulation_with_retain_graph_and_zero():
    def run(lib):
        x = lib.eye(4, 5, requires_grad=True)
        out = (x + 1).pow(2).t()
        seen = []
        out.backward(lib.ones_like(out), retain_graph=True)
        seen.append(x.grad.clone())
        out.backward(lib.ones_like(out), retain_graph=True)
        seen.append(x.grad.clone())
        x.grad.zero_()
        out.backward(lib.ones_like(out))
        seen.append(x.grad.clone())
        return seen
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        assert close(a, b)
    assert ours[1].data[0, 0] == 8 and ours[1].data[0, 1] == 4 and ours[2].data[0, 0] == 4


def test_grad_accumulates_in_place_like_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        return g, x.grad, g is x.grad
    (g1, x1, same1), (g2, x2, same2) = both(run)
    assert same1 and same2 and close(g1, g2)


def test_shared_gradient_is_not_aliased_between_leaves():
    a, b = tg.tensor(1.0, requires_grad=True), tg.tensor(2.0, requires_grad=True)
    (a + b).backward()
    a.grad.zero_()
    assert b.grad.item() == 1.0


def test_second_backward_without_retain_graph_raises():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    raises_like_torch(run)


def test_second_backward_through_nodes_that_saved_nothing_is_fine():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    ours, theirs = both(run)
    assert close(ours, theirs)


def test_saved_tensors_freed_after_backward():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.sum().backward()
        return y.grad_fn._saved_self
    raises_like_torch(run)


def test_saved_tensor_attributes_like_torch():
    x_ours, x_theirs = pair([1.0, 2.0])
    y_ours, y_theirs = x_ours.exp(), x_theirs.exp()
    assert close(y_ours.grad_fn._saved_result, y_theirs.grad_fn._saved_result)
    assert "_saved_result" in dir(y_ours.grad_fn)


def test_implicit_gradient_needs_a_scalar():
    raises_like_torch(lambda lib: (lib.ones(3, requires_grad=True) * 2).backward())


def test_backward_of_something_that_does_not_require_grad():
    raises_like_torch(lambda lib: lib.ones(3).sum().backward())


def test_gradient_of_wrong_shape():
    raises_like_torch(lambda lib: (lib.ones(3, requires_grad=True) * 2).backward(lib.ones(2)))


def test_requires_grad_on_integer_tensor():
    raises_like_torch(lambda lib: lib.tensor([1, 2]).requires_grad_())
    with pytest.raises(RuntimeError, match="floating point"):
        tg.tensor([1, 2], requires_grad=True)


def test_requires_grad_only_settable_on_leaves():
    def run(lib):
        y = lib.ones(2, requires_grad=True) * 2
        y.requires_grad = False
    raises_like_torch(run)


def test_in_place_on_leaf_that_requires_grad():
    raises_like_torch(lambda lib: lib.ones(2, requires_grad=True).add_(1))

    def under_no_grad(lib):
        w = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            w -= 0.5
        return w
    ours, theirs = both(under_no_grad)
    assert close(ours, theirs) and ours.requires_grad and ours.is_leaf


def test_in_place_change_to_a_saved_tensor_is_caught():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        with lib.no_grad():
            y.mul_(2)
        y.sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tg)
    for e in (ours, theirs):
        assert "modified by an inplace operation" in str(e.value)
        assert "is at version 1; expected version 0 instead" in str(e.value)


def test_in_place_on_non_leaf_records_the_op():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y += 1
        y *= x
        y.sum().backward()
        return y, x.grad
    (y1, g1), (y2, g2) = both(run)
    assert close(y1, y2) and close(g1, g2)
    assert type(y1.grad_fn).__name__ == type(y2.grad_fn).__name__ == "MulBackward0"


def test_in_place_bumps_version():
    x = tg.ones(3)
    before = x.data._version
    x.add_(1)
    assert x.data._version == before + 1


def test_unsupported_operand_type():
    def run(lib):
        return lib.ones(2) + "a"
    with pytest.raises(TypeError, match="unsupported operand type"):
        run(tg)
    with pytest.raises(TypeError):
        run(torch)


def test_device_mismatch():
    raises_like_torch(lambda lib: lib.ones(2, device="meta") + lib.ones(2))


def test_shape_mismatch():
    raises_like_torch(lambda lib: lib.ones(2) * lib.ones(3))


def test_retain_grad_and_hooks():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(g.clone()))
        x.register_hook(lambda g: g * 10)
        (y * y).sum().backward()
        return y.grad, x.grad, seen[0]
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        assert close(a, b)


def test_hook_on_tensor_that_does_not_require_grad():
    raises_like_torch(lambda lib: lib.ones(2).register_hook(lambda g: g))


def test_backward_inputs_accumulates_only_there():
    def run(lib):
        a, b = lib.tensor(2.0, requires_grad=True), lib.tensor(3.0, requires_grad=True)
        (a * b).backward(inputs=[a])
        return a.grad, b.grad
    (a1, b1), (a2, b2) = both(run)
    assert close(a1, a2) and b1 is None and b2 is None


def test_grad_function_leaves_dot_grad_alone():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        (g,) = lib.autograd.grad(y, x) if lib is torch else lib.grad(y, x)
        return g, x.grad
    (g1, x1), (g2, x2) = both(run)
    assert close(g1, g2) and x1 is None and x2 is None
    assert isinstance(g1, tg.Variable)


def test_grad_unused_input():
    def run(lib):
        x, z = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), [x, z])
    raises_like_torch(run)

    def allowed(lib):
        x, z = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)[1]
    assert both(allowed) == (None, None)


def test_grad_with_respect_to_non_leaf():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        y = (h * 3).sum()
        return lib.autograd.grad(y, h)[0]
    ours, theirs = both(run)
    assert close(ours, theirs)


def test_higher_order_gradients():
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
        y = (x.sin() * x ** 3).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (k,) = lib.autograd.grad(h.sum(), x)
        return g, h, k
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        assert close(a, b)
    assert ours[0].grad_fn is not None


def test_create_graph_backward_keeps_graph_in_grad():
    def run(lib):
        x = lib.tensor(3.0, requires_grad=True)
        (x ** 3).backward(create_graph=True)
        g = x.grad
        x.grad = None
        g.backward()
        return g, x.grad
    (g1, x1), (g2, x2) = both(run)
    assert close(g1, g2) and close(x1, x2) and float(x1) == 18.0


def test_hessian_vector_product():
    w_ours, w_theirs = pair([0.3, -0.2, 0.9])
    v = torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64)

    def f(w):
        return (w.exp() * w).sum() + (w[0] * w[1]) ** 2

    def hvp(lib, w):
        (g,) = lib.autograd.grad(f(w), w, create_graph=True)
        return lib.autograd.grad((g * (tg.Variable(v) if lib is tg else v)).sum(), w)[0]
    assert close(hvp(tg, w_ours), hvp(torch, w_theirs))


def test_long_chain_has_no_recursion_limit():
    x = tg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_diamond_sums_gradients():
    def run(lib):
        x = lib.tensor(2.0, requires_grad=True)
        a, b = x * 3, x.exp()
        (a * b).backward()
        return x.grad
    ours, theirs = both(run)
    assert close(ours, theirs)


def test_backward_order_matches_torch():
    def run(lib):
        x, w = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0], requires_grad=True)
        a = x * w
        b = a.exp()
        c = (a + b).sum()
        return c
    ours, theirs = both(run)
    from teachgrad.core.engine import record_backward
    with record_backward() as steps:
        ours.backward()
    order_ours = [type(s.node).__name__ for s in steps]
    order_theirs, handles, stack, seen = [], [], [theirs.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        handles.append(node.register_hook(lambda gi, go, n=node: order_theirs.append(type(n).__name__)))
        stack.extend(n for n, _ in node.next_functions)
    theirs.backward()
    assert order_ours == order_theirs


def test_grad_modes():
    x = tg.ones(2, requires_grad=True)
    with tg.no_grad():
        assert not tg.is_grad_enabled()
        y = x * 2
        with tg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad
    with tg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tg.is_grad_enabled()

    @tg.no_grad()
    def infer(v):
        return v * 2
    assert not infer(x).requires_grad
    tg.set_grad_enabled(False)
    assert not tg.is_grad_enabled()
    tg.set_grad_enabled(True)


def test_grad_mode_is_thread_local():
    seen = []
    with tg.no_grad():
        t = threading.Thread(target=lambda: seen.append(tg.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_detach_shares_storage():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x.detach()
        d[0] = 5.0
        return x, d
    (x1, d1), (x2, d2) = both(run)
    assert close(x1, x2) and not d1.requires_grad and d1.is_leaf
    assert x1.data.data_ptr() == d1.data.data_ptr()


def test_data_is_the_same_tensor_object():
    t = torch.ones(3)
    v = tg.Variable(t)
    assert v.data is t and v.data is v.data


def test_a_variables_repr_has_no_address_and_a_nodes_has_one_as_torchs():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "Variable([1., 2.], requires_grad=True)"
    assert repr((x * 2).sum()) == "Variable(6., grad_fn=<SumBackward0>)"
    node, t = (x * 2).grad_fn, torch.tensor([1.0, 2.0], requires_grad=True)
    address = re.compile(r" at 0x[0-9a-f]+>$")
    assert address.sub(">", repr(node)) == address.sub(">", repr((t * 2).grad_fn)) == "<MulBackward0 object>"
    assert repr(node) == f"<MulBackward0 object at {id(node):#x}>"
    assert address.sub(">", repr(node.next_functions[0][0])) == "<AccumulateGrad object>"
    assert repr(tg.ones(2, 2)) == "Variable([[1., 1.],\n          [1., 1.]])"


def test_next_functions_and_accumulate_grad():
    def run(lib):
        p, q, s = (lib.tensor(v, requires_grad=True) for v in (3.0, 5.0, 2.0))
        t = (p + q) * s
        fns = t.grad_fn.next_functions
        return [(type(n).__name__, i) for n, i in fns], fns[1][0].variable is s, t.grad_fn.name()
    ours, theirs = both(run)
    assert ours == theirs
    x = tg.ones(2, requires_grad=True)
    assert (x * 2).grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"



def test_next_functions_is_read_only_as_torch():
    """The engine reads a node's edges from `_next_nodes`/`_input_nrs`: writing `next_functions` would
    silently change nothing, so it is refused with torch's message."""
    def run(lib):
        y = lib.ones(2, requires_grad=True) * 2
        try:
            y.grad_fn.next_functions = ()
        except AttributeError as error:
            return str(error), len(y.grad_fn.next_functions)
    ours, theirs = both(run)
    assert ours == theirs == ("attribute 'next_functions' of 'MulBackward0' objects is not writable", 2)

def test_meta_device():
    x = tg.ones(3, 4, device="meta", requires_grad=True)
    w = tg.ones(4, 2, device="meta", requires_grad=True)
    loss = (x @ w).sigmoid().sum()
    loss.backward()
    assert x.grad.device.type == "meta" and x.grad.shape == (3, 4) and w.grad.shape == (4, 2)


def test_dtype_follows_data():
    x = tg.ones(3, dtype=torch.float64, requires_grad=True)
    (x.float() * 2).sum().backward()
    assert x.grad.dtype == torch.float64


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_device():
    x = tg.ones(3, requires_grad=True)
    y = x.cuda()
    (y * y).sum().backward()
    assert x.grad.device.type == "cpu" and y.device.type == "cuda"
    z = tg.ones(3, device="cuda", requires_grad=True)
    (z.exp()).sum().backward()
    assert z.grad.device.type == "cuda"


def test_numpy_refused_while_requiring_grad():
    raises_like_torch(lambda lib: lib.ones(2, requires_grad=True).numpy())


def test_non_leaf_grad_is_none_without_retain_grad():
    x = tg.ones(2, requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None
    assert x.grad is not None


def test_saved_none_stays_none_after_backward():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, lib.zeros(2))
        loss.backward()
        return loss.grad_fn._saved_weight
    assert both(run) == (None, None)

    def freed(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, lib.zeros(2))
        loss.backward()
        return loss.grad_fn._saved_self
    raises_like_torch(freed)


def test_modified_saved_tensor_message_names_the_op_like_torch():
    def run(lib):
        w = lib.ones(5, 3, requires_grad=True)
        y = w.exp()
        z = y.exp()
        y.detach().mul_(2)
        z.sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tg)
    assert str(theirs.value).startswith(str(ours.value))
    assert "[torch.FloatTensor [5, 3]], which is output 0 of Exp, is at version 1" in str(ours.value)


def test_iteration_and_numpy_conversion_like_torch():
    import numpy as np
    raises_like_torch(lambda lib: list(lib.tensor(1.0)))
    raises_like_torch(lambda lib: np.asarray(lib.ones(2, requires_grad=True)))
    rows_ours, rows_theirs = both(lambda lib: [r.sum() for r in lib.ones(3, 2, requires_grad=True)])
    assert [type(r.grad_fn).__name__ for r in rows_ours] == [type(r.grad_fn).__name__ for r in rows_theirs]
    assert np.asarray(tg.ones(2)).tolist() == [1.0, 1.0]


def test_non_leaf_grad_warns_like_torch_and_nodes_are_callable():
    for lib in (tg, torch):
        y = lib.ones(2, requires_grad=True) * 2
        with pytest.warns(UserWarning, match="not a leaf"):
            assert y.grad is None
    raises_like_torch(lambda lib: setattr(lib.tensor([1, 2]), "requires_grad", True))
    ours, theirs = both(lambda lib: (lib.tensor(3.0, requires_grad=True) * 2).grad_fn(lib.tensor(1.0)))
    assert close(ours[0], theirs[0])


def test_gradient_on_another_device():
    raises_like_torch(lambda lib: (lib.ones(2, device="meta", requires_grad=True) * 2).backward(lib.ones(2)))


def test_setitem():
    def fill(lib):
        x = lib.zeros(3)
        x[1] = 5.0
        x[lib.tensor([0, 2])] = lib.tensor([1.0, 2.0])
        return x
    ours, theirs = both(fill)
    assert close(ours, theirs)

    def into_leaf(lib):
        x = lib.ones(3, requires_grad=True)
        x[0] = 2.0
    raises_like_torch(into_leaf)
    y = tg.ones(3, requires_grad=True) * 2
    with tg.no_grad():
        y[0] = 1.0
    assert y.tolist() == [1.0, 2.0, 2.0] and y.grad_fn.name() == "MulBackward0"   # no_grad: not recorded


def test_leaf_grad_shares_memory_with_nothing_a_user_holds():
    """A leaf may keep a gradient without copying it only when no one else can hold that tensor."""
    from teachgrad.core.engine import record_backward

    def twice_more(x):
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        assert x.grad.tolist() == [6.0, 6.0, 6.0]

    x, seen = tg.ones(3, requires_grad=True), []
    y = x * 2
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs[0]))
    y.sum().backward()
    twice_more(x)
    assert seen[0].tolist() == [2.0, 2.0, 2.0], "a node hook's gradient became x.grad"

    x, seen = tg.ones(3, requires_grad=True), []
    x.register_hook(seen.append)
    (x * 2).sum().backward()
    twice_more(x)
    assert seen[0].tolist() == [2.0, 2.0, 2.0], "a tensor hook's gradient became x.grad"

    x = tg.ones(3, requires_grad=True)
    with record_backward() as steps:
        (x * 2).sum().backward()
    twice_more(x)
    assert steps[-1].grad_outputs[0].tolist() == [2.0, 2.0, 2.0], "a recorded gradient became x.grad"

    g, z = tg.ones(3), tg.ones(3, requires_grad=True)
    z.backward(g)
    z.grad.add_(1)
    assert g.tolist() == [1.0, 1.0, 1.0], "the user's gradient became z.grad"


def test_leaf_hook_registered_before_the_graph_exists():
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        seen = []
        handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        handle.remove()
        (x * 1).sum().backward()
        return seen, x.grad.tolist()
    assert both(run)[0] == both(run)[1] == ([[2.0, 2.0], [3.0, 3.0]], [51.0, 51.0])


def test_as_many_gradients_as_outputs():
    def run(lib):
        a = lib.ones(1, requires_grad=True) * 1
        lib.autograd.backward([a, a * 2], [lib.ones(1)])
    raises_like_torch(run)
