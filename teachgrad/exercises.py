"""The checks behind the notebooks' exercises: `check_w_grad(w_grad_by_hand)` answers "✓ correct" or "not yet".

Every check
- recomputes what it compares with, with teachgrad *and* torch (it never reads a notebook's variables);
- never raises: a learner's exception becomes a "not yet" naming it, with a hint;
- accepts reasonable forms of an answer: numbers, lists, tuples, torch tensors of any float dtype,
  teachgrad Variables;
- gives a hint that nudges (`hint=1`, the default) or names the method (`hint=2`), never the answer;
- gives the same verdict however often it runs.

A check returns a `Verdict`: it prints as its message and is true only when the answer is right.
"""
from __future__ import annotations

import math
import random
from typing import Any, Callable

import torch

import teachgrad as tg
from .autograd import forward_ad

__all__ = ["Verdict", "check_dg", "check_grads", "check_predictions", "check_count_and_sum", "check_my_grad",
           "check_scale", "check_second_backward", "check_frozen_loss", "check_w_grad", "check_xsinx",
           "check_momentum", "check_third_derivative", "check_meta_grads", "check_backprop", "check_safe_sqrt",
           "random_graph", "diamond_chain", "compare_table"]


class Verdict:
    """A check's answer: `bool(verdict)` says whether the answer is right; it displays as its message."""

    def __init__(self, ok: bool, message: str):
        self.ok = ok
        self.message = message

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message

    def _repr_pretty_(self, printer, cycle):
        printer.text(self.message)


def _correct(message: str) -> Verdict:
    return Verdict(True, "✓ correct: " + message)


def _not_yet(what: str, hints: tuple[str, str], hint: int, call: str) -> Verdict:
    """'not yet: what', then the nudge (hint=1) or the method (hint=2)."""
    if hint >= 2:
        return Verdict(False, f"not yet: {what}\nmethod: {hints[1]}")
    return Verdict(False, f"not yet: {what}\nhint: {hints[0]}\n(stuck? run {call} for the method)")


def _raised(name: str, error: BaseException) -> str:
    if isinstance(error, NotImplementedError):
        return f"{name} is not written yet (it raises NotImplementedError)"
    first_line = str(error).split("\n")[0]
    return f"{name} raised {type(error).__name__}: {first_line}"


def _tensor(value: Any) -> torch.Tensor | None:
    """An answer as a float64 torch tensor: from a number, list, tuple, tensor or Variable; None if impossible."""
    if value is None or isinstance(value, (str, bytes, dict)):
        return None
    try:
        if isinstance(value, tg.Variable):
            value = value.data
        if isinstance(value, torch.Tensor):
            return value.detach().to("cpu", torch.float64)
        if isinstance(value, (list, tuple)):
            value = [v.data if isinstance(v, tg.Variable) else v for v in value]
            if any(isinstance(v, torch.Tensor) for v in value):
                return torch.stack([torch.as_tensor(v).detach().to("cpu", torch.float64) for v in value])
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None


def _number(value: Any) -> float | None:
    """An answer as a Python float, from a number or a one-element tensor, Variable, list or tuple."""
    if isinstance(value, bool):
        return None
    t = _tensor(value)
    if t is None or t.numel() != 1:
        return None
    return t.item()


def _close(a: float, b: float, rel: float = 1e-5, abs_: float = 1e-6) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# --- 00 · why autograd ---------------------------------------------------------------------------

def _g(x):
    return (3 * x).sin().exp()


def check_dg(dg: Callable, hint: int = 1) -> Verdict:
    """dg(x) should be g'(x) for g(x) = exp(sin(3x)), at any float x."""
    hints = ("g is exp of something: the derivative of exp(u) is exp(u) times du/dx, and u = sin(3x) "
             "is itself a chain of two links.",
             "name the links: v = 3x, u = sin(v), g = exp(u); multiply the three local derivatives "
             "dg/du · du/dv · dv/dx, each written in terms of x.")
    for x0 in (-1.0, -0.3, 0.0, 0.5, 1.2):
        x = tg.tensor(x0, dtype=torch.float64, requires_grad=True)
        _g(x).backward()
        x_t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        _g(x_t).backward()
        tg.check.agree(x, x_t, "x", quiet=True)
        try:
            answer = dg(x0)
        except (TypeError, AttributeError):   # written for tensors (torch.sin, x.sin()): give it a tensor
            try:
                answer = dg(torch.tensor(x0, dtype=torch.float64))
            except Exception as error:
                return _not_yet(_raised("dg", error), hints, hint, "check_dg(dg, hint=2)")
        except Exception as error:
            return _not_yet(_raised("dg", error), hints, hint, "check_dg(dg, hint=2)")
        if answer is None:
            return _not_yet("dg returns None; write g'(x) as a formula in x", hints, hint, "check_dg(dg, hint=2)")
        value = _number(answer)
        if value is None:
            return _not_yet(f"dg({x0}) gave {type(answer).__name__}, not a number", hints, hint,
                            "check_dg(dg, hint=2)")
        if not _close(value, x.grad.item()):
            return _not_yet(f"at x = {x0} your dg gives {value:.6f}, autograd gives {x.grad.item():.6f}",
                            hints, hint, "check_dg(dg, hint=2)")
    return _correct("your g'(x) matches autograd (teachgrad and torch) at every point checked")


# --- 01 · forward and backward -------------------------------------------------------------------

def _t2(lib):
    p = lib.tensor(3.0, requires_grad=True)
    q = lib.tensor(5.0, requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True)
    t2 = (p * q + s) ** 2
    t2.backward()
    return dict(p=p, q=q, s=s, t2=t2)


def check_grads(my_grads: Any, hint: int = 1) -> Verdict:
    """my_grads: dt2/dp, dt2/dq, dt2/ds for t2 = (p q + s)^2, as a dict {"p":, "q":, "s":} or a sequence."""
    hints = ("call u = p*q + s; the chain rule gives dt2/dp = dt2/du · du/dp, and likewise for q and s.",
             "compute u's value first, then dt2/du = 2u; multiply it by each local derivative "
             "du/dp = q, du/dq = p, du/ds = 1 (with the numbers put in).")
    call = "check_grads(my_grads, hint=2)"
    ours, _ = tg.check.twin(_t2, quiet=True)
    if isinstance(my_grads, dict):
        values = [my_grads.get(name) for name in "pqs"]
    elif isinstance(my_grads, (list, tuple)) and len(my_grads) == 3:
        values = list(my_grads)
    else:
        return _not_yet("give a dict {'p': ..., 'q': ..., 's': ...} of three numbers", hints, hint, call)
    if all(v is None for v in values):
        return _not_yet("fill in my_grads with three numbers", hints, hint, call)
    wrong = [name for name, v in zip("pqs", values)
             if _number(v) is None or not _close(_number(v), ours[name].grad.item())]
    if wrong:
        return _not_yet(f"look again at {', '.join(wrong)}", hints, hint, call)
    return _correct("all three gradients match teachgrad and torch")


# --- 02 · variables and functions ----------------------------------------------------------------

def _leaf_quiz(lib):
    a = lib.tensor(2.0)
    b = lib.tensor(3.0, requires_grad=True)
    return {"c": a * b, "d": a + 1, "e": b.exp()}


