#!/usr/bin/env python
"""Run whole programs people learn autograd from, once with torch and once with `import torch` meaning teachgrad,
and compare them cell by cell.

    python scripts/whole_programs.py                      # every program in scripts/whole_programs.toml
    python scripts/whole_programs.py --only makemore      # the programs whose name contains "makemore"
    python scripts/whole_programs.py --list               # the programs, where they come from, and why any is skipped
    python scripts/whole_programs.py --table table.md     # also write the summary table (markdown) to a file

The programs are other people's, so they are never stored in this repository: each is read from a snapshot of its
repository fetched beforehand (a git directory, `--mirror DIR/owner+name/repo`, at the commit the config pins) or,
for torch's own docstrings, from the installed torch package. Not part of `make test` (it needs the snapshots).

How a program is run. It is cut into cells: a notebook's code cells; a tutorial script's blocks (sphinx-gallery
style, split at `# %%` and `#####...` comment lines); the code blocks of a d2l chapter (its pytorch tab) or of an
.rst page; a test file's module body and then each `test_...` function; each `>>>` part of a docstring. Each run
is a fresh Python process, working in a fresh temporary folder holding the program's files (and any data files the
config names), with the same seeds (torch, random, numpy). In the teachgrad run, `import torch`, `import torch.nn
as nn`, `from torch.autograd import Function` ... made by the program give teachgrad's modules (an import hook that
applies to the program's own code only, so teachgrad itself still imports torch); a module teachgrad lacks is a
clear ModuleNotFoundError. After each cell the child records what the cell printed, the repr of its last
expression (as a notebook shows it), the error it raised (type and message), and every tensor in the program's
namespace (dtype, shape, requires_grad, is_leaf, grad_fn's name, values, and the same for `.grad`; the parameters of
an nn.Module; tensors in a list, tuple or dict).

Results. PASS: every cell agrees (values within the program's tolerance; printed numbers within the digits
printed; text compared with runs of white space made one space, memory addresses left out, and `Variable(` read
as `tensor(`, teachgrad's name for what torch calls a tensor). FAIL: the first cell that raised under teachgrad
only, with the error (and the first difference before it, if any). TIMEOUT: a run went past the program's time
limit (the cells before it are still compared). DIFF: cells that differ (how many, and the first with what
differed); a differing cell does not stop the comparison, as a later cell may still fail. TORCH-ERROR: the program
does not run under torch here (its cell and error). SKIP: needs what this machine has not (data downloads, a GPU),
with the reason. Plotting libraries this machine lacks (matplotlib, graphviz, torchviz, IPython) are given to the
program as stand-ins that draw nothing.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import doctest
import importlib
import importlib.util
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
import types
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = Path(__file__).with_suffix(".toml")
DEFAULT_MIRROR = Path("/work/.mirror")


# --- reading programs and cutting them into cells -----------------------------------------------------------------

@dataclass
class Cell:
    code: str
    where: str          # "cell 4", "line 120", "example 2": how a reader finds it in the original


@dataclass
class Program:
    name: str
    kind: str                    # notebook | gallery | d2l | rst | pytest | doctest
    source: str                  # "owner/name@commit:path", or "torch <version>: module"
    cells: list[Cell] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)   # what the program's working folder holds
    skip: str | None = None
    timeout: float = 300.0
    rtol: float = 1e-4
    atol: float = 1e-6
    stop_on_error: bool = True   # a notebook's Run All stops at an error; doctest examples go on
    unordered: tuple[str, ...] = ()   # cells whose printed text comes in an order Python does not fix (a set of
                                      # objects hashed by id): compared as sorted words
    group: str | None = None     # docstring programs are counted together in the table
    expected: dict[str, str] = field(default_factory=dict)   # cell -> why it differs by design (said in the verdict)
    args: tuple[str, ...] = ()   # a script's command line (sys.argv[1:]), as its README runs it, scaled down
    measured: tuple[str, ...] = ()   # regexes of printed text that is measured (a time per iteration): left out


def notebook_cells(text: str) -> list[Cell]:
    nb = json.loads(text)
    cells = []
    for number, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        cells.append(Cell(strip_magics(source), f"code cell {number + 1}"))
    return cells


def strip_magics(source: str) -> str:
    """IPython's `%magic` and `!shell` lines become `pass` (the line numbers stay those of the notebook)."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            line = line[: len(line) - len(stripped)] + "pass"
        lines.append(line)
    return "\n".join(lines)


_GALLERY_SPLIT = re.compile(r"^(# %%.*|#{20,}\s*)$")


def gallery_cells(text: str) -> list[Cell]:
    """A sphinx-gallery script: blocks between `# %%` / `#####...` lines; a block of only comments is prose."""
    cells, start, block = [], 1, []
    for number, line in enumerate(text.splitlines(), 1):
        if _GALLERY_SPLIT.match(line):
            cells.append(Cell("\n".join(block), f"line {start}"))
            start, block = number + 1, []
        else:
            block.append(line)
    cells.append(Cell("\n".join(block), f"line {start}"))
    return [c for c in cells if has_code(c.code)]


def has_code(source: str) -> bool:
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return True     # let the run report it
    return any(not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))
               for s in body)


_D2L_BLOCK = re.compile(r"^```\{\.python \.input[^}]*\}\n(.*?)^```", re.S | re.M)


