"""Notebook 03 · the graph and the engine: the edges into x's AccumulateGrad, and x.grad."""
from __future__ import annotations

from typing import Any

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _number, _close

__all__ = ["check_count_and_sum"]


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
