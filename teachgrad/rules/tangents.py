"""Tangents, as `Function.apply` and in-place ops carry them while a forward-mode level is open.

The level (`_current_level`, -1 when none is open) is the mode word `apply` reads: with no level open, forward
mode costs one comparison per op. The public API that opens a level and makes and reads dual tensors
(`dual_level`, `make_dual`, `unpack_dual`) is teachgrad/features/forward_ad.py; see there for how a tangent rides
along with its value.

Guarded by tests/test_forward_ad.py (every op's jvp against torch's, views, in-place, custom Functions' jvp and
save_for_forward), tests/test_func.py (jvp, jacfwd) and tests/test_new_ops.py.
"""
from __future__ import annotations

import weakref
from typing import Optional

import torch

from . import grad_mode, torch_leaves, variable_class, views

_duals = []                       # weak references to the Variables given a tangent at the open level: cleared when it closes
_generation = 0                   # counts the levels opened, so a saved tangent from a closed one is ignored


def enter_dual_level() -> int:
    """Open a level for dual tensors; returns its number. Only one may be open at a time."""
    if grad_mode.forward_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    global _generation
    grad_mode.forward_level = 0
    _generation += 1
    return grad_mode.forward_level


def exit_dual_level(*, level: Optional[int] = None) -> None:
    """Close the open level: every tangent made in it is dropped."""
    if level is None:
        level = grad_mode.forward_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != grad_mode.forward_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported.")
    for ref in _duals:
        variable = ref()
        if variable is not None:
            variable._fw_grad = None
    _duals.clear()
    grad_mode.forward_level = level - 1


# --- the machinery Function.apply and in-place ops use ----------------------------------------

def _own_tangent(variable):
    fw = variable._fw_grad
    return None if fw is None else fw[1]


def tangent_of(variable):
    """The tangent of a Variable at the open level: its own, else (for a view) the base's, viewed."""
    fw = variable._fw_grad
    if fw is not None:
        return fw[1]
    view = variable._view
    if view is not None:
        base_tangent = _own_tangent(view.base)
        if base_tangent is not None:
            return views.replay(view.chain, base_tangent)
    return None


def set_tangent(variable, tangent, shown=None):
    """Attach a tangent (a torch tensor) to a Variable at the open level; `shown`: what unpack_dual gives for it."""
    variable._fw_grad = (grad_mode.forward_level, tangent, shown)
    _duals.append(weakref.ref(variable))


class _no_tangents:
    """Inside, ops compute values only (unpack_dual's primal must not carry the tangent)."""

    def __enter__(self):
        self.level, grad_mode.forward_level = grad_mode.forward_level, -1

    def __exit__(self, *exc):
        grad_mode.forward_level = self.level


def propagate(cls, ctx, args, raw, result, propagate_recorded=None):
    """After `cls.forward` ran: give the outputs the tangent `cls.jvp` computes from the inputs' tangents.

    As in torch's custom Functions, jvp gets one tangent per forward argument: the tangent of a
    tensor input (zeros if it has none) and None for anything else.
    """
    Variable = variable_class.Variable
    tangents, any_dual = [], False
    for i, (arg, data) in enumerate(zip(args, raw)):
        tangent = tangent_of(arg) if isinstance(arg, Variable) and i not in cls.nondifferentiable_args else None
        if tangent is not None:
            any_dual = True
        elif isinstance(data, torch.Tensor) and i not in cls.nondifferentiable_args:
            tangent = torch.zeros_like(data)
        tangents.append(tangent)
    if not any_dual:
        ctx._saved_for_forward = None
        return
    if grad_mode.is_grad_enabled() and _recorded(args):
        # a user's Function hands its own way of recording (propagate_users_recorded), a built-in uses its formula
        return (propagate_recorded or _propagate_recorded)(cls, ctx, args, raw, result, tangents)
    ctx._in_jvp = True
    ctx._primals, ctx._result = raw, _data(result)   # what a built-in's formula reads, as derivatives.yaml's
    try:                                              # self_p and result
        with grad_mode.no_grad():
            out_tangents = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        ctx._saved_for_forward = ctx._primals = ctx._result = None
    outputs = result if isinstance(result, tuple) else (result,)
    out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    for output, tangent in zip(outputs, out_tangents):
        if tangent is None or not isinstance(output, Variable) or not _differentiable(output.dtype):
            continue
        tangent = tangent.data if isinstance(tangent, Variable) else tangent
        if tangent.shape != output.shape:
            tangent = tangent.expand(output.shape)
        set_tangent(output, tangent)
        _remember_saved_output(ctx, output._output_nr, tangent)


