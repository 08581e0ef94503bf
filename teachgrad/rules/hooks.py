"""Registering hooks on a node, as torch's `Node.register_hook` / `register_prehook`, the
`RemovableHandle` every registration returns (torch.utils.hooks.RemovableHandle), and `Node.metadata`,
the dict torch keeps with a node for the user's own notes (for their hooks, say).

A node keeps four lists, empty (None) until a hook is registered, so a graph without hooks costs nothing:
the hooks on the tensors it made, `retain_grad`'s, its pre-hooks and its post-hooks. They run in
that order around the node's backward (see teachgrad/rules/hook_order.py; a Variable's own hooks are
registered there too).

Guarded by tests/test_autograd_api.py (Node.register_hook / register_prehook, handles, metadata) and
tests/test_engine_fidelity.py (hook order, removal).
"""
from __future__ import annotations

from typing import Any, Callable


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
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """Call `fn(grad_outputs)` before this node runs; a tuple it returns replaces grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        """A hook on the tensor this node made as its output `output_nr` (Variable.register_hook)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = []
        entry = (output_nr, fn)
        self._tensor_pre_hooks.append(entry)
        return RemovableHandle(self._tensor_pre_hooks, entry)
