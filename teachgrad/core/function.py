"""Functions: the ops, each a `forward` and a `backward` side by side, and `apply`, which records them.

A `Function` is an op: a `forward` that computes on plain torch tensors and a `backward` that
turns the gradients of the outputs into gradients of the inputs, side by side in one class.
`Function.apply` runs forward and, when grad mode is on and an input requires grad, records a
node of the backward graph (teachgrad/core/node.py). As in torch, that node *is* the `ctx` forward was given:

    class Mul(Function, node="MulBackward0", saves=("self", "other")):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b, grad * a

    y = Mul.apply(p, q)              # y.grad_fn is a MulBackward0 node

This is the Function every op of teachgrad/ops subclasses: its backward is trusted to return one gradient per
input, and its forward computes on plain tensors only. A user's Function (`tg.Function`, the same class body
as a `torch.autograd.Function`) subclasses it in teachgrad/features/custom_function.py, which adds the rules
torch applies to user code.

`apply` makes Variables, yet this module does not import teachgrad/core/variable.py (whose methods run these
Functions): it finds the class in teachgrad/rules/variable_class.py, handed over once at start-up.
"""
from __future__ import annotations

import itertools
from typing import Any

import torch

from ..rules import anomaly, batching, grad_mode, saved_tensors, tangents, variable_class
from ..rules.mixed_inputs import NOT_AN_INPUT, read_mixed_inputs, record_edges   # (torch tensors, None, indices)
from ..rules.saved_attributes import saved_attributes
from ..rules.views import mark_views                 # (the outputs of a view op)
from ..rules.wrap_outputs import wrap_output, wrap_outputs   # (several outputs, integer or non-differentiable ones)
from .node import BackwardNode

sequence_nrs = itertools.count()   # every node's number, in the order made (the engine runs the newest first)


class Function:
    """Base class of ops: subclass it, write `forward` and `backward` as staticmethods, call `apply`."""

    # What torch records for the op, which an op declares in its class line with the keyword in brackets:
    #     class Mul(Function, node="MulBackward0", saves=("self", "other"), numbers_are_inputs=True, pack_order=(1, 0)):
    node_name = None             # [node] the name torch gives the node (built-ins: "MulBackward0")
    saved_names = ()             # [saves] names for the saved tensors, shown as node._saved_<name>
    qualified_name = None        # [qualified_name] what node.name() says, when torch gives more than the class name
    numbers_are_inputs = False   # [numbers_are_inputs] a Python number operand of + - * / is an input (an empty edge)
    none_is_input = False        # [none_is_input] so is a None argument, as for torch's C++ functions
    nondifferentiable_args = ()  # [nondifferentiable_args] positions of index/condition/target tensors: no edge
    is_view = False              # [is_view] the output shares the first input's storage (see teachgrad/rules/views.py)
    pack_order = None            # [pack_order] saved-tensor hooks see the saved tensors in this order (positions in
                                 # save_for_backward's), as torch packs them; None: the order they were saved in
    # ... and what the rest of the package reads from it (teachgrad/api/declared.py, features/batching_rules.py):
    #     class Tan(_Unary, node="TanBackward0", function="tan", method="tan"):
    function_names = ()          # [function] torch's function names for the op: tg.tan is made from the declaration
    method_names = ()            # [method] torch's Tensor method names: Variable.tan
    batching = None              # [batching] vmap's kind of rule: "pointwise", ("along", k) (a dim at argument k),
                                 # or None: a rule of its own in features/batching_rules.py's table, or none
    linear = False               # [linear] linear in its first input: its jvp is its forward applied to the tangent
    out_variant = True           # [out_variant] torch's function takes out= (tg.tan(x, out=y)); False where it does not
    in_place_derivative = True   # [in_place_derivative] False: torch's in-place twin (x.atanh_()) records no
                                 # derivative and refuses to run where a gradient is needed

    def __init_subclass__(cls, **bookkeeping: Any) -> None:
        """An op declares torch's bookkeeping in its class line (the keywords in brackets above)."""
        cls.function_names = cls.method_names = ()   # names are the class's own: a subclass is another op
        for keyword, value in bookkeeping.items():
            if keyword not in BOOKKEEPING:
                raise TypeError(f"{cls.__name__}: {keyword!r} is not one of {', '.join(BOOKKEEPING)}")
            if keyword in ("function", "method") and isinstance(value, str):
                value = (value,)
            setattr(cls, BOOKKEEPING[keyword], value)
        if bookkeeping.get("linear"):
            if "jvp" in cls.__dict__:
                raise TypeError(f"{cls.__name__}: a linear op's jvp is its forward; it declares linear=True and a jvp")
            cls.jvp = staticmethod(linear_jvp(cls))
        if cls.function_names or cls.method_names or cls.batching:
            DECLARED.append(cls)
        super().__init_subclass__()
        name = cls.__dict__.get("node_name") or cls.__name__ + "Backward"
        attributes = {"_forward_cls": cls, "__module__": cls.__module__, "_view_node": cls.is_view,
                      **saved_attributes(cls.saved_names)}
        cls._backward_cls = type(name, (cls._node_base,), attributes)

    _node_base = BackwardNode   # the class of the node apply records (a user's Function records its own kind)

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
    def apply(cls, *args: Any) -> Any:
        """Run forward on the inputs' data; when grad mode is on and an input requires grad, record the node.

        The node is `ctx` itself: it keeps an edge to where each input's gradient goes, and what forward saved.
        """
        if batching.vmap_depth:   # inside vmap: the op's batching rule runs it (teachgrad/features/vmap.py)
            return batching.run_batched(cls, args)
        ctx = cls._backward_cls()
        if grad_mode.is_grad_enabled() and not torch.is_inference_mode_enabled():   # (grad mode may be on in
            args, raw = _read_recorded(cls, ctx, args)                              # inference mode)
        else:
            raw = _read_unrecorded(ctx, args)
        output = cls.forward(ctx, *raw)
        if True in ctx.needs_input_grad:   # record: ctx becomes a node of the graph
            ctx._sequence_nr = next(sequence_nrs)   # (number_node's work, written out: apply runs for every op)
            if anomaly.enabled:
                ctx._forward_stack = anomaly.forward_stack()
            # the outputs as Variables whose grad_fn is ctx (the usual case written out: one float tensor)
            if type(output) is torch.Tensor and output.dtype.is_floating_point and not ctx._non_differentiable:
                result, outputs = variable_class.Variable._make(output, ctx, 0), (output,)
            else:
                result, outputs = wrap_recorded(ctx, output)
            if ctx._to_save:   # what forward saved, with its version
                ctx._saved, ctx._hooked = saved_tensors.pack_saved(ctx._to_save, args, raw, outputs, result,
                                                                   cls.pack_order)
                ctx._to_save = ()
            if cls.is_view:
                mark_views(cls, args, result)
        elif type(output) is torch.Tensor and not cls.is_view:
            result = variable_class.Variable._make(output)   # (the usual case of _wrap_unrecorded)
        else:
            result = cls._wrap_unrecorded(ctx, args, raw, output)
        if grad_mode.forward_level >= 0:   # forward mode: the outputs' tangents (teachgrad/rules/tangents.py)
            tangents.propagate(cls, ctx, args, raw, result)
        return result

    @classmethod
    def _wrap_unrecorded(cls, ctx: BackwardNode, args: tuple, raw: list, output: Any) -> Any:
        """The outputs of an op that recorded nothing: Variables without history (views still know their base)."""
        if isinstance(output, tuple):
            result = wrap_outputs(None, output)
        else:
            result = variable_class.Variable._make(output)
        if cls.is_view and isinstance(args[0], variable_class.Variable):
            mark_views(cls, args, result)
        return result