def check_predictions(predictions: Any, hint: int = 1) -> Verdict:
    """predictions: {name: (is_leaf, requires_grad, grad_fn name or None)} for c, d, e; lists work too."""
    hints = ("a result records a node only if one of its inputs requires grad; a tensor without grad_fn is a leaf.",
             "for each of c, d, e: does any input require grad? If not: (True, False, None). If so: "
             "(False, True, the node's name: the op's name + 'Backward0', as torch prints it).")
    call = "check_predictions(predictions, hint=2)"
    if not isinstance(predictions, dict):
        return _not_yet("predictions should be a dict with keys 'c', 'd', 'e'", hints, hint, call)
    ours, _ = tg.check.twin(_leaf_quiz, quiet=True)
    missing, wrong = [], []
    for name, x in ours.items():
        truth = (x.is_leaf, x.requires_grad, None if x.grad_fn is None else type(x.grad_fn).__name__)
        guess = predictions.get(name)
        if guess is None:
            missing.append(name)
        elif not isinstance(guess, (list, tuple)) or len(guess) != 3:
            wrong.append(name)
        elif (bool(guess[0]), bool(guess[1]), guess[2] if guess[2] not in ("None", "") else None) != truth:
            wrong.append(name)
    if missing:
        return _not_yet(f"fill in a triple for {', '.join(missing)}", hints, hint, call)
    if wrong:
        return _not_yet(f"look again at {', '.join(wrong)}", hints, hint, call)
    return _correct("all three predictions match teachgrad and torch")


# --- 03 · the graph and the engine ---------------------------------------------------------------

def _edges_into(root, node_of_interest_is):
    """How many edges lead into the node for which `node_of_interest_is(node)` holds."""
    count, stack, seen = 0, [root.grad_fn], {root.grad_fn}
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            count += node_of_interest_is(next_node)
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return count


def check_count_and_sum(edges_into_x: Any, x_grad: Any, hint: int = 1) -> Verdict:
    """For y = x*x + 4x at x = 3: the number of edges into x's AccumulateGrad, and x.grad."""
    hints = ("`x * x` is one multiplication with x as both of its inputs; every gradient that reaches x is added.",
             "list the input slots of every op that takes x (each is one edge into AccumulateGrad(x)); "
             "x.grad is the sum of the gradients along those edges: for x*x each slot gets the other input.")
    call = "check_count_and_sum(my_edges_into_x, my_x_grad, hint=2)"
    counts, grads = [], []
    for lib in (tg, torch):
        x = lib.tensor(3.0, requires_grad=True)
        y = x * x + 4 * x
        counts.append(_edges_into(y, lambda node, x=x: getattr(node, "variable", None) is x))
        y.backward()
        grads.append(x.grad.item())
    assert counts[0] == counts[1] and grads[0] == grads[1], "teachgrad and torch differ"
    problems = []
    if _number(edges_into_x) != counts[0]:
        problems.append("the number of edges")
    if _number(x_grad) is None or not _close(_number(x_grad), grads[0]):
        problems.append("x.grad")
    if problems:
        return _not_yet("check " + " and ".join(problems), hints, hint, call)
    return _correct("both predictions match teachgrad and torch")


# --- 04 · build your own engine ------------------------------------------------------------------

_OPS = ("add", "mul", "sub", "sin", "exp", "tanh", "square", "scale")


def random_graph(lib, seed: int, leaves: int = 3, ops: int = 8):
    """A random scalar function of a few vector leaves, with shared intermediates (diamonds).

    Returns (root, leaves). Same seed, same graph, in teachgrad and in torch.
    """
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    xs = [lib.tensor(torch.randn(3, generator=gen, dtype=torch.float64).tolist(), dtype=torch.float64,
                     requires_grad=True) for _ in range(leaves)]
    values = list(xs)
    for k in range(ops):
        op = rng.choice(_OPS)
        a, b = (xs[k] if k < leaves else rng.choice(values)), rng.choice(values)   # every leaf is used
        if op == "add":
            v = a + b
        elif op == "mul":
            v = a * b
        elif op == "sub":
            v = a - b
        elif op == "sin":
            v = a.sin()
        elif op == "exp":
            v = (a * 0.1).exp()
        elif op == "tanh":
            v = a.tanh()
        elif op == "square":
            v = a ** 2
        else:
            v = 0.5 * a
        values.append(v)
    root = sum(v.sum() for v in values[leaves:])
    return root, xs


def diamond_chain(lib, depth: int):
    """x, then `depth` diamonds h -> (h², 4h) -> h² + 4h... in a row: 2**depth paths from the root to x."""
    x = lib.tensor(0.1, dtype=torch.float64, requires_grad=True)
    h = x
    for _ in range(depth):
        h = 0.1 * (h.sin() + h * 3)
    return h, [x]


class _CountCalls:
    """Count how often each teachgrad node runs while the learner's engine works (node(grad) calls)."""

    def __enter__(self):
        self.calls = {}
        self.original = tg.function.Node.__call__
        calls, original = self.calls, self.original

        def counted(node, *grads):
            calls[node] = calls.get(node, 0) + 1
            return original(node, *grads)
        tg.function.Node.__call__ = counted
        return self

    def __exit__(self, *exc):
        tg.function.Node.__call__ = self.original


def _graph_and_grads(make):
    """A test graph built by make(lib), its leaves, and tg.grad's gradients (checked against torch's)."""
    root, leaves = make(tg)
    expected = tg.grad(root, leaves, retain_graph=True)
    root_t, leaves_t = make(torch)
    expected_t = torch.autograd.grad(root_t, leaves_t)
    for e, e_t in zip(expected, expected_t):
        assert torch.allclose(e.data, e_t), "teachgrad and torch differ"
    return root, leaves, expected


def _leaf_grads_problem(got: Any, expected, fn_name: str, if_none: str) -> str | None:
    """What is wrong with a learner's engine's gradients, one per leaf, or None when they are tg.grad's."""
    if got is None or not isinstance(got, (list, tuple)) or len(got) != len(expected):
        return f"{fn_name} should return one gradient per leaf ({len(expected)}), in the leaves' order"
    for k, (g, e) in enumerate(zip(got, expected)):
        if g is None:
            return f"{fn_name} gave no gradient for leaf {k} (None): {if_none}"
        g = _tensor(g)
        if g is None or g.shape != e.shape or not torch.allclose(g, e.data, atol=1e-10):
            return f"the gradient of leaf {k} differs from tg.grad's and torch's"
    return None


def _ran_twice(counter: "_CountCalls", rule: str) -> str | None:
    """The first node a learner's engine ran more than once (its gradients right all the same), or None."""
    twice = [n for n, c in counter.calls.items() if c > 1]
    if not twice:
        return None
    return f"the numbers are right but {twice[0].name()} ran {counter.calls[twice[0]]} times: {rule}"


