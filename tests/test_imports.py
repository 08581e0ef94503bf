"""Imports go one way (issue 33): the layers of docs/architecture.md, checked on the source.

The import graph is read with `ast` (imports at the top of a module and inside functions alike, relative
ones resolved; not those under `if TYPE_CHECKING:`, which never run), so an import tucked into a function to
dodge a circle still counts. The story's own circle (a Variable's methods run ops, `apply` makes Variables,
`backward` runs the engine) is not an import circle either: teachgrad/core/variable.py hands its class to the
layers below it once (teachgrad/rules/variable_class.py), as torch's C++ core is handed the Python Tensor class.
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

    Imports under `if TYPE_CHECKING:` are left out: they are never run (names for type hints only)."""
    top = {id(node) for node in tree.body}
    hints_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
                  and getattr(block.test, "id", None) == "TYPE_CHECKING" for stmt in block.body for node in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in hints_only:
            continue
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


# Below Variable: every module that teachgrad/core/variable.py stands on finds the class in rules/variable_class.py.
BELOW_VARIABLE = ("core.function", "core.node", "core.engine", "rules.", "ops.", "api.tensor_methods",
                  "api.torch_signatures", "api.interop", "features.anomaly_mode", "features.saved_tensor_hooks")
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
