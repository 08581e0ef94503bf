"""Saved tensors, as torch keeps them: each with the version counter it had when saved, checked when read;
an output of the node kept as data only (so the node does not keep its own output alive); under
`saved_tensors_hooks`, only what the pack hook returned, handed to the unpack hook when read, in the order
torch packs them; freed after backward, with torch's message when read again.

`node._saved_<name>` and `node._raw_saved_<name>` show them under torch's names (teachgrad/rules/saved_attributes.py).

Guarded by tests/test_saved_tensors_hooks.py, tests/test_engine.py (retain_graph, freed tensors),
tests/test_views.py and tests/test_function.py (modified saved tensors and their messages),
tests/test_torch_autograd_entry_points.py (torch's gradcheck, which perturbs inputs through `.data`, refused clearly),
tests/test_legacy_and_small.py (a non-differentiable saved output: max(dim)'s indices).
"""
import re
import threading
import weakref

import torch

from . import anomaly, grad_mode
from .saved_attributes import FREED_MESSAGE
from . import torch_gradcheck, variable_class
from ..rules import tangents


class _HooksState(threading.local):
    """The saved-tensor hooks open in this thread (`tg.autograd.graph.saved_tensors_hooks`, a feature that pushes
    its pairs here: teachgrad/features/saved_tensor_hooks.py)."""

    def __init__(self):
        self.stack = []           # (pack_hook, unpack_hook), innermost last
        self.disabled = None      # the error message while hooks are disabled


hooks_state = _HooksState()


class SavedTensor:
    """A tensor saved for backward, with the version counter it had when saved.

    It remembers the Variable it came from (so a higher-order graph can reach it), or, for an
    output of the node that saved it, only the data: the Variable is rebuilt when unpacked,
    which keeps the node from holding its own output alive.

    Under `saved_tensors_hooks` it keeps only what the pack hook returned (and where the tensor's
    gradient would go), and asks the unpack hook for the tensor each time it is read.
    """

    __slots__ = ("data", "variable", "version", "output_nr", "hooks", "packed", "edge", "fw_grad")

    def __init__(self, data, variable=None, output_nr=None):
        self.fw_grad = None     # an output's tangent (see teachgrad/features/forward_ad.py)
        self.data = data
        self.variable = variable
        self.version = data._version
        self.output_nr = output_nr
        self.hooks = self.packed = self.edge = None

    def set_hooks(self, pack_hook, unpack_hook, seen):
        """Hand the tensor (`seen`, as the user knows it) to `pack_hook` and keep only its result."""
        if self.hooks is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        version = self.data._version
        packed = pack_hook(seen)
        if self.data._version != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
                "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
                "Please open an issue if you need to perform in-place operations on the input to a pack hook.")
        self.hooks, self.packed = (pack_hook, unpack_hook), packed
        if self.output_nr is None:
            self.edge = seen._edge() if seen.requires_grad else None
        self.data = self.variable = None

    def unpack(self, node, as_variable):
        if self.hooks is not None:
            return self._unpack_with_hook(node, as_variable)
        if self.data._version != self.version:
            torch_gradcheck.refuse_inside_torchs_gradcheck()   # (its perturbations are seen here: refused clearly)
            raise RuntimeError(self._modified_message(node))
        if not as_variable:
            return self.data
        if self.output_nr is not None:
            output = self._output(self.data, node)
            if self.fw_grad is not None and tangents.saved_tangent(self) is not None:
                tangents.set_tangent(output, tangents.saved_tangent(self))
            return output
        if self.variable is not None:
            return self.variable
        return variable_class.Variable._make(self.data)

    def _unpack_with_hook(self, node, as_variable):
        value = self.hooks[1](self.packed)
        if not isinstance(value, (variable_class.Variable, torch.Tensor)):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                            f"type {type(value).__name__}")
        data = value.data if isinstance(value, variable_class.Variable) else value.detach()
        if not as_variable:
            return data
        if self.output_nr is not None:
            return self._output(data, node)
        return _with_history(data, self.edge)

    def _output(self, data, node):
        """A saved output as a Variable: made by `node`, unless the node gave it no history (an integer output,
        or one forward marked non-differentiable, as max(dim)'s indices), as torch unpacks it."""
        if not (data.is_floating_point() or data.is_complex()) or any(t is data for t in node._non_differentiable):
            return variable_class.Variable._make(data)
        return variable_class.Variable._make(data, node, self.output_nr)

    def _modified_message(self, node):
        what = f"[{self.data.type()} {list(self.data.shape)}]"
        maker = node if self.output_nr is not None else getattr(self.variable, "grad_fn", None)
        if maker is not None:
            output_nr = self.output_nr if self.output_nr is not None else self.variable._output_nr
            op = re.sub(r"Backward\d*$", "", maker.name())   # torch names the op: "Exp" for ExpBackward0
            what += f", which is output {output_nr} of {op},"
        return (
            "one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {what} is at version {self.data._version}; expected version {self.version} instead."
            + _anomaly_hint()
        )


