"""In-place writes, and the history they rewrite, as torch records them (the subject of notebook 08).

`write_in_place` runs every in-place op (`x.add_(y)`, `x[0] = 1`, `x.zero_()`): it writes the data, and when it
records, the op's node takes over the Variable's history. After `y[0].mul_(3)`, the base `y` gets a `CopySlices` node that wraps the write's own node; a view whose
base was written to since it was made gets a fresh `AsStridedBackward0` node leading to the base, made
lazily when its `grad_fn` is next read. What a view is and how it is checked is teachgrad/rules/views.py.
These nodes are made of `Function`, as the ops are, so the module stands beside the ops, above the core.

Guarded by tests/test_views.py (in-place writes through views, regenerated grad_fns against torch) and
tests/test_silent_bugs.py.
"""
import torch

from ..core import engine
from ..core.function import Function, sequence_nrs
from ..rules import grad_mode, tangents, variable_class, views
from ..rules.views import _forward_steps, check_rebase, replay
from .complex import METADATA_VIEWS


def write_in_place(variable, out_of_place, in_place, other=None):
    """`variable.add_(other)` and every in-place op: change the data in place; when recording, the op's node takes
    over this Variable's history (`out_of_place(v)` records it, `in_place(data, other)` writes the data alone).

    Through a view, it is the base's history that changes: its grad_fn becomes a CopySlices
    wrapping the op's node (below). As in torch: refused on a leaf that requires
    grad, and it bumps the version counter that saved tensors are checked against.
    """
    recording = grad_mode.is_grad_enabled() and (   # (a torch tensor that requires grad is a leaf too)
        variable.requires_grad or (isinstance(other, (variable_class.Variable, torch.Tensor)) and other.requires_grad))
    views.check_inplace(variable, recording)
    tangent = None
    if grad_mode.forward_level >= 0 and (tangents.is_dual(variable) or tangents.is_dual(other)):
        tangent = tangents.in_place_tangent(variable, out_of_place)
    if not recording:
        in_place(variable.data, other.data if isinstance(other, variable_class.Variable) else other)
        if tangent is not None:
            tangents.write_tangent(variable, tangent)
        return variable
    before = variable_class.Variable._make(variable.data.clone(), variable.grad_fn, variable._output_nr)
    result = out_of_place(before)
    variable.data.copy_(result.data)
    node = result.grad_fn
    views.saved_result_is_self(node, result.data, variable.data)
    if variable._view is None:
        variable._set_history(node, result._output_nr)
    else:
        base = variable._view.base
        base._set_history(copy_slices(base, variable._view, node), 0)
    if tangent is not None:
        tangents.write_tangent(variable, tangent)
    return variable


# --- the nodes in-place writes leave behind ----------------------------------------------------

def _node(cls, next_functions, needs_input_grad, input_meta):
    """A node of `cls` made directly (no forward to run): the history already exists.

    `input_meta` holds (shape, dtype, device) per input, which the engine fits gradients to.
    """
    node = cls._backward_cls()
    node._next_nodes = tuple(next_node for next_node, _ in next_functions)
    node._input_nrs = tuple(input_nr for _, input_nr in next_functions)
    node.needs_input_grad = tuple(needs_input_grad)
    node._input_meta = tuple(input_meta)
    node._sequence_nr = next(sequence_nrs)
    return node


def _meta(tensor):
    """(shape, dtype, device): what the engine fits a gradient for this input to."""
    return tuple(tensor.shape), tensor.dtype, tensor.device


class CopySlices(Function, node="CopySlices", qualified_name="torch::autograd::CopySlices"):
    """The base's node after a write through one of its views: the write's node wraps inside.

    Edge 0 leads to the base's history before the write; the others are the write's own inputs
    (the `src` of a `copy_`, the `other` of a `mul_`).
    """

    @staticmethod
    def backward(ctx, grad):
        result = grad.clone()
        grad_slice = replay(ctx.chain, result)        # where the write landed, in the base's gradient
        grads = engine.call_node(ctx.fn, [grad_slice.clone()])   # the write's node, run as the engine runs one
        if grads[0] is None:
            grad_slice.zero_()                          # the old values there were overwritten
        else:
            grad_slice.copy_(grads[0])
        return (result, *grads[1:])


def copy_slices(base, view_info, fn):
    """The base's new node after `fn` wrote through a view: a CopySlices wrapping `fn`."""
    edges = (base._edge(),) + tuple(fn.next_functions[1:])
    node = _node(CopySlices, edges, tuple(next_node is not None for next_node, _ in edges),
                 (_meta(base.data),) + tuple(fn._input_meta[1:]))
    node.fn, node.chain = fn, view_info.chain
    node._wrapped = fn
    return node


class AsStrided(Function, node="AsStridedBackward0"):
    """A view's node made again after its base changed: the view's gradient, put back in place."""

    @staticmethod
    def backward(ctx, grad):
        for (cls, _), step_ctx in zip(reversed(ctx.chain), reversed(ctx.steps)):
            grad = cls.backward(step_ctx, grad)
            if isinstance(grad, tuple):
                grad = grad[0]
        return grad


def regenerate_grad_fn(view):
    """Give a view whose base was written to a node leading to the base (torch does it lazily)."""
    info = view._view
    base = info.base
    if view._grad_fn is None and not base.requires_grad:
        return
    check_rebase(view, indirect=True)
    chain = info.chain
    replayed = [k for k, (cls, _) in enumerate(chain) if cls in METADATA_VIEWS]
    if replayed:   # a view no stride can make from its base (another dtype, a conj bit): torch replays the view
        k = replayed[-1] + 1   # ops up to the last such one, with their own nodes, and as_strided after it
        source, chain = replay(chain[:k], base), chain[k:]
        info.version = view.data._version
        if not chain:
            view._set_history(source._grad_fn, source._output_nr)
            return
    else:
        source = base
    node = _node(AsStrided, (source._edge(),), (True,), (_meta(source.data),))
    node.chain, node.steps = chain, _forward_steps(chain, source.data)[1]
    info.version = view.data._version
    view._set_history(node, 0)