def check_my_grad(my_grad: Callable, hint: int = 1) -> Verdict:
    """my_grad(root, leaves) -> one gradient per leaf, as tg.grad gives; each node run once."""
    hints = ("a node may run only when every gradient bound for it has arrived: count, before running anything, "
             "how many edges lead into each node.",
             "1) walk the graph from root.grad_fn and count the edges into each node; 2) keep a dict node -> "
             "summed gradient and a list of ready nodes (count 0), starting with root.grad_fn and a gradient "
             "of ones; 3) pop a ready node, run it with run(node, grad), add each result into the dict entry of its "
             "next_functions node, decrease that node's count, and push it when the count reaches 0; "
             "4) an AccumulateGrad node (it has .variable) is where a leaf's gradient ends up.")
    call = "check_my_grad(my_grad, hint=2)"
    cases = [("the diamond chain of depth 3", lambda lib: diamond_chain(lib, 3))]
    cases += [(f"random graph {seed}", lambda lib, seed=seed: random_graph(lib, seed)) for seed in range(8)]
    for name, make in cases:
        root, leaves, expected = _graph_and_grads(make)
        try:
            with _CountCalls() as counter:
                got = my_grad(root, leaves)
        except Exception as error:
            return _not_yet(f"on {name}, " + _raised("my_grad", error), hints, hint, call)
        problem = _leaf_grads_problem(got, expected, "my_grad", "your engine never reached its AccumulateGrad node")
        if problem:
            return _not_yet(f"on {name}, {problem}", hints, hint, call)
        problem = _ran_twice(counter, "a node should run once, with the sum")
        if problem:
            return _not_yet(f"on {name}, {problem}", hints, hint, call)
    # torch's own graph: the same engine must work on torch's nodes
    for seed in range(3):
        root_t, leaves_t = random_graph(torch, seed)
        expected_t = torch.autograd.grad(root_t, leaves_t, retain_graph=True)
        try:
            got_t = my_grad(root_t, leaves_t)
        except Exception as error:
            return _not_yet(f"on torch's graph {seed}, " + _raised("my_grad", error), hints, hint, call)
        if got_t is None or len(got_t) != len(leaves_t) or not all(
                _tensor(g) is not None and torch.allclose(_tensor(g), e, atol=1e-10) for g, e in zip(got_t, expected_t)):
            return _not_yet(f"on torch's graph {seed}, the gradients differ from torch.autograd.grad's",
                            hints, hint, call)
    return _correct("on the diamond chain and 8 random graphs your engine gives tg.grad's and torch's gradients, "
                    "running each node once; on torch's own graphs too")


# --- 05 · gradient accumulation ------------------------------------------------------------------

def _accumulated(lib, scale):
    xs = lib.tensor([1.0, 2.0, 3.0, 4.0])
    ys = lib.tensor([3.0, 5.0, 7.0, 9.0])
    w = lib.tensor(0.5, requires_grad=True)
    for half in (slice(0, 2), slice(2, 4)):
        loss_half = ((w * xs[half] - ys[half]) ** 2).mean()
        (scale * loss_half).backward()
    return w


def check_scale(scale: Any, hint: int = 1) -> Verdict:
    """scale: the factor for each half-batch mean loss so that the accumulated grad is the full-batch one."""
    hints = ("a mean over 2 points weighs each point by 1/2; the full-batch mean weighs each point by 1/4.",
             "write the weight each point gets in w.grad: scale × (weight inside a half's mean); set it equal "
             "to the weight a point gets in the full-batch mean and solve for scale.")
    call = "check_scale(scale, hint=2)"
    value = _number(scale)
    if value is None:
        return _not_yet("set scale to a number (e.g. 1.0)", hints, hint, call)
    ours = _accumulated(tg, value)
    tg.check.agree(ours, _accumulated(torch, value), "accumulated w", quiet=True)
    xs, ys = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([3.0, 5.0, 7.0, 9.0])
    w = torch.tensor(0.5, requires_grad=True)
    ((w * xs - ys) ** 2).mean().backward()
    if not _close(ours.grad.item(), w.grad.item()):
        return _not_yet(f"the halves add up to {ours.grad.item():.4f}, the full batch gives {w.grad.item():.4f}",
                        hints, hint, call)
    return _correct(f"the two halves add up to the full-batch gradient {w.grad.item():.4f}")


# --- 06 · retain_graph ---------------------------------------------------------------------------

SECOND_BACKWARD_LOSSES = {
    "(a + b).sum()": lambda a, b: (a + b).sum(),
    "(a * b).sum()": lambda a, b: (a * b).sum(),
    "a.reshape(2, 2).sum()": lambda a, b: a.reshape(2, 2).sum(),
    "a.exp().sum()": lambda a, b: a.exp().sum(),
    "(a - b).mean()": lambda a, b: (a - b).mean(),
    "(a + b).relu().sum()": lambda a, b: (a + b).relu().sum(),
}


def _survives(lib, make_loss):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = lib.tensor([5.0, 6.0, 7.0, 8.0], requires_grad=True)
    loss = make_loss(a, b)
    loss.backward()
    try:
        loss.backward()
        return True
    except RuntimeError:
        return False


def check_second_backward(answer: Any, hint: int = 1) -> Verdict:
    """answer: {loss text: True if a second backward works, False if it raises}."""
    hints = ("a second backward fails when some node's gradient formula needs a value from the forward pass.",
             "for each node in the loss, write its backward formula: if it uses an input or the output "
             "(not only the incoming gradient and shapes), the node saved a tensor, and backward freed it.")
    call = "check_second_backward(answer, hint=2)"
    if not isinstance(answer, dict):
        return _not_yet("answer should be a dict like the one given", hints, hint, call)
    missing, wrong = [], []
    for text, make_loss in SECOND_BACKWARD_LOSSES.items():
        truth = _survives(tg, make_loss)
        assert truth == _survives(torch, make_loss), f"{text}: teachgrad and torch differ"
        guess = answer.get(text)
        if guess is None:
            missing.append(text)
        elif bool(guess) != truth or not isinstance(guess, (bool, int)):
            wrong.append(text)
    if missing:
        return _not_yet(f"fill in True or False for {len(missing)} loss(es): {', '.join(missing)}", hints, hint, call)
    if wrong:
        return _not_yet(f"{len(SECOND_BACKWARD_LOSSES) - len(wrong)} of {len(SECOND_BACKWARD_LOSSES)} right; "
                        f"look again at {', '.join(wrong)}", hints, hint, call)
    return _correct(f"all {len(SECOND_BACKWARD_LOSSES)} right (and teachgrad behaves as torch on each)")


# --- 07 · no_grad and detach ---------------------------------------------------------------------

def _layer(lib):
    x = lib.ones(5)
    torch.manual_seed(0)
    w = lib.randn(5, 3, requires_grad=True)
    b = lib.randn(3, requires_grad=True)
    return x, w, b


def check_frozen_loss(frozen_loss: Callable, hint: int = 1) -> Verdict:
    """frozen_loss(lib, x, w, b): the loss ((x @ w + b) ** 2).mean() with no gradient reaching w."""
    hints = ("use a version of w that has the same values but no link back to w.",
             "either take w's values without its history (one method call on w), or compute the product "
             "where nothing is recorded (a with-block), and add b outside it.")
    call = "check_frozen_loss(frozen_loss, hint=2)"
    x, w, b = _layer(torch)
    with torch.no_grad():
        xw = x @ w
    target = ((xw + b) ** 2).mean()
    target.backward()
    b_target = b.grad
    results = {}
    for lib in (tg, torch):
        x, w, b = _layer(lib)
        try:
            loss = frozen_loss(lib, x, w, b)
            loss.backward()
        except Exception as error:
            return _not_yet(_raised("frozen_loss", error) + f" (with lib = {lib.__name__})", hints, hint, call)
        results[lib.__name__] = (loss, w, b)
    (loss, w, b), (loss_t, w_t, b_t) = results["teachgrad"], results["torch"]
    if not w.requires_grad:
        return _not_yet("w.requires_grad was switched off; leave w as it is and cut the graph inside "
                        "frozen_loss instead", hints, hint, call)
    if w.grad is not None or w_t.grad is not None:
        return _not_yet("a gradient still reaches w", hints, hint, call)
    if b.grad is None or b_t.grad is None or not torch.allclose(b.grad.data, b_target) \
            or not torch.allclose(b_t.grad, b_target):
        return _not_yet("b should still receive its gradient, unchanged", hints, hint, call)
    if not torch.allclose(loss.data, target.detach()):
        return _not_yet("the loss value changed; only the gradient flow should change", hints, hint, call)
    return _correct("w.grad is None, b.grad and the loss are as before (same in torch)")


# --- 10 · a single-layer network -----------------------------------------------------------------

