"""`once_differentiable`: a custom Function's backward that works on plain tensors only. Its gradients can
still be used in a `create_graph=True` pass; differentiating them raises, from an `Error` node as torch's.

Guarded by tests/test_function.py (test_once_differentiable*) and tests/mirrored/.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..rules import grad_mode
from ..core.function import Function
from ..rules import variable_class


class DelayedError(Function, node="Error", qualified_name="torch::autograd::Error", none_is_input=True):
    """Stands after a `once_differentiable` backward: differentiating what it returns raises.

    As torch's: one node over all the gradients returned, each made a fresh leaf first (so the node
    has something to reach), with an empty edge where a gradient is None.
    """

    # (a Function: torch's is a C++ node, so the gradients it passes on are not views of anything)

    @staticmethod
    def forward(ctx, *grads):
        ctx.set_materialize_grads(False)   # (an output may be None: there is nothing to make zeros of)
        return grads if len(grads) > 1 else grads[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")

    @staticmethod
    def jvp(ctx, *tangents):
        return tangents if len(tangents) > 1 else tangents[0]


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a Function's backward that works on plain tensors only (no double backward).

    Its results can still be used in a `create_graph=True` pass; differentiating them raises.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with grad_mode.no_grad():
            grads = backward(ctx, *grad_outputs)
        if not grad_mode.is_grad_enabled():
            return grads
        if not any(isinstance(g, variable_class.Variable) and g.requires_grad for g in grad_outputs):
            return grads

        def fake_leaf(grad):
            leaf = variable_class.Variable._make(grad.data if isinstance(grad, variable_class.Variable) else grad)
            leaf._requires_grad = True
            return leaf

        outputs = grads if isinstance(grads, tuple) else (grads,)
        return DelayedError.apply(*(None if g is None else fake_leaf(g) for g in outputs))

    return wrapper
