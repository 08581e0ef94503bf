"""Functions and the graph nodes they leave behind.

A `Function` is an op: a `forward` that computes on plain torch tensors and a `backward` that
turns the gradients of the outputs into gradients of the inputs, side by side in one class.
`Function.apply` runs forward and, when grad mode is on and an input requires grad, records a
node of the backward graph. As in torch, that node *is* the `ctx` forward was given:

    class Square(tg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return 2 * x * grad_output

    y = Square.apply(v)              # y.grad_fn is a SquareBackward node
"""
from __future__ import annotations

import itertools
import threading
from typing import Any

import torch

from . import anomaly_mode, grad_mode
from .hooks import NodeHooks
from .node_hooks import call_post_accumulate_grad_hooks
from .saved_names import saved_attributes

_sequence_nr = itertools.count()


class Node(NodeHooks):
    """A node of the backward graph: gets the gradients of its outputs, returns those of its inputs.

    `next_functions` holds one `(node, input_nr)` edge per input: where each input gradient goes.
    Hooks run around it (`register_hook`, `register_prehook`: see teachgrad/hooks.py).
    """

    # The edges are kept as two tuples, not one of pairs: a tuple of ints is not tracked by Python's
    # garbage collector, so each node adds one tracked object fewer, and a long graph sets off fewer
    # of the full collections that walk every object in the process.
    _next_nodes = ()   # the node each input's gradient goes to (None: no edge)
    _input_nrs = ()    # which input of that node it arrives at (the output of the forward op it is the gradient of)
    _num_outputs = 1
    _sequence_nr = 0

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
    _dirty = ()           # inputs forward wrote into in place (ctx.mark_dirty; see teachgrad.dirty)
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
        """Keep these tensors for `jvp` (kept only while a dual level is open: see teachgrad.forward_ad)."""
        forward_ad.save_for_forward(self, tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to `save_for_backward` (in `jvp`: to `save_for_forward`), checked to be unmodified."""
        # Variables for a user's backward (as torch hands it tensors), higher-order passes and tangents;
        # the built-in ops compute a first-order backward on the plain tensors
        as_variable = self._forward_cls.check_gradients or grad_mode.is_grad_enabled() or forward_ad._current_level >= 0
        if self._in_jvp or self._freed or self._hooked:   # the rare cases: see saved_tensors.unpack_unusual
            return saved_tensors.unpack_unusual(self, as_variable)
        return tuple([None if s is None else s.unpack(self, as_variable) for s in self._saved])

    def mark_dirty(self, *tensors: torch.Tensor) -> None:
        """Inputs that forward modified in place; each must also be returned (see teachgrad.dirty)."""
        self._dirty = tuple(t.data if isinstance(t, Variable) else t for t in tensors)

    def mark_non_differentiable(self, *tensors: torch.Tensor) -> None:
        """Outputs that will never require grad (indices, masks)."""
        self._non_differentiable = tuple(t.data if isinstance(t, Variable) else t for t in tensors)

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

    def _release(self):
        """Drop the saved tensors: what happens after backward unless retain_graph=True."""
        if self._saved:
            for saved in self._saved:
                if saved is not None:
                    saved.release()
            self._freed = True
        if self._wrapped is not None:
            self._wrapped._release()


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: adds the gradient that reaches it into `variable.grad`."""

    _sequence_nr = float("inf")  # as in torch: a leaf's gradient is accumulated as soon as it is ready

    def __init__(self, variable):
        self.variable = variable   # a Variable, or a torch tensor that requires grad (see teachgrad.torch_leaves)

    @property
    def _tensor_pre_hooks(self):
        """The leaf's own tensor hooks, run on the gradient before it is accumulated."""
        variable = self.variable
        if isinstance(variable, torch.Tensor):
            return torch_leaves.check_no_torch_hooks(variable)
        return [(0, hook) for hook in variable._hooks] if variable._hooks else None

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grad: torch.Tensor, owned: bool = False) -> tuple:
        """Add `grad` into the leaf's `.grad`; `owned`: no one else holds it, so no copy is needed.

        Under a lock, as torch's: threads running backward at once may share a leaf.
        """
        with _accumulate_lock:
            if isinstance(self.variable, torch.Tensor):
                torch_leaves.accumulate(self.variable, grad, owned)
            else:
                self.variable._accumulate_grad(grad, owned)
        hooks = getattr(self.variable, "_post_accumulate_grad_hooks", None)
        if hooks:   # Variable.register_post_accumulate_grad_hook's
            call_post_accumulate_grad_hooks(self.variable, hooks)
        return ()


_accumulate_lock = threading.Lock()


