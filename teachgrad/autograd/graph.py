"""`tg.autograd.graph` mirrors `torch.autograd.graph`: the type of graph nodes, hooks on several
tensors at once, and what autograd keeps for backward (saved-tensor hooks, see teachgrad/features/saved_tensor_hooks.py).

    isinstance(y.grad_fn, tg.autograd.graph.Node)        # True for every node, as in torch
    register_multi_grad_hook((a, b), fn)                   # fn(grads) once both gradients are known
    with allow_mutation_on_saved_tensors():                # a saved tensor written in place is kept
        ...                                                # as it was, for backward
"""
from __future__ import annotations

import collections
import contextlib
import functools
import threading
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence, TypeAlias
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..core import engine
from ..core.node import Node   # the one Node: every node of teachgrad's graph is one (torch.autograd.graph.Node)
from ..core.variable import Variable as _Variable
from ..features.saved_tensor_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    from ..core.variable import Variable
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors", "Node", "increment_version", "region_activation_memory_budget"]

# torch.compile's activation-memory annotation: in eager mode (teachgrad always is) torch's own raises its
# RuntimeError, the same under teachgrad; nothing of teachgrad's graph is involved.
region_activation_memory_budget = torch.autograd.graph.region_activation_memory_budget


def increment_version(tensor: TensorLike | Iterable[TensorLike]) -> None:
    """Bump the version counter of a tensor (or of each of several) written in a way autograd cannot see,
    so a saved copy of it is known to be stale."""
    tensors = (tensor,) if isinstance(tensor, (_Variable, torch.Tensor)) else tensor
    torch.autograd.graph.increment_version([t.data if isinstance(t, _Variable) else t for t in tensors])


def _node_of(variable):
    """The node a Variable's gradient arrives at: its grad_fn, or (a leaf) its AccumulateGrad."""
    node, _ = variable._edge()
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class _MultiHandle:
    """The handle register_multi_grad_hook returns: `remove()` takes off the hook on every tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors: Sequence[Variable],
                             fn: Callable[[Sequence[Variable | None]], None] | Callable[[Variable], None], *,
                             mode: str = "all") -> _MultiHandle:
    """Call `fn` once per backward pass when the gradients of several tensors are known.

    mode "all": `fn(grads)` once every tensor's gradient that this pass computes has been computed, with
    None for a tensor whose gradient it does not compute (not in the graph, or not needed for `inputs=`).
    mode "any": `fn(grad)` with the first of the tensors' gradients to be computed.
    Returns a handle whose `remove()` takes the hook off again.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        nodes = [_node_of(t) for t in tensors]
        waiting = {}     # graph task id -> [gradients so far, how many more are coming]

        def hook_for(position):
            def hook(grad):
                task = engine.current_graph_task().id
                with lock:
                    if task not in waiting:   # the first gradient of this pass: how many will there be?
                        expected = sum(engine.will_engine_execute_node(node) for node in nodes)
                        waiting[task] = [[None] * len(nodes), expected]
                    entry = waiting[task]
                    entry[0][position] = grad
                    entry[1] -= 1
                    done = entry[1] == 0
                    if done:
                        del waiting[task]
                if done:
                    fn(entry[0])
            return hook

        return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))

    called = set()   # graph task ids whose first gradient fn has seen

    @functools.wraps(fn)
    def first_only(grad):
        task = engine.current_graph_task().id
        with lock:
            if task in called:
                return
            called.add(task)
        fn(grad)

    return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors if t.requires_grad))


# --- allow_mutation_on_saved_tensors ------------------------------------------------------------
#
# Inside the context every saved tensor is packed by a saved-tensor hook that keeps a handle to it,
# and a torch dispatch mode watches every in-place kernel: before one writes into a tensor that was
# saved (the same storage at the same version), the saved tensor is cloned, and backward unpacks the
# clone. (The plan of torch.autograd.graph.allow_mutation_on_saved_tensors, written for teachgrad.)

_mutation_state = threading.local()

_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
            "in which the graph was originally recorded.")


class _Saved:
    """The handle a saved tensor is packed into: what backward unpacks."""

    def __init__(self, tensor):
        self.original = tensor    # the saved tensor itself, until it is written in place
        self.clone = None         # its values as they were, once it has been


class _AllowMutationContext:
    """What the context keeps: the saved tensors, by what identifies them before a write."""

    def __init__(self):
        self.by_storage = collections.defaultdict(list)   # (data_ptr, version) -> [weak handles]

    def pack(self, variable):
        tensor = variable.data
        handle = _Saved(tensor)
        self.by_storage[(tensor.data_ptr(), tensor._version)].append(weakref.ref(handle))
        return handle

    @staticmethod
    def unpack(handle):
        if not getattr(_mutation_state, "enabled", False):
            raise AssertionError(_OUTSIDE)
        return handle.original if handle.clone is None else handle.clone

    def before_write(self, tensor):
        """`tensor` is about to be written in place: clone every saved tensor that it is."""
        for ref in self.by_storage.pop((tensor.data_ptr(), tensor._version), ()):
            handle = ref()
            if handle is not None and handle.clone is None:
                handle.clone = handle.original.clone()
                handle.original = None

    def clear(self):
        self.by_storage.clear()


class _CloneBeforeWrite(TorchDispatchMode):
    """Sees every torch kernel that runs; before one writes into its arguments, saves what they held."""

    def __init__(self, context):
        super().__init__()
        self.context = context

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for i, argument in enumerate(func._schema.arguments):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            written = kwargs.get(argument.name) if argument.kwarg_only or i >= len(args) else args[i]
            for tensor in written if isinstance(written, (list, tuple)) else (written,):
                if isinstance(tensor, torch.Tensor):
                    self.context.before_write(tensor)
        return func(*args, **kwargs)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationContext]:
    """Inside, a tensor saved for backward may be written in place: backward still sees its old values.

    Run both the forward and the backward inside the same context.
    """
    if getattr(_mutation_state, "enabled", False):
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    context = _AllowMutationContext()
    with saved_tensors_hooks(context.pack, context.unpack), _CloneBeforeWrite(context):
        _mutation_state.enabled = True
        try:
            yield context
        finally:
            context.clear()
            _mutation_state.enabled = False