def d2l_cells(text: str) -> list[Cell]:
    """A d2l chapter (markdown): the code blocks of its pytorch tab (`%%tab pytorch`, or a tab list naming it)."""
    cells = []
    for match in _D2L_BLOCK.finditer(text):
        first, _, rest = match.group(1).partition("\n")
        tabs = first.strip()
        if not tabs.startswith("%%tab"):
            continue    # the `%load_ext d2lbook.tab` block that sets up the tabs
        names = {t.strip() for t in tabs[len("%%tab"):].split(",")}
        if "pytorch" in names or "all" in names:
            line = text.count("\n", 0, match.start()) + 1
            cells.append(Cell(rest, f"line {line}"))
    return cells


_RST_BLOCK = re.compile(r"^\.\. code(?:-block)?:: python\s*\n((?:[ \t]*\n|[ \t]+.*\n)+)", re.M)


def rst_cells(text: str) -> list[Cell]:
    cells = []
    for match in _RST_BLOCK.finditer(text):
        lines = match.group(1).splitlines()
        indent = min(len(l) - len(l.lstrip()) for l in lines if l.strip())
        code = "\n".join(l[indent:] for l in lines)
        cells.append(Cell(code, f"line {text.count(chr(10), 0, match.start()) + 1}"))
    return cells


def script_cells(text: str) -> list[Cell]:
    """A plain script (`python gpt.py`): one cell per top-level statement, in order, run as `__main__` (so its
    `if __name__ == '__main__':` block is one cell). A statement's leading comment lines go with it."""
    tree = ast.parse(text)
    lines = text.splitlines()
    cells, start = [], 1
    for node in tree.body:
        end = node.end_lineno
        cells.append(Cell("\n".join(lines[start - 1:end]), f"line {node.lineno}"))
        start = end + 1
    return cells


def pytest_cells(text: str) -> list[Cell]:
    """A test file: its module body, then one cell per `test_...` function calling it (as pytest would)."""
    tests = [node.name for node in ast.parse(text).body
             if isinstance(node, ast.FunctionDef) and node.name.startswith("test") and not node.args.args]
    return [Cell(text, "module body")] + [Cell(f"{name}()", f"def {name}") for name in tests]


# `+REQUIRES(env:TORCH_DOCTEST_CUDA)` and `+REQUIRES(module:...)` need what this machine may lack; torch's other
# `+REQUIRES(env:TORCH_DOCTEST_...)` switches (AUTOGRAD, ANOMALY, ...) only opt a docstring into torch's CI run.
_SKIP_ONE = re.compile(r"#\s*x?doctest:.*\+REQUIRES\((env:TORCH_DOCTEST_CUDA|module:)")
_SKIP_REST = re.compile(r"^\s*>>>\s*#\s*xdoctest:\s*\+REQUIRES\((env:TORCH_DOCTEST_CUDA|module:).*$", re.M)


def docstring_cells(docstring: str) -> tuple[list[Cell], str | None]:
    """The `>>>` examples of a docstring, cut as torch's doctest runner (xdoctest) cuts them: consecutive prompt
    lines (`>>>` or `...`) form one part, ended by an output line or a blank line; torch writes a class over many
    `>>>` lines, which plain doctest would take one line at a time. Parts torch marks as needing a GPU or a module
    are left out (a directive on a `>>>` line of its own leaves out the rest of the docstring). Parts marked
    `+SKIP` are run: torch skips them because their printed output is not reproducible or not shown whole, and
    here the two runs are compared with each other, not with the docstring's text.
    Returns (cells, why all were left out)."""
    rest = _SKIP_REST.search(docstring)
    text = docstring[: rest.start()] if rest else docstring
    parts, current = [], []
    for line in textwrap.dedent(text).splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>") or (current and stripped.startswith("...")):
            body = stripped[3:]
            current.append(body[1:] if body.startswith(" ") else body)
        elif current:
            parts.append(current)
            current = []
    if current:
        parts.append(current)
    cells = []
    for number, lines in enumerate(parts, 1):
        code = textwrap.dedent("\n".join(lines)).strip("\n")
        if not _SKIP_ONE.search(code) and code.strip():
            cells.append(Cell(code, f"part {number}"))
    skipped_all = f"marked `{rest.group(0).strip()}` in torch's docstring" if rest and not cells else None
    return cells, skipped_all


def docstring_programs(package: str, entry: dict) -> list[Program]:
    """One program per docstring with `>>>` examples in the installed package's modules (e.g. torch.autograd)."""
    import torch
    module = importlib.import_module(package)
    folder = Path(module.__file__).parent
    programs = []
    for path in sorted(folder.rglob("*.py")):
        modname = package + "." + ".".join(path.relative_to(folder).with_suffix("").parts)
        modname = modname.removesuffix(".__init__")
        tree = ast.parse(path.read_text())
        for qualname, doc in _docstrings(tree):
            if ">>>" not in doc:
                continue
            cells, skipped = docstring_cells(doc)
            name = f"{modname}.{qualname}" if qualname else modname
            programs.append(Program(
                name=name, kind="doctest", source=f"torch {torch.__version__}: {path.relative_to(folder.parent.parent)}",
                cells=[Cell(doctest_setup(modname, cells), "setup")] + cells, skip=skipped or (None if cells else "no runnable example"),
                timeout=entry.get("timeout", 120), rtol=entry.get("rtol", 1e-4), atol=entry.get("atol", 1e-6),
                stop_on_error=False, group=entry["name"]))
    return programs