class Function:
    """Base class of ops: subclass it, write `forward` and `backward` as staticmethods, call `apply`.

    The class body of a `torch.autograd.Function` works unchanged here.
    """

    check_gradients = True       # a user's backward: check it returns one tensor or None per input
    # What torch records for the op, which a built-in declares in its class line with the keyword in brackets:
    #     class Mul(Builtin, node="MulBackward0", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0)):
    node_name = None             # [node] the name torch gives the node (built-ins: "MulBackward0")
    saved_names = ()             # [saves] names for the saved tensors, shown as node._saved_<name>
    qualified_name = None        # [qualified_name] what node.name() says, when torch gives more than the class name
    numbers_are_inputs = False   # [numbers_are_inputs] a Python number operand of + - * / is an input (an empty edge)
    none_is_input = False        # [none_is_input] so is a None argument, as for torch's C++ functions
    nondifferentiable_args = ()  # [nondifferentiable_args] positions of index/condition/target tensors: no edge
    is_view = False              # [is_view] the output shares the first input's storage (see teachgrad.views)
    pack_order = None            # [pack_order] saved-tensor hooks see the saved tensors in this order (positions in
                                 # save_for_backward's), as torch packs them; None: the order they were saved in

    def __init_subclass__(cls, **bookkeeping: Any) -> None:
        """A built-in op declares torch's bookkeeping in its class line (the keywords in brackets above)."""
        for keyword, value in bookkeeping.items():
            if keyword not in BOOKKEEPING:
                raise TypeError(f"{cls.__name__}: {keyword!r} is not one of {', '.join(BOOKKEEPING)}")
            setattr(cls, BOOKKEEPING[keyword], value)
        super().__init_subclass__()
        name = cls.__dict__.get("node_name") or cls.__name__ + "Backward"
        attributes = {"_forward_cls": cls, "__module__": cls.__module__,
                      **saved_attributes(cls.saved_names)}
        cls._backward_cls = type(name, (BackwardNode,), attributes)
        cls._has_setup_context = cls.setup_context is not Function.setup_context

    @staticmethod
    def forward(ctx: BackwardNode, *args: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: BackwardNode, inputs: tuple, output: Any) -> None:
        """Optional: save what backward needs, given forward's inputs and output.

        A Function that defines it writes `forward(*args)` without `ctx`, as in torch.
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: BackwardNode, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx: BackwardNode, *tangents: Any) -> Any:
        """Forward mode: the tangents of the inputs in, the tangent of the output out."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on the inputs' data; when grad mode is on and an input requires grad, record the node.

        The node is `ctx` itself: it keeps an edge to where each input's gradient goes, and what forward saved.
        """
        if kwargs or cls._has_setup_context:
            args = custom_function.bind_arguments(cls, args, kwargs)
        ctx = cls._backward_cls()
        recording = grad_mode.is_grad_enabled() and not torch.is_inference_mode_enabled()   # (grad mode may be on
        if recording:                                                                         # in inference mode)
            args, raw = _read_inputs(cls, ctx, args)
        else:   # nothing is recorded: forward computes on the data, and no input needs a gradient
            raw = []
            for arg in args:   # (a loop, not a list comprehension: no function call of its own)
                raw.append(arg._data if isinstance(arg, Variable) else arg)
            ctx.needs_input_grad = (False,) * len(args)
        if cls.check_gradients:   # a user's Function: forward with grad mode off, its results plain data
            output = custom_function.run_user_forward(cls, ctx, raw, recording)
        else:
            output = cls.forward(ctx, *raw)
        if ctx._dirty:   # ctx.mark_dirty: every dirty input returned, its version bumped
            dirty.check_returned(ctx, output)
        if True in ctx.needs_input_grad:
            result = _record(cls, ctx, args, raw, output)
        elif type(output) is torch.Tensor and not (ctx._dirty or cls.is_view):
            result = Variable._make(output)   # (the usual case of _wrap_unrecorded)
        else:
            result = _wrap_unrecorded(cls, ctx, args, raw, output)
        if forward_ad._current_level >= 0:
            forward_ad.propagate(cls, ctx, args, raw, result)
        return result


# The keywords of a built-in's class line -> the class attribute each sets (see Function's body).
BOOKKEEPING = {"node": "node_name", "saves": "saved_names", "qualified_name": "qualified_name",
               "numbers_are_inputs": "numbers_are_inputs", "none_is_input": "none_is_input",
               "nondifferentiable_args": "nondifferentiable_args", "is_view": "is_view", "pack_order": "pack_order"}


def _read_inputs(cls: type[Function], ctx: BackwardNode, args: tuple) -> tuple[tuple, list]:
    """Each argument's data (what forward computes with), and the node's edges; sets `ctx.needs_input_grad`.
    Returns (args, raw).

    An input gets an edge: where its gradient goes (`_next_nodes`, `_input_nrs`), and the (shape, dtype,
    device) that gradient must have (`_input_meta`). This is the usual case, every argument a Variable (or a
    number operand of + - * /, with an empty edge); `read_mixed_inputs` reads the others (torch tensors, None,
    index arguments)."""
    if cls.nondifferentiable_args or not args:
        return read_mixed_inputs(cls, ctx, args)
    inputs = []   # per argument: (data, needs a gradient, node, input_nr, meta)
    for arg in args:
        if isinstance(arg, Variable):
            data = arg._data
            if arg._view is None:
                node, input_nr = arg._grad_fn, arg._output_nr
                if node is None and arg._requires_grad:
                    node, input_nr = arg._grad_accumulator(), 0
                needed = node is not None
            else:                           # (a view's history may have to be made again: see _edge)
                needed = arg.requires_grad
                node, input_nr = arg._edge() if needed else (None, 0)
            if needed:
                inputs.append((data, True, node, input_nr, (tuple(data.shape), data.dtype, data.device)))  # (as _meta)
            else:                           # a constant: no gradient goes to it
                inputs.append((data, False, None, 0, None))
        elif cls.numbers_are_inputs and (type(arg) is float or type(arg) is int):   # `x * 2.0`: an empty edge
            inputs.append((arg, False, None, 0, None))
        else:
            return read_mixed_inputs(cls, ctx, args)
    raw, ctx.needs_input_grad, nodes, input_nrs, metas = zip(*inputs)   # (one tuple each)
    if True in ctx.needs_input_grad:
        ctx._next_nodes, ctx._input_nrs, ctx._input_meta = nodes, input_nrs, metas   # (every argument an input)
    return args, raw


def _wrap_unrecorded(cls: type[Function], ctx: BackwardNode, args: tuple, raw: list, output: Any) -> Any:
    """The outputs of an op that recorded nothing: Variables without history (views still know their base)."""
    if isinstance(output, tuple):
        result = wrap_outputs(None, output)
    else:
        result = Variable._make(output)
    if ctx._dirty:
        result = dirty.inputs_as_outputs(ctx, args, raw, result)
    if cls.is_view and isinstance(args[0], Variable):
        mark_views(cls, args, result)
    return result


def _record(cls: type[Function], ctx: BackwardNode, args: tuple, raw: list, output: Any) -> Any:
    """Make `ctx` a node of the graph: its edges, the outputs it made (each output's grad_fn), what it saved."""
    ctx._sequence_nr = next(_sequence_nr)
    if anomaly_mode._enabled:
        ctx._forward_stack = anomaly_mode.forward_stack()
    if cls.check_gradients:   # a user's Function: an input it returns as it is comes back as a view of it
        output = custom_function.inputs_returned_as_views(ctx, raw, output)
    if isinstance(output, tuple):
        ctx._num_outputs = len(output)
        ctx._output_meta = tuple(None if o is None else _meta(o) for o in output)
        result = wrap_outputs(ctx, output)
        outputs = output
    else:
        if type(output) is torch.Tensor and output.dtype.is_floating_point and not ctx._non_differentiable:
            result = Variable._make(output, ctx, 0)   # (the usual case of wrap_output)
        else:
            result = wrap_output(ctx, output, 0)
        outputs = (output,)
    if ctx._dirty:   # a dirty input comes back as the output itself, with the node as its history
        result = dirty.inputs_as_outputs(ctx, args, raw, result)
    if ctx._to_save:
        ctx._saved, ctx._hooked = saved_tensors.pack_saved(ctx._to_save, args, raw, outputs, result, cls.pack_order)
        ctx._to_save = ()
    if cls.is_view:
        mark_views(cls, args, result)
    elif cls.check_gradients:
        custom_function.mark_custom_views(ctx, args, raw, outputs, result)
    return result


def _meta(tensor: torch.Tensor) -> tuple:
    """(shape, dtype, device): what a gradient for this tensor must look like.

    The shape is kept as a plain tuple (not a torch.Size): the garbage collector stops tracking a
    tuple of plain values, so a long graph's metadata does not slow its full collections down.
    """
    return tuple(tensor.shape), tensor.dtype, tensor.device


class Builtin(Function):
    """An op of teachgrad's own: `forward` runs torch's kernel on plain tensors, `backward` is the formula
    from torch's derivatives.yaml, and what torch records for the op is declared in its class line:

        class Mul(Builtin, node="MulBackward0", saves=("self", "other"), numbers_are_inputs=True):

    Unlike a user's Function, its backward is trusted to return one gradient per input, and its forward
    computes on plain tensors only: nothing it calls records a graph."""

    check_gradients = False


# The core's import cycle, written openly (see teachgrad/__init__.py): a Variable's methods run these Functions,
# and `apply` makes Variables. teachgrad/__init__.py imports this module first, and above this line it imports only
# what defining its classes needs; teachgrad.variable, run here, finds every name above defined.
from .variable import Variable  # noqa: E402
# What `apply` does beyond the usual case, written apart (each module's docstring names its tests).
from . import custom_function, dirty, forward_ad, saved_tensors, torch_leaves  # noqa: E402
from .mixed_inputs import read_mixed_inputs  # noqa: E402  (numbers, torch tensors, None among the arguments)
from .wrap_outputs import wrap_output, wrap_outputs  # noqa: E402  (several outputs, integer or non-differentiable ones)
from .views import mark_views  # noqa: E402  (the outputs of a view op)
