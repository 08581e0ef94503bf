#!/usr/bin/env python
"""The series as an nbgrader course, and its student edition.

    python scripts/make_student.py                  # build/course/ and build/student/ from notebooks/
    python scripts/make_student.py --mark [NB ...]  # mark the exercises in notebooks/ (idempotent)

The notebooks in notebooks/ are written for a learner who grades herself (`make lab`): an exercise is a
stub cell to edit, a check cell tagged `check` that displays a verdict and never raises, and, at the end
of the notebook, the solution in collapsed cells tagged `solution` (docs/notebook-conventions.md).
From them this script writes:

- build/course/: an nbgrader course (`nbgrader_config.py` and `source/teachgrad/*.ipynb`) that an
  instructor uses unchanged: `cd build/course && nbgrader generate_assignment teachgrad`. In its
  notebooks the solution cells are left out, so the stub is the one place to answer, and each check
  cell is an autograded test cell worth 1 point that asserts the checker's verdict, with the verdict
  (what is wrong, and the hint) as the assertion's message:

      from teachgrad.exercises.grading import fresh_check   # the check as teachgrad ships it
      verdict = fresh_check("check_dg")(dg)
      assert verdict, verdict.message
      print(verdict)

  The check is loaded afresh from teachgrad's files (an answer cell that defines `check_dg` again changes
  nothing), and the cell prints the verdict and returns nothing (a value would be read as partial credit).

  It is tagged `raises-exception`, so Run All in JupyterLab goes on past an exercise not yet solved.
- the kernel `teachgrad`, this interpreter, installed for the user (`install_kernel`): the course's
  notebooks select it by name, so that nbgrader, run from a virtualenv of its own whose `python3` kernel
  lacks teachgrad, still runs them on Python with teachgrad and torch (docs/grading.md).
- build/student/: what `nbgrader generate_assignment` releases from that course (outputs cleared,
  solution regions replaced as nbgrader replaces them, test cells locked); a test runs real nbgrader
  and compares.

`--mark` writes into notebooks/ the metadata every exercise needs: the `## Solution` heading tagged
`solution` (so it leaves with the solution), the solution cells collapsed with nbgrader metadata and
grade ids named for the notebook (`17-solution-code`, then `17-solution-code-2` for a second exercise).
It changes metadata only, never a source or an output, and writes a notebook only when something
changed: run it again after adding an exercise.
"""
import ast
import copy
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "teachgrad"
POINTS = 1                     # each exercise's check
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
HEADING = "## Solution"
FRESH_IMPORT = "from teachgrad.exercises.grading import fresh_check   # the check as teachgrad ships it"

# The kernel the course's notebooks (and the student edition) select. Not "python3": nbgrader runs from a
# virtualenv of its own, whose own "python3" kernel (without teachgrad) Jupyter prefers to one installed with
# `--user`. `make student` installs this one (`install_kernel`): this interpreter, with teachgrad and torch.
KERNEL = {"name": "teachgrad", "display_name": "Python 3 (teachgrad)", "language": "python"}

COURSE_CONFIG = f'''# nbgrader's configuration for the teachgrad course (written by scripts/make_student.py)
c = get_config()
c.CourseDirectory.course_id = "{ASSIGNMENT}"
# The notebooks run on the kernel named "{KERNEL['name']}" (their metadata selects it): the interpreter that ran
# scripts/make_student.py, with teachgrad and torch, installed for this user by `make student`.
'''


def tags(cell) -> list:
    return cell.metadata.get("tags", [])


def check_call(source: str) -> tuple[str, list[str]]:
    """The checker's name and the names of its arguments, from a cell whose last line calls it."""
    tree = ast.parse(source)
    call = tree.body[-1].value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ValueError(f"a check cell should end with a call like check_x(answer), not {source!r}")
    return call.func.id, [a.id for a in call.args if isinstance(a, ast.Name)]


