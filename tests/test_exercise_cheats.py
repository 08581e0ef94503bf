"""Answers that get the right numbers the wrong way, and must not pass (issue 45).

A check judges how an answer is computed, not only what it returns: the method each exercise teaches passes,
written by hand in any reasonable form; an answer that hands the work to what the exercise asks you to write
(an autograd engine, vmap, forward mode where reverse is asked, another op's backward, a finite difference,
a loop over samples, the full Jacobian) is refused with a message naming what it used. The engines are
watched where they are reached, so that reaching them another way (in a worker thread, under
`torch._C.DisableTorchFunction()`, through `Variable._execution_engine` itself) changes nothing.
"""
import math
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
import torch.nn.functional as F

import teachgrad as tg
from teachgrad import exercises as ex
from teachgrad.ops.activation import Softmax

from .test_exercises import (_attention_backward, _backprop, _engine, _mm_rule, _softmax_backward,
                             _softmax_backward_by_jacobian, _topological_order, _vjp_from_jvps)


def _refused(verdict, *says):
    assert not verdict and verdict.message.startswith("not yet"), verdict.message
    for word in says:
        assert word in verdict.message, f"{word!r} not in {verdict.message!r}"


# --- three ways around a watch that looks at names: a worker thread, DisableTorchFunction, the engine itself ---

def _in_a_thread(answer):
    def run(*args):
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(answer, *args).result()
    return run


def _without_torch_function(answer):
    def run(*args):
        with torch._C.DisableTorchFunction():
            return answer(*args)
    return run


def _run_backward(outputs, inputs, grad_outputs):
    """torch.autograd.grad without torch.autograd.grad: the engine object torch's own functions call."""
    engine = torch.autograd.Variable._execution_engine
    return engine.run_backward(tuple(outputs), tuple(grad_outputs), True, False, tuple(inputs), False, False)


def _g(x):
    return (3 * x).sin().exp()


def _dg_by_engine(x0):
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    return _run_backward([_g(x)], [x], [torch.ones((), dtype=torch.float64)])[0]


def _my_grad_by_engine(root, leaves):
    if isinstance(root, tg.Variable):
        return tg.grad(root, leaves, retain_graph=True)
    return _run_backward([root], leaves, [torch.ones_like(root)])


def _jacobian_by_reverse(f, x):
    return tg.autograd.functional.jacobian(f, x)


def _backprop_by_engine(X, y, W1, b1, W2, b2):
    W1, b1, W2, b2 = (t.clone().requires_grad_() for t in (W1, b1, W2, b2))
    pre = X @ W1 + b1
    h = pre.tanh()
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, y)
    grads = _run_backward([loss], (logits, h, pre, W1, b1, W2, b2), [torch.ones_like(loss)])
    return dict(zip(("dlogits", "dh", "dpre", "dW1", "db1", "dW2", "db2"), grads))


def _vjp_by_engine(f, x, u):
    xt = x.data.clone().requires_grad_()
    return _run_backward([f(xt)], [xt], [u.data])[0]


def _softmax_by_engine(p, g, dim):
    z = p.log().requires_grad_()
    return _run_backward([z.softmax(dim)], [z], [g])[0]


def _attention_by_engine(q, k, v, d_out):
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    T, d = q.shape
    scores = (q @ k.T / math.sqrt(d)).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    return _run_backward([scores.softmax(-1) @ v], (q, k, v), [d_out])


def _mm_by_vmap(a, ad, b, bd):
    return torch.func.vmap(torch.mm, in_dims=(ad, bd))(a.data, b.data), 0


# (the check, how to call it with one answer, an answer by the engine the exercise asks you to replace)
ENGINE_CHEATS = {
    "00 dg": (lambda answer: ex.check_dg(answer), _dg_by_engine),
    "04 my_grad": (lambda answer: ex.check_my_grad(answer), _my_grad_by_engine),
    "04 topo_grad": (lambda answer: ex.check_topo_grad(_topological_order, answer), _my_grad_by_engine),
    "14 jacobian_by_columns": (lambda answer: ex.check_jacobian_by_columns(answer), _jacobian_by_reverse),
    "17 backprop": (lambda answer: ex.check_backprop(answer), _backprop_by_engine),
    "18 mm_batch_rule": (lambda answer: ex.check_mm_batch_rule(answer), _mm_by_vmap),
    "18 vjp_from_jvps": (lambda answer: ex.check_vjp_from_jvps(answer), _vjp_by_engine),
    "19 softmax_backward": (lambda answer: ex.check_softmax_backward(answer), _softmax_by_engine),
    "19 attention_backward": (lambda answer: ex.check_attention_backward(answer), _attention_by_engine),
}


@pytest.mark.parametrize("exercise", ENGINE_CHEATS)
def test_the_engine_object_itself_is_refused(exercise):
    check, answer = ENGINE_CHEATS[exercise]
    _refused(check(answer), "used")


@pytest.mark.parametrize("exercise", ENGINE_CHEATS)
def test_the_engine_under_disable_torch_function_is_refused(exercise):
    check, answer = ENGINE_CHEATS[exercise]
    _refused(check(_without_torch_function(answer)), "used")


@pytest.mark.parametrize("exercise", ENGINE_CHEATS)
def test_the_engine_in_a_worker_thread_is_refused(exercise):
    check, answer = ENGINE_CHEATS[exercise]
    _refused(check(_in_a_thread(answer)), "thread")


# --- the right answers, written by hand, still pass (after a refused one, too) ---

