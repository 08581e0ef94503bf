"""Views, and in-place writes through them, as torch records them.

A view shares its base's storage, and so its version counter: `y[0]`, `y.t()`, `y.view(4)` are
the same numbers seen differently. Writing into a view in place changes the base too, so
autograd rewrites the *base's* history:

    y = x * 1          # y.grad_fn: MulBackward0
    y[0].mul_(3)       # y.grad_fn: CopySlices, which wraps the MulBackward0 of the write
                       # y[0] now leads back to y through a fresh AsStridedBackward0

In backward, `CopySlices` takes the base's gradient, runs the write's own backward on the slice
that was written, and passes the rest of the gradient through untouched. Any view whose base
was written to since it was made gets a fresh node that leads to the base: torch notices this
lazily, when the view's `grad_fn` is next read and its version has moved on.

Guarded by tests/test_views.py (views, in-place writes through them, regenerated grad_fns against torch),
tests/test_copies.py, tests/test_silent_bugs.py and tests/test_inference_mode.py (views of inference tensors).
"""
import re

from . import grad_mode
from . import variable_class

DEFAULT, NO_GRAD_MODE, MULTI_OUTPUT_NODE, IN_CUSTOM_FUNCTION = (
    "default", "no_grad", "multi_output", "in_custom_function")

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
    "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
    "detach_() cannot be called on these gradients. To fix this error, please refer to the "
    "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)


class ViewInfo:
    """What a view knows: its base, how to make it again from the base, and when it was made.

    How to make it again is kept as a link: the view op that made it (`step`) and the ViewInfo of the
    view it was made from (`parent`), so making a view costs the same however long the chain before it
    (a view of a view of ... n views: O(n) in all, not O(n²)). `chain` spells the whole chain out, when
    an in-place write needs it.
    """

    __slots__ = ("base", "parent", "step", "creation", "version")

    def __init__(self, base, parent, step, creation, version):
        self.base = base          # the Variable that owns the storage (never itself a view)
        self.parent = parent      # the ViewInfo of the view this one was made from (None: made from the base)
        self.step = step          # (Function, args): the view op that made it from there (None: unknown)
        self.creation = creation  # DEFAULT, NO_GRAD_MODE, MULTI_OUTPUT_NODE or IN_CUSTOM_FUNCTION (torch's CreationMeta)
        self.version = version    # the version counter when grad_fn was last right

    @property
    def chain(self):
        """((Function, args), ...): the view ops from the base to this view, or None when one is unknown."""
        steps = []
        info = self
        while info is not None:
            if info.step is None:
                return None
            steps.append(info.step)
            info = info.parent
        return tuple(reversed(steps))


def mark_views(cls: type, args: tuple, result: object) -> None:
    """Tell each output of a view op that it is a view of the input's base (`Function.apply` asks, for an op with `is_view`)."""
    if isinstance(result, tuple):
        for i, output in enumerate(result):
            mark_view(output, args[0], cls.view_step(args, i), multi_output=True)
    else:
        mark_view(result, args[0], (cls, args[1:]))


def mark_view(output, source, step, multi_output=False):
    """Make `output` (just computed from `source` by the view op `step`) a view of source's base.

    A view of an inference tensor (one made in inference_mode) is left unmarked, as torch leaves it: such a
    tensor has no version counter to share and can never be written to where autograd would see it, so torch
    keeps no view information for it (`y[0]._is_view()` is False, `_base` None, inside the mode or out)."""
    if output.data.is_inference():
        return
    info = source._view
    if grad_mode.is_grad_enabled():
        creation = MULTI_OUTPUT_NODE if multi_output else DEFAULT
    else:
        creation = NO_GRAD_MODE
    if info is None:
        base = source
    else:
        base = info.base
        if creation == DEFAULT:              # a view of a restricted view stays restricted
            creation = info.creation
    output._view = ViewInfo(base, info, step, creation, output.data._version)


