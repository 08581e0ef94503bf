"""The exercise checks: right answers in any reasonable form pass, wrong ones get a hint, nothing raises."""
import math
import re

import pytest
import torch

import teachgrad as tg
from teachgrad import exercises as ex
from teachgrad.exercises.nb04_build_your_own_engine import _graph_of


def _raise(*args, **kwargs):
    raise NotImplementedError()


def _not_yet(verdict):
    return not verdict and verdict.message.startswith("not yet") and "hint:" in verdict.message


def test_verdict_prints_as_its_message():
    v = ex.check_scale(0.5)
    assert bool(v) and repr(v).startswith("✓ correct")
    method = ex.check_scale(1.0, hint=2)
    assert not method and "method:" in method.message and "hint:" not in method.message


def test_00_dg():
    assert ex.check_dg(lambda x: 3 * math.cos(3 * x) * math.exp(math.sin(3 * x)))
    # a float32 tensor answer (the learner used torch): accepted
    assert ex.check_dg(lambda x: (3 * torch.cos(torch.tensor(3 * x, dtype=torch.float32))
                                  * torch.exp(torch.sin(torch.tensor(3 * x, dtype=torch.float32)))))
    # written for tensors (x.sin()): accepted
    assert ex.check_dg(lambda x: 3 * (3 * x).cos() * (3 * x).sin().exp())
    assert _not_yet(ex.check_dg(lambda x: None))
    assert _not_yet(ex.check_dg(lambda x: math.cos(3 * x) * math.exp(math.sin(3 * x))))
    assert _not_yet(ex.check_dg(_raise))
    hint = ex.check_dg(lambda x: 0.0).message
    assert "3 * math.cos" not in hint and "cos(3" not in hint


def test_01_grads_in_any_form():
    assert ex.check_grads({"p": 170.0, "q": 102.0, "s": 34.0})
    assert ex.check_grads({"p": torch.tensor(170.0), "q": tg.tensor(102.0), "s": 34})
    assert ex.check_grads((170, 102, 34))
    assert _not_yet(ex.check_grads({"p": None, "q": None, "s": None}))
    assert _not_yet(ex.check_grads({"p": 17.0, "q": 102.0, "s": 34.0}))
    assert "170" not in ex.check_grads({"p": 1, "q": 1, "s": 1}, hint=2).message


def test_02_predictions_lists_or_tuples():
    right = {"c": (False, True, "MulBackward0"), "d": (True, False, None), "e": (False, True, "ExpBackward0")}
    assert ex.check_predictions(right)
    assert ex.check_predictions({k: list(v) for k, v in right.items()})
    assert _not_yet(ex.check_predictions({"c": None, "d": None, "e": None}))
    assert _not_yet(ex.check_predictions({**right, "d": (False, False, None)}))


def test_03_count_and_sum():
    assert ex.check_count_and_sum(3, 10.0)
    assert ex.check_count_and_sum(3, torch.tensor(10.0, dtype=torch.float64))
    assert _not_yet(ex.check_count_and_sum(2, 10.0))
    assert _not_yet(ex.check_count_and_sum(None, None))


def _engine(root, leaves):
    """The dependency-counted engine (the notebook's solution, written again here)."""
    counts, stack = {root.grad_fn: 0}, [root.grad_fn]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None:
                if nxt not in counts:
                    stack.append(nxt)
                counts[nxt] = counts.get(nxt, 0) + 1
    data = root.data if isinstance(root, tg.Variable) else root
    grads, ready, found = {root.grad_fn: torch.ones_like(data)}, [root.grad_fn], {}
    while ready:
        node = ready.pop()
        grad = grads.pop(node)
        if hasattr(node, "variable"):
            found[id(node.variable)] = grad
            continue
        sent = node(grad)
        for (nxt, _), g in zip(node.next_functions, sent if isinstance(sent, tuple) else (sent,)):
            if nxt is None:
                continue
            grads[nxt] = g if nxt not in grads else grads[nxt] + g
            counts[nxt] -= 1
            if counts[nxt] == 0:
                ready.append(nxt)
    return [found.get(id(x)) for x in leaves]


def _recursive(root, leaves):
    found = {}

    def visit(node, grad):
        if hasattr(node, "variable"):
            found[id(node.variable)] = found.get(id(node.variable), 0) + grad
            return
        sent = node(grad)
        for (nxt, _), g in zip(node.next_functions, sent if isinstance(sent, tuple) else (sent,)):
            if nxt is not None:
                visit(nxt, g)
    data = root.data if isinstance(root, tg.Variable) else root
    visit(root.grad_fn, torch.ones_like(data))
    return [found.get(id(x)) for x in leaves]


