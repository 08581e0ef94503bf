"""Variable: a torch tensor plus what autograd needs to know about it.

    p = tg.tensor(3.0, requires_grad=True)   # a leaf: made by the user
    t = (p + 5) * 2                           # made by ops: t.grad_fn is a MulBackward0 node
    t.backward()                              # p.grad is now Variable(2.)

`data` is the torch tensor itself; `grad_fn` is the node that made it (None for leaves);
`grad` is filled in by backward. Every op runs a `Function` from `teachgrad.ops`.
"""
from __future__ import annotations

import functools
import operator
from typing import Any
import warnings
import weakref

import torch

from . import engine
from ..rules import grad_layout, grad_mode, hooks, torch_leaves, variable_class, views
from .. import ops
from ..ops import in_place
from .node import AccumulateGrad, Node, _accumulate_lock
from ..api.torch_methods import TorchMethods   # torch's own methods, run on the data (logcumsumexp, %, //, ...)
from ..api.tensor_methods import TensorMethods, _rebuild_variable  # noqa: F401  (files saved before it moved name it here)
from ..rules.variable_refusals import NON_LEAF_GRAD, NOT_LEAF, check_assigned_grad, check_can_require_grad, check_new_data, check_requires_grad_call, \
    check_requires_grad_value, refuse_deleting_data


