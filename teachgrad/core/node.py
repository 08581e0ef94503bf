"""The nodes of the backward graph: what `Function.apply` records, and the node at a leaf.

A `BackwardNode` is two things at once, as in torch: the node of the graph (its edges `next_functions`,
its hooks, `name()`) and the `ctx` the op's forward and backward receive (`save_for_backward`,
`saved_tensors`, `needs_input_grad`, `mark_non_differentiable`). `AccumulateGrad` stands at a leaf that
requires grad and adds what reaches it into the leaf's `.grad`.

The Function that records a BackwardNode is in teachgrad/core/function.py; the engine that runs them is
teachgrad/core/engine.py.
"""
from __future__ import annotations

import threading

import torch

from ..rules import grad_mode, saved_tensors, tangents, variable_class
from ..rules.hooks import NodeHooks
from ..rules.hooks import call_post_accumulate_grad_hooks


class Node(NodeHooks):
    """A node of the backward graph: gets the gradients of its outputs, returns those of its inputs.

    Every node of teachgrad's graph is one, and it is `tg.autograd.graph.Node` (torch.autograd.graph.Node):
    `name()`, `next_functions`, `metadata`, `register_hook`, `register_prehook`.
    `next_functions` holds one `(node, input_nr)` edge per input: where each input gradient goes.
    Hooks run around it (`register_hook`, `register_prehook`: see teachgrad/rules/hooks.py).
    """

    # The edges are kept as two tuples, not one of pairs: a tuple of ints is not tracked by Python's
    # garbage collector, so each node adds one tracked object fewer, and a long graph sets off fewer
    # of the full collections that walk every object in the process.
    _next_nodes = ()   # the node each input's gradient goes to (None: no edge)
    _input_nrs = ()    # which input of that node it arrives at (the output of the forward op it is the gradient of)
    _num_outputs = 1
    _sequence_nr = 0
    _view_node = False   # a view op's node: its backward may hand on a view of its gradient (grad_layout.track_owner)

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple(zip(self._next_nodes, self._input_nrs))

    @next_functions.setter
    def next_functions(self, edges):
        raise AttributeError(f"attribute 'next_functions' of '{type(self).__name__}' objects is not writable")

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"   # as torch prints its nodes

    def __call__(self, *grad_outputs):
        """`node(grad)` runs the node's backward, as in torch: one gradient per output of the node."""
        if len(grad_outputs) != self._num_outputs:
            raise TypeError(f"expected {self._num_outputs} arguments, got {len(grad_outputs)} instead")
        return self.apply(*grad_outputs)

    def _release(self):
        """Drop what was saved for backward (a node that saves nothing has nothing to drop)."""