def test_04_my_grad():
    assert ex.check_my_grad(_engine)
    verdict = ex.check_my_grad(_recursive)        # right numbers, but nodes run more than once
    assert _not_yet(verdict) and "times" in verdict.message
    assert _not_yet(ex.check_my_grad(_raise))
    assert _not_yet(ex.check_my_grad(lambda root, leaves: None))


def test_04_a_leaf_the_engine_never_reached_is_named_as_such():
    def stops_early(root, leaves):         # runs only the root's node: no leaf is ever reached
        return [None for _ in leaves]
    verdict = ex.check_my_grad(stops_early)
    assert _not_yet(verdict) and "no gradient for leaf 0" in verdict.message
    assert "never reached" in verdict.message and "AccumulateGrad" in verdict.message


def test_04_method_hint_runs_a_node_as_the_notebook_does():
    method = ex.check_my_grad(lambda root, leaves: None, hint=2).message
    assert "run(node, grad)" in method and "call node(grad)" not in method


def test_04_random_graphs_same_in_both_libraries():
    for seed in range(5):
        root, leaves = ex.random_graph(tg, seed)
        root_t, leaves_t = ex.random_graph(torch, seed)
        for g, g_t in zip(tg.grad(root, leaves), torch.autograd.grad(root_t, leaves_t)):
            assert torch.allclose(g.data, g_t)


def test_05_scale():
    assert ex.check_scale(0.5) and ex.check_scale(torch.tensor(0.5)) and ex.check_scale(1 / 2)
    assert _not_yet(ex.check_scale(None)) and _not_yet(ex.check_scale(1.0))


def test_06_second_backward():
    right = {"(a + b).sum()": True, "(a * b).sum()": False, "a.reshape(2, 2).sum()": True,
             "a.exp().sum()": False, "(a - b).mean()": True, "(a + b).relu().sum()": False}
    assert ex.check_second_backward(right)
    assert _not_yet(ex.check_second_backward({**right, "a.exp().sum()": True}))
    assert _not_yet(ex.check_second_backward({k: None for k in right}))


def test_07_frozen_loss():
    assert ex.check_frozen_loss(lambda lib, x, w, b: ((lib.matmul(x, w.detach()) + b) ** 2).mean())

    def with_no_grad(lib, x, w, b):
        with lib.no_grad():
            xw = lib.matmul(x, w)
        return ((xw + b) ** 2).mean()
    assert ex.check_frozen_loss(with_no_grad)
    assert _not_yet(ex.check_frozen_loss(lambda lib, x, w, b: ((lib.matmul(x, w) + b) ** 2).mean()))
    assert _not_yet(ex.check_frozen_loss(_raise))


def test_10_w_grad_recomputes_and_accepts_forms():
    torch.manual_seed(0)
    w = torch.randn(5, 3)
    b = torch.randn(3)
    dL_dz = (torch.sigmoid(torch.ones(5) @ w + b) - 0) / 3
    answer = torch.outer(torch.ones(5), dL_dz)
    torch.manual_seed(123)                      # global state changed: the check must not care
    assert ex.check_w_grad(answer)
    assert ex.check_w_grad(answer.double())
    assert ex.check_w_grad(answer.tolist())
    assert ex.check_w_grad(tg.Variable(answer))
    assert _not_yet(ex.check_w_grad(None)) and _not_yet(ex.check_w_grad(answer.T))
    assert _not_yet(ex.check_w_grad(answer * 2))


def test_11_xsinx():
    class Right:
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.sin(x)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * (x.sin() + x * x.cos())

    class Forgetful(Right):
        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return x.sin() + x * x.cos()

    class Stub(Right):
        @staticmethod
        def backward(ctx, grad_output):
            return None

    assert ex.check_xsinx(Right)
    assert _not_yet(ex.check_xsinx(Forgetful)) and _not_yet(ex.check_xsinx(Stub))