def doctest_setup(modname: str, cells: list[Cell]) -> str:
    """torch's doctest runner runs a docstring's examples in the namespace of the module that defines it, so an
    example may use that module's names unimported (`Function` in torch.autograd.function). The setup cell imports
    the ones the examples use, through `torch` (so that in the teachgrad run they come from teachgrad's module of
    that name, or fail saying teachgrad has none)."""
    module = importlib.import_module(modname)
    used, assigned = set(), set()
    for cell in cells:
        with contextlib.suppress(SyntaxError):
            for node in ast.walk(ast.parse(cell.code)):
                if isinstance(node, ast.Name):
                    (used if isinstance(node.ctx, ast.Load) else assigned).add(node.id)
                elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    assigned.add(node.name)
    lines = ["import torch"]
    for name in sorted(used - assigned - set(dir(builtins)) - {"torch"}):
        if name not in vars(module):
            continue
        value = vars(module)[name]
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith("torch."):
                lines.append(f"import {value.__name__} as {name}")
        else:
            lines.append(f"from {modname} import {name}")
    return "\n".join(lines)


def _docstrings(tree, prefix=""):
    doc = ast.get_docstring(tree, clean=True)
    if doc and not prefix and isinstance(tree, ast.Module):
        yield "", doc
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            doc = ast.get_docstring(node, clean=True)
            if doc:
                yield name, doc
            if isinstance(node, ast.ClassDef):
                yield from _docstrings(node, name + ".")


CUTTERS = {"notebook": notebook_cells, "gallery": gallery_cells, "d2l": d2l_cells, "rst": rst_cells,
           "pytest": pytest_cells, "script": script_cells}


class Snapshot:
    """A fetched repository: a git directory (read with `git show`) or a plain folder."""

    def __init__(self, mirror: Path, repo: str, commit: str | None):
        self.repo, self.commit = repo, commit
        base = mirror / repo.replace("/", "+")
        self.git_dir = base / "repo" if (base / "repo").is_dir() else base if (base / "HEAD").exists() else None
        self.folder = base if self.git_dir is None else None
        if self.git_dir is None and not base.is_dir():
            raise FileNotFoundError(f"no snapshot of {repo} in {mirror} (fetch github:{repo} first)")
        if self.git_dir is not None and commit:
            ok = subprocess.run(["git", "--git-dir", str(self.git_dir), "cat-file", "-e", commit + "^{commit}"],
                                capture_output=True).returncode == 0
            if not ok:
                raise FileNotFoundError(f"the snapshot of {repo} in {self.git_dir} has no commit {commit}")

    def read(self, path: str) -> bytes:
        if self.folder is not None:
            return (self.folder / path).read_bytes()
        return subprocess.run(["git", "--git-dir", str(self.git_dir), "show", f"{self.commit or 'HEAD'}:{path}"],
                              capture_output=True, check=True).stdout

    def listing(self, folder: str) -> list[str]:
        if self.folder is not None:
            return [str(p.relative_to(self.folder)) for p in (self.folder / folder).iterdir() if p.is_file()]
        out = subprocess.run(["git", "--git-dir", str(self.git_dir), "ls-tree", "--name-only",
                              f"{self.commit or 'HEAD'}", folder.rstrip("/") + "/"],
                             capture_output=True, check=True, text=True).stdout
        return out.split()


def load_programs(config: dict, mirror: Path) -> list[Program]:
    defaults = config.get("defaults", {})
    programs = []
    for entry in config["program"]:
        entry = {**defaults, **entry}
        if entry["kind"] == "docstrings":
            programs += docstring_programs(entry["package"], entry)
            continue
        program = Program(name=entry["name"], kind=entry["kind"],
                          source=f"{entry['repo']}@{entry['commit'][:12]}:{entry['path']}",
                          skip=entry.get("skip"), timeout=entry.get("timeout", 300),
                          rtol=entry.get("rtol", 1e-4), atol=entry.get("atol", 1e-6),
                          unordered=tuple(entry.get("unordered", ())),
                          stop_on_error=entry.get("stop_on_error", True), expected=dict(entry.get("expected", {})),
                          args=tuple(entry.get("args", ())), measured=tuple(entry.get("measured", ())))
        programs.append(program)
        try:
            snapshot = Snapshot(mirror, entry["repo"], entry["commit"])
            text = snapshot.read(entry["path"]).decode()
            program.cells = CUTTERS[entry["kind"]](text)
            folder = str(Path(entry["path"]).parent)
            # the program's own folder (small files only: data beside a notebook), then the files the config names
            if entry.get("with_folder", True) and folder != ".":
                for name in snapshot.listing(folder):
                    data = snapshot.read(name)
                    if len(data) < 2_000_000:
                        program.files[str(Path(name).relative_to(folder))] = data
            for extra in entry.get("files", []):
                other = Snapshot(mirror, extra["repo"], extra.get("commit")) if "repo" in extra else snapshot
                program.files[extra.get("as", extra["path"])] = other.read(extra["path"])
        except (FileNotFoundError, subprocess.CalledProcessError) as e:
            program.skip = program.skip or f"snapshot missing: {e}"
    return programs


# --- the child: runs one program with one library -----------------------------------------------------------------

STAND_INS = ("matplotlib", "graphviz", "torchviz", "IPython")   # draw only: a stand-in where missing
LOG_ONLY = "torch.utils.tensorboard"   # logs only: a stand-in in both runs where the tensorboard package is missing