# The keywords of an op's class line -> the class attribute each sets (see Function's body).
BOOKKEEPING = {"node": "node_name", "saves": "saved_names", "qualified_name": "qualified_name",
               "numbers_are_inputs": "numbers_are_inputs", "none_is_input": "none_is_input",
               "nondifferentiable_args": "nondifferentiable_args", "is_view": "is_view", "pack_order": "pack_order",
               "function": "function_names", "method": "method_names", "batching": "batching", "linear": "linear",
               "out_variant": "out_variant", "in_place_derivative": "in_place_derivative"}
DECLARED: list[type[Function]] = []   # the ops that declare names or a batching kind, in the order defined


def linear_jvp(op: type[Function]) -> Any:
    """The jvp of an op linear in its first input (declared `linear=True`, as HIPS autograd's `def_linear`): the op's
    forward, applied to that input's tangent with the other arguments as they were (on a node of its own, so
    nothing forward keeps lands on the op's node). On a Variable tangent it records what forward runs."""
    def jvp(ctx: BackwardNode, tangent: Any, *_: Any) -> Any:
        return op.forward(op._backward_cls(), tangent, *ctx._primals[1:])
    return jvp


def read_inputs(cls: type[Function], ctx: BackwardNode, args: tuple) -> tuple[tuple, list]:
    """Each argument's data (what forward computes with); sets `ctx.needs_input_grad`, and the edges when recording.
    Returns (args, raw)."""
    if grad_mode.is_grad_enabled() and not torch.is_inference_mode_enabled():   # (grad mode may be on in inference
        return _read_recorded(cls, ctx, args)                                   # mode)
    return args, _read_unrecorded(ctx, args)


