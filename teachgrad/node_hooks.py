"""Hooks around a node, in torch's order: the hooks on the tensors the node made, then `retain_grad`, then the
node's pre-hooks | its backward | its post-hooks. Each hook's result is checked as torch checks it.

Guarded by tests/test_engine_fidelity.py (order, what each hook sees, messages), tests/test_autograd_api.py
(Node.register_hook / register_prehook), tests/test_engine.py and tests/test_views.py (retain_grad).
"""
import torch

from . import function


def call_tensor_pre_hooks(node, grad_outputs, create_graph):
    """Hooks registered on the tensors this node made (each sees its tensor's gradient), then retain_grad."""
    if not (node._tensor_pre_hooks or node._retains_grad_hooks):
        return grad_outputs
    grad_outputs = list(grad_outputs)
    for output_nr, hook in list(node._tensor_pre_hooks or ()):
        g = grad_outputs[output_nr]
        result = hook(hook_value(g))
        if result is not None:
            grad_outputs[output_nr] = unwrap(checked_hook_result(hook, g, result), create_graph)
    for output_nr, hook in list((node._retains_grad_hooks or {}).items()):
        hook(grad_outputs[output_nr])
    return grad_outputs


def call_pre_hooks(node, grad_outputs, create_graph):
    """`Node.register_prehook` hooks: each gets the gradients of the outputs and may replace them."""
    for hook in list(node._pre_hooks or ()):
        result = hook(tuple(hook_value(g) for g in grad_outputs))
        if result is not None:
            grad_outputs = _checked_hook_tuple(hook, grad_outputs, result, create_graph)
    return grad_outputs


def call_post_hooks(node, grad_inputs, grad_outputs, create_graph):
    """`Node.register_hook` hooks: each gets (grad_inputs, grad_outputs) and may replace grad_inputs."""
    given_outputs = tuple(hook_value(g) for g in grad_outputs)
    for hook in list(node._post_hooks):
        result = hook(tuple(hook_value(g) for g in grad_inputs), given_outputs)
        if result is not None:
            grad_inputs = _checked_hook_tuple(hook, grad_inputs, result, create_graph)
    return grad_inputs


def hook_value(g):
    """What a hook (or a user's backward) is handed: a Variable (or None)."""
    return None if g is None else as_variable(g)


def as_variable(g):
    return g if isinstance(g, function.Variable) else function.Variable._make(g)


def unwrap(g, create_graph):
    if g is None or create_graph or not isinstance(g, function.Variable):
        return g
    return g.data


def _checked_hook_tuple(hook, before, result, create_graph):
    """A node hook's return value: a tuple as long as what it was given, each entry checked."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{typename(result)}'")
    if len(result) != len(before):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(before)})")
    return [g if new is None else unwrap(checked_hook_result(hook, g, new), create_graph)
            for g, new in zip(before, result)]


def checked_hook_result(hook, original, result):
    """A gradient a hook returned: a tensor of the same dtype, device and size as the one it replaces."""
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, (function.Variable, torch.Tensor)):
        raise TypeError(f"expected Variable, but hook returned '{typename(result)}'")
    if result is original:
        return result
    if result.dtype != original.dtype or result.device.type != original.device.type:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {_type_name(original)} "
                           f"got {_type_name(result)})")
    if result.shape != original.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def typename(x):
    """A value's type as torch's messages name it (a Variable is a Tensor)."""
    return "Tensor" if isinstance(x, function.Variable) else type(x).__name__


def _hook_name(hook):
    return getattr(hook, "__name__", "<unknown>")


def _type_name(g):
    return (g.data if isinstance(g, function.Variable) else g).type()