def _recorded(args):
    """Whether a built-in's tangent formula is recorded in the backward graph: as torch, when an input or the
    tangent of one requires grad (grad mode on), so that the tangent can be differentiated (reverse-over-forward)."""
    Variable = variable_class.Variable
    for arg in args:
        if isinstance(arg, (Variable, torch.Tensor)) and arg.requires_grad:
            return True
        if isinstance(arg, Variable):
            shown = _differentiable_tangent(arg)
            if shown is not None and shown.requires_grad:
                return True
    return False


def _differentiable_tangent(variable):
    """The tangent of a Variable as a Variable, with the graph it was computed by (None if it has none)."""
    Variable = variable_class.Variable
    fw = variable._fw_grad
    if fw is not None:
        return fw[2] if isinstance(fw[2], Variable) and fw[2].data is fw[1] else None
    view = variable._view
    if view is not None and view.base._fw_grad is not None:
        base = _differentiable_tangent(view.base)
        if base is not None:
            return views.replay(view.chain, base)
    return None


def _propagate_recorded(cls, ctx, args, raw, result, tangents):
    """`propagate`, with the formula run on Variables under grad mode: each output's tangent is a Variable
    with a grad_fn (what `unpack_dual` shows), as torch records a tangent's computation."""
    tangents = [_as_variable(_jvp_input_tangent(arg, tangent)) for arg, tangent in zip(args, tangents)]
    ctx._in_jvp = True
    ctx._primals = tuple(torch_leaves.as_variable(a) if isinstance(a, torch.Tensor) and a.requires_grad else a
                         for a in args)
    ctx._result = result
    try:
        with _no_tangents():       # the formula reads the primals' values, not their tangents (self_p, as torch)
            out_tangents = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        ctx._saved_for_forward = ctx._primals = ctx._result = None
    outputs = result if isinstance(result, tuple) else (result,)
    _set_recorded_tangents(ctx, outputs, out_tangents)


def propagate_users_recorded(cls, ctx, args, raw, result, tangents):
    """A user's jvp, as torch runs it when an input requires grad: with grad mode on, and with the tensors forward
    kept on ctx (or saved for forward) being the Function's own inputs and outputs, as in torch, where they are the
    same objects. The tangent it returns then records how it was computed, through the Function's node."""
    Variable = variable_class.Variable
    outputs = result if isinstance(result, tuple) else (result,)
    as_seen = {id(data): arg for data, arg in zip(raw, args) if isinstance(arg, Variable)}
    as_seen.update((id(output.data), output) for output in outputs if isinstance(output, Variable))
    def seen(value):   # (forward computed on the data: what it kept is that data, or a Variable over it)
        data = value.data if isinstance(value, Variable) else value
        return as_seen.get(id(data)) if isinstance(data, torch.Tensor) else None

    kept = {name: value for name, value in vars(ctx).items() if seen(value) is not None}
    for name, value in kept.items():
        setattr(ctx, name, seen(value))
    if ctx._saved_for_forward:
        ctx._saved_for_forward = tuple(t if seen(t) is None else seen(t) for t in ctx._saved_for_forward)
    tangents = [_jvp_input_tangent(arg, tangent) for arg, tangent in zip(args, tangents)]
    ctx._in_jvp = True
    try:
        out_tangents = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        ctx._saved_for_forward = None
        for name, value in kept.items():
            if name in vars(ctx):   # (one that jvp deleted stays deleted)
                setattr(ctx, name, value)
    _set_recorded_tangents(ctx, outputs, out_tangents)


def _set_recorded_tangents(ctx, outputs, out_tangents):
    """Give each output the tangent a recorded jvp returned: its data, and the Variable (with the graph it was
    computed by) as what unpack_dual shows, when that requires grad."""
    Variable = variable_class.Variable
    out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    for output, tangent in zip(outputs, out_tangents):
        if tangent is None or not isinstance(output, Variable) or not _differentiable(output.dtype):
            continue
        if not isinstance(tangent, Variable):
            tangent = Variable._make(tangent)
        if tangent.shape != output.shape:
            tangent = tangent.expand(output.shape)
        set_tangent(output, tangent.data, tangent if tangent.requires_grad else None)
        _remember_saved_output(ctx, output._output_nr, tangent.data)


def _as_variable(tangent):
    return variable_class.Variable._make(tangent) if isinstance(tangent, torch.Tensor) else tangent


def _jvp_input_tangent(arg, tangent):
    """The tangent a jvp is handed for `arg`: with the graph it was computed by, where it has one."""
    if tangent is None or not isinstance(arg, variable_class.Variable):
        return tangent
    shown = _differentiable_tangent(arg)
    return tangent if shown is None else shown


