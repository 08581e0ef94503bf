"""A Function a user writes: `tg.Function`, the same class body as a `torch.autograd.Function`.

It is a subclass of the Function every op is made of (teachgrad/core/function.py), with the rules torch applies to
user code and not to its own ops (as torch's `Function` subclasses `_SingleLevelFunction`): its forward runs with
grad mode off and what it returns is plain data; `apply` takes keyword arguments and, with `setup_context`, fills
in defaults; `ctx.mark_dirty` hands the inputs written in place back as outputs; an input it returns as it is
comes back as a view of it, and an output that is a view of an input refuses in-place writes. Its node
(`BackwardCFunction`, torch's name) hands its backward Variables and checks what it returns: one tensor or None
per input.

Guarded by tests/test_function.py, tests/test_views.py (custom views) and tests/mirrored/.
"""
from __future__ import annotations

import inspect
from typing import Any

import torch

from ..core import function
from ..core.node import BackwardNode
from ..rules import batching, grad_mode, saved_tensors, tangents, variable_class, views
from ..rules.hooks import hook_value, typename, unwrap
from ..rules.validate_outputs import wrong_number_message
from ..rules.wrap_outputs import position
from . import mark_dirty


class BackwardCFunction(BackwardNode):
    """The node a user's Function records: its backward gets Variables, and what it returns is checked."""

    @property
    def saved_tensors(self) -> tuple:
        """What forward saved, as Variables (as torch hands a user's backward tensors), checked to be unmodified."""
        if self._in_jvp or self._freed or self._hooked:
            return saved_tensors.unpack_unusual(self, True)
        return tuple([None if s is None else s.unpack(self, True) for s in self._saved])

    def _run_backward(self, grad_outputs: list) -> tuple:
        return call_user_backward(self, grad_outputs)

    def mark_non_differentiable(self, *tensors: torch.Tensor) -> None:
        """As the built-in's, and only tensors are taken: anything else is refused with torch's words (which, in
        torch 2.13, name no type after "but got")."""
        for t in tensors:
            if not isinstance(t, (variable_class.Variable, torch.Tensor)):
                raise RuntimeError("mark_non_differentiable only accepts variable arguments, but got ")
        super().mark_non_differentiable(*tensors)

    _trusted = False   # the engine calls _run_backward, which checks what the user's backward returns; and that
                       # backward may keep what it returns, so a leaf copies it into .grad


class Function(function.Function):
    """Subclass it, write `forward` and `backward` as staticmethods (and `setup_context`, `jvp` if you like),
    call `apply`: as a `torch.autograd.Function`."""

    _node_base = BackwardCFunction

    def __init_subclass__(cls, **bookkeeping: Any) -> None:
        super().__init_subclass__(**bookkeeping)
        cls._has_setup_context = cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """As torch runs a user's Function: arguments bound to forward's signature, forward with grad mode off,
        dirty inputs handed back as outputs; then the steps of every op."""
        if kwargs or cls._has_setup_context:
            args = bind_arguments(cls, args, kwargs)
        if batching.vmap_depth:   # inside vmap: a user's Function has no batching rule (teachgrad/features/vmap.py)
            return batching.run_batched(cls, args)
        ctx = cls._backward_cls()
        args, raw = function.read_inputs(cls, ctx, args)
        output = run_user_forward(cls, ctx, raw, grad_mode.is_grad_enabled() and not torch.is_inference_mode_enabled())
        if ctx._dirty:   # ctx.mark_dirty: every dirty input returned, its version bumped
            mark_dirty.check_returned(ctx, output)
        if True in ctx.needs_input_grad:
            result = cls._record(ctx, args, raw, output)
        else:
            result = cls._wrap_unrecorded(ctx, args, raw, output)
        if grad_mode.forward_level >= 0:
            tangents.propagate(cls, ctx, args, raw, result, tangents.propagate_users_recorded)
        return result

    @classmethod
    def _record(cls, ctx: BackwardCFunction, args: tuple, raw: list, output: Any) -> Any:
        """The steps of every op, and torch's for user code: an input returned as it is comes back as a view of
        it, a dirty input as the output itself, an output that views an input refuses in-place writes."""
        function.number_node(ctx)
        output = inputs_returned_as_views(ctx, raw, output)
        result, outputs = function.wrap_recorded(ctx, output)
        if ctx._dirty:   # a dirty input comes back as the output itself, with the node as its history
            result = mark_dirty.inputs_as_outputs(ctx, args, raw, result)
        if ctx._to_save:
            function.pack_saved(cls, ctx, args, raw, outputs, result)
        mark_custom_views(ctx, args, raw, outputs, result)
        return result

    @classmethod
    def _wrap_unrecorded(cls, ctx: BackwardCFunction, args: tuple, raw: list, output: Any) -> Any:
        result = super()._wrap_unrecorded(ctx, args, raw, output)
        if ctx._dirty:
            result = mark_dirty.inputs_as_outputs(ctx, args, raw, result)
        return result