def binds(source: str, name: str) -> bool:
    """Whether a cell's code defines `name` (an assignment, def or class at the top level)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return True
    return False


@dataclass
class Exercise:
    """Where one exercise's parts are, as indices into the notebook's cells."""
    check: int            # the check cell, tagged `check`
    answer: int           # the stub the learner edits: the nearest earlier cell defining the check's first argument
    solution: int         # the solution's code cell, tagged `solution`
    why: int | None       # the solution's folded reasoning (markdown, tagged `solution`)
    checker: str
    names: list[str]      # what the check cell passes to the checker
    solution_names: list[str]   # what the solution cell passes to it


def find_exercises(nb) -> list[Exercise]:
    """The exercises of a notebook, in order: the k-th check goes with the k-th solution code cell."""
    cells = nb.cells
    checks = [i for i, c in enumerate(cells) if "check" in tags(c) and "solution" not in tags(c)]
    codes = [i for i, c in enumerate(cells) if "solution" in tags(c) and c.cell_type == "code"]
    whys = [i for i, c in enumerate(cells) if "solution" in tags(c) and c.cell_type == "markdown"
            and not c.source.strip().startswith(HEADING)]
    if len(checks) != len(codes):
        raise ValueError(f"{len(checks)} check cells but {len(codes)} solution code cells")
    exercises = []
    for k, (check, code) in enumerate(zip(checks, codes)):
        checker, names = check_call(cells[check].source)
        solution_checker, solution_names = check_call(cells[code].source)
        if solution_checker != checker or len(solution_names) != len(names):
            raise ValueError(f"exercise {k + 1}: the solution calls {solution_checker}, the check {checker}")
        answer = next((i for i in range(check - 1, -1, -1) if cells[i].cell_type == "code"
                       and not {"check", "solution"} & set(tags(cells[i])) and binds(cells[i].source, names[0])),
                      None)
        if answer is None:
            raise ValueError(f"exercise {k + 1}: no cell before the check defines {names[0]}")
        exercises.append(Exercise(check, answer, code, whys[k] if k < len(whys) else None,
                                  checker, names, solution_names))
    return exercises


def number(path: Path) -> str:
    """A notebook's number, the prefix of its grade ids: '07' for 07_no_grad_and_detach.ipynb."""
    return path.name[:2]


def _solution_metadata(grade_id: str, markdown: bool) -> dict:
    meta = {"grade": markdown, "grade_id": grade_id, "locked": False, "schema_version": 3,
            "solution": True, "task": False}
    if markdown:                   # nbgrader refuses a markdown answer that is not graded (by hand: 0 points)
        meta["points"] = 0
    return meta


def mark_exercises(nb, prefix: str) -> bool:
    """Set the metadata of each exercise's solution cells (see the module's docstring); True if changed."""
    before = copy.deepcopy([c.metadata for c in nb.cells])
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.strip().startswith(HEADING) and "solution" not in tags(cell):
            cell.metadata["tags"] = tags(cell) + ["solution"]
    for k, exercise in enumerate(find_exercises(nb)):
        suffix = "" if k == 0 else f"-{k + 1}"
        parts = [(exercise.solution, f"{prefix}-solution-code{suffix}", False)]
        if exercise.why is not None:
            parts.append((exercise.why, f"{prefix}-solution-why{suffix}", True))
        for index, grade_id, markdown in parts:
            cell = nb.cells[index]
            cell.metadata["nbgrader"] = _solution_metadata(grade_id, markdown)
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
    return [c.metadata for c in nb.cells] != before


def graded_check_source(check_source: str) -> str:
    """The check as nbgrader's test: it prints the verdict and returns nothing (nbgrader would read a value the
    cell returns as partial credit), and fails with the verdict when the answer is wrong. The check comes from
    `fresh_check`, loaded afresh from teachgrad's files, so an answer cell that defines the check again changes
    nothing. Lines above the checker's call (a comment, say) stay as they are."""
    checker, _ = check_call(check_source)
    lines = check_source.rstrip().split("\n")
    last = ast.parse(check_source).body[-1].lineno - 1
    call = lines[last].replace(f"{checker}(", f'fresh_check("{checker}")(', 1)
    return "\n".join(lines[:last] + [FRESH_IMPORT, f"verdict = {call}", *lines[last + 1:],
                                      "assert verdict, verdict.message", "print(verdict)"])


