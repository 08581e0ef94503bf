"""Partition: split the joint graph into a forward program and a backward program, and choose what passes
between them (the saved values), with functorch's two partitioners.

The joint graph mixes three kinds of Node: those the forward's outputs need (they run in the forward, whatever
happens), those that read a tangent (they can only run in the backward, once the gradient has come), and the rest,
which depend on the primals only and could run in either. A value the backward reads that the forward made is
**saved**: the forward returns it beside its outputs and the backward takes it as an input.

- `default_partition` (functorch's): the forward runs what its outputs need, the backward everything else; what
  the backward reads from the forward is saved. That is what eager saves: teachgrad's backward formulas read
  what `save_for_backward` kept.
- `min_cut_rematerialization_partition` (functorch's): saving costs memory (the bytes of each saved tensor, kept
  from the forward to the backward), recomputing a cheap pointwise op in the backward costs almost nothing. Find
  the cheapest set of values that cuts every path from the primals to the backward: a minimum cut in a graph
  where each Node is an edge `in -> out` whose capacity is its bytes (max-flow equals min-cut; `networkx` finds
  it). The Nodes past the cut are recomputed in the backward from the saved ones. A matmul, a reduction, a random
  draw or an in-place write is not recomputed: its `in` is tied to the source.

Both return a `Partition`: the forward's Nodes, the backward's Nodes and the saved values. The default's saved
set is always a cut of the min-cut's graph, so the min-cut never keeps more bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

from .capture import RANDOM, Graph, Node, op_name

# What the min-cut partitioner may recompute in the backward: pointwise ops and views (cheap; memory bound).
RECOMPUTABLE = {
    "add", "sub", "mul", "div", "neg", "exp", "log", "tanh", "sigmoid", "relu", "where", "pow", "sqrt", "rsqrt",
    "sin", "cos", "abs", "clamp", "clamp_min", "clamp_max", "gt", "lt", "ge", "le", "eq", "ne", "sign", "reciprocal",
    "square", "exp2", "expm1", "log1p", "log2", "erf", "gelu", "silu", "threshold", "threshold_backward", "masked_fill",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__neg__",
    "__pow__", "__rpow__", "__gt__", "__lt__", "__ge__", "__le__", "__eq__", "__ne__", "__and__", "__or__",
    "type_as", "to", "float", "double", "half", "view", "reshape", "t", "T", "mT", "transpose", "permute", "expand",
    "expand_as", "unsqueeze", "squeeze", "view_as", "reshape_as", "flatten", "unflatten", "narrow", "select",
    "__getitem__", "contiguous", "getitem", "split", "chunk", "unbind", "movedim", "zeros_like", "ones_like",
    "full_like", "empty_like"}


@dataclass
class Partition:
    """The forward's Nodes and the backward's, in the joint graph's order, and the values saved between them."""
    forward: list
    backward: list
    saved: list

    def saved_bytes(self) -> int:
        return sum(n.nbytes for n in self.saved)


def _ancestors(roots: list, stop: set = frozenset()) -> set:
    seen, todo = set(), [r for r in roots if r is not None]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node not in stop:
            todo += node.inputs()
    return seen


def _tangent_side(graph: Graph) -> set:
    """The Nodes that read a tangent, directly or not: they can only run in the backward."""
    side = set(graph.tangents)
    for node in graph.nodes:   # (the nodes are in a topological order)
        if any(i in side for i in node.inputs()):
            side.add(node)
    return side


def _must_run_forward(graph: Graph, backward_only: set) -> set:
    """What runs in the forward whatever the partitioner: what the outputs need, random draws, in-place writes."""
    state = [n for n in graph.nodes if n.kind == "call" and n not in backward_only and (
        op_name(n.target) in RANDOM or n.writes is not None)]
    return _ancestors(graph.outputs + state) - backward_only


def _programs(graph: Graph, forward: set, saved: list) -> Partition:
    """The forward: `forward`'s Nodes and what the saved values need. The backward: what the gradients need, from
    the saved values, the tangents, and what it recomputes."""
    forward = forward | _ancestors(saved)
    inputs = set(saved) | set(graph.tangents)
    backward = _ancestors(graph.grads, stop=inputs) - inputs
    in_order = lambda chosen: [n for n in graph.nodes if n in chosen and n.kind in ("call", "getitem")]
    wrong = [n for n in backward if n.kind == "placeholder"]
    assert not wrong, f"the backward reads {wrong} but they are not saved"
    return Partition(in_order(forward), in_order(backward), saved)


def default_partition(graph: Graph) -> Partition:
    """Save what eager saves: every value the forward made (or was given) that the backward reads."""
    backward_only = _tangent_side(graph)
    forward = _must_run_forward(graph, backward_only) | set(graph.primals)
    backward = _ancestors(graph.grads, stop=forward) - forward
    saved = [n for n in graph.nodes if n in forward and n.kind != "constant" and any(u in backward for u in n.users)]
    return _programs(graph, forward, saved)


def min_cut_rematerialization_partition(graph: Graph) -> Partition:
    """Save the fewest bytes: a minimum cut between the primals and the backward, recomputing cheap ops after it."""
    import networkx   # (here, not at the top: `import teachgrad` does not pay for it until a min-cut is asked)
    backward_only = _tangent_side(graph)
    forward = _must_run_forward(graph, backward_only) | set(graph.primals)
    written = {n.storage for n in graph.nodes if n.writes is not None}
    flow = networkx.DiGraph()
    flow.add_node("source")
    flow.add_node("sink")
    for node in graph.nodes:
        if node.kind == "constant":
            continue
        if node in backward_only:   # a backward node: whatever it reads from the other side must reach it
            for i in node.inputs():
                if i not in backward_only and i.kind != "constant":
                    flow.add_edge(i.name + "_out", "sink")   # (no capacity: infinite)
            continue
        banned = node.kind == "call" and (op_name(node.target) not in RECOMPUTABLE or node.writes is not None or
                                          any(i.storage in written for i in node.inputs()))
        if node.kind == "placeholder" or node in forward and banned:
            flow.add_edge("source", node.name + "_in")
        if node.storage == -1:    # a tuple: its elements are saved, not it
            flow.add_edge(node.name + "_in", node.name + "_out")
        else:
            flow.add_edge(node.name + "_in", node.name + "_out", capacity=node.nbytes)
        for user in node.users:
            if user not in backward_only:
                flow.add_edge(node.name + "_out", user.name + "_in")
    _, (reachable, _) = networkx.minimum_cut(flow, "source", "sink")
    saved = [n for n in graph.nodes if n.name + "_in" in reachable and n.name + "_out" not in reachable
             and n.name + "_out" in flow]
    return _programs(graph, forward, saved)