def _read_unrecorded(ctx: BackwardNode, args: tuple) -> list:
    """Each argument's data, when nothing is recorded: forward computes on it, and no input needs a gradient."""
    raw = []
    for arg in args:   # (a loop, not a list comprehension: no function call of its own)
        raw.append(arg._data if isinstance(arg, variable_class.Variable) else arg)
    ctx.needs_input_grad = (False,) * len(args)
    return raw


def _read_recorded(cls: type[Function], ctx: BackwardNode, args: tuple) -> tuple[tuple, list]:
    """Each argument's data (what forward computes with), and the node's edges; sets `ctx.needs_input_grad`.
    Returns (args, raw).

    An input gets an edge: where its gradient goes (`_next_nodes`, `_input_nrs`), and the (shape, dtype,
    device) that gradient must have (`_input_meta`). This is the usual case: Variables, a number operand of
    + - * / (an empty edge), and arguments that are no inputs (a shape, a dim: no edge, and then `_input_slots`
    says which arguments the edges are for); `read_mixed_inputs` reads the others (torch tensors, None,
    index arguments)."""
    if cls.nondifferentiable_args or not args:
        return read_mixed_inputs(cls, ctx, args)
    Variable = variable_class.Variable
    rows = []   # per argument: (data, needs a gradient, node, input_nr, meta)
    no_inputs = False   # whether an argument is no input (a shape, a dim)
    for arg in args:
        if isinstance(arg, Variable):
            data = arg._data
            if arg._view is None:
                node, input_nr = arg._grad_fn, arg._output_nr
                if node is None and arg._requires_grad:
                    node, input_nr = arg._grad_accumulator(), 0
                needed = node is not None
            else:                           # (a view's history may have to be made again: see _edge; a view made
                needed = arg.requires_grad  # under no_grad of a base that requires grad requires grad, edge or not)
                node, input_nr = arg._edge() if needed else (None, 0)
            if needed:
                rows.append((data, True, node, input_nr, (tuple(data.shape), data.dtype, data.device)))  # (as _meta)
            else:                           # a constant: no gradient goes to it
                rows.append((data, False, None, 0, None))
        elif cls.numbers_are_inputs and (type(arg) is float or type(arg) is int):   # `x * 2.0`: an empty edge
            rows.append((arg, False, None, 0, None))
        elif type(arg) is not int and type(arg) is not tuple and (   # (a dim or a shape skips these checks:
                isinstance(arg, torch.Tensor) or arg is None and cls.none_is_input   # isinstance against torch.Tensor
                or cls.numbers_are_inputs and isinstance(arg, (int, float))):        # is slow to say no)
            return read_mixed_inputs(cls, ctx, args)   # a torch tensor, None; a bool or a float subclass for + - * /
        else:                               # a shape, a dim, an exponent: no input, no edge
            rows.append((arg, False, NOT_AN_INPUT, 0, None))
            no_inputs = True
    if no_inputs:
        return args, record_edges(ctx, rows)
    raw, ctx.needs_input_grad, nodes, input_nrs, metas = zip(*rows)   # (record_edges' usual case, written out)
    if True in ctx.needs_input_grad:
        ctx._next_nodes, ctx._input_nrs, ctx._input_meta = nodes, input_nrs, metas
    return args, raw


def number_node(ctx: BackwardNode) -> None:
    """Give a node its sequence number (the engine runs the newest first); in anomaly mode, the forward stack."""
    ctx._sequence_nr = next(sequence_nrs)
    if anomaly.enabled:
        ctx._forward_stack = anomaly.forward_stack()


def wrap_recorded(ctx: BackwardNode, output: Any) -> tuple[Any, tuple]:
    """The outputs as Variables whose grad_fn is `ctx`; returns (what apply returns, the outputs as a tuple)."""
    if isinstance(output, tuple):
        ctx._num_outputs = len(output)
        ctx._output_meta = tuple(None if o is None else _meta(o) for o in output)
        return wrap_outputs(ctx, output), output
    if type(output) is torch.Tensor and output.dtype.is_floating_point and not ctx._non_differentiable:
        return variable_class.Variable._make(output, ctx, 0), (output,)   # (the usual case of wrap_output)
    return wrap_output(ctx, output, 0), (output,)


def pack_saved(cls: type[Function], ctx: BackwardNode, args: tuple, raw: list, outputs: tuple, result: Any) -> None:
    """Keep what forward gave `save_for_backward`, each with its version (teachgrad/rules/saved_tensors.py)."""
    ctx._saved, ctx._hooked = saved_tensors.pack_saved(ctx._to_save, args, raw, outputs, result, cls.pack_order)
    ctx._to_save = ()


def _meta(tensor: torch.Tensor) -> tuple:
    """(shape, dtype, device): what a gradient for this tensor must look like.

    The shape is kept as a plain tuple (not a torch.Size): the garbage collector stops tracking a
    tuple of plain values, so a long graph's metadata does not slow its full collections down.
    """
    return tuple(tensor.shape), tensor.dtype, tensor.device
