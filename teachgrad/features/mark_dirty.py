"""`ctx.mark_dirty(x)`: a custom Function's forward wrote into its input `x` in place, as torch's does it.

    class AddOne(tg.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)              # x's own storage changes
            ctx.mark_dirty(x)      # ... so autograd must know
            return x

    y = AddOne.apply(v)            # y is v itself, and v.grad_fn is now AddOneBackward

The input comes back as the output (the same Variable), its history moved onto the Function's node,
and its version counter bumped, so a tensor saved earlier from it is known to be stale. As in torch,
every dirty input must be returned, and a leaf that requires grad cannot be written.

Guarded by tests/test_autograd_api.py (mark_dirty: the input returned as the output, its history, its
version, torch's refusals).
"""
import torch

from ..ops import in_place
from ..rules import views
from ..rules import variable_class

NOT_RETURNED = ("Some elements marked as dirty during the forward method were not returned as output. "
                "The inputs that are modified inplace must all be outputs of the Function.")
LEAF_WRITTEN = "a leaf Variable that requires grad has been used in an in-place operation."


def check_returned(ctx, output):
    """Every tensor given to mark_dirty is one of forward's outputs; each gets its version bumped."""
    outputs = output if isinstance(output, tuple) else (output,)
    for tensor in ctx._dirty:
        if not any(o is tensor for o in outputs):
            raise RuntimeError(NOT_RETURNED)
    for tensor in ctx._dirty:
        torch.autograd.graph.increment_version(tensor)


def inputs_as_outputs(ctx, args, raw, result):
    """Each dirty output is handed back as the input Variable it was, carrying the output's history.

    When nothing was recorded the input Variable comes back as it is.
    """
    results = list(result) if isinstance(result, tuple) else [result]
    for i, output in enumerate(results):
        if not isinstance(output, variable_class.Variable):
            continue
        k = next((k for k, data in enumerate(raw) if data is output.data and any(d is data for d in ctx._dirty)), None)
        if k is None or not isinstance(args[k], variable_class.Variable):
            continue
        variable = args[k]
        if ctx is not None and output._grad_fn is ctx:
            _take_history(ctx, variable, k, output._output_nr, len(results))
        results[i] = variable
    return tuple(results) if isinstance(result, tuple) else results[0]


def _take_history(ctx, variable, k, output_nr, n_outputs):
    """`variable` was written in place by the node `ctx`: ctx becomes its history (through a view, its base's)."""
    if variable.requires_grad and variable.grad_fn is None and variable._view is None:
        raise RuntimeError(LEAF_WRITTEN)
    if variable._view is None:
        variable._set_history(ctx, output_nr)
        return
    views.check_inplace(variable, recording=True)
    if k != 0 or n_outputs != 1:
        raise NotImplementedError("teachgrad records mark_dirty on a view only for a Function with one output "
                                  "whose first input is the view it writes; clone the view first")
    base = variable._view.base
    base._set_history(in_place.copy_slices(base, variable._view, ctx), 0)