class BackwardNode(Node):
    """The node a `Function.apply` records, and the `ctx` its forward and backward receive."""

    _forward_cls = None
    _saved = ()
    _to_save = ()
    _freed = False
    _wrapped = None       # a CopySlices node's write node, released with it
    _non_differentiable = ()
    _dirty = ()           # inputs forward wrote into in place (ctx.mark_dirty; see teachgrad/features/mark_dirty.py)
    _input_meta = ()   # (shape, dtype, device) per input, set by apply; none for nodes made without a forward
    _input_slots = None   # which of forward's arguments are the inputs, one edge each (None: every argument)
    materialize_grads = True
    _saved_for_forward = None
    _in_jvp = False
    _hooked = False       # a saved tensor has saved-tensor hooks (then unpacked in torch's order)

    # --- the ctx API, as in torch.autograd.function.FunctionCtx ---

    def save_for_backward(self, *tensors: torch.Tensor | None) -> None:
        """Keep these tensors (inputs or outputs of forward) for backward."""
        self._to_save = tensors

    def save_for_forward(self, *tensors: torch.Tensor | None) -> None:
        """Keep these tensors for `jvp` (kept only while a dual level is open: see teachgrad/rules/tangents.py)."""
        tangents.save_for_forward(self, tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to `save_for_backward` (in `jvp`: to `save_for_forward`), checked to be unmodified."""
        # Variables for a user's backward (as torch hands it tensors), higher-order passes and tangents;
        # the built-in ops compute a first-order backward on the plain tensors
        as_variable = grad_mode.is_grad_enabled() or grad_mode.forward_level >= 0
        if self._in_jvp or self._freed or self._hooked:   # the rare cases: see saved_tensors.unpack_unusual
            return saved_tensors.unpack_unusual(self, as_variable)
        if as_variable:
            return tuple([None if s is None else s.unpack(self, True) for s in self._saved])
        unpacked = []   # (the usual case, a built-in op's first-order backward: SavedTensor.unpack written out)
        for s in self._saved:
            if s is None:
                unpacked.append(None)
            elif s.data._version == s.version:
                unpacked.append(s.data)
            else:
                s.unpack(self, False)   # (raises torch's error: modified in place since it was saved)
        return tuple(unpacked)

    def mark_dirty(self, *tensors: torch.Tensor) -> None:
        """Inputs that forward modified in place; each must also be returned (see teachgrad/features/mark_dirty.py)."""
        self._dirty = tuple(t.data if isinstance(t, variable_class.Variable) else t for t in tensors)

    def mark_non_differentiable(self, *tensors: torch.Tensor) -> None:
        """Outputs that will never require grad (indices, masks)."""
        self._non_differentiable = tuple(t.data if isinstance(t, variable_class.Variable) else t for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (True, the default) or None for outputs that got no gradient."""
        self.materialize_grads = value

    # --- the node API ---

    def name(self):
        return self._forward_cls.qualified_name or type(self).__name__

    def __call__(self, *grad_outputs):
        """The gradient of each input with an edge: one tensor, or a tuple when there are several."""
        grads = super().__call__(*grad_outputs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        slots = range(len(self._next_nodes)) if self._input_slots is None else self._input_slots
        per_edge = tuple(grads[i] if i < len(grads) else None for i in slots)
        return per_edge[0] if len(per_edge) == 1 else per_edge

    def apply(self, *grad_outputs):
        """Run the Function's backward on the gradients of its outputs."""
        return self._forward_cls.backward(self, *grad_outputs)

    # A built-in op's node: the engine calls its backward itself, unchecked, and what that returns is new, so a leaf
    # may keep it as its .grad without a copy. A user's Function's node is neither (BackwardCFunction).
    _trusted = True

    def _release(self):
        """Drop the saved tensors: what happens after backward unless retain_graph=True."""
        if self._saved:
            for saved in self._saved:
                if saved is not None:   # let go of the tensor, and of what it was saved as
                    saved.data = saved.variable = saved.packed = saved.edge = None
            self._freed = True
        if self._wrapped is not None:
            self._wrapped._release()


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: adds the gradient that reaches it into `variable.grad`."""

    _sequence_nr = float("inf")  # as in torch: a leaf's gradient is accumulated as soon as it is ready

    def __init__(self, variable):
        self.variable = variable   # a Variable (a torch tensor that requires grad has its own: teachgrad/rules/torch_leaves.py)

    @property
    def _tensor_pre_hooks(self):
        """The leaf's own tensor hooks, run on the gradient before it is accumulated."""
        hooks = self.variable._hooks
        return [(0, hook) for hook in hooks] if hooks else None

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grad: torch.Tensor, owned: bool = False) -> tuple:
        """Add `grad` into the leaf's `.grad`; `owned`: no one else holds it, so no copy is needed.

        Under a lock, as torch's: threads running backward at once may share a leaf.
        """
        variable = self.variable
        with _accumulate_lock:
            variable._accumulate_grad(grad, owned)
        hooks = getattr(variable, "_post_accumulate_grad_hooks", None)
        if hooks:   # Variable.register_post_accumulate_grad_hook's
            call_post_accumulate_grad_hooks(variable, hooks)
        return ()

    def no_gradient(self) -> None:
        """Reached by backward without a gradient (a node sent None on this edge): `.grad` stays as it is, and the
        post-accumulate-grad hooks run all the same, as torch's engine runs them (a reducer counts on it)."""
        hooks = getattr(self.variable, "_post_accumulate_grad_hooks", None)
        if hooks:
            call_post_accumulate_grad_hooks(self.variable, hooks)


_accumulate_lock = threading.Lock()
