"""The graphs notebook 04's engine checks run a learner's engine on (the notebook draws them too), and the
counter of how often each node runs."""
from __future__ import annotations

import random

import torch

import teachgrad as tg

__all__ = ["random_graph", "diamond_chain", "deep_chain", "DEEP"]


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


def deep_chain(lib, length: int):
    """x and `length` multiplications in a row: a graph deeper than Python's recursion limit when long."""
    x = lib.tensor(0.5, dtype=torch.float64, requires_grad=True)
    h = x
    for _ in range(length):
        h = h * 1.0001
    return h, [x]


DEEP = 5000   # nodes in the deep chain: more than Python's recursion limit (1000; 3000 in IPython)


def _node_class() -> type:
    """teachgrad's base class of graph nodes, whose `__call__` every node runs (a backward node's and an
    AccumulateGrad's alike). No public name leads to it, so it is read off a graph of one multiplication:
    the first class in AccumulateGrad's MRO that writes `__call__`, and a base of the backward node too."""
    with tg.enable_grad():
        x = tg.tensor(1.0, requires_grad=True)
        backward_node = (x * 1).grad_fn
    accumulate_grad = backward_node.next_functions[0][0]
    return next(klass for klass in type(accumulate_grad).__mro__
                if "__call__" in vars(klass) and klass in type(backward_node).__mro__)


class _CountCalls:
    """Count how often each teachgrad node runs while the learner's engine works (node(grad) calls)."""

    def __enter__(self):
        self.calls = {}
        self.node_class = _node_class()
        self.original = self.node_class.__call__
        calls, original = self.calls, self.original

        def counted(node, *grads):
            calls[node] = calls.get(node, 0) + 1
            return original(node, *grads)
        self.node_class.__call__ = counted
        return self

    def __exit__(self, *exc):
        self.node_class.__call__ = self.original
