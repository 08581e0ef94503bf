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
    Variable = variable_class.Variable
    skipped = cls.nondifferentiable_args   # (index, condition and target arguments: no edge)
    raw, needs = [], []                    # per argument: what forward computes with, whether it needs a gradient
    inputs = []                            # per input (an argument with an edge): (position, node, input_nr, meta)
    for i, arg in enumerate(args):
        if isinstance(arg, Variable):
            data = arg._data
        elif isinstance(arg, torch.Tensor):
            if not arg.requires_grad:      # a constant tensor: an empty edge
                raw.append(arg)
                needs.append(False)
                if not (skipped and i in skipped):
                    inputs.append((i, None, 0, None))
                continue
            if skipped and i in skipped:
                raw.append(arg.detach())
                needs.append(False)
                continue
            arg = torch_leaves.leaf(arg)   # an nn.Parameter: a leaf of teachgrad's graph
            args = args[:i] + (arg,) + args[i + 1:]
            data = arg._data
        else:                              # a number, None, a shape, a dim...: an empty edge if the op takes it as an
            raw.append(arg)                # input, else no edge
            needs.append(False)
            if (arg is None and cls.none_is_input or cls.numbers_are_inputs and isinstance(arg, (int, float, bool))) \
                    and not (skipped and i in skipped):
                inputs.append((i, None, 0, None))
            continue
        raw.append(data)
        if skipped and i in skipped:
            needs.append(False)
        elif arg._requires_grad or arg._grad_fn is not None or arg.requires_grad:
            needs.append(True)
            node, input_nr = arg._edge()
            inputs.append((i, node, input_nr, (tuple(data.shape), data.dtype, data.device)))   # (as _meta)
        else:
            needs.append(False)
            inputs.append((i, None, 0, None))
    ctx.needs_input_grad = tuple(needs)
    if True in ctx.needs_input_grad:
        ctx._input_slots, ctx._next_nodes, ctx._input_nrs, ctx._input_meta = zip(*inputs)
    return args, raw
