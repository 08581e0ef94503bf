"""The outputs of `Function.apply` as Variables, by torch's rules (torch's `_wrap_outputs`), beyond the usual
case of one floating-point tensor, which `Function.apply` (teachgrad/core/function.py) wraps itself.

Several outputs give a tuple of Variables, a tensor returned twice the same Variable twice; an integer or
boolean output, or one that forward marked non-differentiable (`ctx.mark_non_differentiable`), gets no
history; a complex output gets it as a floating-point one does (see tests/test_complex.py).

Guarded by tests/test_function.py (multiple, repeated and non-differentiable outputs), tests/test_engine.py
and tests/test_ops_vs_torch.py (ops with several outputs: max, sort, topk, ...).
"""
from __future__ import annotations

from typing import Any

import torch

from . import variable_class


def wrap_outputs(ctx: Any, outputs: tuple) -> tuple:
    """One Variable per output; a tensor returned twice gives the same Variable twice, as in torch."""
    wrapped = {}
    for i, o in enumerate(outputs):
        if id(o) not in wrapped:
            wrapped[id(o)] = wrap_output(ctx, o, i)
    return tuple(wrapped[id(o)] for o in outputs)


def wrap_output(ctx: Any, tensor: Any, output_nr: int) -> Any:
    """One output as a Variable: recorded (ctx its grad_fn) unless nothing is recorded (ctx None), it is not a
    floating-point or complex tensor, or forward marked it non-differentiable; anything that is not a tensor as it is."""
    if not isinstance(tensor, torch.Tensor):
        return tensor
    if ctx is None:   # nothing recorded
        return variable_class.Variable._make(tensor)
    dtype = tensor.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        return variable_class.Variable._make(tensor)
    if ctx._non_differentiable and position(tensor, ctx._non_differentiable) is not None:
        return variable_class.Variable._make(tensor)
    return variable_class.Variable._make(tensor, ctx, output_nr)


def position(tensor, tensors):
    """Where `tensor` itself (not an equal one) is in `tensors`, or None."""
    for i, t in enumerate(tensors):
        if t is tensor:
            return i
    return None
