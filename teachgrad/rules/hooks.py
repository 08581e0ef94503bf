"""Hooks, as torch runs them: registered on a node or a Variable, run around the node in torch's order.

Around a node's backward they run in this order: the hooks on the tensors the node made, then `retain_grad`'s,
then the node's pre-hooks | its backward | its post-hooks. Each hook's result is checked as torch checks it.
A node keeps four lists, empty (None) until a hook is registered, so a graph without hooks costs nothing.

- a node's own hooks (`Node.register_hook` / `register_prehook`), the `RemovableHandle` every registration
  returns (torch.utils.hooks.RemovableHandle), and `Node.metadata`, the dict torch keeps with a node for the
  user's own notes;
- a Variable's hooks (`Variable.register_hook`, `retain_grad`, `register_post_accumulate_grad_hook`): a
  non-leaf's go on the node that made it, a leaf keeps its own (each graph reaches it through a new
  AccumulateGrad), and post-accumulate-grad hooks run after AccumulateGrad has filled `.grad`.

Guarded by tests/test_engine_fidelity.py (order, what each hook sees, messages, removal), tests/test_autograd_api.py
(Node.register_hook / register_prehook, handles, metadata, post-accumulate-grad hooks), tests/test_engine.py and
tests/test_views.py (retain_grad, also after an in-place op).
"""
from __future__ import annotations

from typing import Any, Callable
import weakref

import torch

from . import variable_class


class RemovableHandle:
    """What `register_hook` returns: `handle.remove()` takes the hook off again."""

    def __init__(self, hooks: list, fn: Any) -> None:
        self.hooks, self.fn = hooks, fn

    def remove(self) -> None:
        if self.fn in self.hooks:
            self.hooks.remove(self.fn)


class NodeHooks:
    """The hooks a node runs around its backward, how they are registered, its metadata (a base class of Node)."""

    _tensor_pre_hooks = None    # [(output_nr, fn(grad) -> grad or None)]: hooks on the tensors it made
    _retains_grad_hooks = None  # {output_nr: fn(grad)}: retain_grad's, run after the tensor hooks
    _pre_hooks = None           # [fn(grad_outputs) -> grad_outputs or None]: register_prehook
    _post_hooks = None          # [fn(grad_inputs, grad_outputs) -> grad_inputs or None]: register_hook
    _has_hooks = False          # whether any of the four was ever registered (what the engine's loop reads)
    _metadata = None

    @property
    def metadata(self):
        """A dict kept with the node for the user's own notes (torch's Node.metadata); empty at first."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """Call `fn(grad_inputs, grad_outputs)` each time this node has run; a tuple it returns replaces grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        self._has_hooks = True
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """Call `fn(grad_outputs)` before this node runs; a tuple it returns replaces grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        self._has_hooks = True
        return RemovableHandle(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        """A hook on the tensor this node made as its output `output_nr` (Variable.register_hook)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = []
        entry = (output_nr, fn)
        self._tensor_pre_hooks.append(entry)
        self._has_hooks = True
        return RemovableHandle(self._tensor_pre_hooks, entry)


# --- a Variable's hooks, registered ---


def register_hook(variable: Any, hook: Callable) -> RemovableHandle:
    """`variable.register_hook(hook)`: `hook(grad)` is called when its gradient is computed, and may replace it."""
    if not variable.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if variable.grad_fn is not None:
        return variable.grad_fn._register_tensor_hook(variable._output_nr, hook)
    if variable._hooks is None:   # a leaf keeps its hooks: every graph reaches it through a new AccumulateGrad
        variable._hooks = []
    variable._hooks.append(hook)
    return RemovableHandle(variable._hooks, hook)


def register_post_accumulate_grad_hook(variable: Any, hook: Callable) -> RemovableHandle:
    """`hook(variable)` is called each time a gradient has been added into this leaf's `.grad`."""
    if not variable.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if variable.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = getattr(variable, "_post_accumulate_grad_hooks", None)
    if hooks is None:
        hooks = variable._post_accumulate_grad_hooks = []
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def call_post_accumulate_grad_hooks(variable: Any, hooks: list) -> None:
    """Each hook gets the leaf itself once its `.grad` holds the new gradient. As torch, it returns None or
    the leaf itself (`p.add_(...)`); anything else is checked as a tensor hook's result is, then refused."""
    for hook in list(hooks):
        result = hook(variable)
        if result is not None and checked_hook_result(hook, variable, result) is not variable:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def retain_grad(variable: Any) -> None:
    """`variable.retain_grad()`: a hook on the node that makes a non-leaf keeps its gradient in `.grad`."""
    if variable.grad_fn is None:
        if not variable._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return
    if variable._retains_grad:
        return
    owner = weakref.ref(variable)

    def retain(grad):
        variable = owner()
        if variable is not None and grad is not None:
            _keep_retained_grad(variable, grad)

    _set_retains_grad_hook(variable, retain)
    variable._retains_grad = True


def _set_retains_grad_hook(variable, hook):
    """Put retain_grad's hook on the node that makes the Variable (it runs after all tensor hooks)."""
    node = variable.grad_fn
    if node._retains_grad_hooks is None:
        node._retains_grad_hooks = {}
    node._retains_grad_hooks[variable._output_nr] = hook
    node._has_hooks = True


def follow_retain_grad(variable: Any, old_node: Any, old_output_nr: int) -> None:
    """After an in-place op gave a Variable a new node, its retain_grad hook moves there, as torch's."""
    hooks = old_node._retains_grad_hooks if old_node is not None else None
    if variable._retains_grad and hooks and old_output_nr in hooks:
        _set_retains_grad_hook(variable, hooks.pop(old_output_nr))


def _keep_retained_grad(variable, grad):
    """retain_grad: the first gradient is copied, later ones added out of place, as torch does."""
    if variable._grad is None:
        copy = grad.clone(memory_format=torch.contiguous_format)
        variable._grad = copy if isinstance(copy, variable_class.Variable) else variable_class.Variable._make(copy)
    else:
        variable._grad = variable._grad + grad


# --- hooks around a node, run by the engine ---


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
    return g if isinstance(g, variable_class.Variable) else variable_class.Variable._make(g)


def unwrap(g, create_graph):
    if g is None or create_graph or not isinstance(g, variable_class.Variable):
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
    if not isinstance(result, (variable_class.Variable, torch.Tensor)):
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
    return "Tensor" if isinstance(x, variable_class.Variable) else type(x).__name__


def _hook_name(hook):
    return getattr(hook, "__name__", "<unknown>")


def _type_name(g):
    return (g.data if isinstance(g, variable_class.Variable) else g).type()