def run_user_forward(cls: type[Function], ctx: BackwardCFunction, raw: list, recording: bool) -> Any:
    """A user's forward runs with grad mode off, as in torch: teachgrad functions it calls record nothing, and
    what it returns and saves is plain data to the engine. (A built-in's forward runs torch kernels on plain
    tensors that require no grad: nothing is recorded either way.)"""
    if not recording:
        return _plain_data(_call_forward(cls, ctx, raw))
    grad_mode.set_enabled(False)
    try:
        return _plain_data(_call_forward(cls, ctx, raw))
    finally:
        grad_mode.set_enabled(True)


def _call_forward(cls, ctx, raw):
    if not cls._has_setup_context:
        return cls.forward(ctx, *raw)
    output = cls.forward(*raw)
    cls.setup_context(ctx, tuple(raw), output)
    return output


def bind_arguments(cls: type[Function], args: tuple, kwargs: dict) -> tuple:
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
    """What a user's forward returned, with any Variable (it computed with teachgrad functions) as its data:
    the engine records the Function's own node for it, as torch does for a forward that used torch functions."""
    if isinstance(output, variable_class.Variable):
        return output.data
    if isinstance(output, tuple):
        return tuple(o.data if isinstance(o, variable_class.Variable) else o for o in output)
    return output


def inputs_returned_as_views(ctx: BackwardCFunction, raw: list, output: Any) -> Any:
    """torch hands back `input.view_as(input)` for an input a Function returns as it is: a new tensor
    that shares the input's storage (see mark_custom_views)."""
    def fresh(o):
        if (isinstance(o, torch.Tensor) and position(o, raw) is not None
                and position(o, ctx._non_differentiable) is None and position(o, ctx._dirty) is None):
            return o.view_as(o)
        return o
    return tuple(fresh(o) for o in output) if isinstance(output, tuple) else fresh(output)


def mark_custom_views(ctx: BackwardCFunction, args: tuple, raw: list, outputs: tuple, result: Any) -> None:
    """Each recorded output of a user's Function that is a view of an input requiring grad becomes a view
    that refuses in-place writes, as torch's IN_CUSTOM_FUNCTION (or MULTI_OUTPUT_NODE with several outputs)."""
    results = result if isinstance(result, tuple) else (result,)
    recorded = [(tensor, variable) for tensor, variable in zip(outputs, results)
                if isinstance(variable, variable_class.Variable) and variable._grad_fn is ctx]
    for tensor, variable in recorded:
        base = tensor._base
        if base is None:
            continue
        for data, arg in zip(raw, args):
            if isinstance(arg, variable_class.Variable) and arg.requires_grad and (data is base or data._base is base):
                views.mark_custom_view(variable, arg, multi_output=len(recorded) > 1)
                break


def call_user_backward(node: Any, grad_outputs: list) -> tuple:
    """A user's backward, checked; in a first-order pass it gets Variables (as torch's gets tensors)."""
    first_order = not grad_mode.is_grad_enabled()
    if first_order:
        grad_outputs = [hook_value(g) for g in grad_outputs]
    grads = node._forward_cls.backward(node, *grad_outputs)
    grads = _checked_user_gradients(node, grads if isinstance(grads, tuple) else (grads,))
    if first_order:
        grads = tuple(unwrap(g, create_graph=False) for g in grads)
    return grads


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
        if not isinstance(g, (torch.Tensor, variable_class.Variable)):
            raise RuntimeError(f"expected Variable or None (got {typename(g)})")
    return grads
