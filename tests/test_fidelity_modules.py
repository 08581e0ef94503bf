"""Fidelity beside the story (issues 25, 33): each torch-fidelity module says in its docstring which tests guard it.

A learner who opens one of these modules (saved tensors, views, forward AD, anomaly mode, ...) reads what
torch does that the module copies, and where that is proven against torch. The story itself (core/: variable.py,
function.py, node.py, engine.py; the ops) is guarded by nearly every test, and is not listed here.
"""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "teachgrad"

# torch's rules beside apply and the engine, and the features a user switches on: every module of these folders
FIDELITY_FOLDERS = ("rules", "features")
# ... and these of the API and teaching tools, which copy torch's behaviour in detail
FIDELITY_ELSEWHERE = ["api/interop.py", "api/tensor_methods.py", "api/torch_signatures.py", "short_errors.py"]
FIDELITY = sorted([str(p.relative_to(PACKAGE)) for folder in FIDELITY_FOLDERS for p in (PACKAGE / folder).glob("*.py")
                   if p.name != "__init__.py"] + FIDELITY_ELSEWHERE)

NAMED_TEST = re.compile(r"tests/(test_\w+\.py)")


def _docstring(path):
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def test_every_fidelity_module_names_the_tests_that_guard_it():
    assert len(FIDELITY) > 25
    unnamed = [name for name in FIDELITY if not NAMED_TEST.search(_docstring(PACKAGE / name))]
    assert unnamed == [], f"no tests/test_*.py named in the docstring of: {', '.join(unnamed)}"


def test_the_layers_are_the_folders():
    """A module says by where it sits which layer it is: the story in core/, torch's rules in rules/, switched-on
    features in features/, ops in ops/, the API in api/ and at torch's paths; the top holds only public modules."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {"core", "rules", "features", "ops", "api", "autograd", "nn", "utils", "exercises"} <= folders | {"exercises"}
    assert {p.stem for p in (PACKAGE / "core").glob("*.py")} == {"__init__", "variable", "function", "node", "engine"}
    top_level = {path.stem for path in PACKAGE.glob("*.py")}
    assert top_level <= {"__init__", "check", "exercises", "fft", "func", "functorch", "linalg", "optim", "short_errors",
                         "special", "tensor_types", "viz"}


def test_the_tests_a_docstring_names_exist():
    missing = []
    for path in PACKAGE.rglob("*.py"):
        for test_file in NAMED_TEST.findall(_docstring(path)):
            if not (ROOT / "tests" / test_file).exists():
                missing.append(f"{path.relative_to(ROOT)} names tests/{test_file}")
    assert missing == []