def install_program_imports(namespace: dict, workdir: str, twin_name: str | None) -> None:
    """An import hook for the program's own code only (its namespace, and modules of its working folder; not
    libraries, not teachgrad, not this runner):
    - with a twin, `import torch`, `import torch.nn as nn`, `from torch.autograd import Function` ... give the
      twin's modules; a module the twin lacks is a ModuleNotFoundError that says so; `import functorch` (torch's
      deprecated package) gives the twin's `functorch` module where it has one;
    - matplotlib / graphviz / torchviz / IPython, where this machine lacks them, give a stand-in that draws
      nothing (what a plot shows is not compared; the numbers it is drawn from are);
    - `from torch.utils.tensorboard import SummaryWriter`, where the tensorboard package is missing, gives a
      stand-in that logs nothing, in both runs (what it would log is printed or kept by the program too)."""
    twin = importlib.import_module(twin_name) if twin_name else None
    real_import = builtins.__import__
    functorch_twin = twin is not None and importlib.util.find_spec(twin_name + ".functorch") is not None

    def from_program(globals_):
        if not globals_:
            return False
        if globals_ is namespace:
            return True
        return str(globals_.get("__file__") or "").startswith(workdir)

    def twin_module(name):
        module = twin
        for i, part in enumerate(name.split(".")[1:], 1):
            wanted = twin_name + "." + ".".join(name.split(".")[1:i + 1])
            try:
                module = importlib.import_module(wanted)
            except ModuleNotFoundError:
                found = getattr(module, part, None)
                if not isinstance(found, types.ModuleType):
                    raise ModuleNotFoundError(f"{twin_name} has no module {wanted!r} (the program imports {name!r})",
                                              name=name) from None
                module = found
        return module

    def program_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or not from_program(globals):
            return real_import(name, globals, locals, fromlist, level)
        if (name == LOG_ONLY or name.startswith(LOG_ONLY + ".")) and importlib.util.find_spec("tensorboard") is None:
            if fromlist:
                return _StandIn(name)
            name = "torch"   # `import torch.utils.tensorboard` binds `torch`: torch (or the twin) itself
        if twin is not None and (name == "functorch" or name.startswith("functorch.")) and functorch_twin:
            name = "torch." + name   # torch's deprecated functorch package: the twin's `functorch` module
        if twin is not None and (name == "torch" or name.startswith("torch.")):
            module = twin_module(name)
            if not fromlist:
                return module if name.startswith("torch.functorch") else twin
            for item in fromlist:
                if item != "*" and not hasattr(module, item):
                    with contextlib.suppress(ModuleNotFoundError):
                        importlib.import_module(f"{module.__name__}.{item}")
            return module
        if name.split(".")[0] in STAND_INS:
            try:
                return real_import(name, globals, locals, fromlist, level)
            except ImportError:
                return _StandIn(name if fromlist else name.split(".")[0])
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = program_import


class _Anything:
    """What a stand-in module gives: every attribute and call gives another stand-in."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __iter__(self):
        return iter((_Anything(), _Anything()))

    def __getitem__(self, key):
        return _Anything()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _StandIn(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


def seed_everything(seed: int) -> None:
    import random

    import torch
    torch.manual_seed(seed)
    random.seed(seed)
    with contextlib.suppress(ImportError):
        import numpy
        numpy.random.seed(seed)


SAMPLE = 256        # values kept of a big tensor: this many spread over it, plus its sum and absolute sum
FULL = 4096         # tensors up to this many elements are kept whole


def tensor_summary(t, variable_type) -> dict:
    import torch
    is_variable = variable_type is not None and isinstance(t, variable_type)
    data = t.data if is_variable else t.detach()
    if not isinstance(data, torch.Tensor):
        return {"kind": "odd tensor", "type": type(t).__name__}
    summary = {"kind": "tensor", "dtype": str(data.dtype).removeprefix("torch."), "shape": list(data.shape),
               "requires_grad": bool(t.requires_grad), "is_leaf": bool(t.is_leaf),
               "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__,
               "device": data.device.type, "plain": is_variable is False and variable_type is not None}
    summary.update(value_summary(data))
    with warnings_quiet():
        grad = t.grad if t.is_leaf or getattr(t, "retains_grad", False) else None
    summary["grad"] = None if grad is None else tensor_summary(grad, variable_type)
    return summary


def value_summary(data) -> dict:
    import torch
    if data.device.type == "meta" or data.is_complex() or data.is_sparse:
        return {"values": None}
    flat = data.detach().reshape(-1).to("cpu", torch.float64)
    if flat.numel() <= FULL:
        return {"values": flat.tolist()}
    picks = torch.arange(SAMPLE) * (flat.numel() - 1) // (SAMPLE - 1)
    return {"values": flat[picks].tolist(), "sum": flat.nansum().item(), "abs_sum": flat.abs().nansum().item()}


@contextlib.contextmanager
def warnings_quiet():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def namespace_summary(namespace: dict, variable_type) -> dict:
    import torch
    tensor_types = (torch.Tensor,) + ((variable_type,) if variable_type is not None else ())
    out = {}

    def add(name, value, depth=0):
        if isinstance(value, tensor_types):
            out[name] = tensor_summary(value, variable_type)
        elif depth == 0 and isinstance(value, (list, tuple)) and 0 < len(value) <= 64:
            for i, item in enumerate(value):
                add(f"{name}[{i}]", item, 1)
        elif depth == 0 and isinstance(value, dict) and 0 < len(value) <= 64:
            for key, item in value.items():
                if isinstance(key, (str, int)):
                    add(f"{name}[{key!r}]", item, 1)
        elif depth == 0 and callable(getattr(value, "named_parameters", None)) and not isinstance(value, type):
            with contextlib.suppress(Exception):
                for pname, param in value.named_parameters():
                    add(f"{name}.{pname}", param, 1)
        elif isinstance(value, (bool, int, float)) and not isinstance(value, type):
            out[name] = {"kind": "number", "value": value}

    for name, value in list(namespace.items()):
        if not name.startswith("_") and not isinstance(value, (types.ModuleType, types.FunctionType, type)):
            add(name, value)
    return out


def run_cell(cell: Cell, number: int, namespace: dict) -> dict:
    """Execute one cell as a notebook does: its last expression's value is shown (unless it ends in `;`)."""
    out = io.StringIO()
    record = {"cell": number, "where": cell.where, "stdout": "", "display": None, "error": None}
    try:
        tree = ast.parse(cell.code, filename=f"<{cell.where}>")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not cell.code.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        with contextlib.redirect_stdout(out):
            exec(compile(tree, f"<{cell.where}>", "exec"), namespace)
            if last is not None:
                value = eval(compile(last, f"<{cell.where}>", "eval"), namespace)
                if value is not None:
                    record["display"] = repr(value)
    except BaseException as e:  # noqa: BLE001 - what the program raised is what is compared
        if isinstance(e, KeyboardInterrupt):
            raise
        record["error"] = {"type": type(e).__name__, "message": str(e), "at": _where_raised(e)}
    record["stdout"] = out.getvalue()
    return record