def mark_custom_view(output, source, multi_output):
    """An output of a user's Function that is a view of an input (or the input returned as it is).

    Writing into it in place is refused, as torch refuses it: autograd would replace the Function's
    own backward with the view's. (How the view was made is unknown: it has no chain to replay.)
    """
    if output.data.is_inference():   # (no view information for an inference tensor: see mark_view)
        return
    info = source._view
    creation = MULTI_OUTPUT_NODE if multi_output else IN_CUSTOM_FUNCTION
    output._view = ViewInfo(source if info is None else info.base, None, None, creation, output.data._version)


def replay(chain, x):
    """Apply the view ops of `chain` to `x`: plain tensors run the kernels, Variables record nodes."""
    if not isinstance(x, variable_class.Variable):
        return _forward_steps(chain, x)[0]
    for cls, args in chain:
        x = cls.apply(x, *args)
    return x


def apply_view_ops(source, steps, all_at_once=None):
    """Apply the view ops `steps` ((Function, args), ...) to the Variable `source` in turn, as `x[0, 1:]` does.

    When nothing is recorded (no gradient flows through `source`, or grad mode is off) the kernels run on the
    data (`all_at_once(data)`, when given, makes the same view in one call), and the result is marked a view
    once per op, as each op's `apply` would have marked it: the same view, without a Variable and a ctx for
    every step between."""
    if not steps:
        return source
    if grad_mode.forward_level >= 0 or (grad_mode.is_grad_enabled() and source.requires_grad):
        for cls, args in steps:
            source = cls.apply(source, *args)
        return source
    data = _forward_steps(steps, source._data)[0] if all_at_once is None else all_at_once(source._data)
    view = variable_class.Variable._make(data)
    for step in steps:
        mark_view(view, source, step)
        source = view
    return view


def check_inplace(variable, recording):
    """Refuse an in-place op torch refuses: on a leaf that requires grad, or a view it cannot track."""
    if not recording:
        return
    info = variable._view
    if info is not None:
        check_rebase(variable, indirect=False)
        if variable.requires_grad and info.base.grad_fn is None:
            raise RuntimeError("a view of " + _LEAF)
    if variable.requires_grad and variable.grad_fn is None:
        raise RuntimeError(_LEAF)


def check_rebase(view, indirect):
    """A view made in no_grad mode, or one of several views one op returned, cannot be rebased."""
    creation = view._view.creation
    if creation == DEFAULT:
        return
    modified = "its base or another view of its base has been" if indirect else "is being"
    node = view._grad_fn
    where = f"Output {view._output_nr} of {re.sub(r'Backward[0-9]*$', '', node.name())}" if node else None
    if creation == NO_GRAD_MODE or node is None:
        prefix = f"{where} is a view of a view which was created in" if node else "A view was created in"
        message = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        message = f"{where} is a view and {modified} modified inplace."
    if creation == MULTI_OUTPUT_NODE:
        message += (" This view is the output of a function that returns multiple views. Such functions do not"
                    " allow the output views to be modified inplace. You should replace the inplace operation by an"
                    " out-of-place one.")
    elif creation == IN_CUSTOM_FUNCTION and node is not None:
        message += (" This view was created inside a custom Function (or because an input was returned as-is) and the"
                    " autograd logic to handle view+inplace would override the custom backward associated with the"
                    " custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by"
                    " cloning the output of the custom Function.")
    else:
        message += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your"
                    " code by moving both the view and the inplace either both inside the no_grad block (if you"
                    " don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    raise RuntimeError(message)


def saved_result_is_self(node, result, data):
    """After `x.exp_()`, the result the node saved *is* x: a later write to x must be noticed."""
    for saved in node._saved:
        if saved is not None and saved.output_nr is not None and saved.data is result:
            saved.data, saved.version = data, data._version


def _forward_steps(chain, data):
    """Run each view op of `chain` forward on plain tensors: the view, and the ctx each backward needs."""
    steps = []
    for cls, args in chain:
        ctx = cls._backward_cls()
        data = cls.forward(ctx, data, *args)
        steps.append(ctx)
    return data, steps


# --- torch's refusals -------------------------------------------------------------------------