def course_notebook(nb, prefix: str):
    """nbgrader's source notebook: without the solution cells; each check an autograded test cell."""
    nb = copy.deepcopy(nb)
    exercises = find_exercises(nb)
    for k, exercise in enumerate(exercises):
        cell = nb.cells[exercise.check]
        cell.source = graded_check_source(cell.source)
        cell.metadata["tags"] = [t for t in tags(cell) if t != "check"] + ["check", "raises-exception"]
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": f"{prefix}-check" + ("" if k == 0 else f"-{k + 1}"),
                                     "locked": True, "points": POINTS, "schema_version": 3, "solution": False,
                                     "task": False}
    nb.cells = [c for c in nb.cells if "solution" not in tags(c)]
    nb.metadata["kernelspec"] = dict(KERNEL)
    return nb


def install_kernel() -> str:
    """Install the kernel named KERNEL["name"] for this user (in Jupyter's user data folder, as
    `python -m ipykernel install --user` does): this interpreter, which imports teachgrad and torch.
    Returns the folder of its kernel.json."""
    from ipykernel.kernelspec import install
    return install(user=True, kernel_name=KERNEL["name"], display_name=KERNEL["display_name"])


def clear_regions(source: str) -> str:
    """nbgrader's ClearSolutions on one cell's source (code cells)."""
    lines, out, inside = source.split("\n"), [], False
    for line in lines:
        if line.strip() == BEGIN:
            inside = True
            indent = re.match(r"\s*", line).group(0)
            out += [indent + "# YOUR CODE HERE", indent + "raise NotImplementedError()"]
        elif line.strip() == END:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def release(nb):
    """What `nbgrader generate_assignment` gives for a source notebook: outputs cleared (and the widgets'
    saved state with them), solution regions replaced, test cells locked, each graded cell's type noted (its `checksum` is left out:
    nbgrader compares with the one in its own database)."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)   # the widgets' saved state: for a live kernel of the author's, not a release
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if BEGIN in cell.source:
                cell.source = clear_regions(cell.source)
        grader = cell.metadata.get("nbgrader", {})
        if grader.get("grade") or grader.get("solution") or grader.get("locked"):
            grader["cell_type"] = cell.cell_type
        if grader.get("grade") and not grader.get("solution"):
            cell.metadata["deletable"], cell.metadata["editable"] = False, False
        elif grader.get("solution"):
            cell.metadata["deletable"] = False
    return nb


def right_answer(nb, exercise: Exercise, solution_source: str) -> str:
    """The answer cell of a right submission: the stub, then the solution's code under its own names,
    then the learner's names bound to it (for tests of the grading)."""
    body = [line for line in solution_source.split("\n") if line.strip() not in (BEGIN, END)]
    while body and (not body[-1].strip() or body[-1].startswith(exercise.checker + "(")):
        body.pop()
    binding = [f"{mine} = {theirs}" for mine, theirs in zip(exercise.names, exercise.solution_names) if mine != theirs]
    return "\n".join([nb.cells[exercise.answer].source, "", *body, "", *binding])


def write_course(source: Path, course: Path, names: list[str] | None = None) -> list[Path]:
    """build/course: nbgrader_config.py and source/teachgrad/*.ipynb; returns the notebooks written."""
    folder = course / "source" / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(COURSE_CONFIG)
    written = []
    for path in sorted(Path(source).glob("[0-9][0-9]_*.ipynb")):
        if names is not None and path.stem not in names:
            continue
        nb = course_notebook(nbformat.read(path, as_version=4), number(path))
        nbformat.write(nb, folder / path.name)
        written.append(folder / path.name)
    return written


def student_edition(path: Path):
    """One notebook's student edition, as `make student` writes it: the release of its course notebook."""
    return release(course_notebook(nbformat.read(path, as_version=4), number(Path(path))))


def main(source=ROOT / "notebooks", out=ROOT / "build" / "student", course=ROOT / "build" / "course"):
    source, out = Path(source), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for path in write_course(source, Path(course)):
        nbformat.write(release(nbformat.read(path, as_version=4)), out / path.name)
        print(f"{out / path.name}")
    print(f"kernel {KERNEL['name']!r} ({sys.executable}) installed in {install_kernel()}")
    print(f"nbgrader course: {course} (cd there; nbgrader generate_assignment {ASSIGNMENT})")


def mark(paths) -> None:
    paths = [Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if mark_exercises(nb, number(path)):
            nbformat.write(nb, path)
            print(f"{path}: exercises marked")
        else:
            print(f"{path}: unchanged")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mark"]:
        mark(sys.argv[2:])
    else:
        main(*sys.argv[1:])
