"""`tg.autograd.function` mirrors the module `torch.autograd.function`: `Function`, `FunctionCtx`,
`once_differentiable`.

The ctx a Function's forward and backward receive is the graph node `apply` records (see
teachgrad/core/function.py). `FunctionCtx` is the name torch gives that object's type: `isinstance(ctx,
FunctionCtx)` holds for it, and `FunctionCtx()` makes a bare ctx on which a forward can be called by
hand (`MyFn.forward(FunctionCtx(), x)`), as in torch.
"""
import abc

from ..core.node import BackwardNode
from ..features.custom_function import Function
from ..features.once_differentiable import once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx(abc.ABC):
    """The ctx API: `save_for_backward`, `save_for_forward`, `mark_dirty`, `mark_non_differentiable`,
    `set_materialize_grads`; every node `Function.apply` records counts as one."""

    save_for_backward = BackwardNode.save_for_backward
    save_for_forward = BackwardNode.save_for_forward
    mark_dirty = BackwardNode.mark_dirty
    mark_non_differentiable = BackwardNode.mark_non_differentiable
    set_materialize_grads = BackwardNode.set_materialize_grads


FunctionCtx.register(BackwardNode)