def _where_raised(error: BaseException) -> str:
    import traceback
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f.filename.startswith("<")]
    inner = frames[-1] if frames else None
    parts = []
    if ours:
        parts.append(f"{ours[-1].filename} line {ours[-1].lineno}: {ours[-1].line or ''}".strip())
    if inner and inner is not (ours[-1] if ours else None):
        parts.append(f"raised in {Path(inner.filename).name}:{inner.lineno}")
    return "; ".join(parts)


def child_main(args) -> None:
    spec = json.loads(Path(args.child).read_text())
    os.chdir(spec["workdir"])
    sys.path.insert(0, spec["workdir"])
    sys.argv = [spec["argv0"]] + spec["args"]
    os.environ.setdefault("MPLBACKEND", "Agg")
    import torch  # noqa: F401 - loaded first, as the twin builds on it
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    variable_type = None
    if spec["twin"]:
        variable_type = getattr(importlib.import_module(spec["twin"]), "Variable", None)
    install_program_imports(namespace, spec["workdir"], spec["twin"])
    seed_everything(spec["seed"])
    with open(spec["out"], "w") as out:
        for number, cell in enumerate(spec["cells"][: spec["limit"]]):
            record = run_cell(Cell(**cell), number, namespace)
            try:
                with warnings_quiet():
                    record["namespace"] = namespace_summary(namespace, variable_type)
            except Exception as e:  # noqa: BLE001 - a fault of the runner's, not the program's: said, not hidden
                record["namespace"] = {"<runner>": {"kind": "summary failed", "why": f"{type(e).__name__}: {e}"}}
            out.write(json.dumps(record) + "\n")
            out.flush()
            if record["error"] and spec["stop_on_error"]:
                break


# --- the parent: runs both, compares --------------------------------------------------------------------------------

@dataclass
class Run:
    records: list[dict]
    timed_out: bool
    crashed: str | None     # the child died (not a Python error in a cell): its stderr's last lines
    seconds: float


def run_program(program: Program, twin: str | None, limit: int | None, seed: int) -> Run:
    with tempfile.TemporaryDirectory(prefix="whole-program-") as tmp:
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        for name, data in program.files.items():
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_bytes(data)
        out = Path(tmp) / "records.jsonl"
        spec = {"name": program.name, "workdir": str(workdir), "twin": twin, "seed": seed, "out": str(out),
                "limit": limit, "stop_on_error": program.stop_on_error,
                "argv0": program.source.rsplit("/", 1)[-1], "args": list(program.args),
                "cells": [{"code": c.code, "where": c.where} for c in program.cells]}
        (Path(tmp) / "spec.json").write_text(json.dumps(spec))
        # MALLOC_PERTURB_: glibc fills each block it hands out with one byte pattern, so what `torch.empty` leaves
        # unwritten holds the same values in both runs (else it is whatever memory the process freed before)
        # PYTHONHASHSEED: the same hash of a str or bytes in both runs, so a set of words (a vocabulary built with
        # `set(words)`) comes in the same order, as a hash of pickled bytes picks the same split
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "MPLBACKEND": "Agg",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               "MALLOC_PERTURB_": "85", "PYTHONHASHSEED": "0"}
        started = time.perf_counter()
        timed_out, crashed = False, None
        try:
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(Path(tmp) / "spec.json")],
                                  cwd=workdir, env=env, capture_output=True, text=True, timeout=program.timeout)
            if done.returncode != 0:
                crashed = "\n".join(done.stderr.strip().splitlines()[-3:]) or f"exit status {done.returncode}"
        except subprocess.TimeoutExpired:
            timed_out = True
        records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        return Run(records, timed_out, crashed, time.perf_counter() - started)


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def normalise(text: str) -> str:
    """Runs of white space as one space, `Variable(` as `tensor(`, and no memory addresses (`<... at 0x7f...>`)."""
    return " ".join(_ADDRESS.sub(" at 0x", text).replace("Variable(", "tensor(").split())