def _single_layer():
    """The notebook's layer, rebuilt: w.grad by teachgrad and by torch, and dL/dz."""
    grads = []
    for lib in (tg, torch):
        torch.manual_seed(0)
        x, y = lib.ones(5), lib.zeros(3)
        w = lib.randn(5, 3, requires_grad=True)
        b = lib.randn(3, requires_grad=True)
        z = lib.matmul(x, w) + b
        lib.nn.functional.binary_cross_entropy_with_logits(z, y).backward()
        grads.append(w.grad.data if lib is tg else w.grad)
    assert torch.allclose(grads[0], grads[1]), "teachgrad and torch differ"
    return grads[0]


def check_w_grad(w_grad_by_hand: Any, hint: int = 1) -> Verdict:
    """w_grad_by_hand: dL/dW of the single-layer network, a (5, 3) tensor (or nested lists)."""
    hints = ("entry (i, j) is x[i] * dL_dz[j]: every input feature times every output's gradient.",
             "that is an outer product of a 5-vector and a 3-vector: torch has a function of that name, "
             "or broadcast a (5, 1) column against a (1, 3) row.")
    call = "check_w_grad(w_grad_by_hand, hint=2)"
    expected = _single_layer().double()
    if w_grad_by_hand is None:
        return _not_yet("set w_grad_by_hand to a (5, 3) tensor", hints, hint, call)
    answer = _tensor(w_grad_by_hand)
    if answer is None:
        return _not_yet(f"could not read a {type(w_grad_by_hand).__name__} as a tensor", hints, hint, call)
    if answer.shape != expected.shape:
        what = f"your answer has shape {tuple(answer.shape)}; w.grad has w's shape, (5, 3)"
        if answer.shape == expected.T.shape:
            what += ": one row per input feature, one column per output"
        return _not_yet(what, hints, hint, call)
    if not torch.allclose(answer, expected, atol=1e-6, rtol=1e-5):
        return _not_yet("the numbers differ from w.grad", hints, hint, call)
    return _correct("it equals w.grad (teachgrad) and w_t.grad (torch)")


# --- 11 · custom functions -----------------------------------------------------------------------

def check_xsinx(body: type, hint: int = 1) -> Verdict:
    """body: a class with forward/backward for x * sin(x); used as a tg.Function and a torch Function."""
    hints = ("the product rule gives d/dx [x sin x]; a backward returns the incoming gradient times it.",
             "write f'(x) = (derivative of the first factor) · sin x + x · (derivative of sin x), with "
             "tensor methods on the saved x, and multiply by grad_output (the chain rule).")
    call = "check_xsinx(XSinX, hint=2)"
    ours = type(body.__name__, (body, tg.Function), {})
    theirs = type(body.__name__, (body, torch.autograd.Function), {})
    x = tg.linspace(-3.0, 3.0, 7, dtype=torch.float64, requires_grad=True)
    x_t = x.data.clone().requires_grad_()
    try:
        ours_ok = tg.check.gradcheck(ours.apply, (x,), raise_exception=False)
        torch_ok = torch.autograd.gradcheck(theirs.apply, (x_t,), raise_exception=False)
        x_ref = x.data.clone().requires_grad_()
        (x_ref * torch.sin(x_ref)).sum().backward()
        ours.apply(x).sum().backward()
    except Exception as error:
        return _not_yet(_raised("your backward", error), hints, hint, call)
    same = x.grad is not None and torch.allclose(x.grad.data, x_ref.grad)
    if ours_ok and torch_ok and same:
        return _correct("gradcheck passes in teachgrad and in torch, and x.grad matches torch's autograd")
    if same:
        return _not_yet("x.grad is right for .sum() but gradcheck fails: did you use grad_output?", hints, hint, call)
    return _not_yet("gradcheck fails", hints, hint, call)


# --- 12 · training -------------------------------------------------------------------------------

def _moons_problem():
    """The training notebook's two moons and starting weights, regenerated from its seed."""
    generator = torch.Generator().manual_seed(0)
    n, noise = 100, 0.1
    a = torch.rand(n, generator=generator) * math.pi
    b = torch.rand(n, generator=generator) * math.pi
    upper = torch.stack([a.cos(), a.sin()], dim=1)
    lower = torch.stack([1 - b.cos(), 0.5 - b.sin()], dim=1)
    X = torch.cat([upper, lower]) + noise * torch.randn(2 * n, 2, generator=generator)
    y = torch.cat([torch.zeros(n), torch.ones(n)])
    init = [torch.randn(2, 16, generator=generator), torch.zeros(16),
            torch.randn(16, 1, generator=generator) * 0.5, torch.zeros(1)]
    return X, y, init


def _moons_loss(lib, params, X, y):
    W1, b1, W2, b2 = params
    logits = ((X @ W1 + b1).tanh() @ W2 + b2).reshape(-1)
    return lib.nn.functional.binary_cross_entropy_with_logits(logits, y)


def check_momentum(momentum_step: Callable, hint: int = 1, steps: int = 200, lr: float = 0.5,
                   beta: float = 0.9, target: float = 0.01) -> Verdict:
    """momentum_step(params, velocities, lr, beta) updates v and then p in place, as torch.optim.SGD(momentum=beta)."""
    hints = ("update the velocity first, then the parameter, and change both in place: the check keeps the "
             "same Variables from step to step.",
             "v ← βv + grad is one in-place multiply and one in-place add on v; then w ← w − ηv is one "
             "in-place subtraction on p (the check already runs your step under no_grad).")
    call = "check_momentum(momentum_step, hint=2)"
    X, y, init = _moons_problem()
    Xv, yv = tg.Variable(X), tg.Variable(y)
    params = [tg.Variable(w.clone(), requires_grad=True) for w in init]
    velocities = [tg.zeros_like(p) for p in params]
    params_t = [w.clone().requires_grad_() for w in init]
    optimizer = torch.optim.SGD(params_t, lr=lr, momentum=beta)
    for step in range(steps):
        loss = _moons_loss(tg, params, Xv, yv)
        loss.backward()
        try:
            with tg.no_grad():
                momentum_step(params, velocities, lr, beta)
        except Exception as error:
            return _not_yet(_raised("momentum_step", error), hints, hint, call)
        for p in params:
            p.grad = None
        loss_t = _moons_loss(torch, params_t, X, y)
        optimizer.zero_grad()
        loss_t.backward()
        optimizer.step()
        if not math.isfinite(loss.item()) or abs(loss.item() - loss_t.item()) > 1e-4:
            return _not_yet(f"at step {step} your loss is {loss.item():.4f}, torch.optim.SGD's is {loss_t.item():.4f}",
                            hints, hint, call)
    if loss.item() >= target:
        return _not_yet(f"the losses match torch's but end at {loss.item():.4f}, not below {target}", hints, hint, call)
    return _correct(f"your momentum matches torch.optim.SGD for {steps} steps; final loss {loss.item():.4f} "
                    f"(below {target})")


# --- 13 · higher order ---------------------------------------------------------------------------

