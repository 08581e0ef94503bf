"""Imports go one way (issues 33, 42): the layers of docs/architecture.md, checked on the source.

The import graph is read with `ast`: imports at the top of a module, inside functions, and under
`if TYPE_CHECKING:` (names for hints only, but a reader, and a type checker, still follow them), relative ones
resolved; so an import tucked into a function, or kept for a hint, to dodge a circle still counts. Between
folders the direction is a table, `ALLOWED` below: which layer may import which; everything else is an import
up the layers. The story's own circle (a Variable's methods run ops, `apply` makes Variables, `backward` runs
the engine) is not an import circle either: teachgrad/core/variable.py hands its class to the layers below it once
(teachgrad/rules/variable_class.py), as torch's C++ core is handed the Python Tensor class.
"""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "teachgrad"

def _modules():
    """'ops.shape' -> its syntax tree, for every module of the package ('' is teachgrad itself)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = (ast.parse(path.read_text()), path.name == "__init__.py")
    return modules


def _imports(name, tree, is_package, modules):
    """(module imported, whether the import is at the module's top level), for each teachgrad module it imports.

    Imports under `if TYPE_CHECKING:` count too: never run, but a hint's import is still an arrow a reader follows."""
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names if alias.name.split(".")[0] == "teachgrad"]
            targets = [t.partition(".")[2] for t in targets]
        elif isinstance(node, ast.ImportFrom):
            if node.level:   # relative: from the package this module is in, `level - 1` packages up
                package = name.split(".") if is_package else name.split(".")[:-1]
                base = package[:len(package) - node.level + 1]
                source = ".".join([p for p in base if p] + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "teachgrad":
                source = node.module.partition(".")[2]
            else:
                continue
            # `from . import views` imports a module; `from .views import replay` imports from one
            targets = [f"{source}.{a.name}".lstrip(".") if f"{source}.{a.name}".lstrip(".") in modules else source
                       for a in node.names]
        else:
            continue
        found += [(t, id(node) in top) for t in targets if t in modules and t != name]
    return found


def _graph():
    modules = _modules()
    return {name: _imports(name, tree, is_package, modules) for name, (tree, is_package) in modules.items()}


def _cyclic(edges):
    """The modules that lie on an import cycle, as one set per strongly connected component."""
    reach = {}
    for start in edges:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    components = {frozenset(m for m in reach[a] if a in reach[m]) for a in edges if a in reach[a]}
    return sorted(components, key=len, reverse=True)


# The layers, top to bottom, and which layers each may import (docs/architecture.md draws the same table). A layer is
# a folder of teachgrad/ or a module at its top; core/variable.py is a layer of its own, above the rest of core/
# (its methods run the ops, which are made of core/function.py). Imports inside one folder are not in the table:
# test_no_import_circle keeps those one way.
BELOW_PUBLIC = {"features", "core.variable", "api", "ops", "core", "rules"}
PUBLIC = {"teachgrad", "autograd", "fft", "func", "functorch", "linalg", "nn", "optim", "special", "utils",
          "tensor_types", "compiler"}
ALLOWED = {
    # teaching tools, apart: they use the public packages (and show the inside)
    "exercises": PUBLIC | BELOW_PUBLIC, "check": PUBLIC | BELOW_PUBLIC, "viz": PUBLIC | BELOW_PUBLIC,
    "short_errors": PUBLIC | BELOW_PUBLIC,
    # the public packages, at torch's paths
    "teachgrad": PUBLIC - {"teachgrad", "functorch"} | BELOW_PUBLIC,
    "functorch": {"func", "compiler"},
    "compiler": {"func"} | BELOW_PUBLIC,
    "autograd": {"func"} | BELOW_PUBLIC,
    "func": BELOW_PUBLIC,
    "fft": BELOW_PUBLIC, "linalg": BELOW_PUBLIC, "nn": BELOW_PUBLIC, "optim": BELOW_PUBLIC, "special": BELOW_PUBLIC,
    "utils": BELOW_PUBLIC, "tensor_types": BELOW_PUBLIC,
    # what the user switches on
    "features": {"core.variable", "api", "ops", "core", "rules"},
    # the story's first file, Variable: its methods, the ops, the engine
    "core.variable": {"api", "ops", "core", "rules"},
    # the API surface, the ops, the story's apply/node/engine, torch's rules
    "api": {"ops", "core", "rules"},
    "ops": {"core", "rules"},
    "core": {"rules"},
    "rules": set(),
}


def _layer(module):
    """The layer a module ('ops.shape', 'core.variable', '' for teachgrad/__init__.py) belongs to."""
    if module == "core.variable" or not module:
        return module or "teachgrad"
    return module.split(".")[0]


def test_the_layers_table_is_one_way_and_names_every_layer():
    layers = {_layer(m) for m in _modules()}
    assert layers == set(ALLOWED), f"layers not in ALLOWED: {layers - set(ALLOWED)}; gone: {set(ALLOWED) - layers}"
    assert not _cyclic({layer: set(allowed) for layer, allowed in ALLOWED.items()}), "ALLOWED has a circle"


def test_imports_between_folders_go_the_way_the_table_says():
    """Each import from one layer into another is one ALLOWED names (hint-only imports under TYPE_CHECKING too)."""
    wrong = sorted(f"teachgrad/{m or '__init__'} imports teachgrad/{t} ({_layer(m)} -> {_layer(t)})"
                   for m, imported in _graph().items() for t, _ in imported
                   if _layer(m) != _layer(t) and _layer(t) not in ALLOWED[_layer(m)])
    assert not wrong, "imports up the layers:\n" + "\n".join(wrong)


# Below Variable: every module that teachgrad/core/variable.py stands on finds the class in rules/variable_class.py.
BELOW_VARIABLE = ("core.function", "core.node", "core.engine", "rules.", "ops.", "api.")
MAX_TOP_LEVEL = 15


def test_no_import_circle():
    edges = {m: {t for t, _ in imported} for m, imported in _graph().items()}
    cycles = _cyclic(edges)
    assert not cycles, "import circles: " + "; ".join(", ".join(sorted(c)) for c in cycles)


def test_at_most_fifteen_modules_at_the_top():
    top = sorted(name for name, (_, is_package) in _modules().items() if "." not in name and name and not is_package)
    assert len(top) <= MAX_TOP_LEVEL, top


def test_nothing_below_variable_imports_it():
    graph = _graph()
    below = [m for m in graph if m.startswith(BELOW_VARIABLE) or m in BELOW_VARIABLE]
    assert "core.function" in below and "rules.views" in below
    offenders = sorted(m for m in below if any(t == "core.variable" for t, _ in graph[m]))
    assert not offenders, offenders


def test_no_module_reaches_variable_through_another():
    """`function.Variable`, read from a module that only imported it, hid the dependency: the class is read from
    teachgrad/core/variable.py itself, from rules/variable_class.py (handed over), or from the namespace."""
    allowed = {"variable", "variable_class", "teachgrad", "tg", "_Variable"}
    for name, (tree, _) in _modules().items():
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("teachgrad")):
                modules |= {a.asname or a.name for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("Variable", "TorchLeaf"):
                base = node.value
                if isinstance(base, ast.Name) and base.id in modules:
                    assert base.id in allowed, f"teachgrad/{name}: {base.id}.{node.attr} (line {node.lineno})"


def test_imports_stand_at_the_top_of_each_module():
    """No import block at the bottom of a file: every module-level import comes before the first def or class."""
    for name, (tree, _) in _modules().items():
        first = next((n.lineno for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))), None)
        if first is None:
            continue
        late = [n.lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno > first]
        assert not late, f"teachgrad/{name or '__init__'}: imports at lines {late}, after the first definition"


def test_no_module_sets_names_in_another():
    """No statement run at import assigns into another teachgrad module (or into a class imported from one)."""
    for name, (tree, _) in _modules().items():
        imported = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("teachgrad")):
                imported |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                imported |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("teachgrad")}
        statements = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        for statement in statements:
            for node in ast.walk(statement):
                targets = []   # what is written into: `x.name = ...`, `x[k] = ...`, `setattr(x, ...)`
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                    targets = [t.value for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))]
                elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("setattr", "delattr"):
                    targets = node.args[:1]
                for root in targets:
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    assert not (isinstance(root, ast.Name) and root.id in imported), (
                        f"teachgrad/{name or '__init__'}: line {node.lineno} sets a name in {root.id}")
