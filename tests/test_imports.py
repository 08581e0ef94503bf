"""Imports go one way (issue 25): the layering written in teachgrad/__init__.py's docstring, checked on the source.

The import graph is read with `ast` (imports at the top of a module and inside functions alike, relative
ones resolved; not those under `if TYPE_CHECKING:`, which never run), so an import tucked into a function to
dodge a cycle still counts. The one cycle allowed is
the core's; a module that joins it, or a new cycle anywhere, fails here until the layering says why.
"""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "teachgrad"

# The core: one import cycle, and the only one (see the layering in teachgrad/__init__.py).
CORE = {
    "variable", "tensor_methods", "function", "engine",
    "ops", "ops.activation", "ops.arithmetic", "ops.einsum", "ops.indexing", "ops.layers", "ops.layout",
    "ops.linalg", "ops.pointwise", "ops.power", "ops.reduction", "ops.scan", "ops.shape", "ops.statistics",
    "ops.unary", "ops.writes",
    "custom_function", "dirty", "forward_ad", "signatures", "interop", "mixed_inputs", "node_hooks",
    "saved_names", "saved_tensors", "torch_leaves", "views", "wrap_outputs",
    "exec_info", "grad_arguments", "graph_task",
}
# The imports that go up a layer: each inside a function, each run at call time, each said where it stands.
UPWARD = {
    ("interop", ""),   # torch.cat(x) -> tg.cat(x): teachgrad's op of a torch function's name, looked up at call time
    ("check", ""),     # check.twin(example) runs example(teachgrad): it hands the whole namespace over
}


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


def test_the_one_cycle_is_the_core():
    graph = _graph()
    for source, target in UPWARD:
        assert (target, False) in graph[source], f"{source} no longer imports {target or 'teachgrad'} in a function"
    edges = {m: {t for t, _ in imported if (m, t) not in UPWARD} for m, imported in graph.items()}
    cycles = _cyclic(edges)
    assert [set(c) for c in cycles] == [CORE], (
        "the import cycles are not the core alone: " + "; ".join(", ".join(sorted(c)) for c in cycles))


def test_imports_inside_functions_only_go_up():
    """A teachgrad module imported inside a function would hide a cycle: only the UPWARD ones are."""
    lazy = {(m, t) for m, imported in _graph().items() for t, at_top in imported if not at_top}
    assert lazy == UPWARD


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