def profiler_tables_as_counts(text: str) -> str:
    """Each table torch's profiler prints (`prof.key_averages().table()`) as what it counts: every row's name and
    number of calls, in name order. Its times are measured, and differ from run to run under torch too.

    The table's first line of dashes gives its columns (one run of dashes each, one space apart)."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        rule, header = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        if not (rule.startswith("---") and set(rule) <= {"-", " "} and "Self CPU" in header and "# of Calls" in header):
            out.append(lines[i])
            i += 1
            continue
        spans, start = [], 0
        for run in rule.split(" "):
            spans.append((start, start + len(run)))
            start += len(run) + 1
        cut = lambda line: [line[a:b].strip() for a, b in spans]   # noqa: E731
        calls = cut(header).index("# of Calls")
        i += 3                                      # the rule, the header, the rule under it
        rows = []
        while i < len(lines) and not lines[i].startswith("---"):
            fields = cut(lines[i])
            rows.append(f"{fields[0]} x{fields[calls]}")
            i += 1
        i += 1                                      # the closing rule
        if i < len(lines) and lines[i].startswith("Self CPU time total"):
            i += 1
        out.append("[profiler table: " + "; ".join(sorted(rows)) + "]")
    return "\n".join(out)


def without_measured(text: str | None, patterns: tuple[str, ...]) -> str | None:
    """Printed text with what the program measured (`iter_dt 12.34ms`: a time, different from run to run under torch
    too) left out: each match of the config's `measured` patterns becomes `<measured>`."""
    if text is None:
        return None
    for pattern in patterns:
        text = re.sub(pattern, "<measured>", text)
    return text


def same_text(ours: str | None, theirs: str | None, rtol: float) -> bool:
    """Equal text, except numbers with a decimal point or exponent: each may differ by its last printed digit
    (and rtol); integers must be equal."""
    if ours is None or theirs is None:
        return ours is theirs
    a, b = normalise(ours), normalise(theirs)
    if a == b:
        return True
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        if x == y:
            continue
        if not re.search(r"[.eE]", x + y):
            return False            # integers (counts, indices, sizes) must be equal
        decimals = len(x.split(".")[1].split("e")[0].split("E")[0]) if "." in x else 0
        exponent = int(re.split("[eE]", x)[1]) if re.search("[eE]", x) else 0
        if decimals == 0 and not exponent:
            return False            # torch prints `2.` only for a value that is a whole number
        step = 10.0 ** (exponent - decimals)
        if not abs(float(x) - float(y)) <= 1.01 * step + rtol * abs(float(y)):
            return False
    return True


def same_numbers(ours, theirs, rtol, atol) -> bool:
    if ours is None or theirs is None:
        return ours is theirs
    if len(ours) != len(theirs):
        return False
    for x, y in zip(ours, theirs):
        if math.isnan(x) and math.isnan(y):
            continue
        if x != y and not abs(x - y) <= atol + rtol * abs(y):
            return False
    return True


TENSOR_FIELDS = ("dtype", "shape", "requires_grad", "is_leaf", "grad_fn", "device")


def tensor_difference(ours: dict, theirs: dict, rtol: float, atol: float) -> str | None:
    if ours.get("kind") != theirs.get("kind"):
        return f"{ours.get('kind')} where torch has a {theirs.get('kind')}"
    if theirs["kind"] == "number":
        x, y = ours["value"], theirs["value"]
        if type(x) is not type(y):
            return f"{type(x).__name__} {x!r} where torch has {type(y).__name__} {y!r}"
        return None if same_numbers([float(x)], [float(y)], rtol, atol) else f"{x!r} where torch has {y!r}"
    if theirs["kind"] != "tensor":
        return None
    for name in TENSOR_FIELDS:
        if ours[name] != theirs[name]:
            return f"{name} {ours[name]!r} where torch has {theirs[name]!r}"
    for name in ("values", "sum", "abs_sum"):
        if name in theirs or name in ours:
            a, b = ours.get(name), theirs.get(name)
            a, b = ([a] if isinstance(a, float) else a), ([b] if isinstance(b, float) else b)
            scale = 1 if name == "values" else max(1, math.prod(theirs["shape"]) ** 0.5)
            if not same_numbers(a, b, rtol, atol * scale):
                return f"values differ (beyond rtol={rtol}, atol={atol}): {_first_apart(a, b, rtol, atol * scale)}"
    if (ours["grad"] is None) != (theirs["grad"] is None):
        return f".grad is {'None' if ours['grad'] is None else 'set'} where torch's is {'None' if theirs['grad'] is None else 'set'}"
    if theirs["grad"] is not None:
        inner = tensor_difference(ours["grad"], theirs["grad"], rtol, atol)
        if inner:
            return ".grad: " + inner
    return None


def _first_apart(a, b, rtol: float, atol: float) -> str:
    """The first element beyond the tolerance, and how many are."""
    if a is None or b is None or len(a) != len(b):
        return f"{a!r:.80} vs torch's {b!r:.80}"
    apart = [i for i, (x, y) in enumerate(zip(a, b)) if not same_numbers([x], [y], rtol, atol)]
    if not apart:
        return "?"
    i = apart[0]
    return f"[{i}] {a[i]!r} vs torch's {b[i]!r} ({len(apart)} of {len(a)} beyond)"


