"""How a learner's function computed its answer, not only what it returned.

`Watch()`, around a call of a learner's function, records what ran, at the level where the work is done rather than
under the names the learner used for it (an alias, `from ... import`, a wrapper all reach the same places):

- every Python function and every built-in called, on this thread (`sys.setprofile`): the autograd engines
  (teachgrad's `_run`, torch's `run_backward`, however they are reached: `tg.grad`, `.backward()`,
  `torch.autograd.grad`, `torch.func.vjp`, `Variable._execution_engine` itself), forward mode (dual numbers,
  `jvp`), vmap, an op's own backward or jvp formula, and a thread started;
- every ATen operator run on this thread (a `TorchDispatchMode`, which `torch._C.DisableTorchFunction()`
  does not turn off): how many of each (a loop over samples runs more of them for more samples), the largest
  tensor made (a full Jacobian), torch's own backward kernels (`aten._softmax_backward_data`), and any op
  run by torch's autograd engine.

A check then refuses what its exercise does not teach, naming it (`Watch.refused`, `refusal`). Any exercise module can
use it; the categories are in `KINDS`.
"""
from __future__ import annotations

import sys
import threading
from collections import Counter

import _thread
import torch
from torch.utils._python_dispatch import TorchDispatchMode

# What a check may refuse, and how a verdict says it.
KINDS = {
    "reverse": "reverse mode",                        # an autograd engine: a backward pass
    "forward": "forward mode",                        # dual numbers / jvp
    "vmap": "vmap",
    "formula": "another op's own derivative formula",  # Softmax.backward, aten._softmax_backward_data, ...
    "thread": "a thread of its own",
    "off": "the check's recording turned off",
}

# Python functions, by (module, qualified name prefix): what reaching them means.
_PYTHON = [
    ("teachgrad.core.engine", "_run", "reverse", "teachgrad's engine (tg.grad, .backward())"),
    ("teachgrad.func", "_vjp", "reverse", "teachgrad's vjp (tg.func.vjp, jacrev, grad)"),
    ("teachgrad.func", "linear_transpose", "reverse", "tg.func.linear_transpose (a backward pass)"),
    ("teachgrad.rules.tangents", "enter_dual_level", "forward", "teachgrad's forward mode (dual tensors, jvp)"),
    ("teachgrad.func", "_jvp", "forward", "teachgrad's jvp (tg.func.jvp, jacfwd, linearize)"),
    ("teachgrad.features.vmap", "vmap", "vmap", "teachgrad's vmap"),
    ("torch._functorch.vmap", "", "vmap", "torch.func.vmap"),
    ("torch._functorch.eager_transforms", "jvp", "forward", "torch.func.jvp"),
    ("torch._functorch.eager_transforms", "jacfwd", "forward", "torch.func.jacfwd"),
    ("torch._functorch.eager_transforms", "linearize", "forward", "torch.func.linearize"),
    ("torch.autograd.forward_ad", "", "forward", "torch's forward mode (torch.autograd.forward_ad)"),
    ("torch.utils._python_dispatch", "_disable_current_modes", "off", "_disable_current_modes()"),
    ("torch.utils._python_dispatch", "_pop_mode", "off", "_pop_mode()"),
]
# An op's derivative formulas in teachgrad: a method of these names in these packages.
_FORMULA_PACKAGES = ("teachgrad.ops", "teachgrad.rules.")
_FORMULA_NAMES = {"backward", "jvp", "vjp", "backward_formula"}


def _builtins() -> dict:
    """Built-ins, by identity: the C functions every route to them ends in."""
    engine = torch.autograd.Variable._execution_engine    # what torch.autograd.backward and grad call
    found = {engine.run_backward: ("reverse", "torch's autograd engine (run_backward)")}
    for module in (_thread, threading):
        for name in ("start_new_thread", "start_new", "_start_new_thread", "start_joinable_thread",
                     "_start_joinable_thread"):
            if hasattr(module, name):
                found[getattr(module, name)] = ("thread", "a thread (_thread / threading)")
    for name in dir(torch._C):
        if "dispatch" in name.lower() and any(w in name.lower() for w in ("pop", "unset", "disable")):
            found[getattr(torch._C, name)] = ("off", f"torch._C.{name}")
    return found