def check_third_derivative(third_derivative: Callable, hint: int = 1) -> Verdict:
    """third_derivative(fn, x) -> fn'''(x) as a Variable, for a scalar Variable x that requires grad."""
    hints = ("a gradient from tg.grad is a constant unless you ask it to record a graph of its own.",
             "call tg.grad three times, each on the previous result; pass create_graph=True to every call "
             "whose result you differentiate again.")
    call = "check_third_derivative(third_derivative, hint=2)"
    cases = [("sin(x)·x", lambda x: x.sin() * x, lambda a: -3 * math.sin(a) - a * math.cos(a)),
             ("x⁴", lambda x: x ** 4, lambda a: 24 * a)]
    for name, fn, closed_form in cases:
        for point in (0.5, 1.0, 2.0):
            x_t = torch.tensor(point, dtype=torch.float64, requires_grad=True)
            (d1,) = torch.autograd.grad(fn(x_t), x_t, create_graph=True)
            (d2,) = torch.autograd.grad(d1, x_t, create_graph=True)
            (d3,) = torch.autograd.grad(d2, x_t)
            try:
                ours = third_derivative(fn, tg.tensor(point, dtype=torch.float64, requires_grad=True))
            except RuntimeError as error:
                if "does not require grad" in str(error):
                    return _not_yet(f"for {name} at x = {point} a tg.grad call raised: the gradient you "
                                    "differentiated has no graph (it does not require grad)", hints, hint, call)
                return _not_yet(_raised("third_derivative", error), hints, hint, call)
            except Exception as error:
                return _not_yet(_raised("third_derivative", error), hints, hint, call)
            if ours is None:
                return _not_yet("third_derivative returns None", hints, hint, call)
            if isinstance(ours, (tuple, list)) and len(ours) == 1:
                ours = ours[0]
            value = _number(ours)
            if value is None:
                return _not_yet(f"for {name} it returned a {type(ours).__name__}, not a number", hints, hint, call)
            expected = closed_form(point)
            if not (_close(value, expected, 1e-6, 1e-6) and _close(value, d3.item(), 1e-6, 1e-6)):
                return _not_yet(f"for {name} at x = {point} you got {value:.4f}, the third derivative is "
                                f"{expected:.4f}", hints, hint, call)
    return _correct("third derivatives of sin(x)·x and x⁴ match the closed forms and torch")


# --- 14 · devices --------------------------------------------------------------------------------

def check_meta_grads(meta_grads: Callable, hint: int = 1) -> Verdict:
    """meta_grads(sizes, batch, device="meta") -> [W.grad for each weight], computed by backward."""
    hints = ("every tensor the network uses must be made on the device you are given, with requires_grad "
             "on the weights only.",
             "make the weights with device=device and requires_grad=True, the input with device=device; run "
             "forward (x @ W, tanh between layers), call backward on the sum, and return each W.grad.")
    call = "check_meta_grads(meta_grads, hint=2)"

    def reference(sizes, batch, device):
        weights = [torch.randn(a, b, device=device, requires_grad=True) for a, b in zip(sizes, sizes[1:])]
        h = torch.randn(batch, sizes[0], device=device)
        for k, weight in enumerate(weights):
            h = h @ weight
            if k < len(weights) - 1:
                h = h.tanh()
        h.sum().backward()
        return [weight.grad for weight in weights]

    for sizes, device in (([784, 4096, 4096, 10], "meta"), ([3, 5, 2], "meta"), ([3, 5, 2], "cpu")):
        expected = reference(sizes, 64, device)
        try:
            grads = meta_grads(sizes, 64, device=device)
        except Exception as error:
            return _not_yet(f"for sizes {sizes} on {device}, " + _raised("meta_grads", error), hints, hint, call)
        if not isinstance(grads, (list, tuple)) or len(grads) != len(expected):
            return _not_yet(f"for sizes {sizes} return a list of {len(expected)} gradients, got "
                            f"{type(grads).__name__}", hints, hint, call)
        for k, (g, e) in enumerate(zip(grads, expected)):
            if not isinstance(g, tg.Variable):
                return _not_yet(f"gradient {k} for sizes {sizes} is {type(g).__name__}, not a Variable", hints,
                                hint, call)
            if g.device.type != device or g.shape != e.shape or g.dtype != e.dtype:
                return _not_yet(f"gradient {k} for sizes {sizes} is {g.dtype} of shape {tuple(g.shape)} on "
                                f"{g.device.type}; expected {e.dtype} of shape {tuple(e.shape)} on {device}",
                                hints, hint, call)
            if g.requires_grad or g.grad_fn is not None:
                return _not_yet(f"gradient {k} has a grad_fn: return the .grad of each weight", hints, hint, call)
        if device == "cpu":
            # with the sum as the loss, every column of the last weight's gradient is the same (d loss/d out = 1),
            # and gradients that come from backward are not all zero
            last = grads[-1].data
            if not torch.allclose(last, last[:, :1].expand_as(last)) or any(not g.data.abs().sum() for g in grads):
                return _not_yet("on cpu your gradients are not those of a backward pass (are they made by hand?)",
                                hints, hint, call)
    return _correct("every gradient has its weight's shape, on meta, as in torch; on cpu they come from backward")


# --- 15 · backprop by hand -----------------------------------------------------------------------

BACKPROP_NAMES = ("dlogits", "dW2", "db2", "dh", "dpre", "dW1", "db1")


def backprop_problem(seed: int = 0, n: int = 8, features: int = 4, hidden: int = 5, classes: int = 3):
    """A small batch and MLP weights, float64: X (n, features), y (n,) class labels, W1, b1, W2, b2."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, features, generator=gen, dtype=torch.float64)
    y = torch.randint(0, classes, (n,), generator=gen)
    W1 = torch.randn(features, hidden, generator=gen, dtype=torch.float64) * 0.5
    b1 = torch.randn(hidden, generator=gen, dtype=torch.float64) * 0.1
    W2 = torch.randn(hidden, classes, generator=gen, dtype=torch.float64) * 0.5
    b2 = torch.randn(classes, generator=gen, dtype=torch.float64) * 0.1
    return X, y, W1, b1, W2, b2


def backprop_reference(lib, X, y, W1, b1, W2, b2):
    """Every gradient of the MLP loss by autograd (lib = teachgrad or torch), intermediates included."""
    wrap = (lambda t: tg.Variable(t.clone(), requires_grad=True)) if lib is tg else \
        (lambda t: t.clone().requires_grad_())
    W1, b1, W2, b2 = (wrap(t) for t in (W1, b1, W2, b2))
    Xl = tg.Variable(X) if lib is tg else X
    yl = tg.Variable(y) if lib is tg else y
    pre = Xl @ W1 + b1
    h = pre.tanh()
    logits = h @ W2 + b2
    for t in (pre, h, logits):
        t.retain_grad()
    lib.nn.functional.cross_entropy(logits, yl).backward()
    grads = dict(dlogits=logits.grad, dW2=W2.grad, db2=b2.grad, dh=h.grad, dpre=pre.grad, dW1=W1.grad, db1=b1.grad)
    return {k: (v.data if lib is tg else v) for k, v in grads.items()}


def compare_table(mine: dict, reference: dict) -> str:
    """A table, one row per gradient: shape, close / differs, and the largest difference.

    Agreement is judged within a tolerance (``atol=1e-10``, ``rtol=1e-8``), never bit for bit: which rows
    come out bit-for-bit equal depends on the vector kernels torch picks for the CPU it runs on, so a
    table that said "exact" on one machine would say otherwise on the next. For the same reason a
    difference below ``1e-12`` (round-off in float64) is printed as ``< 1e-12``, not as its digits.
    """
    lines = [f"{'gradient':<9} {'shape':<9} {'verdict':<8} max |yours - torch|"]
    for name, ref in reference.items():
        got = _tensor(mine.get(name)) if isinstance(mine, dict) else None
        shape = str(tuple(ref.shape)).replace(" ", "")
        if got is None:
            lines.append(f"{name:<9} {shape:<9} {'missing':<8} -")
        elif got.shape != ref.shape:
            lines.append(f"{name:<9} {shape:<9} {'shape':<8} yours is {tuple(got.shape)}")
        else:
            ref = ref.double()
            diff = (got - ref).abs().max().item() if ref.numel() else 0.0
            verdict = "close" if torch.allclose(got, ref, atol=1e-10, rtol=1e-8) else "differs"
            lines.append(f"{name:<9} {shape:<9} {verdict:<8} {_difference(diff)}")
    return "\n".join(lines)


ROUND_OFF = 1e-12  # float64 round-off on values of order 1 is ~1e-16: anything below this is rounding


def _difference(diff: float) -> str:
    """A difference as the lesson means it: round-off as ``< 1e-12``, anything larger with its size."""
    return f"< {ROUND_OFF:.0e}" if diff < ROUND_OFF else f"{diff:.1e}"


def check_backprop(backprop_by_hand: Callable, hint: int = 1) -> Verdict:
    """backprop_by_hand(X, y, W1, b1, W2, b2) -> dict of the seven gradients, each compared with torch's."""
    hints = ("go backwards one line of the forward pass at a time;\n"
             "      each gradient has the shape of the tensor it belongs to.",
             "dlogits = (softmax of the logits − one-hot of y) / n; for a product A @ B, dA = d(out) @ Bᵀ and "
             "dB = Aᵀ @ d(out); a bias's gradient sums d(out) over the batch; tanh' = 1 − tanh².")
    call = "check_backprop(backprop_by_hand, hint=2)"
    tables = []
    for seed in (0, 1):
        problem = backprop_problem(seed)
        expected = backprop_reference(torch, *problem)
        ours = backprop_reference(tg, *problem)
        for name in expected:
            assert torch.allclose(ours[name], expected[name]), f"{name}: teachgrad and torch differ"
        try:
            mine = backprop_by_hand(*problem)
        except Exception as error:
            return _not_yet(_raised("backprop_by_hand", error), hints, hint, call)
        if not isinstance(mine, dict):
            return _not_yet("return a dict with the keys " + ", ".join(BACKPROP_NAMES), hints, hint, call)
        table = compare_table(mine, expected)
        tables.append(table)
        bad = [line.split()[0] for line in table.splitlines()[1:] if line.split()[2] != "close"]
        if bad:
            return _not_yet(f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not yet torch's "
                            f"(problem {seed}):\n{table}", hints, hint, call)
    return _correct("every gradient equals torch's (and teachgrad's) on two random problems:\n" + tables[0])