def test_12_momentum():
    def right(params, velocities, lr, beta):
        for p, v in zip(params, velocities):
            v.mul_(beta).add_(p.grad)
            p -= lr * v

    def rebinding(params, velocities, lr, beta):      # v = ... does not change the check's velocities
        for p, v in zip(params, velocities):
            v = beta * v + p.grad
            p -= lr * v
    assert ex.check_momentum(right, steps=30, target=1.0)
    assert _not_yet(ex.check_momentum(rebinding, steps=30, target=1.0))
    still = ex.check_momentum(lambda *a: None, steps=5, target=1.0)
    assert _not_yet(still) and "did not move" in still.message, still.message
    assert "mul_(beta)" not in ex.check_momentum(rebinding, steps=5, hint=2).message


def test_13_third_derivative_forgotten_create_graph_gives_a_hint():
    def right(fn, x):
        (d1,) = tg.grad(fn(x), x, create_graph=True)
        (d2,) = tg.grad(d1, x, create_graph=True)
        (d3,) = tg.grad(d2, x)
        return d3

    def forgetful(fn, x):
        (d1,) = tg.grad(fn(x), x)
        (d2,) = tg.grad(d1, x)
        return tg.grad(d2, x)[0]
    assert ex.check_third_derivative(right)
    verdict = ex.check_third_derivative(forgetful)
    assert _not_yet(verdict) and "does not require grad" in verdict.message
    assert _not_yet(ex.check_third_derivative(lambda fn, x: None))


def test_14_meta_grads_refuses_zeros_made_by_hand():
    def right(sizes, batch, device="meta"):
        weights = [tg.randn(a, b, device=device, requires_grad=True) for a, b in zip(sizes, sizes[1:])]
        h = tg.randn(batch, sizes[0], device=device)
        for k, weight in enumerate(weights):
            h = h @ weight
            if k < len(weights) - 1:
                h = h.tanh()
        h.sum().backward()
        return [weight.grad for weight in weights]

    def zeros(sizes, batch, device="meta"):
        return [tg.zeros(a, b, device=device) for a, b in zip(sizes, sizes[1:])]
    assert ex.check_meta_grads(right)
    assert _not_yet(ex.check_meta_grads(zeros))
    assert _not_yet(ex.check_meta_grads(lambda sizes, batch, device="meta": None))


def _backprop(X, y, W1, b1, W2, b2):
    pre = X @ W1 + b1
    h = pre.tanh()
    logits = h @ W2 + b2
    n = X.shape[0]
    dlogits = (logits.softmax(dim=1) - torch.nn.functional.one_hot(y, logits.shape[1]).double()) / n
    dh = dlogits @ W2.T
    dpre = dh * (1 - h ** 2)
    return dict(dlogits=dlogits, dW2=h.T @ dlogits, db2=dlogits.sum(0), dh=dh, dpre=dpre,
                dW1=X.T @ dpre, db1=dpre.sum(0))


def test_15_backprop():
    verdict = ex.check_backprop(_backprop)
    assert verdict and "dW1" in verdict.message
    wrong = lambda *a: {**_backprop(*a), "dpre": _backprop(*a)["dh"]}   # forgot tanh'
    verdict = ex.check_backprop(wrong)
    assert _not_yet(verdict) and "dpre" in verdict.message and "differs" in verdict.message
    assert _not_yet(ex.check_backprop(_raise))


@pytest.mark.parametrize("check, answer", [(ex.check_scale, 1.0), (ex.check_grads, {"p": 1}),
                                           (ex.check_count_and_sum, None)])
def test_same_verdict_every_time(check, answer):
    args = (answer,) if check is not ex.check_count_and_sum else (answer, answer)
    assert len({check(*args).message for _ in range(3)}) == 1


# --- issue 24: 04's topological-sort engine, 08's write through a view ---------------------------------

def _run(node, grad):
    sent = node(grad)
    return sent if isinstance(sent, tuple) else (sent,)


