"""Fidelity beside the story (issue 25): each torch-fidelity module says in its docstring which tests guard it.

A learner who opens one of these modules (saved tensors, views, forward AD, anomaly mode, ...) reads what
torch does that the module copies, and where that is proven against torch. The story itself (variable.py,
function.py, engine.py, the ops) is guarded by nearly every test, and is not listed here.
"""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "teachgrad"

FIDELITY = [
    "anomaly_mode", "custom_function", "dirty", "exec_info", "forward_ad", "grad_arguments", "grad_layout",
    "grad_mode", "graph", "graph_task", "hooks", "interop", "mixed_inputs", "node_hooks", "once_differentiable",
    "profiling", "saved_names", "saved_tensors", "short_errors", "signatures", "tensor_methods", "torch_leaves",
    "validate_outputs", "variable_checks", "views", "wrap_outputs",
]

NAMED_TEST = re.compile(r"tests/(test_\w+\.py)")


def _docstring(path):
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def test_every_fidelity_module_names_the_tests_that_guard_it():
    unnamed = [name for name in FIDELITY if not NAMED_TEST.search(_docstring(PACKAGE / f"{name}.py"))]
    assert unnamed == [], f"no tests/test_*.py named in the docstring of: {', '.join(unnamed)}"


def test_the_fidelity_list_covers_the_modules_beside_the_story():
    """A new module of the package is either the story, the API, or fidelity: in the last case it joins FIDELITY."""
    story_and_api = {
        "__init__", "variable", "function", "engine",                        # the story (and the ops package)
        "check", "factories", "func", "functional", "functorch",             # the API learners call (and exercises/)
        "optim", "sampling", "viz",
    }
    top_level = {path.stem for path in PACKAGE.glob("*.py")}
    assert top_level - story_and_api == set(FIDELITY)


def test_the_tests_a_docstring_names_exist():
    missing = []
    for path in PACKAGE.rglob("*.py"):
        for test_file in NAMED_TEST.findall(_docstring(path)):
            if not (ROOT / "tests" / test_file).exists():
                missing.append(f"{path.relative_to(ROOT)} names tests/{test_file}")
    assert missing == []
