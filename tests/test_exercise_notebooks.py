"""Exercises in the notebooks: solutions hidden, checks fair, the student edition runs and says "not yet".

The executing tests (marked `notebooks`) build the student edition, run each student notebook top to
bottom on a fresh kernel (only cells tagged `raises-exception` may fail), then run the instructor's
solution cells in the same kernel, then run every `check` and `solution` cell once more: each must
give the same verdict as the first time (a learner re-running a check after Run All).
"""
import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PRESENT = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
WITH_EXERCISES = [name for name in PRESENT if "check" in (NOTEBOOKS / f"{name}.ipynb").read_text()]

spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _load(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def _verdict(cell):
    text = [o for o in cell.outputs if o.output_type == "execute_result"]
    return text[-1].data["text/plain"] if text else None


@pytest.mark.parametrize("name", PRESENT)
def test_every_notebook_has_a_checked_exercise_with_a_hidden_solution(name):
    cells = _load(name).cells
    checks = [c for c in cells if "check" in _tags(c)]
    solutions = [c for c in cells if "solution" in _tags(c) and c.cell_type == "code"]
    assert checks and solutions, f"{name}: no exercise (a `check` cell and a `solution` cell)"
    for cell in (c for c in cells if "solution" in _tags(c)):
        if cell.source.startswith("## Solution"):
            continue
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{name}: a solution is not collapsed"
        assert cell.metadata.get("nbgrader", {}).get("solution") is True, f"{name}: no nbgrader metadata"
    for cell in solutions:
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source, name
    for cell in checks:
        assert _verdict(cell) and _verdict(cell).startswith("not yet"), f"{name}: a stored check says {_verdict(cell)!r}"
    for cell in solutions:
        assert _verdict(cell) and _verdict(cell).startswith("✓ correct"), f"{name}: the solution fails its check"
    assert not any("<details>" in c.source for c in cells if c.cell_type == "markdown"), f"{name}: a visible solution"


@pytest.mark.parametrize("name", PRESENT)
def test_stored_errors_are_short(name):
    for cell in _load(name).cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(output.traceback))
                assert len(output.traceback) <= 3, f"{name}: {len(output.traceback)} traceback entries"
                assert "teachgrad/" not in text and "torch/" not in text, f"{name}: a library frame in a traceback"
                assert "Cell In[" in text, f"{name}: the learner's line is not shown"


def test_clear_regions_as_nbgrader():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n\ncheck(f)"
    assert make_student.clear_regions(source) == \
        "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n\ncheck(f)"


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    make_student.main(NOTEBOOKS, out)
    return out


@pytest.mark.notebooks
@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_student_edition_runs_and_checks_are_stable(name, student_dir):
    from nbclient import NotebookClient

    nb = nbformat.read(student_dir / f"{name}.ipynb", as_version=4)
    assert not [c for c in nb.cells if "solution" in _tags(c)], "solution cells in the student edition"
    assert "BEGIN SOLUTION" not in json.dumps([c.source for c in nb.cells])
    solutions = [c for c in _load(name).cells if "solution" in _tags(c) and c.cell_type == "code"]
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(student_dir)}})
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):          # Run All; an untagged error fails here
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
        for cell in solutions:                           # then the learner opens and runs the solutions
            cell.outputs = []
            client.execute_cell(cell, len(nb.cells))
        checks = [c for c in nb.cells if "check" in _tags(c)]
        first = [_verdict(c) for c in checks + solutions]
        for cell in checks + solutions:                  # and re-runs every check
            cell.outputs = []
            client.execute_cell(cell, len(nb.cells))
        again = [_verdict(c) for c in checks + solutions]
    assert all(v and v.startswith("not yet") for v in first[:len(checks)]), first
    assert all(v and v.startswith("✓ correct") for v in first[len(checks):]), first
    assert again == first, "a check changed its verdict when run again"
