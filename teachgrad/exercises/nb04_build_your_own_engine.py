"""Notebook 04 · build your own engine: the learner's engine (a ready-count one, then a topological-sort one)
run on random graphs, diamonds and a deep chain, against tg.grad and torch, each node run once."""
from __future__ import annotations

from typing import Any, Callable

import torch

import teachgrad as tg
from ._graphs import DEEP, _CountCalls, deep_chain, diamond_chain, random_graph
from ._method import Watch, refusal
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor

__all__ = ["check_my_grad", "check_topo_grad"]


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


def _called_an_engine(watch: Watch, fn_name: str) -> str | None:
    """Why an engine that hands the work to a library's engine is not yet one (None when it did not)."""
    refused = watch.refused(("reverse",))
    if refused is None:
        return None
    return refusal(fn_name, refused, "the exercise is to write that engine, running each node yourself")


# The graphs both engine checks run a learner's engine on: (what the verdict calls it, how to make it in a library)
_GRAPHS = [("the diamond chain of depth 3", lambda lib: diamond_chain(lib, 3))]
_GRAPHS += [(f"random graph {seed}", lambda lib, seed=seed: random_graph(lib, seed)) for seed in range(8)]


def _engine_problem(engine: Callable, fn_name: str, root: Any, leaves: Any, expected: Any, unreached: str,
                    rule: str, recursion_limit: bool = False) -> str | None:
    """Run a learner's engine on one graph: what is not yet right about it (or None), in the order a learner
    meets it: it raised (or went past the recursion limit), it called a library's engine, a leaf's gradient is
    wrong, a node ran twice."""
    watch = Watch()
    try:
        with _CountCalls() as counter, watch:
            got = engine(root, leaves)
    except Exception as error:
        if recursion_limit and isinstance(error, RecursionError):
            return f"{fn_name} went past Python's recursion limit"
        return _called_an_engine(watch, fn_name) or _raised(fn_name, error)
    return (_called_an_engine(watch, fn_name) or _leaf_grads_problem(got, expected, fn_name, unreached)
            or _ran_twice(counter, rule))


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
    for name, make in _GRAPHS:
        root, leaves, expected = _graph_and_grads(make)
        problem = _engine_problem(my_grad, "my_grad", root, leaves, expected,
                                  "your engine never reached its AccumulateGrad node",
                                  "a node should run once, with the sum")
        if problem:
            return _not_yet(f"on {name}, {problem}", hints, hint, call)
    # torch's own graph: the same engine must work on torch's nodes
    for seed in range(3):
        root_t, leaves_t = random_graph(torch, seed)
        expected_t = torch.autograd.grad(root_t, leaves_t, retain_graph=True)
        watch = Watch()
        try:
            with watch:
                got_t = my_grad(root_t, leaves_t)
        except Exception as error:
            why = _called_an_engine(watch, "my_grad") or _raised("my_grad", error)
            return _not_yet(f"on torch's graph {seed}, " + why, hints, hint, call)
        problem = _called_an_engine(watch, "my_grad")
        if problem:
            return _not_yet(f"on torch's graph {seed}, {problem}", hints, hint, call)
        if got_t is None or len(got_t) != len(leaves_t) or not all(
                _tensor(g) is not None and torch.allclose(_tensor(g), e, atol=1e-10) for g, e in zip(got_t, expected_t)):
            return _not_yet(f"on torch's graph {seed}, the gradients differ from torch.autograd.grad's",
                            hints, hint, call)
    return _correct("on the diamond chain and 8 random graphs your engine gives tg.grad's and torch's gradients, "
                    "running each node once; on torch's own graphs too")


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


def _a(name: str) -> str:
    """A node's class name with its article, as it is read: an ExpBackward0, a MulBackward0."""
    return ("an " if name[:1] in "AEIOU" else "a ") + name


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
        return f"it misses {len(missing)} of the graph's {len(nodes)} nodes (one is {_a(type(missing[0]).__name__)})"
    if len(order) != len(nodes):
        return f"it lists {len(order) - len(nodes)} nodes that are not in the graph behind root"
    late = [(a, b) for a, b in edges if position[a] > position[b]]
    if late and len(late) == len(edges):
        return "every node comes after the nodes it sends gradients to: that is the order reversed"
    if late:
        a, b = late[0]
        return (f"{_a(type(b).__name__)} comes before the {type(a).__name__} that sends it a gradient "
                f"({len(late)} of the {len(edges)} edges point backwards in your order)")
    return None


def check_topo_grad(topological_order: Callable, topo_grad: Callable, hint: int = 1) -> Verdict:
    """topological_order(root) -> the nodes behind root, each before the nodes it sends gradients to;
    topo_grad(root, leaves) -> one gradient per leaf, as tg.grad gives, each node run once."""
    hints = ("a node's gradient is complete once every node that sends it one has run: list the nodes so that each "
             "comes before the nodes in its next_functions, then one pass down the list runs each node once.",
             "a depth-first search can list a node only after every node below it: when? Run it from "
             "root.grad_fn with a stack of your own (a node you come back to is finished), and ask which end "
             "of that list root.grad_fn is at. Then one pass down the order, with a dict of summed gradients, "
             "runs each node once with run(node, grad); an AccumulateGrad node's sum is its leaf's gradient.")
    call = "check_topo_grad(topological_order, topo_grad, hint=2)"
    cases = _GRAPHS + [(f"a chain {DEEP} nodes deep", lambda lib: deep_chain(lib, DEEP))]
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
        problem = _engine_problem(topo_grad, "topo_grad", root, leaves, expected,
                                  "did its AccumulateGrad node get its sum?",
                                  "in a topological order each node runs once", recursion_limit=True)
        if problem:
            return _not_yet(f"on {name}, {problem}", hints, hint, call)
    for seed in range(3):             # torch's own graphs: the same two functions must work on its nodes
        root_t, leaves_t = random_graph(torch, seed)
        expected_t = torch.autograd.grad(root_t, leaves_t, retain_graph=True)
        watch = Watch()
        try:
            problem = _order_problem(topological_order(root_t), root_t)
            with watch:
                got_t = topo_grad(root_t, leaves_t)
        except Exception as error:
            why = _called_an_engine(watch, "topo_grad") or (f"your functions raised {type(error).__name__}: "
                                                            f"{str(error).splitlines()[0] if str(error) else ''}")
            return _not_yet(f"on torch's graph {seed}, {why}", hints, hint, call)
        if problem:
            return _not_yet(f"on torch's graph {seed}, the order is not yet a topological order: {problem}",
                            hints, hint, call)
        problem = _called_an_engine(watch, "topo_grad")
        if problem:
            return _not_yet(f"on torch's graph {seed}, {problem}", hints, hint, call)
        if got_t is None or len(got_t) != len(leaves_t) or not all(
                _tensor(g) is not None and torch.allclose(_tensor(g), e, atol=1e-10) for g, e in zip(got_t, expected_t)):
            return _not_yet(f"on torch's graph {seed}, the gradients differ from torch.autograd.grad's",
                            hints, hint, call)
    return _correct(f"your order is topological on every graph (the {DEEP}-deep chain too) and your engine gives "
                    "tg.grad's and torch's gradients, running each node once; on torch's own graphs too")