def cell_difference(ours: dict, theirs: dict, rtol: float, atol: float, unordered: bool = False) -> str | None:
    """What differs between the two runs of one cell (None if nothing)."""
    if unordered:
        ours, theirs = ({**r, "stdout": _sorted_words(r["stdout"]), "display": _sorted_words(r["display"])}
                        for r in (ours, theirs))
    oe, te = ours["error"], theirs["error"]
    if oe or te:
        if oe and te and (oe["type"], oe["message"]) == (te["type"], te["message"]):
            pass
        elif oe and te:
            return f"raised {oe['type']}: {oe['message']!r:.300} where torch raised {te['type']}: {te['message']!r:.200}"
        elif te:
            return f"torch raised {te['type']}: {te['message']!r:.200}; teachgrad raised nothing"
        else:
            return None  # raised under teachgrad only: a FAIL, told apart by the caller
    if "# of Calls" in (theirs["stdout"] or ""):   # a profiler's table: compared by its rows' names and calls
        ours, theirs = ({**r, "stdout": profiler_tables_as_counts(r["stdout"] or "")} for r in (ours, theirs))
    if not same_text(ours["stdout"], theirs["stdout"], rtol):
        return f"printed {_clip(ours['stdout'])!r} where torch printed {_clip(theirs['stdout'])!r}"
    if not same_text(ours["display"], theirs["display"], rtol):
        return f"shows {_clip(ours['display'])!r} where torch shows {_clip(theirs['display'])!r}"
    names_o, names_t = ours["namespace"], theirs["namespace"]
    for name in sorted(set(names_o) | set(names_t)):
        if name not in names_t:
            if names_o[name].get("kind") == "tensor":
                return f"{name}: a tensor where torch has no tensor of that name"
            continue
        if name not in names_o:
            return f"{name}: torch has a {names_t[name].get('kind')}, teachgrad none"
        why = tensor_difference(names_o[name], names_t[name], rtol, atol)
        if why:
            return f"{name}: {why}"
    return None


def _sorted_words(text: str | None) -> str | None:
    return None if text is None else " ".join(sorted(re.findall(r"[^\s,\[\]{}]+", normalise(text))))


def _clip(text: str | None, width: int = 160) -> str | None:
    if text is None:
        return None
    text = normalise(text)
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass
class Verdict:
    program: Program
    result: str                  # PASS DIFF FAIL TIMEOUT TORCH-ERROR SKIP
    cells_agreeing: int = 0
    detail: str = ""
    seconds: tuple[float, float] = (0.0, 0.0)


def compare(program: Program, ours: Run, theirs: Run) -> Verdict:
    """The verdict on a program, cell by cell. A cell that differs is noted and the comparison goes on (a
    difference in what one cell prints need not hide that a later one fails); the first cell that raises under
    teachgrad only ends it. FAIL outranks TIMEOUT, which outranks DIFF."""
    seconds = (theirs.seconds, ours.seconds)
    agreeing, differing, first_diff, failure, torch_error, both_raised = 0, 0, None, None, None, 0
    as_expected = []    # cells the config says differ by design, and do
    for o, t in zip(ours.records, theirs.records):
        where = o["where"]
        if o["error"] and not t["error"]:
            failure = f"{where}: {_error_text(o['error'])}"
            break
        if program.measured:
            o, t = ({**r, "stdout": without_measured(r["stdout"], program.measured)} for r in (o, t))
        why = cell_difference(o, t, program.rtol, program.atol, where in program.unordered)
        if why and where in program.expected:
            as_expected.append(f"{where}: {program.expected[where]}")
            agreeing += 1
        elif why:
            differing += 1
            first_diff = first_diff or f"{where}: {why}"
        else:
            agreeing += 1
            both_raised += bool(t["error"])
        if t["error"] and program.stop_on_error:
            torch_error = f"{where}: {t['error']['type']}: {t['error']['message'][:200]}"
            break
    n_o, n_t = len(ours.records), len(theirs.records)
    if failure is None and n_o == n_t + 1 and ours.records[-1]["error"] and (theirs.timed_out or theirs.crashed):
        failure = (f"{ours.records[-1]['where']}: {_error_text(ours.records[-1]['error'])} "
                   f"(torch's run of that cell did not end: {'passed the time limit' if theirs.timed_out else 'died'})")
    also = f"; first difference before it: {first_diff}" if first_diff else ""
    if torch_error:
        return Verdict(program, "TORCH-ERROR", agreeing, torch_error, seconds)
    if failure:
        return Verdict(program, "FAIL", agreeing, failure + also, seconds)
    if theirs.crashed and n_t < len(program.cells):
        return Verdict(program, "TORCH-ERROR", agreeing, f"the torch run died: {theirs.crashed}", seconds)
    if ours.crashed and n_o < len(program.cells):
        return Verdict(program, "FAIL", agreeing, f"the teachgrad run died after {n_o} cells: {ours.crashed}" + also, seconds)
    if ours.timed_out or theirs.timed_out:
        who = "both runs" if ours.timed_out and theirs.timed_out else "the teachgrad run" if ours.timed_out else "the torch run"
        stopped = program.cells[min(n_o, n_t)].where if min(n_o, n_t) < len(program.cells) else "the end"
        return Verdict(program, "TIMEOUT", agreeing,
                       f"{who} passed {program.timeout:.0f} s, in {stopped}; of the cells before, {agreeing} agree" + also,
                       seconds)
    if first_diff:
        return Verdict(program, "DIFF", agreeing, f"{differing} of {n_t} cells differ; the first, {first_diff}", seconds)
    if n_o != n_t:
        return Verdict(program, "DIFF", agreeing, f"teachgrad ran {n_o} cells, torch {n_t}", seconds)
    same_errors = f", {both_raised} of them raising the same error under both" if both_raised else ""
    by_design = f"; differing by design, as the config says: {'; '.join(as_expected)}" if as_expected else ""
    return Verdict(program, "PASS", agreeing, f"{agreeing} cells{same_errors}{by_design}", seconds)


