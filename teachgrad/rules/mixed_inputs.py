"""The arguments of `Function.apply` that are not Variables: numbers, torch tensors, None, index arguments.

`_read_recorded` (teachgrad/core/function.py) reads the usual case in one lean loop: Variables, a number operand of
+ - * /, and arguments that are no inputs (a shape, a dim); a torch tensor, None or an index argument sends it here.
As torch records them: a number some built-ins take as an input (Mul's `x * 2`), a torch tensor, or None (for
`none_is_input`) gets an empty edge, other arguments none; an index, condition or target argument
(`nondifferentiable_args`) gets no edge even when it requires grad; a torch tensor that requires grad (an
`nn.Parameter`) is a leaf of teachgrad's graph (see teachgrad/rules/torch_leaves.py). Both readers build one row
per argument and hand the rows to `record_edges`, which sets the node's edges.

Guarded by tests/test_function.py and tests/test_engine_fidelity.py (edges of number and None arguments,
next_functions as torch's), tests/test_torch_boundary.py and tests/test_interop.py (torch tensors as inputs).
"""
from __future__ import annotations

from typing import Any

import torch

from . import torch_leaves, variable_class

_NO_EDGE = (None, 0)


NOT_AN_INPUT = object()   # marks, in a row of `record_edges`, an argument that gets no edge (a shape, a dim)


def record_edges(ctx: Any, rows: list) -> tuple:
    """From one row per argument, (data, needs a gradient, node, input_nr, meta), set `ctx.needs_input_grad` and,
    when an input needs a gradient, the node's edges; return what forward computes with (each row's data).

    An argument that is no input (its node NOT_AN_INPUT) gets no edge: `_input_slots` then says which arguments
    the edges are for."""
    raw, ctx.needs_input_grad, nodes, input_nrs, metas = zip(*rows)   # (one tuple each)
    if True in ctx.needs_input_grad:
        if NOT_AN_INPUT in nodes:   # the edges are for the other arguments
            inputs = [(i, *row[2:]) for i, row in enumerate(rows) if row[2] is not NOT_AN_INPUT]
            ctx._input_slots, nodes, input_nrs, metas = zip(*inputs)
        ctx._next_nodes, ctx._input_nrs, ctx._input_meta = nodes, input_nrs, metas
    return raw


def read_mixed_inputs(cls: type, ctx: Any, args: tuple) -> tuple[tuple, tuple]:
    """`_read_recorded` for arguments that are not all Variables, numbers and shapes. Returns (args, raw).

    A number some built-ins take as an input, a torch tensor, or None (for `none_is_input`) gets an empty edge;
    other arguments get none. A torch tensor that requires grad (an `nn.Parameter`) is a leaf of teachgrad's
    graph: it stands in the arguments as a `TorchLeaf` Variable, whose edge leads to the tensor's own
    AccumulateGrad."""
    Variable = variable_class.Variable
    skipped = cls.nondifferentiable_args   # (index, condition and target arguments: no edge)
    rows = []                              # per argument: (data, needs a gradient, node, input_nr, meta)
    leaves = None                          # the arguments, each torch tensor that requires grad as its TorchLeaf
    for i, arg in enumerate(args):
        if skipped and i in skipped:       # no edge, even when it requires grad
            if isinstance(arg, Variable):
                arg = arg._data
            elif isinstance(arg, torch.Tensor) and arg.requires_grad:
                arg = arg.detach()
            rows.append((arg, False, NOT_AN_INPUT, 0, None))
            continue
        # an nn.Parameter: a leaf of teachgrad's graph (Variable asked first: isinstance against torch.Tensor, whose
        # class has a metaclass of its own, is slow to say no)
        if not isinstance(arg, Variable) and isinstance(arg, torch.Tensor) and arg.requires_grad:
            arg = torch_leaves.leaf(arg)
            if leaves is None:
                leaves = list(args)
            leaves[i] = arg
        if isinstance(arg, Variable):
            data = arg._data
            if arg._requires_grad or arg._grad_fn is not None or (arg._view is not None and arg.requires_grad):
                node, input_nr = arg._edge()
                rows.append((data, True, node, input_nr, (tuple(data.shape), data.dtype, data.device)))  # (as _meta)
            else:
                rows.append((data, False, None, 0, None))
        elif isinstance(arg, torch.Tensor) or (arg is None and cls.none_is_input) or \
                (cls.numbers_are_inputs and isinstance(arg, (int, float))):   # a constant input: an empty edge
            rows.append((arg, False, None, 0, None))
        else:                              # a shape, a dim, a flag: no edge
            rows.append((arg, False, NOT_AN_INPUT, 0, None))
    raw = record_edges(ctx, rows)
    return (args if leaves is None else tuple(leaves)), raw
