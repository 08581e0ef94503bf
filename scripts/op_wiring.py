"""How many files, besides its own, name or wire each op (issue 42's measure of "one op, one place").

    python scripts/op_wiring.py            # the median and p90 over all op classes, and the ten most wired
    python scripts/op_wiring.py -v Hypot   # the files that name or wire one op, and how

Read from the code with `ast` (nothing is imported; comments, docstrings and strings do not count; tests and
notebooks are not read). An op class is a class of teachgrad/ops/ whose bases lead to `Function` (a base
class with no node name of its own, such as `_Unary`, is a helper, not an op). A file other than the op's own
counts when it
- names the class, read from a module of ops/ (`ops.Tan`, `pointwise_math.Tan`, `tg.ops.Tan`,
  `from .pointwise_math import Tan`), or
- wires a function that calls it: a module-level `def` whose body names the class (`def tan(input): return
  ops.Tan.apply(input)`) is the op's function, and a file that imports that function or reads it from its
  module (`from .api.op_families import tan`, `tan = op_families.tan`) wires it.
A declaration read from a registry (`Function.__init_subclass__`'s keywords) names nothing elsewhere.
"""
from __future__ import annotations

import argparse
import ast
import statistics
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "teachgrad"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an ImportFrom reads from, as a name relative to teachgrad ('' is teachgrad itself)."""
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1] if node.level > 1 else base
        return ".".join([p for p in base if p] + ([node.module] if node.module else []))
    return (node.module or "").partition(".")[2] if (node.module or "").startswith("teachgrad") else "?"


class File:
    def __init__(self, path: Path):
        self.path, self.module = path, module_name(path)
        self.is_package = path.name == "__init__.py"
        self.tree = ast.parse(path.read_text())
        self.aliases = {}           # local name -> teachgrad module it stands for ('ops', 'api.op_families', ...)
        self.imported = set()       # (module, name) pairs of `from module import name`
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                source = resolve(self.module, self.is_package, node)
                for alias in node.names:
                    self.imported.add((source, alias.name))
                    self.aliases[alias.asname or alias.name] = f"{source}.{alias.name}".strip(".")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "teachgrad":
                        self.aliases[alias.asname or alias.name] = alias.name.partition(".")[2]
        # the names read from ops' modules: `ops.Tan`, `pointwise_math.Tan`, `tg.ops.Tan`, or imported from one
        self.read = set(self.imported)   # (module, name): imported from a module, or read as `alias.name`
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                module = self.module_of(node.value)
                if module is not None:
                    self.read.add((module, node.attr))
        self.names = {name for module, name in self.read if module == "ops" or module.startswith("ops.")}
        # the identifiers each public module-level function's body mentions (for the functions that call an op)
        self.bodies = {node.name: {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
                                   if isinstance(n, (ast.Name, ast.Attribute))}
                       for node in self.tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")}

    def module_of(self, node: ast.expr) -> str | None:
        """The teachgrad module an expression such as `ops`, `tg.ops` or `pointwise_math` stands for, or None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.module_of(node.value)
            return None if base is None else f"{base}.{node.attr}".strip(".")
        return None

    def reads_from(self, module: str, name: str) -> bool:
        """Whether this file imports `name` from `module`, or reads `alias.name` where alias is that module."""
        return (module, name) in self.read


def op_classes(files: list[File]) -> dict[str, File]:
    """{class name: its file} for every op class of teachgrad/ops (see the module's docstring)."""
    classes = {}
    for f in files:
        if f.module.startswith("ops"):
            for node in f.tree.body:
                if isinstance(node, ast.ClassDef):
                    classes[node.name] = (f, node)
    function_like = {"Function"}
    changed = True
    while changed:   # a class is Function-like when one of its bases is
        changed = False
        for name, (f, node) in classes.items():
            bases = {getattr(b, "id", getattr(b, "attr", None)) for b in node.bases}
            if name not in function_like and bases & function_like:
                function_like.add(name)
                changed = True
    ops = {}
    for name, (f, node) in classes.items():
        if name in function_like:
            declares_node = any(k.arg == "node" for k in node.keywords)
            if declares_node or not name.startswith("_"):
                ops[name] = f
    return ops


def wrappers(files: list[File], op: str, own: File) -> list[tuple[File, str]]:
    """The module-level functions (outside the op's own file) whose body names the op."""
    return [(f, function) for f in files if f is not own for function, names in f.bodies.items() if op in names]


def wiring(files: list[File]) -> dict[str, dict[str, str]]:
    """{op: {file: how it names or wires the op}} over every op class."""
    result = {}
    for op, own in op_classes(files).items():
        where = {}
        for f in files:
            if f is not own and op in f.names:
                where[str(f.path.relative_to(PACKAGE.parent))] = f"names {op}"
        for home, function in wrappers(files, op, own):
            for f in files:
                if f is not own and f is not home and f.reads_from(home.module, function):
                    where.setdefault(str(f.path.relative_to(PACKAGE.parent)), f"wires {home.module}.{function}")
        result[op] = where
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", nargs="*", metavar="OP", help="the files for these ops")
    args = parser.parse_args()
    files = [File(p) for p in sorted(PACKAGE.rglob("*.py"))]
    result = wiring(files)
    counts = sorted(len(w) for w in result.values())
    p90 = counts[min(len(counts) - 1, int(0.9 * len(counts)))]
    print(f"op classes: {len(counts)}; files other than its own that name or wire an op: "
          f"median {statistics.median(counts):g}, p90 {p90}, max {counts[-1]}")
    for op in args.verbose or []:
        print(f"{op}:")
        for path, how in sorted(result[op].items()):
            print(f"    {path}: {how}")
    if args.verbose == []:
        for op, where in sorted(result.items(), key=lambda kv: -len(kv[1]))[:10]:
            print(f"  {len(where)}  {op}: {', '.join(sorted(where))}")


if __name__ == "__main__":
    main()
