"""The rules torch applies to a Function a user writes (and not to its own built-in ops), kept beside
`Function.apply`: its forward runs with grad mode off and what it returns is plain data; `apply` takes
keyword arguments and, with `setup_context`, fills in defaults; an input it returns as it is comes back as a
view of it, and an output that is a view of an input refuses in-place writes. In backward (the engine's
`_call_node`), its backward gets Variables and what it returns is checked: one tensor or None per input.

Guarded by tests/test_function.py, tests/test_views.py (custom views) and tests/mirrored/.
"""
import inspect
from typing import Any

import torch

from . import function, grad_mode, views
from .node_hooks import hook_value, typename, unwrap


def run_user_forward(cls, ctx, raw, recording):
    """A user's forward runs with grad mode off, as in torch: teachgrad functions it calls record nothing, and
    what it returns and saves is plain data to the engine. (A built-in's forward runs torch kernels on plain
    tensors that require no grad: nothing is recorded either way.)"""
    if not recording:
        return _plain_data(_call_forward(cls, ctx, raw))
    grad_mode._set_enabled(False)
    try:
        return _plain_data(_call_forward(cls, ctx, raw))
    finally:
        grad_mode._set_enabled(True)


def _call_forward(cls, ctx, raw):
    if not cls._has_setup_context:
        return cls.forward(ctx, *raw)
    output = cls.forward(*raw)
    cls.setup_context(ctx, tuple(raw), output)
    return output


def bind_arguments(cls, args, kwargs):
    """Keyword arguments of `apply` put in forward's order; with setup_context, defaults filled in (as torch)."""
    signature = cls.__dict__.get("_forward_signature")
    if signature is None:   # looked up once per Function class
        signature = cls._forward_signature = inspect.signature(cls.forward)
    if cls._has_setup_context:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args
    return signature.bind(None, *args, **kwargs).args[1:]   # None stands for ctx


def _plain_data(output):
    """What a user's forward returned, with any function.Variable (it computed with teachgrad functions) as its data:
    the engine records the Function's own node for it, as torch does for a forward that used torch functions."""
    if isinstance(output, function.Variable):
        return output.data
    if isinstance(output, tuple):
        return tuple(o.data if isinstance(o, function.Variable) else o for o in output)
    return output


def inputs_returned_as_views(ctx, raw, output):
    """torch hands back `input.view_as(input)` for an input a Function returns as it is: a new tensor
    that shares the input's storage (see mark_custom_views)."""
    def fresh(o):
        if (isinstance(o, torch.Tensor) and position(o, raw) is not None
                and position(o, ctx._non_differentiable) is None and position(o, ctx._dirty) is None):
            return o.view_as(o)
        return o
    return tuple(fresh(o) for o in output) if isinstance(output, tuple) else fresh(output)


def position(tensor, tensors):
    """Where `tensor` itself (not an equal one) is in `tensors`, or None."""
    for i, t in enumerate(tensors):
        if t is tensor:
            return i
    return None


def mark_custom_views(ctx, args, raw, outputs, result):
    """Each recorded output of a user's Function that is a view of an input requiring grad becomes a view
    that refuses in-place writes, as torch's IN_CUSTOM_FUNCTION (or MULTI_OUTPUT_NODE with several outputs)."""
    results = result if isinstance(result, tuple) else (result,)
    recorded = [(tensor, variable) for tensor, variable in zip(outputs, results)
                if isinstance(variable, function.Variable) and variable._grad_fn is ctx]
    for tensor, variable in recorded:
        base = tensor._base
        if base is None:
            continue
        for data, arg in zip(raw, args):
            if isinstance(arg, function.Variable) and arg.requires_grad and (data is base or data._base is base):
                views.mark_custom_view(variable, arg, multi_output=len(recorded) > 1)
                break


def call_user_backward(node: Any, grad_outputs: list) -> tuple:
    """A user's backward, checked; in a first-order pass it gets Variables (as torch's gets tensors)."""
    first_order = not grad_mode.is_grad_enabled()
    if first_order:
        grad_outputs = [hook_value(g) for g in grad_outputs]
    grads = node.apply(*grad_outputs)
    grads = _checked_user_gradients(node, grads if isinstance(grads, tuple) else (grads,))
    if first_order:
        grads = tuple(unwrap(g, create_graph=False) for g in grads)
    return grads


def wrong_number_message(node, got):
    """A backward must return one gradient per input (the engine checks a built-in's too, as torch's validate_outputs)."""
    return (f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.needs_input_grad)}, got {got})")


def _checked_user_gradients(node, grads):
    """What a user's backward returned: one tensor or None per forward input (extra trailing Nones dropped)."""
    expected = len(node.needs_input_grad)
    if len(grads) > expected and all(g is None for g in grads[expected:]):
        grads = grads[:expected]
    if len(grads) != expected:
        raise RuntimeError(wrong_number_message(node, len(grads)))
    for i, g in enumerate(grads):
        if g is None:
            continue
        if node._input_slots is not None and i not in node._input_slots:
            raise RuntimeError(f"function {node.name()} returned a gradient different than None at position {i + 1}, "
                               "but the corresponding forward input was not a Variable")
        if not isinstance(g, (torch.Tensor, function.Variable)):
            raise RuntimeError(f"expected Variable or None (got {typename(g)})")
    return grads