RIGHT = {
    "00 dg": (ENGINE_CHEATS["00 dg"][0], lambda x: 3 * math.cos(3 * x) * math.exp(math.sin(3 * x))),
    "04 my_grad": (ENGINE_CHEATS["04 my_grad"][0], _engine),
    "14 jacobian_by_columns": (ENGINE_CHEATS["14 jacobian_by_columns"][0], None),
    "17 backprop": (ENGINE_CHEATS["17 backprop"][0], _backprop),
    "18 mm_batch_rule": (ENGINE_CHEATS["18 mm_batch_rule"][0], _mm_rule),
    "18 vjp_from_jvps": (ENGINE_CHEATS["18 vjp_from_jvps"][0], _vjp_from_jvps),
    "19 softmax_backward": (ENGINE_CHEATS["19 softmax_backward"][0], _softmax_backward),
    "19 attention_backward": (ENGINE_CHEATS["19 attention_backward"][0], _attention_backward),
}


def _jacobian_by_columns(f, x):
    """Forward mode, one column per element of x (the notebook's solution, written again)."""
    fwAD = tg.autograd.forward_ad
    out = f(x)
    columns = []
    for j in range(x.numel()):
        with fwAD.dual_level():
            e = torch.zeros(x.numel(), dtype=x.dtype)
            e[j] = 1
            columns.append(fwAD.unpack_dual(f(fwAD.make_dual(x, tg.Variable(e.view(x.shape))))).tangent.data)
    return torch.stack(columns, -1).reshape(tuple(out.shape) + tuple(x.shape))


RIGHT["14 jacobian_by_columns"] = (RIGHT["14 jacobian_by_columns"][0], _jacobian_by_columns)


@pytest.mark.parametrize("exercise", RIGHT)
def test_right_answers_by_hand_pass_before_and_after_a_refused_one(exercise):
    check, answer = RIGHT[exercise]
    assert check(answer), check(answer).message
    check(_in_a_thread(ENGINE_CHEATS[exercise][1]))
    assert check(answer), check(answer).message


# --- 18: a loop over samples, however it multiplies ---

def _loop(product):
    def rule(a, a_bdim, b, b_bdim):
        a, b = a.data, b.data
        n = a.shape[a_bdim] if a_bdim is not None else b.shape[b_bdim]
        pick = (lambda t, bdim, i: t if bdim is None else t.select(bdim, i))
        return torch.stack([product(pick(a, a_bdim, i), pick(b, b_bdim, i)) for i in range(n)]), 0
    return rule


@pytest.mark.parametrize("product", [lambda x, y: torch.tensordot(x, y, dims=1), lambda x, y: F.linear(x, y.T),
                                     lambda x, y: (x.unsqueeze(-1) * y.unsqueeze(0)).sum(1)],
                         ids=["tensordot", "F.linear", "multiply-and-sum"])
def test_18_a_loop_over_samples_is_refused_however_it_multiplies(product):
    _refused(ex.check_mm_batch_rule(_loop(product)), "per sample")


def test_18_a_loop_with_the_op_recording_turned_off_is_refused():
    def unseen(*args):
        with torch._C._DisableTorchDispatch():
            return _loop(torch.mm)(*args)
    _refused(ex.check_mm_batch_rule(unseen), "turned off")


def test_18_a_right_rule_is_not_called_a_loop():
    verdict = ex.check_mm_batch_rule(_mm_rule)
    assert verdict and "one matrix product each" not in verdict.message, verdict.message


# --- 18: finite differences with a decoy jvp ---

def _vjp_by_differences_and_a_decoy(f, x, u):
    tg.func.jvp(f, (x,), (tg.Variable(torch.ones_like(x.data)),))          # a JVP, for show
    h, x0 = 1e-6, x.data
    return torch.stack([(u.data * (f(x0 + h * e) - f(x0 - h * e)) / (2 * h)).sum()
                        for e in torch.eye(x0.numel(), dtype=x0.dtype)])


def test_18_finite_differences_with_a_decoy_jvp_are_refused():
    _refused(ex.check_vjp_from_jvps(_vjp_by_differences_and_a_decoy), "finite difference")


# --- 19: softmax's backward by forward mode, by another op's formula, by the full Jacobian ---

def _softmax_by_torch_jvp(p, g, dim):
    # softmax's Jacobian is symmetric: J g by forward mode is the same numbers as gᵀ J
    return torch.func.jvp(lambda z: z.softmax(dim), (p.log(),), (g,))[1]


class _Ctx:
    """A stand-in for the ctx teachgrad's engine would pass."""


def _softmax_by_teachgrads_backward(p, g, dim):
    ctx = _Ctx()
    ctx.saved_tensors, ctx.dim = (tg.Variable(p),), dim
    return Softmax.backward(ctx, tg.Variable(g))[0]


def _softmax_by_teachgrads_jvp(p, g, dim):
    ctx = _Ctx()
    ctx._result, ctx.dim = p, dim
    return Softmax.jvp(ctx, g, dim)


@pytest.mark.parametrize("answer, says", [(_softmax_by_torch_jvp, "forward mode"),
                                          (_softmax_by_teachgrads_backward, "formula"),
                                          (_softmax_by_teachgrads_jvp, "formula"),
                                          (_softmax_backward_by_jacobian, "Jacobian")],
                         ids=["torch.func.jvp", "Softmax.backward", "Softmax.jvp", "the full Jacobian"])
def test_19_softmax_backward_the_wrong_way_is_refused(answer, says):
    _refused(ex.check_softmax_backward(answer), says)
    assert ex.check_softmax_backward(_softmax_backward)


def test_19_attention_with_a_full_jacobian_softmax_is_refused():
    _refused(ex.check_attention_backward(lambda *a: _attention_backward(*a, _softmax_backward_by_jacobian)),
             "Jacobian")