# --- 09 · anomaly detection and inference mode -----------------------------------------------------

def check_safe_sqrt(safe_sqrt: Callable, hint: int = 1) -> Verdict:
    """safe_sqrt(lib, x): sqrt(x) where x > 0, else 0, with a backward that gives no NaN (0 at x <= 0)."""
    import warnings

    hints = ("the NaN comes from the branch where() does not pick: its gradient is 0, times sqrt's "
             "infinite slope at 0. Make sure sqrt never sees a 0.",
             "feed sqrt an input that is safe everywhere (a where() that puts a harmless positive number "
             "at x <= 0), then pick with a second where() as before.")
    call = "check_safe_sqrt(safe_sqrt, hint=2)"
    points = [0.0, -1.0, 0.25, 4.0]
    x_t = torch.tensor(points, dtype=torch.float64)
    positive = x_t > 0
    expected_value = torch.where(positive, x_t.clamp(min=1e-300).sqrt(), 0.0)      # sqrt where x > 0, else 0
    expected_grad = torch.where(positive, 0.5 / x_t.clamp(min=1e-300).sqrt(), 0.0)  # its slope, 0 elsewhere
    for lib in (tg, torch):
        x = lib.tensor(points, dtype=lib.float64, requires_grad=True)
        try:
            y = safe_sqrt(lib, x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with lib.autograd.detect_anomaly():
                    y.sum().backward()
        except Exception as error:
            if "nan values" in str(error):
                return _not_yet(f"backward still returns NaN (with lib = {lib.__name__}): {error}", hints, hint, call)
            return _not_yet(_raised("safe_sqrt", error) + f" (with lib = {lib.__name__})", hints, hint, call)
        value = _tensor(y)
        if value is None or value.shape != expected_value.shape or not torch.allclose(value, expected_value):
            return _not_yet(f"safe_sqrt(lib, {points}) should be {expected_value.tolist()}", hints, hint, call)
        grad = _tensor(x.grad)
        if grad is None or not torch.allclose(grad, expected_grad):
            return _not_yet(f"the gradient should be {expected_grad.tolist()}, got "
                            f"{None if grad is None else grad.tolist()}", hints, hint, call)
    return _correct("the values are sqrt's, and backward gives 0 (not NaN) where x <= 0, even under "
                    "detect_anomaly (same in torch)")


# --- 08 · in-place operations and views ----------------------------------------------------------

def _rows(lib):
    """The data the check uses: a 3 x 4 float64 input that requires grad, and a weight for the loss."""
    x = lib.tensor([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 1.0], [-2.0, 0.75, 0.0, 0.5]],
                   dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.0, -2.0, 0.5, 3.0], dtype=lib.float64)
    return x, w


def check_normalize_rows(normalize_rows: Callable, hint: int = 1) -> Verdict:
    """normalize_rows(lib, x): exp(x) with each row divided by its sum (a softmax), backward must work."""
    hints = ("backward needs a value that your function overwrote: which op saved it, and which line changed it?",
             "exp keeps its result for backward, and the in-place division overwrites that result: divide "
             "out of place (a new tensor), or divide a clone, so the saved result stays as it was.")
    call = "check_normalize_rows(normalize_rows, hint=2)"
    x_t, w_t = _rows(torch)
    expected = torch.softmax(x_t, dim=1)
    (expected * w_t).sum().backward()
    expected_grad = x_t.grad
    for lib in (tg, torch):
        x, w = _rows(lib)
        try:
            out = normalize_rows(lib, x)
            (out * w).sum().backward()
        except Exception as error:
            return _not_yet(_raised("normalize_rows", error) + f" (with lib = {lib.__name__})", hints, hint, call)
        values = _tensor(out)
        if values is None or values.shape != expected.shape or not torch.allclose(values, expected.detach()):
            return _not_yet("normalize_rows(lib, x) should return exp(x) divided by its row sums "
                            f"(with lib = {lib.__name__})", hints, hint, call)
        grad = _tensor(x.grad)
        if grad is None or not torch.allclose(grad, expected_grad):
            return _not_yet("the values are right but x.grad is not: is the result still connected to x "
                            "by autograd?", hints, hint, call)
    return _correct("the rows sum to 1 and backward gives torch's gradient (teachgrad and torch)")


# --- what autograd keeps in memory --------------------------------------------------------------