def _anomaly_hint():
    """The last sentence of torch's message for a modified saved tensor: how to find the culprit."""
    if anomaly.enabled:
        return (" Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                "The variable in question was changed in there or anywhere later. Good luck!")
    return (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def pack_saved(to_save, args, raw, outputs, result, pack_order=None):
    """What `save_for_backward` was given, kept as SavedTensors (through the saved-tensor hooks, if any);
    and whether hooks were set. An output of the node keeps only its data; an input remembers its Variable."""
    saved = []
    for k, tensor in enumerate(to_save):
        if tensor is not None:
            if type(tensor) is not torch.Tensor:
                tensor = _tensor_to_save(tensor, k)
            if tensor.is_inference():
                raise RuntimeError(grad_mode.INFERENCE_SAVED)
            variable = output_nr = None
            for nr, output in enumerate(outputs):   # an output of the node: which one it is
                if output is tensor:
                    output_nr = nr
                    break
            else:
                for position, data in enumerate(raw):   # else an input: the Variable it came from
                    if data is tensor:
                        variable = args[position]
                        break
            tensor = SavedTensor(tensor, variable, output_nr)
        saved.append(tensor)
    if hooks_state.stack:   # saved-tensor hooks apply (the innermost pair: only it applies, as in torch)
        _set_hooks(saved, result, pack_order, hooks_state.stack[-1])
        return tuple(saved), True
    return tuple(saved), False


def _tensor_to_save(tensor, k):
    """What save_for_backward keeps of an argument that is not a plain torch tensor: a Variable's data (forward
    computed it with teachgrad functions); anything but a tensor is refused."""
    if isinstance(tensor, variable_class.Variable):
        return tensor._data
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"save_for_backward can only save variables, but argument {k} is of type "
                        f"{type(tensor).__name__}")
    return tensor


def _set_hooks(saved, result, pack_order, hooks):
    """Each saved tensor goes to the pack hook as the user knows it, in the order torch packs them."""
    results = result if isinstance(result, tuple) else (result,)
    seen_as = []
    for saved_tensor in saved:
        if saved_tensor is None:
            seen_as.append(None)
            continue
        seen = results[saved_tensor.output_nr] if saved_tensor.output_nr is not None else saved_tensor.variable
        seen_as.append(seen if isinstance(seen, variable_class.Variable) else variable_class.Variable._make(saved_tensor.data))
    for k in pack_order or range(len(saved)):
        if saved[k] is not None:
            saved[k].set_hooks(*hooks, seen_as[k])


def unpack_unusual(ctx, as_variable):
    """`ctx.saved_tensors` in its rare cases: in a `jvp` (torch: only what save_for_forward kept, () if nothing),
    after backward freed them (torch's error), or with saved-tensor hooks (unpacked in the order torch packed them)."""
    if ctx._in_jvp:
        return ctx._saved_for_forward or ()
    if ctx._freed:
        raise RuntimeError(FREED_MESSAGE)
    order = ctx._forward_cls.pack_order
    if order is None:
        return tuple([None if s is None else s.unpack(ctx, as_variable) for s in ctx._saved])
    unpacked = [None] * len(ctx._saved)
    for k in order:
        if ctx._saved[k] is not None:
            unpacked[k] = ctx._saved[k].unpack(ctx, as_variable)
    return tuple(unpacked)


def _with_history(data, edge):
    """A Variable of `data` whose gradient goes where the saved tensor's would have (as torch unpacks)."""
    variable = variable_class.Variable._make(data)
    if edge is None:
        return variable
    node, output_nr = edge
    if node.name() == "torch::autograd::AccumulateGrad":   # the saved tensor was a leaf: this one stands in for it
        variable._requires_grad = True
        variable._accumulator = weakref.ref(node)
    else:
        variable.grad_fn, variable._output_nr = node, output_nr
    return variable
