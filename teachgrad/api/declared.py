"""The functions and methods read from the ops' declarations: an op whose class line says
`function="hypot", method="hypot"` is `tg.hypot(input, other)` and `Variable.hypot(other)`, with nothing
written here for it, as torch's code generator makes its Python bindings from native_functions.yaml.

A declared op takes torch's argument names, `input` (and `other` for a second tensor), and hands them to its
`apply` as they are; an op whose arguments need reading as torch reads them (a dim, a number, a keyword) has its
function written out in teachgrad/api/torch_signatures.py or teachgrad/api/op_families.py instead.
Every name an op declares points to one function (`tg.arcsin is tg.asin`, as teachgrad had them).

Guarded by tests/test_op_families.py (each op against torch), tests/test_namespaces.py (the names, beside
torch's) and tests/test_type_hints.py (their hints).
"""
from __future__ import annotations

import inspect
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, TypeAlias

import torch

from .. import ops  # noqa: F401  (every op family imported: their class lines have filled DECLARED)
from ..core.function import DECLARED, Function
from ..ops.in_place import write_in_place
from ..rules import grad_mode, variable_class

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    Variable = variable_class.Variable
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


def function_of(op: type[Function]) -> Callable[..., Variable]:
    """The public function of a declared op: `input` (and `other`) handed to its apply; `out=` as torch's."""
    apply = op.apply
    name = (op.function_names or op.method_names)[0]
    arity = _arity(op)
    if arity == 1 and not op.out_variant:
        def function(input: TensorLike) -> Variable:
            return apply(input)
    elif arity == 1:
        def function(input: TensorLike, *, out: TensorLike | None = None) -> Variable:
            if out is None:
                return apply(input)
            return write_out(name, out, input)
    elif not op.out_variant:
        def function(input: TensorLike, other: TensorLike) -> Variable:
            return apply(input, other)
    else:
        def function(input: TensorLike, other: TensorLike, *, out: TensorLike | None = None) -> Variable:
            if out is None:
                return apply(input, other)
            return write_out(name, out, input, other)
    function.__name__ = function.__qualname__ = name
    return function


def in_place_method_of(op: type[Function], name: str) -> Callable[..., Variable]:
    """`x.tan_()`, the in-place twin of a declared method: torch's own in-place method writes the data, and, when a
    gradient is recorded, the op's node takes over x's history (teachgrad/ops/in_place.py, as every in-place op)."""
    apply, torch_in_place = op.apply, getattr(torch.Tensor, name)
    if not op.in_place_derivative:
        apply = without_derivative(op, name).apply
    if _arity(op) == 1:
        def method(self: Variable) -> Variable:
            return write_in_place(self, apply, lambda data, _: torch_in_place(data))
    else:
        def method(self: Variable, other: TensorLike) -> Variable:
            return write_in_place(self, lambda variable: apply(variable, other), torch_in_place, other)
    method.__name__ = method.__qualname__ = name
    return method


def without_derivative(op: type[Function], name: str) -> type[Function]:
    """torch has no derivative for some in-place twins (x.atanh_(), x.asinh_(), x.acosh_()): it records the op's
    node numbered 1 (AtanhBackward1), which refuses when the backward (or a tangent) reaches it."""
    message = f"the derivative for 'inplace version of {op.function_names[0]}' is not implemented."

    def refuse(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError(message)

    return type(op)(op.__name__ + "InPlace", (op,), {"backward": staticmethod(refuse), "jvp": staticmethod(refuse),
                                                     "__module__": op.__module__},
                    node=op.node_name[:-1] + "1")


def write_out(name: str, out: TensorLike, *inputs: TensorLike) -> TensorLike:
    """`tg.tan(x, out=y)`: torch's function writes into y's data, which records no gradient, so torch refuses it
    while one of the arguments requires grad (and grad mode is on); y is returned, as torch returns it."""
    if grad_mode.is_grad_enabled() and any(getattr(x, "requires_grad", False) for x in (out, *inputs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    getattr(torch, name)(*[_data(x) for x in inputs], out=_data(out))
    return out


def _arity(op: type[Function]) -> int:
    """How many tensors an op's forward takes (its first parameter is ctx; `*options` are not torch's arguments)."""
    tensors = [p for p in inspect.signature(op.forward).parameters.values()
               if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if len(tensors) - 1 not in (1, 2):
        raise TypeError(f"{op.__name__} declares torch's names but takes {len(tensors) - 1} inputs: write its "
                        "function out in teachgrad/api/torch_signatures.py")
    return len(tensors) - 1


def _data(x):
    return x.data if isinstance(x, variable_class.Variable) else x


def public_functions(module: ModuleType) -> dict[str, Callable[..., Variable]]:
    """The functions a module of written-out signatures defines (api/torch_signatures.py, op_families.py,
    torch_functions.py), under their names: each is torch's function of that name. A name starting with `_` is the
    module's own, as is what it imports (`__module__` names another module)."""
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and inspect.isfunction(value) and value.__module__ == module.__name__}


FUNCTIONS: dict[str, Callable[..., Variable]] = {}   # tg.<name>
METHODS: dict[str, Callable[..., Variable]] = {}     # Variable.<name>
for _op in DECLARED:
    if _op.function_names or _op.method_names:
        _function = function_of(_op)
        FUNCTIONS.update(dict.fromkeys(_op.function_names, _function))
        METHODS.update(dict.fromkeys(_op.method_names, _function))
        for _name in _op.method_names:   # x.tan_() where torch has it
            if hasattr(torch.Tensor, _name + "_"):
                METHODS[_name + "_"] = in_place_method_of(_op, _name + "_")