def _data(result):
    if isinstance(result, tuple):
        return tuple(getattr(r, "data", r) for r in result)
    return result.data


def _remember_saved_output(ctx, output_nr, tangent):
    """An output saved for backward is rebuilt when unpacked: keep its tangent for forward-over-reverse."""
    for saved in ctx._saved:
        if saved is not None and saved.output_nr == output_nr:
            saved.fw_grad = (_generation, tangent)


def save_for_forward(ctx, tensors):
    """`ctx.save_for_forward(*tensors)`: tensors (or None) only, as torch checks; kept only while a level is open."""
    for tensor in tensors:
        if not (isinstance(tensor, torch.Tensor) or tensor is None):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                 "non-tensors as attributes on ctx.")
    if grad_mode.forward_level >= 0:
        ctx._saved_for_forward = tensors


def saved_tangent(saved):
    """The tangent a saved output had, if it was made at the open level."""
    fw = saved.fw_grad
    return fw[1] if fw is not None and fw[0] == _generation and grad_mode.forward_level >= 0 else None


def is_dual(x) -> bool:
    """Whether `x` is a Variable with a tangent at the open level."""
    return grad_mode.forward_level >= 0 and isinstance(x, variable_class.Variable) and tangent_of(x) is not None


def in_place_tangent(variable, out_of_place):
    """The tangent `variable` will have after an in-place op: its out-of-place twin's, on a copy of the value before
    the write (torch's original_self) with a copy of its tangent. As an out-of-place op's, the formula is recorded
    when grad mode is on and a primal or tangent requires grad: then a Variable with a grad_fn comes back."""
    Variable = variable_class.Variable
    before = Variable._make(variable.data.clone(), variable.grad_fn, variable._output_nr)
    own, shown = tangent_of(variable), _differentiable_tangent(variable)
    if shown is not None:                  # cloned, as torch clones self_t: the write must not change what the
        shown = shown.clone()              # formula saved for backward
        set_tangent(before, shown.data, shown)
    elif own is not None:
        set_tangent(before, own.clone())
    after = out_of_place(before)
    if after._fw_grad is None:
        return torch.zeros_like(variable.data)
    _, tangent, shown = after._fw_grad
    return shown if isinstance(shown, Variable) and shown.requires_grad else tangent


def write_tangent(variable, tangent):
    """After an in-place op: `variable` now has `tangent`; through a view, it lands in the base's tangent.
    A recorded tangent (a Variable) is written as torch writes it, by a copy_ that is recorded in turn."""
    if isinstance(tangent, variable_class.Variable):
        return _write_recorded(variable, tangent)
    view = variable._view
    if view is None:
        own = _own_tangent(variable)
        if own is not None and own.shape == tangent.shape:
            own.copy_(tangent)
        else:
            set_tangent(variable, tangent)
        return
    base = view.base
    base_tangent = _own_tangent(base)
    own = _own_tangent(variable)
    if base_tangent is None and own is not None and own.shape == tangent.shape:
        own.copy_(tangent)   # make_dual's view of a plain primal: its tangent is written where it is, as torch's
        return
    if base_tangent is None:
        base_tangent = torch.zeros_like(base.data)
        set_tangent(base, base_tangent)
    written = views.replay(view.chain, base_tangent)
    written.copy_(tangent)
    if variable._fw_grad is not None:
        set_tangent(variable, written)


def _write_recorded(variable, tangent):
    """write_tangent of a tangent that requires grad: copied into the tangent's Variable (through a view, into a view
    of the base's), so that the tangent's history records the write (CopyBackwards, CopySlices), as torch's does."""
    view = variable._view
    if view is None or (_own_tangent(view.base) is None and variable._fw_grad is not None):
        if variable._fw_grad is None:
            set_tangent(variable, tangent.data, tangent)
        else:
            _tangent_variable(variable).copy_(tangent)
        return
    written = views.replay(view.chain, _tangent_variable(view.base))
    written.copy_(tangent)
    if variable._fw_grad is not None:
        set_tangent(variable, written.data, written)


def _tangent_variable(variable):
    """A Variable's own tangent as a Variable an in-place write can record on: the one it has, else one made over
    its data (zeros if it had none), kept as what unpack_dual shows."""
    shown = _differentiable_tangent(variable) if variable._fw_grad is not None else None
    if shown is None:
        data = _own_tangent(variable)
        shown = variable_class.Variable._make(torch.zeros_like(variable.data) if data is None else data)
        set_tangent(variable, shown.data, shown)
    return shown


def _differentiable(dtype: torch.dtype) -> bool:
    """Whether an output of this dtype carries a tangent: a floating-point or complex one."""
    return dtype.is_floating_point or dtype.is_complex