_PYTHON_KEY = torch._C.DispatchKey.Python
_dispatch_off = torch._C._dispatch_tls_is_dispatch_key_excluded


class Watch:
    """A context manager that records what the code run inside it reached (see the module's docstring).

        with Watch() as seen:
            answer = learners_function(*args)
        seen.refused(("reverse",))     # (kind, what) for the first of those kinds it reached, or None

    `used` maps each kind reached to the first thing of that kind; `ops` counts the ATen ops run on this
    thread by name; `largest` is the number of elements of the largest tensor an op made."""

    def __init__(self):
        self.used: dict[str, str] = {}
        self.ops: Counter = Counter()
        self.largest = 0
        self._builtins = _builtins()
        self._code: dict = {}              # dicts: what was reached, in the order it was first reached
        self._c: dict = {}
        self._mode = _Ops(self)

    def _profile(self, frame, event, arg):
        if _dispatch_off(_PYTHON_KEY):        # torch._C._DisableTorchDispatch(): the ops would run unseen
            self.used.setdefault("off", "torch._C._DisableTorchDispatch()")
        if event == "call":
            self._code.setdefault(frame.f_code)
        elif event == "c_call":
            try:
                if arg in self._builtins:
                    self._c.setdefault(arg)
            except TypeError:              # an unhashable callable
                pass

    def __enter__(self) -> "Watch":
        self._before = sys.getprofile()
        self._mode.__enter__()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc) -> None:
        if sys.getprofile() != self._profile:
            self.used.setdefault("off", "sys.setprofile")
        sys.setprofile(self._before)
        self._mode.__exit__(*exc)
        for c in self._c:
            kind, what = self._builtins[c]
            self.used.setdefault(kind, what)
        for code in self._code:
            _classify(code, self)

    def refused(self, kinds) -> tuple[str, str] | None:
        """(kind, what) for the first of `kinds` reached; work out of the check's sight ("thread", "off")
        is refused by every check."""
        for kind in ("off", "thread", *kinds):
            if kind in self.used:
                return kind, self.used[kind]
        return None


def refusal(name: str, refused: tuple[str, str], taught: str) -> str:
    """A verdict's first lines: what `name` used, what kind of thing that is, and what the exercise asks."""
    kind, what = refused
    if kind == "thread":
        return (f"{name} started {what}: the check sees only the work done on its own thread;\n"
                "      compute the answer in the function itself")
    if kind == "off":
        return f"{name} turned off the check's recording ({what}): {taught}"
    return f"{name} used {what}: that is {KINDS[kind]};\n      {taught}"


class _Ops(TorchDispatchMode):
    """Every ATen op on this thread: counted, its largest output, and whether an autograd engine ran it."""

    def __init__(self, watch: Watch):
        super().__init__()
        self.watch = watch

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        watch = self.watch
        watch.ops[name] += 1
        if torch._C._current_graph_task_id() != -1:
            watch.used.setdefault("reverse", "torch's autograd engine")
        if "backward" in name:
            watch.used.setdefault("formula", f"torch's own backward kernel aten.{name}")
        out = func(*args, **(kwargs or {}))
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, torch.Tensor):
                watch.largest = max(watch.largest, t.numel())
        return out


_MODULES: dict = {}


def _module_of(code) -> str:
    """The module a code object was compiled from, by its file (teachgrad's and torch's modules only)."""
    name = _MODULES.get(code.co_filename)
    if name is None:
        name = ""
        for module in list(sys.modules.values()):
            if getattr(module, "__file__", None) == code.co_filename:
                name = module.__name__
                break
        _MODULES[code.co_filename] = name
    return name


def _classify(code, watch: Watch) -> None:
    filename = code.co_filename
    if "teachgrad" not in filename and "torch" not in filename:
        return
    module, qualname = _module_of(code), code.co_qualname
    for where, prefix, kind, what in _PYTHON:
        if module == where and qualname.startswith(prefix):
            watch.used.setdefault(kind, what)
    if module.startswith(_FORMULA_PACKAGES) and code.co_name in _FORMULA_NAMES:
        watch.used.setdefault("formula", f"{module}.{qualname}")