def _error_text(error: dict) -> str:
    return f"{error['type']}: {error['message'][:300]} ({error['at']})"


def judge(program: Program, seed: int, twin: str) -> Verdict:
    if program.skip:
        return Verdict(program, "SKIP", detail=program.skip)
    ours = run_program(program, twin, None, seed)
    # torch runs as far as teachgrad got (one cell more: the one teachgrad stopped in)
    stopped_early = ours.timed_out or ours.crashed or (ours.records and ours.records[-1]["error"] and program.stop_on_error)
    limit = len(ours.records) + (1 if ours.timed_out or ours.crashed else 0) if stopped_early else None
    theirs = run_program(program, None, limit, seed)
    return compare(program, ours, theirs)


# --- the table -------------------------------------------------------------------------------------------------------

def markdown_table(verdicts: list[Verdict]) -> str:
    lines = ["| program | source (snapshot) | cells | result | first difference / failure |", "|---|---|---|---|---|"]
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if v.program.group:
            groups.setdefault(v.program.group, []).append(v)
            continue
        cells = f"{v.cells_agreeing}/{len(v.program.cells)}" if v.result != "SKIP" else "-"
        lines.append(f"| {v.program.name} | `{v.program.source}` | {cells} | {v.result} | {_cell_text(v.detail)} |")
    for group, members in groups.items():
        ran = [v for v in members if v.result != "SKIP"]
        passed = sum(v.result == "PASS" for v in ran)
        lines.append(f"| {group} | `{members[0].program.source.split(':')[0]}` | {len(ran)} programs | "
                     f"{passed} of {len(ran)} PASS | each in the table below |")
    for group, members in groups.items():
        lines += ["", f"| {group}: docstring of | cells | result | first difference / failure |", "|---|---|---|---|"]
        for v in members:
            cells = f"{v.cells_agreeing}/{len(v.program.cells)}" if v.result != "SKIP" else "-"
            name = v.program.name.removeprefix(group.split()[0] + ".")
            lines.append(f"| `{name}` | {cells} | {v.result} | {_cell_text(v.detail, 160)} |")
    return "\n".join(lines)


def _cell_text(text: str, width: int = 220) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 3] + "..."


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=CONFIG, help="the programs (TOML), default %(default)s")
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR,
                        help="folder of fetched snapshots, DIR/owner+name/repo (default %(default)s)")
    parser.add_argument("--only", action="append", default=[], help="run the programs whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the programs and their cells, run nothing")
    parser.add_argument("--twin", default="teachgrad", help="the module `import torch` means in the second run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout-scale", type=float, default=1.0,
                        help="multiply every program's time limit (the makemore training cells need minutes)")
    parser.add_argument("--table", type=Path, help="write the markdown summary table here too")
    parser.add_argument("--json", type=Path, help="write every verdict here as JSON")
    parser.add_argument("--rerender", type=Path, help="print the table again from a --json file, running nothing")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_main(args)
        return 0
    config = tomllib.loads(args.config.read_text())
    programs = [p for p in load_programs(config, args.mirror)
                if not args.only or any(word in p.name or word in (p.group or "") for word in args.only)]
    for program in programs:
        program.timeout *= args.timeout_scale
    if args.rerender:
        by_name = {p.name: p for p in programs}
        verdicts = [Verdict(by_name[r["name"]], r["result"], r["agreeing"], r["detail"], tuple(r["seconds"]))
                    for r in json.loads(args.rerender.read_text()) if r["name"] in by_name]
        print(markdown_table(verdicts))
        return 0
    if args.list:
        for p in programs:
            print(f"{p.name}  [{p.kind}, {len(p.cells)} cells]  {p.source}" + (f"  SKIP: {p.skip}" if p.skip else ""))
        return 0
    verdicts = []
    for program in programs:
        verdict = judge(program, args.seed, args.twin)
        verdicts.append(verdict)
        took = f" ({verdict.seconds[0]:.0f} s torch, {verdict.seconds[1]:.0f} s {args.twin})" if verdict.result != "SKIP" else ""
        print(f"{verdict.result:11} {program.name}: {verdict.detail}{took}", flush=True)
    table = markdown_table(verdicts)
    print()
    print(table)
    if args.table:
        args.table.write_text(table + "\n")
    if args.json:
        args.json.write_text(json.dumps([{"name": v.program.name, "source": v.program.source, "result": v.result,
                                          "cells": len(v.program.cells), "agreeing": v.cells_agreeing,
                                          "detail": v.detail, "seconds": v.seconds} for v in verdicts], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
