"""The functions and methods read from the ops' declarations: an op whose class line says
`function="hypot", method="hypot"` is `tg.hypot(input, other)` and `Variable.hypot(other)`, with nothing
written here for it, as torch's code generator makes its Python bindings from native_functions.yaml; one that says
`special="i0e"` is `tg.special.i0e(input)` (teachgrad/special.py reads SPECIAL).

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
from typing import TYPE_CHECKING, Callable, TypeAlias

import torch

from .. import ops  # noqa: F401  (every op family imported: their class lines have filled DECLARED)
from ..core.function import DECLARED, Function
from ..rules import variable_class

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    Variable = variable_class.Variable
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


def function_of(op: type[Function]) -> Callable[..., Variable]:
    """The public function of a declared op: `input` (and `other`) handed to its apply."""
    apply = op.apply
    tensors = [p for p in inspect.signature(op.forward).parameters.values()
               if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    arity = len(tensors) - 1   # (forward's first parameter is ctx; `*options` are not torch's arguments here)
    if arity == 1:
        def function(input: TensorLike) -> Variable:
            return apply(input)
    elif arity == 2:
        def function(input: TensorLike, other: TensorLike) -> Variable:
            return apply(input, other)
    else:
        raise TypeError(f"{op.__name__} declares torch's names but takes {arity} inputs: write its function out "
                        "in teachgrad/api/torch_signatures.py")
    function.__name__ = function.__qualname__ = (op.function_names or op.method_names or op.special_names)[0]
    return function


def public_functions(module: ModuleType) -> dict[str, Callable[..., Variable]]:
    """The functions a module of written-out signatures defines (api/torch_signatures.py, op_families.py,
    torch_functions.py), under their names: each is torch's function of that name. A name starting with `_` is the
    module's own, as is what it imports (`__module__` names another module)."""
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and inspect.isfunction(value) and value.__module__ == module.__name__}


FUNCTIONS: dict[str, Callable[..., Variable]] = {}   # tg.<name>
METHODS: dict[str, Callable[..., Variable]] = {}     # Variable.<name>
SPECIAL: dict[str, Callable[..., Variable]] = {}     # tg.special.<name>
for _op in DECLARED:
    if _op.function_names or _op.method_names or _op.special_names:
        _function = function_of(_op)
        FUNCTIONS.update(dict.fromkeys(_op.function_names, _function))
        METHODS.update(dict.fromkeys(_op.method_names, _function))
        SPECIAL.update(dict.fromkeys(_op.special_names, _function))