def _small_net(lib, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(3)
    x, w1, w2 = torch.randn(16, 8, generator=g), torch.randn(8, 12, generator=g) / 3, torch.randn(12, 4, generator=g) / 3
    x, w1, w2 = x.to(dtype), w1.to(dtype), w2.to(dtype)
    if lib is tg:
        return tg.Variable(x), tg.Variable(w1, requires_grad=True), tg.Variable(w2, requires_grad=True)
    return x, w1.requires_grad_(), w2.requires_grad_()


def _net_loss(x, w1, w2):
    return ((x @ w1).tanh() @ w2).sin().sum()


def check_half_hooks(pack_half: Callable, unpack_half: Callable, hint: int = 1) -> Verdict:
    """pack_half/unpack_half: saved tensors kept in float16, given back in their own dtype."""
    hints = ("pack may return any object (a tuple, say): keep what unpack will need to rebuild the tensor.",
             "pack: remember the dtype and return a float16 copy (a method converts, another drops the graph "
             "first); unpack: convert the copy back to the remembered dtype.")
    call = "check_half_hooks(pack_half, unpack_half, hint=2)"
    for dtype in (torch.float32, torch.float64):       # float64 too: unpack must give back the saved dtype
        x, w1, w2 = _small_net(torch, dtype)
        _net_loss(x, w1, w2).backward()
        exact = w1.grad
        grads = []
        for lib in (tg, torch):
            x, w1, w2 = _small_net(lib, dtype)
            kept, returned = [], []

            def pack(t):
                packed = pack_half(t)
                kept.append(packed)
                return packed

            def unpack(packed):
                t = unpack_half(packed)
                returned.append(t)
                return t

            try:
                with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                    loss = _net_loss(x, w1, w2)
                loss.backward()
            except Exception as error:
                return _not_yet(_raised("your hooks", error) + f" (with lib = {lib.__name__}, {dtype} tensors)",
                                hints, hint, call)
            stored = [t for p in kept for t in (p if isinstance(p, (tuple, list)) else (p,))
                      if isinstance(t, (torch.Tensor, tg.Variable))]
            if not stored or any(t.dtype != torch.float16 for t in stored):
                return _not_yet("what pack returns should hold the saved tensor in float16 (half the bytes)",
                                hints, hint, call)
            if any(not isinstance(t, (torch.Tensor, tg.Variable)) or t.dtype != dtype for t in returned):
                return _not_yet(f"unpack_half should give back a tensor of the saved tensor's own dtype: with "
                                f"{dtype} tensors it gave {_dtypes(returned)}", hints, hint, call)
            grads.append(_tensor(w1.grad))
        error = ((grads[0] - exact.double()).abs().max() / exact.abs().max()).item()
        if error > 1e-2:
            return _not_yet(f"the gradients are off by {error:.0e} (relative): is every saved tensor given back "
                            "with its values?", hints, hint, call)
        if not torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6):
            return _not_yet("teachgrad and torch give different gradients under your hooks", hints, hint, call)
    return _correct("saved tensors kept in float16 and given back as float32 or float64, as saved; gradients "
                    "within 1e-2 of exact (teachgrad and torch)")


def _dtypes(values: list) -> str:
    """The kinds of what unpack gave back, for a message: `torch.float32` or a type's name."""
    kinds = sorted({str(v.dtype) if isinstance(v, (torch.Tensor, tg.Variable)) else type(v).__name__ for v in values})
    return ", ".join(kinds)


__all__ += ["check_normalize_rows", "check_half_hooks"]


# --- 14 · forward mode --------------------------------------------------------------------------

def _jacobian_cases():
    """Square, wide (more inputs than outputs) and tall (a scalar input, three outputs) functions."""
    w = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.0, 2.0]], dtype=torch.float64)

    def tall(x):
        return (tg if isinstance(x, tg.Variable) else torch).stack([x, x * x, x.exp()])

    return [("x ↦ sin(x)·x (3 → 3)", lambda x: x.sin() * x, torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)),
            ("x ↦ W @ tanh(x) (3 → 2)", lambda x: (x.tanh() * w).sum(1), torch.tensor([0.1, 0.7, -0.4], dtype=torch.float64)),
            ("x ↦ (x, x², eˣ) (1 → 3)", tall, torch.tensor(0.3, dtype=torch.float64))]


def check_jacobian_by_columns(jacobian_by_columns: Callable, hint: int = 1) -> Verdict:
    """jacobian_by_columns(f, x) against torch.autograd.functional.jacobian, and made with forward mode."""
    hints = ("column j of the Jacobian is how f(x) moves when only x's element j moves: a tangent.",
             "for each element j of x: open fwAD.dual_level(), give x the tangent that is 1 at j and 0 elsewhere "
             "(shaped like x), read fwAD.unpack_dual(f(dual)).tangent; stack the columns on a new last "
             "dimension and reshape to f(x).shape + x.shape.")
    call = "check_jacobian_by_columns(jacobian_by_columns, hint=2)"
    for name, f, x0 in _jacobian_cases():
        expected = torch.autograd.functional.jacobian(f, x0.clone())
        ours_reverse = tg.autograd.functional.jacobian(f, tg.Variable(x0.clone()))
        assert torch.allclose(ours_reverse.data, expected)
        calls = []

        def counting(x, f=f):
            calls.append(forward_ad.is_dual(x))
            return f(x)

        try:
            answer = jacobian_by_columns(counting, tg.Variable(x0.clone()))
        except Exception as error:  # noqa: BLE001 (the learner's code may raise anything)
            return _not_yet(_raised("jacobian_by_columns", error) + f" for {name}", hints, hint, call)
        if answer is None:
            return _not_yet("jacobian_by_columns returns None; return the Jacobian", hints, hint, call)
        got = _tensor(answer)
        if got is None:
            return _not_yet(f"for {name} it returned a {type(answer).__name__}, not a tensor", hints, hint, call)
        if tuple(got.shape) != tuple(expected.shape):
            return _not_yet(f"for {name} the Jacobian has shape {tuple(got.shape)}; it should be f(x).shape + "
                            f"x.shape = {tuple(expected.shape)}", hints, hint, call)
        if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
            return _not_yet(f"for {name} the numbers differ from torch.autograd.functional.jacobian", hints, hint, call)
        if not any(calls):
            return _not_yet("the numbers are right, but f never saw a dual tensor: build the columns with "
                            "forward mode (make_dual)", hints, hint, call)
    return _correct("all three Jacobians equal torch.autograd.functional.jacobian, column by column in forward mode")


__all__ += ["check_jacobian_by_columns"]


# === issue 24: the checks of 04's topological-sort engine and 08's write through a view =======================
# (a block of its own: the checks above are unchanged)

# --- 04 · build your own engine: the topological sort ---------------------------------------------

def _graph_of(root_node) -> tuple[list, list]:
    """Every node reachable from root_node, and every edge (node, next_node) between them; no recursion."""
    nodes, edges, stack = {root_node: None}, [], [root_node]
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            edges.append((node, next_node))
            if next_node not in nodes:
                nodes[next_node] = None
                stack.append(next_node)
    return list(nodes), edges


def _order_problem(order: Any, root) -> str | None:
    """What keeps `order` from being a run order of root's graph (each node once, before the nodes it
    sends gradients to), or None when it is one."""
    if order is None:
        return "topological_order returns None; return a list of nodes"
    if isinstance(order, (str, bytes, dict)) or not hasattr(order, "__iter__"):
        return f"topological_order returns {type(order).__name__}; return a list of nodes"
    order = list(order)
    nodes, edges = _graph_of(root.grad_fn)
    position = {}
    for i, node in enumerate(order):
        if not hasattr(node, "next_functions"):
            return f"item {i} of the order is {type(node).__name__}, not a node of the graph"
        if node in position:
            return f"it lists {type(node).__name__} twice: each node goes in once"
        position[node] = i
    missing = [node for node in nodes if node not in position]
    if missing:
        return f"it misses {len(missing)} of the graph's {len(nodes)} nodes (one is a {type(missing[0]).__name__})"
    if len(order) != len(nodes):
        return f"it lists {len(order) - len(nodes)} nodes that are not in the graph behind root"
    late = [(a, b) for a, b in edges if position[a] > position[b]]
    if late and len(late) == len(edges):
        return "every node comes after the nodes it sends gradients to: that is the order reversed"
    if late:
        a, b = late[0]
        return (f"a {type(b).__name__} comes before the {type(a).__name__} that sends it a gradient "
                f"({len(late)} of the {len(edges)} edges point backwards in your order)")
    return None


