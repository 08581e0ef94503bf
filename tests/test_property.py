"""Random expression graphs (reused nodes, Python-number constants, broadcasting, 0-dim tensors):
teachgrad's values and gradients equal torch's in float64."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import teachgrad as tg

from .helpers import close

SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3)]

UNARY = {
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "sin": lambda x: x.sin(),
    "exp_tanh": lambda x: x.tanh().exp(),
    "square": lambda x: x ** 2,
    "neg": lambda x: -x,
    "relu": lambda x: x.relu(),
    "log1p_sq": lambda x: (x * x + 1).log(),
    "sqrt1p_sq": lambda x: (x * x + 1).sqrt(),
    "mean_keep": lambda x: x.mean(-1, keepdim=True) if x.dim() else x,
    "sum_all": lambda x: x.sum(),
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1),
    "maximum": lambda a, b: a.maximum(b) if hasattr(a, "maximum") else a,
}
CONSTANT = {
    "add_c": lambda x, c: x + c,
    "rsub_c": lambda x, c: c - x,
    "rmul_c": lambda x, c: c * x,
    "div_c": lambda x, c: x / (abs(c) + 0.5),
    "pow_c": lambda x, c: (x * x + 1) ** (c / 2),
}

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.integers(0, 100)),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 100), st.integers(0, 100)),
    st.tuples(st.just("constant"), st.sampled_from(sorted(CONSTANT)), st.integers(0, 100),
              st.floats(-3, 3, allow_nan=False).map(lambda c: round(c, 3))),
)
program = st.tuples(
    st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
    st.lists(step, min_size=1, max_size=12),
    st.integers(0, 2**16),
)


def run(lib, leaves, steps):
    """Build the graph step by step: every step may use any node built so far."""
    nodes = list(leaves)
    for kind, name, *args in steps:
        if kind == "unary":
            nodes.append(UNARY[name](nodes[args[0] % len(nodes)]))
        elif kind == "binary":
            nodes.append(BINARY[name](nodes[args[0] % len(nodes)], nodes[args[1] % len(nodes)]))
        else:
            nodes.append(CONSTANT[name](nodes[args[0] % len(nodes)], args[1]))
    out = nodes[-1].sum() + sum(n.sum() for n in nodes[len(leaves):-1]) * 0.5 if len(nodes) > len(leaves) + 1 else nodes[-1].sum()
    return out


def build_both(prog):
    """The program's graph built twice from the same random leaves: with teachgrad and with torch."""
    shapes, steps, seed = prog
    gen = torch.Generator().manual_seed(seed)
    data = [torch.randn(s, generator=gen, dtype=torch.float64) for s in shapes]
    ours_leaves = [tg.Variable(d.clone(), requires_grad=True) for d in data]
    theirs_leaves = [d.clone().requires_grad_() for d in data]
    return data, ours_leaves, theirs_leaves, run(tg, ours_leaves, steps), run(torch, theirs_leaves, steps)


@settings(max_examples=150, deadline=None)
@given(program)
def test_random_graphs_match_torch(prog):
    steps = prog[1]
    data, ours_leaves, theirs_leaves, ours, theirs = build_both(prog)
    assert close(ours, theirs)
    if not theirs.requires_grad:
        return
    ours.backward()
    theirs.backward()
    for a, b in zip(ours_leaves, theirs_leaves):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            assert close(a.grad, b.grad), (steps, a.grad, b.grad)


@settings(max_examples=40, deadline=None)
@given(program)
def test_random_graphs_second_order_match_torch(prog):
    data, ours_leaves, theirs_leaves, ours, theirs = build_both(prog)
    if not theirs.requires_grad:
        return
    g_ours = tg.grad(ours, ours_leaves, create_graph=True, allow_unused=True)
    g_theirs = torch.autograd.grad(theirs, theirs_leaves, create_graph=True, allow_unused=True)
    # Where a path's second derivative is zero, torch sometimes keeps the (zero) path connected and
    # teachgrad leaves it out: compare those as zeros.
    s_ours = sum((g * g).sum() for g in g_ours if g is not None)
    s_theirs = sum((g * g).sum() for g in g_theirs if g is not None)
    assert abs(float(s_ours) - float(s_theirs)) <= 1e-9 * (1 + abs(float(s_theirs)))
    h_ours = tg.grad(s_ours, ours_leaves, allow_unused=True) if getattr(s_ours, "requires_grad", False) else [None] * len(data)
    h_theirs = torch.autograd.grad(s_theirs, theirs_leaves, allow_unused=True) if getattr(s_theirs, "requires_grad", False) else [None] * len(data)
    for a, b, d in zip(h_ours, h_theirs, data):
        a = torch.zeros_like(d) if a is None else a.data
        b = torch.zeros_like(d) if b is None else b
        assert close(a, b)