def _topological_order(root):
    """Depth-first, with an explicit stack; the post-order reversed (the notebook's solution, written again)."""
    order, seen, stack = [], set(), [(root.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif node not in seen:
            seen.add(node)
            stack.append((node, True))
            stack.extend((nxt, False) for nxt, _ in node.next_functions if nxt is not None and nxt not in seen)
    return order[::-1]


def _recursive_order(root):
    order, seen = [], set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    visit(nxt)
            order.append(node)
    visit(root.grad_fn)
    return order[::-1]


def _topo_grad_with(order_of):
    def topo_grad(root, leaves):
        data = root.data if isinstance(root, tg.Variable) else root
        grads, found = {root.grad_fn: torch.ones_like(data)}, {}
        for node in order_of(root):
            grad = grads.pop(node, None)
            if grad is None:
                continue
            if hasattr(node, "variable"):
                found[id(node.variable)] = grad
                continue
            for (nxt, _), g in zip(node.next_functions, _run(node, grad)):
                if nxt is not None and g is not None:
                    grads[nxt] = g if nxt not in grads else grads[nxt] + g
        return [found.get(id(x)) for x in leaves]
    return topo_grad


def test_04_topo_grad_accepts_a_topological_engine_on_teachgrad_and_torch_graphs():
    assert ex.check_topo_grad(_topological_order, _topo_grad_with(_topological_order))


def test_04_topo_grad_refuses_wrong_orders_and_engines_with_a_hint():
    right = _topo_grad_with(_topological_order)
    reversed_order = ex.check_topo_grad(lambda root: _topological_order(root)[::-1], right)
    assert _not_yet(reversed_order) and "reversed" in reversed_order.message
    too_deep = ex.check_topo_grad(_recursive_order, right)          # right on small graphs, not on the deep chain
    assert _not_yet(too_deep) and "recursion limit" in too_deep.message
    missing = ex.check_topo_grad(lambda root: _topological_order(root)[:-1], right)
    assert _not_yet(missing) and "misses 1" in missing.message
    twice = ex.check_topo_grad(lambda root: _topological_order(root) + [root.grad_fn], right)
    assert _not_yet(twice) and "twice" in twice.message
    breadth_first = ex.check_topo_grad(lambda root: _graph_of(root.grad_fn)[0], right)   # not topological
    assert _not_yet(breadth_first) and "before the" in breadth_first.message
    for verdict in (breadth_first, missing):       # "an ExpBackward0", "an AccumulateGrad", never "a ExpBackward0"
        assert not re.search(r"\ba [AEIOU]", verdict.message), verdict.message
    runs_twice = ex.check_topo_grad(_topological_order, _recursive)
    assert _not_yet(runs_twice) and "times" in runs_twice.message
    assert _not_yet(ex.check_topo_grad(_raise, _raise))
    assert _not_yet(ex.check_topo_grad(lambda root: None, right))
    assert _not_yet(ex.check_topo_grad(lambda root: [[1], {}, 2], right))
    assert _not_yet(ex.check_topo_grad(lambda root: [(n, 0) for n in _topological_order(root)], right))
    assert _not_yet(ex.check_topo_grad(lambda root: 7, right))
    assert _not_yet(ex.check_topo_grad(_topological_order, lambda root, leaves: None))


def test_04_topo_grad_hints_name_the_method_not_the_code():
    method = ex.check_topo_grad(_raise, _raise, hint=2).message
    assert "method:" in method and "depth-first" in method and "run(node, grad)" in method
    assert "def " not in method and "order[::-1]" not in method


def test_08_view_write_in_any_form():
    right = [[0.0, 1.0, 2.0], [0.0, 4.0, -2.0]]
    assert ex.check_view_write(right)
    assert ex.check_view_write(torch.tensor(right, dtype=torch.float32))
    assert ex.check_view_write(tg.tensor(right))
    assert ex.check_view_write(tuple(tuple(row) for row in right))
    unwritten = ex.check_view_write(ex.VIEW_WRITE_W)
    assert _not_yet(unwritten) and "as if the write had not happened" in unwritten.message
    assert _not_yet(ex.check_view_write([[None] * 3] * 2))
    assert _not_yet(ex.check_view_write([0.0, 1.0, 2.0]))
    only_column_1 = ex.check_view_write([[0.0, -1.0, 2.0], [0.0, 3.0, -2.0]])
    assert _not_yet(only_column_1) and "column 1 is" in only_column_1.message
    method = ex.check_view_write(None, hint=2).message
    assert "method:" in method and "[0" not in method and "4" not in method.replace("∂", "")


def test_17_the_exercises_hand_over_no_linear_backward():
    # the student edition imports from teachgrad.exercises: nothing there may compute the exercise's rule
    assert not hasattr(ex, "linear_backward")
    from teachgrad.exercises import nb17_backprop_by_hand
    assert not hasattr(nb17_backprop_by_hand, "linear_backward")


def _backprop_by_autograd(lib):
    """An answer the exercise forbids: every gradient by lib's autograd (backward() and retain_grad())."""
    def answer(X, y, W1, b1, W2, b2):
        return ex.backprop_reference(lib, X, y, W1, b1, W2, b2)
    return answer


def _backprop_by_grad(X, y, W1, b1, W2, b2):
    """Another forbidden one: the two linear layers by torch.autograd.grad, the rest by hand."""
    W1, b1, W2, b2 = (t.clone().requires_grad_() for t in (W1, b1, W2, b2))
    pre = X @ W1 + b1
    h = pre.tanh()
    logits = h @ W2 + b2
    loss = torch.nn.functional.cross_entropy(logits, y)
    grads = torch.autograd.grad(loss, (logits, h, pre, W1, b1, W2, b2))
    return dict(zip(("dlogits", "dh", "dpre", "dW1", "db1", "dW2", "db2"), grads))


@pytest.mark.parametrize("answer", [_backprop_by_autograd(torch), _backprop_by_autograd(tg), _backprop_by_grad],
                         ids=["torch backward", "teachgrad backward", "torch.autograd.grad"])
def test_17_gradients_by_autograd_are_refused_with_a_hint(answer):
    verdict = ex.check_backprop(answer)
    assert _not_yet(verdict) and "autograd" in verdict.message, verdict.message
    assert ex.check_backprop(_backprop)          # and a hand-written answer still passes after it


@pytest.mark.parametrize("engine", [tg.grad, torch.autograd.grad], ids=["tg.grad", "torch.autograd.grad"])
def test_04_an_engine_that_calls_an_engine_is_refused_with_a_hint(engine):
    def library_engine(root, leaves):
        return engine(root, leaves, retain_graph=True)

    def any_engine(root, leaves):                 # the engine of whichever library built the graph
        return (tg.grad if isinstance(root, tg.Variable) else torch.autograd.grad)(root, leaves, retain_graph=True)
    for answer in (library_engine, any_engine):
        verdict = ex.check_my_grad(answer)
        assert _not_yet(verdict) and "engine" in verdict.message, verdict.message
        verdict = ex.check_topo_grad(_topological_order, answer)
        assert _not_yet(verdict) and "engine" in verdict.message, verdict.message
    assert ex.check_my_grad(_engine)              # and an engine of one's own still passes after it


def _pack_half(t):
    return t.dtype, t.detach().half()


def test_15_half_hooks():
    assert ex.check_half_hooks(_pack_half, lambda packed: packed[1].to(packed[0]))
    assert _not_yet(ex.check_half_hooks(lambda t: t, lambda packed: packed))          # nothing kept smaller


def test_15_half_hooks_bfloat16_is_told_its_dtype_not_half_the_bytes():
    # bfloat16 is half the bytes too: the verdict names the dtype it holds, and float16 as the one asked for
    verdict = ex.check_half_hooks(lambda t: (t.dtype, t.detach().bfloat16()), lambda packed: packed[1].to(packed[0]))
    assert _not_yet(verdict) and "bfloat16" in verdict.message and "float16" in verdict.message
    assert "half the bytes" not in verdict.message
    verdict = ex.check_half_hooks(lambda t: (t.dtype, t.tolist()), lambda p: torch.tensor(p[1], dtype=p[0]))
    assert _not_yet(verdict) and "holds no tensor" in verdict.message
    assert _not_yet(ex.check_half_hooks(_raise, _raise))


def test_15_half_hooks_unpack_must_give_back_the_stored_dtype():
    # .float() gives float32 whatever was saved: right on a float32 network, wrong on a float64 one
    verdict = ex.check_half_hooks(_pack_half, lambda packed: packed[1].float())
    assert _not_yet(verdict) and "torch.float64" in verdict.message
    verdict = ex.check_half_hooks(lambda t: t.detach().half(), lambda packed: packed.float())
    assert _not_yet(verdict)


def test_17_hint_lines_fit_a_notebook_output():
    # JupyterLab wraps a long output line wherever it runs out of room, mid-word
    message = ex.check_backprop(lambda *problem: {}).message
    assert all(len(line) <= 100 for line in message.splitlines() if not line.startswith("gradient")), message


# --- notebook 18: a batching rule by hand, a VJP from JVPs ---

def _mm_rule(a, a_bdim, b, b_bdim):
    """Each batch dim to the front; one broadcasting matrix product (the notebook's solution, written again)."""
    a = a if a_bdim is None else a.movedim(a_bdim, 0)
    b = b if b_bdim is None else b.movedim(b_bdim, 0)
    return a @ b, 0


def _mm_loop(a, a_bdim, b, b_bdim):
    pick = (lambda t, bdim, i: t if bdim is None else t.select(bdim, i))
    n = a.shape[a_bdim] if a_bdim is not None else b.shape[b_bdim]
    return tg.stack([tg.mm(pick(a, a_bdim, i), pick(b, b_bdim, i)) for i in range(n)]), 0


def test_18_mm_batch_rule_right_in_any_form_and_where_the_batch_dim_is_said():
    assert ex.check_mm_batch_rule(_mm_rule)
    as_torch = lambda *args: (_mm_rule(*args)[0].data, 0)                    # a torch tensor is an answer too
    assert ex.check_mm_batch_rule(as_torch)
    at_the_end = lambda *args: (_mm_rule(*args)[0].movedim(0, -1), -1)       # any place, said rightly
    assert ex.check_mm_batch_rule(at_the_end)


@pytest.mark.parametrize("answer, says", [
    (lambda *args: (_mm_rule(*args)[0], 1), "has shape"),                   # the batch dim is not where it says
    (lambda *args: (_mm_rule(*args)[0] * 1.01, 0), "differ"),
    (lambda *args: _mm_rule(*args)[0], "pair"),
    (lambda *args: (_mm_rule(*args)[0], 0.0), "int index"),
    (_raise, "NotImplementedError"),
    (_mm_loop, "per sample"),                                                # the batch in a Python loop
    (lambda a, ad, b, bd: (torch.func.vmap(torch.mm, in_dims=(ad, bd))(a.data, b.data), 0), "vmap"),
])
def test_18_mm_batch_rule_refuses_wrong_looped_and_vmapped_answers(answer, says):
    verdict = ex.check_mm_batch_rule(answer)
    assert _not_yet(verdict) and says in verdict.message, verdict.message
    assert len({ex.check_mm_batch_rule(answer).message for _ in range(2)} | {verdict.message}) == 1


def test_18_mm_batch_rule_refuses_teachgrads_own_vmap_however_it_is_named():
    verdict = ex.check_mm_batch_rule(lambda a, ad, b, bd: (tg.func.vmap(tg.mm, in_dims=(ad, bd))(a, b), 0))
    assert _not_yet(verdict) and "vmap" in verdict.message
    bound_before = tg.func.vmap                    # as `from teachgrad.func import vmap` at the top would
    verdict = ex.check_mm_batch_rule(lambda a, ad, b, bd: (bound_before(tg.mm, in_dims=(ad, bd))(a, b), 0))
    assert _not_yet(verdict) and "vmap" in verdict.message


def test_18_vjp_from_jvps_accepts_linearize_and_refuses_linear_transpose():
    def by_linearize(f, x, u):                     # forward mode: the linear map applied to each e_j
        _, jvp_fn = tg.func.linearize(f, x)
        return tg.stack([(u * jvp_fn(e.view(x.shape))).sum() for e in torch.eye(x.numel(), dtype=x.dtype)])
    assert ex.check_vjp_from_jvps(by_linearize)

    def by_transpose(f, x, u):                     # teachgrad's linear_transpose runs a backward pass
        return tg.func.linear_transpose(tg.func.linearize(f, x)[1], x)(u)[0]
    verdict = ex.check_vjp_from_jvps(by_transpose)
    assert _not_yet(verdict) and "reverse mode" in verdict.message


def _vjp_from_jvps(f, x, u):
    basis = torch.eye(x.numel(), dtype=x.dtype)
    return tg.stack([(u * tg.func.jvp(f, (x,), (e.view(x.shape),))[1]).sum() for e in basis])


def test_18_vjp_from_jvps_right_and_in_any_form():
    assert ex.check_vjp_from_jvps(_vjp_from_jvps)
    assert ex.check_vjp_from_jvps(lambda f, x, u: _vjp_from_jvps(f, x, u).data.float())   # float32 passes
    assert ex.check_vjp_from_jvps(lambda f, x, u: _vjp_from_jvps(f, x, u).tolist())


@pytest.mark.parametrize("answer, says", [
    (lambda f, x, u: tg.func.vjp(f, x)[1](u)[0], "reverse mode"),                   # the library's own vjp
    (lambda f, x, u: tg.autograd.grad(f(x.requires_grad_()), x, u)[0], "reverse mode"),
    (lambda f, x, u: torch.func.vjp(f, x.data)[1](u.data)[0], "reverse mode"),      # torch's
    (lambda f, x, u: _vjp_from_jvps(f, x, u) * 2, "differ"),
    (lambda f, x, u: _vjp_from_jvps(f, x, u)[:1], "shape"),
    (lambda f, x, u: torch.func.jacrev(f)(x.data).T @ u.data, "reverse mode"),
    (lambda f, x, u: None, "None"),
    (_raise, "NotImplementedError"),
])
def test_18_vjp_from_jvps_refuses_reverse_mode_and_wrong_answers(answer, says):
    verdict = ex.check_vjp_from_jvps(answer)
    assert _not_yet(verdict) and says in verdict.message, verdict.message
    assert len({ex.check_vjp_from_jvps(answer).message for _ in range(2)} | {verdict.message}) == 1


def test_18_right_numbers_made_without_forward_mode_are_refused():
    # uᵀ J by finite differences: no autograd at all, but no JVP either
    def by_differences(f, x, u):
        h, x0 = 1e-6, x.data
        return torch.stack([(u.data * (f(x0 + h * e) - f(x0 - h * e)) / (2 * h)).sum()
                            for e in torch.eye(x0.numel(), dtype=x0.dtype)])
    verdict = ex.check_vjp_from_jvps(by_differences)
    assert _not_yet(verdict) and "finite difference" in verdict.message


def test_18_hint_lines_fit_a_notebook_output():
    for check, answer in ((ex.check_mm_batch_rule, _mm_loop), (ex.check_vjp_from_jvps, _raise)):
        for hint in (1, 2):
            message = check(answer, hint=hint).message
            assert all(len(line) <= 100 for line in message.splitlines()), message


# --- notebook 19: softmax's backward and one causal attention head's backward ---

def _softmax_backward(p, g, dim):
    return p * (g - (g * p).sum(dim=dim, keepdim=True))


def _softmax_backward_by_jacobian(p, g, dim):
    """The right numbers the long way the lesson steers away from: the Jacobian diag(p) − p pᵀ of every slice,
    times g (refused: tests/test_exercise_cheats.py)."""
    pm, gm = p.movedim(dim, -1), g.movedim(dim, -1)
    jacobian = torch.diag_embed(pm) - pm.unsqueeze(-1) * pm.unsqueeze(-2)
    return (jacobian @ gm.unsqueeze(-1)).squeeze(-1).movedim(-1, dim)


def _attention_backward(q, k, v, d_out, softmax_backward=_softmax_backward):
    T, d = q.shape
    scores = (q @ k.T / math.sqrt(d)).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    P = scores.softmax(dim=-1)
    dP = d_out @ v.T
    dS = softmax_backward(P, dP, -1)
    return dS @ k / math.sqrt(d), dS.T @ q / math.sqrt(d), P.T @ d_out


def test_19_softmax_backward_right_answers_in_any_form_pass():
    assert ex.check_softmax_backward(_softmax_backward)
    assert ex.check_softmax_backward(lambda p, g, dim: _softmax_backward(p, g, dim).float())       # float32
    assert ex.check_softmax_backward(lambda p, g, dim: tg.Variable(_softmax_backward(p, g, dim)))  # a Variable


@pytest.mark.parametrize("wrong", [lambda p, g, dim: p * g,                                  # the diagonal only
                                   lambda p, g, dim: p * (g - (g * p).sum()),               # summed over all
                                   lambda p, g, dim: p * (g - g.sum(dim=dim, keepdim=True)),  # sum of g, not g·p
                                   lambda p, g, dim: torch.zeros_like(p), lambda p, g, dim: None, _raise],
                         ids=["diagonal", "sum over all", "sum of g", "zeros", "None", "stub"])
def test_19_softmax_backward_wrong_answers_get_a_hint(wrong):
    verdict = ex.check_softmax_backward(wrong)
    assert _not_yet(verdict), verdict.message
    assert "keepdim" not in verdict.message and "g_j p_j" not in verdict.message   # the nudge names no method
    assert "keepdim" in ex.check_softmax_backward(wrong, hint=2).message


def _softmax_backward_by(lib):
    def answer(p, g, dim):
        z = p.log()
        leaf = tg.Variable(z, requires_grad=True) if lib is tg else z.requires_grad_()
        (leaf.softmax(dim) * (tg.Variable(g) if lib is tg else g)).sum().backward()
        return leaf.grad
    return answer


def _softmax_backward_by_torch_kernel(p, g, dim):
    return torch._softmax_backward_data(g, p, dim, p.dtype)


def _softmax_backward_by_vjp(p, g, dim):
    return torch.func.vjp(lambda z: z.softmax(dim), p.log())[1](g)[0]


@pytest.mark.parametrize("answer", [_softmax_backward_by(torch), _softmax_backward_by(tg),
                                    _softmax_backward_by_torch_kernel, _softmax_backward_by_vjp],
                         ids=["torch backward", "teachgrad backward", "torch._softmax_backward_data",
                              "torch.func.vjp"])
def test_19_softmax_backward_by_the_library_is_refused(answer):
    verdict = ex.check_softmax_backward(answer)
    assert _not_yet(verdict) and "used" in verdict.message, verdict.message
    assert ex.check_softmax_backward(_softmax_backward)      # and a hand-written answer still passes after it


def test_19_attention_backward_right_answers_pass():
    assert ex.check_attention_backward(_attention_backward)
    assert ex.check_attention_backward(lambda *a: list(_attention_backward(*a)))
    assert ex.check_attention_backward(lambda *a: dict(zip(("dq", "dk", "dv"), _attention_backward(*a))))
    assert ex.check_attention_backward(lambda *a: tuple(t.float() for t in _attention_backward(*a)))


def _no_scale(q, k, v, d_out):
    """The forward pass and its backward without the 1/√d."""
    T, d = q.shape
    P = (q @ k.T).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf")).softmax(dim=-1)
    dS = _softmax_backward(P, d_out @ v.T, -1)
    return dS @ k, dS.T @ q, P.T @ d_out


def _no_mask(q, k, v, d_out):
    P = (q @ k.T / math.sqrt(q.shape[1])).softmax(dim=-1)
    dS = _softmax_backward(P, d_out @ v.T, -1)
    return dS @ k / math.sqrt(q.shape[1]), dS.T @ q / math.sqrt(q.shape[1]), P.T @ d_out


@pytest.mark.parametrize("wrong", [_no_scale, _no_mask, lambda *a: _attention_backward(*a)[:2],
                                   lambda *a: (None, None, None), _raise],
                         ids=["without 1/sqrt(d)", "without the mask", "two of three", "Nones", "stub"])
def test_19_attention_backward_wrong_answers_get_a_hint(wrong):
    verdict = ex.check_attention_backward(wrong)
    assert _not_yet(verdict), verdict.message
    assert "A @ B" not in verdict.message and "A @ B" in ex.check_attention_backward(wrong, hint=2).message


def test_19_attention_backward_names_the_gradient_that_is_wrong():
    verdict = ex.check_attention_backward(lambda *a: (a[0] * 0, *_attention_backward(*a)[1:]))
    assert _not_yet(verdict) and "dq is not yet torch's" in verdict.message, verdict.message


def _attention_backward_by(lib):
    def answer(q, k, v, d_out):
        leaves = [tg.Variable(t, requires_grad=True) if lib is tg else t.requires_grad_() for t in (q, k, v)]
        T, d = q.shape
        scores = (leaves[0] @ leaves[1].transpose(0, 1)) / math.sqrt(d)
        mask = ~torch.ones(T, T, dtype=torch.bool).tril()
        out = scores.masked_fill(tg.Variable(mask) if lib is tg else mask, float("-inf")).softmax(-1) @ leaves[2]
        return (tg.grad if lib is tg else torch.autograd.grad)(out, leaves, tg.Variable(d_out) if lib is tg else d_out)
    return answer


@pytest.mark.parametrize("answer", [_attention_backward_by(torch), _attention_backward_by(tg),
                                    lambda *a: _attention_backward(*a, _softmax_backward_by(torch))],
                         ids=["torch.autograd.grad", "tg.grad", "softmax by torch's backward"])
def test_19_attention_backward_by_autograd_is_refused(answer):
    verdict = ex.check_attention_backward(answer)
    assert _not_yet(verdict) and "used" in verdict.message, verdict.message
    assert ex.check_attention_backward(_attention_backward)


def test_19_hint_lines_fit_a_notebook_output():
    for verdict in (ex.check_softmax_backward(_raise, hint=1), ex.check_softmax_backward(_raise, hint=2),
                    ex.check_attention_backward(_raise, hint=1), ex.check_attention_backward(_raise, hint=2)):
        assert all(len(line) <= 100 for line in verdict.message.splitlines()), verdict.message
