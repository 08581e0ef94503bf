"""The arguments of `Function.apply` that are not Variables: numbers, torch tensors, None, index arguments.

`_read_inputs` (teachgrad/core/function.py) reads the usual case, every argument a Variable or a number operand of
+ - * /, in one lean loop; any other argument sends it here. As torch records them: a number some built-ins take as an input (Mul's
`x * 2`), a torch tensor, or None (for `none_is_input`) gets an empty edge, other arguments none; an index,
condition or target argument (`nondifferentiable_args`) gets no edge even when it requires grad; a torch
tensor that requires grad (an `nn.Parameter`) is a leaf of teachgrad's graph (see teachgrad/rules/torch_leaves.py).

Guarded by tests/test_function.py and tests/test_engine_fidelity.py (edges of number and None arguments,
next_functions as torch's), tests/test_torch_boundary.py and tests/test_interop.py (torch tensors as inputs).
"""
from __future__ import annotations

from typing import Any

import torch

from . import torch_leaves, variable_class

_NO_EDGE = (None, 0)


def read_mixed_inputs(cls: type, ctx: Any, args: tuple) -> tuple[tuple, list]:
    """`_read_inputs` for arguments that are not all Variables.

    A number some built-ins take as an input, a torch tensor, or None (for `none_is_input`) gets an empty edge;
    other arguments get none. A torch tensor that requires grad (an `nn.Parameter`) is a leaf of teachgrad's
    graph: it stands in the arguments as a `TorchLeaf` Variable, whose edge leads to the tensor's own
    AccumulateGrad."""
    raw, needs, edges, metas, slots = [], [], [], [], []
    skipped = cls.nondifferentiable_args
    for i, arg in enumerate(args):
        if not isinstance(arg, variable_class.Variable):
            if skipped and i in skipped or not _is_input(cls, arg):
                raw.append(arg.detach() if isinstance(arg, torch.Tensor) and arg.requires_grad else arg)
                needs.append(False)
                continue
            if not (isinstance(arg, torch.Tensor) and arg.requires_grad):   # a tensor or number: an empty edge
                raw.append(arg)
                needs.append(False)
                edges.append(_NO_EDGE)
                metas.append(None)
                slots.append(i)
                continue
            arg = torch_leaves.leaf(arg)
            args = args[:i] + (arg,) + args[i + 1:]
        data = arg._data
        raw.append(data)
        if skipped and i in skipped:
            needs.append(False)
            continue
        slots.append(i)
        if arg._requires_grad or arg._grad_fn is not None or arg.requires_grad:
            needs.append(True)
            edges.append(arg._edge())
            metas.append((tuple(data.shape), data.dtype, data.device))   # (as _meta)
        else:
            needs.append(False)
            edges.append(_NO_EDGE)
            metas.append(None)
    ctx.needs_input_grad = tuple(needs)
    if True in ctx.needs_input_grad:
        ctx._next_nodes, ctx._input_nrs = zip(*edges)
        ctx._input_slots, ctx._input_meta = tuple(slots), tuple(metas)
    return args, raw


def _is_input(cls, arg):
    """Whether an argument that is not a Variable is an input of `cls`'s node, with an (empty) edge."""
    return (isinstance(arg, torch.Tensor) or (arg is None and cls.none_is_input)
            or (cls.numbers_are_inputs and isinstance(arg, (int, float, bool))))