class Variable(TensorMethods, TorchMethods):
    """A torch tensor that records the operations applied to it, so gradients can flow back.

    This class is the autograd half; the torch.Tensor API it inherits is in teachgrad/api/tensor_methods.py,
    what torch refuses here is checked in teachgrad/rules/variable_refusals.py, hooks are registered in
    teachgrad/rules/hooks.py.
    """

    __slots__ = ("_data", "_grad", "_grad_fn", "_requires_grad", "_output_nr", "_accumulator",
                 "_retains_grad", "_hooks", "_view", "_fw_grad", "name", "__weakref__",
                 "_post_accumulate_grad_hooks")   # (None for a Variable made by the user, unset for one an op made:
                                                  # read with getattr)
    __hash__ = object.__hash__
    _execution_engine = engine.execution_engine   # torch's Variable._execution_engine (queue_callback)

    def __init__(self, data: Any, requires_grad: bool = False, name: str | None = None) -> None:
        if isinstance(data, Variable):
            data = data.data
        elif not isinstance(data, torch.Tensor):
            data = torch.as_tensor(data)
        elif data.requires_grad:
            data = data.detach()
        self._data = data
        self._grad = None
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        self._accumulator = None
        self._retains_grad = False
        self._hooks = None
        self._view = None
        self._fw_grad = None
        self.name = name
        self._post_accumulate_grad_hooks = None   # (set here, read at every leaf: a getattr that misses is slow)
        if requires_grad:
            check_can_require_grad(data, "Only")   # floating point, not made in inference mode
            self._requires_grad = True

    @classmethod
    def _make(cls, data: torch.Tensor, grad_fn: Node | None = None, output_nr: int = 0) -> Variable:
        """Wrap a tensor an op produced (no checks: the op made it right)."""
        v = cls.__new__(cls)
        v._data = data
        v._grad = None
        v._grad_fn = grad_fn
        v._requires_grad = False
        v._output_nr = output_nr
        v._accumulator = None
        v._retains_grad = False
        v._hooks = None
        v._view = None
        v._fw_grad = None
        v.name = None
        return v

    # --- what autograd knows about a Variable ---

    def _set_data(self, value):
        # As torch's `x.data = t`: the tensor underneath takes t's contents (its memory, shape, dtype), and stays the
        # same object, so whatever holds it (a node that saved it for backward, an optimizer) sees the new values.
        self._data.data = check_new_data(self, value._data if isinstance(value, Variable) else value)

    data = property(operator.attrgetter("_data"), _set_data, refuse_deleting_data,
                    doc="The torch tensor underneath (the same object every time); setting it swaps the values.")

    @property
    def grad_fn(self) -> Node | None:
        """The node that made this Variable (None for leaves).

        A view whose base (or another view of it) was written to in place since gets a fresh node
        leading to the base, as in torch: its history is made again from the base's.
        """
        view = self._view
        if view is not None and view.version != self.data._version:
            in_place.regenerate_grad_fn(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    def _set_history(self, node, output_nr):
        """Make `node` this Variable's grad_fn (after an in-place op); retain_grad follows it."""
        old_node, old_nr = self._grad_fn, self._output_nr
        self._grad_fn, self._output_nr = node, output_nr
        if old_node is not node:
            hooks.follow_retain_grad(self, old_node, old_nr)

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to (or through) this Variable."""
        if self._requires_grad or self._grad_fn is not None:
            return True
        return self._view is not None and (self.grad_fn is not None or self._view.base.requires_grad)

    @property
    def _base(self):
        """The Variable this one is a view of (None if it is not a view), as torch's `_base`."""
        return None if self._view is None else self._view.base

    def _is_view(self):
        return self._view is not None

    @property
    def _version(self):
        """How many times the data was changed in place; shared by a base and all its views."""
        return self.data._version

    @requires_grad.setter
    def requires_grad(self, value):
        check_requires_grad_value(value)   # a bool, nothing else (not 0, 1 or None)
        if self.grad_fn is not None:
            raise RuntimeError(NOT_LEAF)
        if value:
            check_can_require_grad(self.data)
        self._requires_grad = bool(value)

    @property
    def grad(self) -> Variable | None:
        """The gradient backward computed for this Variable (leaves, and non-leaves that retain_grad)."""
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            check_assigned_grad(self, value, value.data if isinstance(value, Variable) else value)
            if not isinstance(value, Variable):
                value = Variable(value)
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def is_leaf(self) -> bool:
        """True for Variables made by the user rather than by an op that records a graph."""
        return self.grad_fn is None

    output_nr = property(operator.attrgetter("_output_nr"), doc="Which output of `grad_fn` this Variable is.")
    retains_grad = property(operator.attrgetter("_retains_grad"), doc="Whether `retain_grad()` was called on it.")

    def requires_grad_(self, requires_grad: bool = True) -> Variable:
        """Set `requires_grad` in place and return self (on a non-leaf, only True, which it already is)."""
        check_requires_grad_call(self, requires_grad)
        if not (requires_grad and self.grad_fn is not None):
            self.requires_grad = requires_grad
        return self

    def _edge(self) -> tuple[Node | None, int]:
        """Where a gradient for this Variable goes: (node, input_nr)."""
        node = self._grad_fn if self._view is None else self.grad_fn
        if node is not None:
            return node, self._output_nr
        if self._requires_grad:
            return self._grad_accumulator(), 0
        return None, 0

    def _grad_accumulator(self):
        node = self._accumulator() if self._accumulator is not None else None
        if node is None:
            node = AccumulateGrad(self)
            self._accumulator = weakref.ref(node)
        return node

    def _accumulate_grad(self, grad, owned=False):
        """Add `grad` into `.grad`: in place normally, out of place while recording (create_graph).

        A first gradient is copied, so `.grad` shares memory with nothing else, unless `owned`.
        """
        if grad_mode.is_grad_enabled():
            new = grad if isinstance(grad, Variable) else Variable._make(grad)
            # a first gradient is copied into a fresh tensor, recorded as torch records it (CopyBackwards)
            self._grad = ops.CopyGrad.apply(torch.empty_like(self.data), new) if self._grad is None else self._grad + new
        elif self._grad is None:
            grad = grad if isinstance(grad, torch.Tensor) else grad.data
            self._grad = Variable._make(grad_layout.first_grad(self._data, grad, owned))
        else:
            self._grad.data.add_(grad if isinstance(grad, torch.Tensor) else grad.data)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:
        """Compute the gradient of this Variable with respect to the leaves and add it to their `.grad`."""
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Variable:
        """A new leaf sharing this Variable's storage, cut off from the graph."""
        return Variable._make(self.data.detach())

    def detach_(self):
        """Cut this Variable off from the graph, making it a leaf."""
        if self._view is not None:
            raise RuntimeError(views.DETACH_VIEW)
        self.grad_fn = None
        self._requires_grad = False
        return self

    # --- hooks: retain_grad() keeps .grad for a non-leaf too; register_hook(hook) calls hook(grad) when the
    # gradient is computed (what it returns replaces it); see teachgrad/hooks.py ---
    retain_grad = hooks.retain_grad
    register_hook = hooks.register_hook
    register_post_accumulate_grad_hook = hooks.register_post_accumulate_grad_hook


class TorchLeaf(Variable):
    """A torch tensor that requires grad (an `nn.Parameter`), standing inside a teachgrad op.

    Its data is the tensor detached (the same storage and version counter); its gradient goes to
    the tensor's own AccumulateGrad node, which fills the tensor's `.grad` (see teachgrad/rules/torch_leaves.py).
    """

    __slots__ = ("tensor",)

    def _grad_accumulator(self):
        """The tensor's own AccumulateGrad node: one per tensor while a graph holds it, as torch keeps one."""
        key = id(self.tensor)
        ref = _torch_accumulators.get(key)
        node = None if ref is None else ref()
        if node is None or node.variable is not self.tensor:
            node = TorchAccumulateGrad(self.tensor)
            _torch_accumulators[key] = weakref.ref(node, functools.partial(_forget_accumulator, key))
        return node

    @property
    def grad(self):
        return self.tensor.grad


class TorchAccumulateGrad(AccumulateGrad):
    """The AccumulateGrad node of a torch tensor: adds into the tensor's own `.grad` (teachgrad/rules/torch_leaves.py)."""

    @property
    def _tensor_pre_hooks(self):
        return torch_leaves.check_no_torch_hooks(self.variable)   # (hooks registered through torch are refused)

    def apply(self, grad, owned=False):
        """Add `grad` into the tensor's own `.grad` (under the lock, as AccumulateGrad.apply)."""
        tensor = self.variable
        with _accumulate_lock:
            torch_leaves.accumulate(tensor, grad, owned)
        if tensor._post_accumulate_grad_hooks:   # registered through torch: run as torch's AccumulateGrad runs them
            torch_leaves.call_post_accumulate_grad_hooks(tensor)
        return ()

    def no_gradient(self):
        if self.variable._post_accumulate_grad_hooks:
            torch_leaves.call_post_accumulate_grad_hooks(self.variable)


TorchAccumulateGrad.__name__ = TorchAccumulateGrad.__qualname__ = "AccumulateGrad"   # its name in torch

_torch_accumulators = {}   # id(tensor) -> weakref to its AccumulateGrad node, alive while a graph holds it


def _forget_accumulator(key, ref):
    if _torch_accumulators.get(key) is ref:
        del _torch_accumulators[key]


variable_class.hand_over(Variable, TorchLeaf)   # the layers below find the classes there (see that module)
