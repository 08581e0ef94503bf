"""Issue #25: every public function and method (dunders too) of the public API's modules hints each parameter but
self/cls, and its return; `typing.get_type_hints` resolves the hints, so a typo fails here. (They are strings,
`from __future__ import annotations`: the names only hints use are imported under `if TYPE_CHECKING:`, run here.)"""
import ast
import functools
import importlib
import inspect
import sys
import typing
from pathlib import Path

import pytest

import teachgrad
from teachgrad.core.function import Function

MODULES = ["api.tensor_methods", "api.torch_functions", "api.torch_signatures", "api.factories", "api.sampling", "api.declared", "tensor_types",
           "rules.grad_mode", "features.anomaly_mode", "autograd.graph", "autograd.functional", "utils.checkpoint",
           "features.once_differentiable", "nn.functional", "optim", "func", "check", "features.forward_ad",
           "autograd.gradcheck", "features.custom_function", "nn.rnn"]
FORMULAS = {"forward", "backward", "jvp", "setup_context"}   # an op's formulas read as math: left bare (issue #25)
NOT_HINTED = {}   # "module.Qualified.name": why a hint would be wrong or impossible there (none so far)
PACKAGE = str(Path(teachgrad.__file__).parent)


@functools.cache
def _names(module):
    """The module's globals, plus what its `if TYPE_CHECKING:` block imports and defines."""
    names = dict(vars(module))
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            exec(compile(ast.Module(node.body, []), module.__file__, "exec"), names)
    return names


def _public(module):
    """{name: function}: the module's own public functions, and the methods of its public classes and of their bases
    in the module, wherever in teachgrad they are written (Variable.tile: signatures); forward_ad's: its __all__."""
    ours = lambda f, where: inspect.isfunction(f) and f.__code__.co_filename.startswith(where)  # noqa: E731
    public = lambda name: not name.startswith("_") or (name.startswith("__") and name.endswith("__"))  # noqa: E731
    found = {}
    for name in module.__all__ if module.__name__.endswith("forward_ad") else list(vars(module)):
        obj = getattr(module, name)
        if public(name) and ours(obj, module.__file__):
            found[name] = obj
        elif not name.startswith("_") and inspect.isclass(obj) and obj.__module__ == module.__name__:
            for klass in (k for k in obj.__mro__ if k.__module__ == module.__name__):
                for attr, value in vars(klass).items():
                    if not (isinstance(value, staticmethod) and attr in FORMULAS and issubclass(obj, Function)):
                        value = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                        if public(attr) and ours(value, PACKAGE) and value.__name__ != "<lambda>" \
                                and value not in found.values():   # (optim's classes share their methods)
                            found[f"{obj.__name__}.{attr}"] = value
    return found


@pytest.mark.parametrize("name", MODULES)
def test_public_api_is_hinted(name):
    problems = []
    for qualname, fn in _public(importlib.import_module("teachgrad." + name)).items():
        if f"{name}.{qualname}" in NOT_HINTED:
            continue
        wanted = [p for p in inspect.signature(fn, follow_wrapped=False).parameters if p not in ("self", "cls")]
        problems += [f"{qualname}: no hint for {p}" for p in wanted + ["return"] if p not in fn.__annotations__]
        home = next(m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == fn.__code__.co_filename)
        try:   # (in the module that writes fn: functools.wraps gives the factories torch's __module__)
            typing.get_type_hints(fn, globalns=_names(home))
        except Exception as error:   # a NameError (a typo, a missing import), or a hint that is not a type
            problems.append(f"{qualname}: {type(error).__name__}: {error}")
    assert not problems, "\n".join(problems)