def deep_chain(lib, length: int):
    """x and `length` multiplications in a row: a graph deeper than Python's recursion limit when long."""
    x = lib.tensor(0.5, dtype=torch.float64, requires_grad=True)
    h = x
    for _ in range(length):
        h = h * 1.0001
    return h, [x]


DEEP = 5000   # nodes in the deep chain: more than Python's recursion limit (1000; 3000 in IPython)


def check_topo_grad(topological_order: Callable, topo_grad: Callable, hint: int = 1) -> Verdict:
    """topological_order(root) -> the nodes behind root, each before the nodes it sends gradients to;
    topo_grad(root, leaves) -> one gradient per leaf, as tg.grad gives, each node run once."""
    hints = ("a node's gradient is complete once every node that sends it one has run: list the nodes so that each "
             "comes before the nodes in its next_functions, then one pass down the list runs each node once.",
             "depth-first search from root.grad_fn with your own stack of (node, expanded) pairs: the first time you "
             "pop a node, push it back as expanded, then push its next_functions nodes you have not seen; when you "
             "pop an expanded node, append it to a list. A node is appended only after every node below it, so the "
             "list reversed starts at root.grad_fn. Then walk that order with a dict node -> summed gradient: take "
             "the node's sum, run(node, grad), add each gradient it sends into its next node's entry; an "
             "AccumulateGrad node's sum is its leaf's gradient.")
    call = "check_topo_grad(topological_order, topo_grad, hint=2)"
    cases = [("the diamond chain of depth 3", lambda lib: diamond_chain(lib, 3))]
    cases += [(f"random graph {seed}", lambda lib, seed=seed: random_graph(lib, seed)) for seed in range(8)]
    cases += [(f"a chain {DEEP} nodes deep", lambda lib: deep_chain(lib, DEEP))]
    for name, make in cases:
        root, leaves, expected = _graph_and_grads(make)
        try:
            order = topological_order(root)
        except RecursionError:
            return _not_yet(f"on {name}, topological_order went past Python's recursion limit: keep your own "
                            "stack instead of calling a function for each node", hints, hint, call)
        except Exception as error:
            return _not_yet(f"on {name}, " + _raised("topological_order", error), hints, hint, call)
        try:
            problem = _order_problem(order, root)
        except Exception as error:          # an order of odd things: say what came back, never raise
            problem = f"it could not be read as a list of nodes ({type(error).__name__})"
        if problem:
            return _not_yet(f"on {name}, the order is not yet a topological order: {problem}", hints, hint, call)
        try:
            with _CountCalls() as counter:
                got = topo_grad(root, leaves)
        except RecursionError:
            return _not_yet(f"on {name}, topo_grad went past Python's recursion limit", hints, hint, call)
        except Exception as error:
            return _not_yet(f"on {name}, " + _raised("topo_grad", error), hints, hint, call)
        problem = _leaf_grads_problem(got, expected, "topo_grad", "did its AccumulateGrad node get its sum?")
        if problem:
            return _not_yet(f"on {name}, {problem}", hints, hint, call)
        problem = _ran_twice(counter, "in a topological order each node runs once")
        if problem:
            return _not_yet(f"on {name}, {problem}", hints, hint, call)
    for seed in range(3):             # torch's own graphs: the same two functions must work on its nodes
        root_t, leaves_t = random_graph(torch, seed)
        expected_t = torch.autograd.grad(root_t, leaves_t, retain_graph=True)
        try:
            problem = _order_problem(topological_order(root_t), root_t)
            got_t = topo_grad(root_t, leaves_t)
        except Exception as error:
            return _not_yet(f"on torch's graph {seed}, your functions raised {type(error).__name__}: "
                            f"{str(error).splitlines()[0] if str(error) else ''}", hints, hint, call)
        if problem:
            return _not_yet(f"on torch's graph {seed}, the order is not yet a topological order: {problem}",
                            hints, hint, call)
        if got_t is None or len(got_t) != len(leaves_t) or not all(
                _tensor(g) is not None and torch.allclose(_tensor(g), e, atol=1e-10) for g, e in zip(got_t, expected_t)):
            return _not_yet(f"on torch's graph {seed}, the gradients differ from torch.autograd.grad's",
                            hints, hint, call)
    return _correct(f"your order is topological on every graph (the {DEEP}-deep chain too) and your engine gives "
                    "tg.grad's and torch's gradients, running each node once; on torch's own graphs too")


# --- 08 · in-place and views: a write through a view ------------------------------------------------

VIEW_WRITE_W = [[1.0, -1.0, 2.0], [0.5, 3.0, -2.0]]


def view_write(lib):
    """y = x * 1, then column 0 of y overwritten with twice column 1; the loss weighs y by w."""
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    w = lib.tensor(VIEW_WRITE_W, dtype=torch.float64)
    y = x * 1
    y[:, 0] = y[:, 1] * 2
    loss = (y * w).sum()
    loss.backward()
    return {"x": x, "y": y, "loss": loss}


def check_view_write(x_grad_prediction: Any, hint: int = 1) -> Verdict:
    """x_grad_prediction: x.grad after view_write's backward, as a 2 × 3 nested list (or a tensor)."""
    hints = ("after the write, which elements of x does each element of y come from? Column 0 of y no longer "
             "comes from column 0 of x.",
             "write each element of y after the write as a formula in x: the written slice takes its values from "
             "the write's source, the other elements keep y's old history (that is what CopySlices does in "
             "backward). Then ∂loss/∂x[i, j] adds up w over every element of y that uses x[i, j], times that "
             "element's local derivative; an element of x that no element of y uses any more gets 0.")
    call = "check_view_write(my_x_grad, hint=2)"
    ours, theirs = view_write(tg), view_write(torch)
    assert ours["y"].grad_fn.name() == theirs["y"].grad_fn.name() == "torch::autograd::CopySlices"
    assert torch.equal(ours["x"].grad.data, theirs["x"].grad), "teachgrad and torch differ"
    expected = theirs["x"].grad
    answer = _tensor(x_grad_prediction)
    if answer is None or (answer.numel() and torch.isnan(answer).any()):
        return _not_yet("fill in my_x_grad with 2 rows of 3 numbers", hints, hint, call)
    if tuple(answer.shape) != (2, 3):
        return _not_yet(f"my_x_grad has shape {tuple(answer.shape)}; x.grad has x's shape, (2, 3)", hints, hint, call)
    if torch.allclose(answer, expected, atol=1e-6):
        return _correct("that is x.grad in teachgrad and in torch: the overwritten column gets nothing, the "
                        "column the write copied from gets its own weight plus twice the overwritten one's")
    if torch.allclose(answer, torch.tensor(VIEW_WRITE_W, dtype=torch.float64)):
        return _not_yet("that is x.grad as if the write had not happened (∂loss/∂y = w, passed straight through)",
                        hints, hint, call)
    wrong = [f"column {j}" for j in range(3) if not torch.allclose(answer[:, j], expected[:, j], atol=1e-6)]
    return _not_yet(f"{' and '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not yet right", hints, hint, call)


# --- 17 · backprop by hand: the deeper network ---------------------------------------------------

def linear_backward(d_out: torch.Tensor, inputs: torch.Tensor, weight: torch.Tensor):
    """The backward of `out = inputs @ weight + bias` (bias broadcast over the rows), by section 2's rule of
    notebook 17: returns (d_inputs, d_weight, d_bias). Kept here so that the notebook's later sections can use
    it without printing the answer of its exercise."""
    return d_out @ weight.T, inputs.T @ d_out, d_out.sum(dim=0)


__all__ += ["check_topo_grad", "deep_chain", "check_view_write", "view_write", "linear_backward"]
