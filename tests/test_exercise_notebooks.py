"""Exercises in the notebooks: solutions hidden, checks fair, the student edition runs and says "not yet".

The structure tests read the notebooks: each exercise has the parts `scripts/make_student.py` needs
(`--mark` sets their metadata), its nbgrader form has one place to answer and a graded check, no cell
before a check gives its answer, and every hint names only what the notebook shows.

The executing tests (marked `notebooks`) build the student edition, run each student notebook top to
bottom on a fresh kernel (only cells tagged `raises-exception` may fail), then run the instructor's
solution cells in the same kernel, then run every `check` and `solution` cell once more: each must
give the same verdict as the first time (a learner re-running a check after Run All).
"""
import ast
import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PRESENT = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
# Notebooks whose exercise follows the conventions (docs/notebook-conventions.md); add a new one here.
WITH_EXERCISES = ["00_why_autograd", "01_forward_and_backward", "02_variables_and_functions", "03_graph_and_engine",
                  "04_build_your_own_engine", "05_gradient_accumulation", "06_retain_graph", "07_no_grad_and_detach",
                  "10_single_layer_network", "11_custom_functions", "12_training", "13_higher_order", "16_devices",
                  "17_backprop_by_hand", "18_function_transforms", "19_attention_and_a_small_gpt",
                  "23_data_parallel"]
WITH_EXERCISES = [name for name in WITH_EXERCISES if name in PRESENT] + \
    [name for name in PRESENT if name not in WITH_EXERCISES and '"check"' in (NOTEBOOKS / f"{name}.ipynb").read_text()]

spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _load(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def _verdict(cell):
    """What a check shows: its verdict, or (a graded check) the verdict it printed or the assertion's message."""
    text = [o for o in cell.outputs if o.output_type == "execute_result"]
    failed = [o for o in cell.outputs if o.output_type == "error" and o.ename == "AssertionError"]
    printed = [o for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"]
    return (text[-1].data["text/plain"] if text else failed[-1].evalue if failed
            else printed[-1].text.rstrip("\n") if printed else None)


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_every_notebook_has_a_checked_exercise_with_a_hidden_solution(name):
    cells = _load(name).cells
    checks = [c for c in cells if "check" in _tags(c)]
    solutions = [c for c in cells if "solution" in _tags(c) and c.cell_type == "code"]
    assert checks and solutions, f"{name}: no exercise (a `check` cell and a `solution` cell)"
    for cell in (c for c in cells if "solution" in _tags(c)):
        if cell.source.startswith("## Solution"):
            continue
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{name}: a solution is not collapsed"
        grader = cell.metadata.get("nbgrader", {})
        assert grader.get("solution") is True and grader.get("schema_version") == 3, f"{name}: no nbgrader metadata"
        if cell.cell_type == "markdown":   # nbgrader refuses a markdown solution cell that is not graded
            assert grader.get("grade") is True and grader.get("points") == 0, f"{name}: markdown solution not graded"
    grade_ids = [c.metadata["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c.metadata]
    assert len(grade_ids) == len(set(grade_ids)), f"{name}: nbgrader grade_ids must be unique"
    assert all(g.startswith(name[:2] + "-") for g in grade_ids), f"{name}: grade ids not named for it: {grade_ids}"
    headings = [c for c in cells if c.cell_type == "markdown" and c.source.strip().startswith("## Solution")]
    assert all("solution" in _tags(c) for c in headings), f"{name}: a '## Solution' heading would stay for students"
    for cell in solutions:
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source, name
    for cell in checks:
        assert _verdict(cell) and _verdict(cell).startswith("not yet"), f"{name}: a stored check says {_verdict(cell)!r}"
    for cell in solutions:
        assert _verdict(cell) and _verdict(cell).startswith("✓ correct"), f"{name}: the solution fails its check"
    assert not any("<details>" in c.source for c in cells if c.cell_type == "markdown" and "solution" not in _tags(c)), \
        f"{name}: a solution outside the solution cells"
    for cell in (c for c in cells if "solution" in _tags(c) and c.cell_type == "markdown"):
        assert cell.source.startswith(("## Solution", "<details>")), f"{name}: solution reasoning not folded"


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
            nb.cells.append(cell)
            client.execute_cell(cell, len(nb.cells) - 1)
        rerun = [i for i, c in enumerate(nb.cells) if "check" in _tags(c) or "solution" in _tags(c)]
        first = [_verdict(nb.cells[i]) for i in rerun]
        for index in rerun:                              # and re-runs every check
            nb.cells[index].outputs = []
            client.execute_cell(nb.cells[index], index)
        again = [_verdict(nb.cells[i]) for i in rerun]
    checks = sum("check" in _tags(nb.cells[i]) and "solution" not in _tags(nb.cells[i]) for i in rerun)
    assert all(v and v.startswith("not yet") for v in first[:checks]), first
    assert all(v and v.startswith("✓ correct") for v in first[checks:]), first
    assert again == first, "a check changed its verdict when run again"


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_exercises_are_marked_as_make_student_marks_them(name):
    nb = _load(name)
    assert not make_student.mark_exercises(nb, name[:2]), \
        f"{name}: exercise metadata out of date: run `.venv/bin/python scripts/make_student.py --mark`"


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_nbgrader_form_has_one_place_to_answer_and_a_graded_check(name):
    nb = _load(name)
    exercises = make_student.find_exercises(nb)
    course = make_student.course_notebook(nb, name[:2])
    assert not [c for c in course.cells if "solution" in _tags(c)], f"{name}: solution cells in the course"
    assert "BEGIN SOLUTION" not in json.dumps([c.source for c in course.cells])
    tests = [c for c in course.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(tests) == len(exercises), f"{name}: {len(tests)} graded cells for {len(exercises)} exercises"
    for exercise, cell in zip(exercises, tests):
        grader = cell.metadata["nbgrader"]
        assert grader["points"] > 0 and grader["locked"] and not grader["solution"], grader
        assert grader["grade_id"].startswith(name[:2] + "-"), grader
        assert "assert verdict, verdict.message" in cell.source and "raises-exception" in _tags(cell)
        before = course.cells[:course.cells.index(cell)]
        for answer_name in exercise.names:
            places = [c for c in before if c.cell_type == "code" and make_student.binds(c.source, answer_name)]
            assert len(places) == 1, f"{name}: {answer_name} is defined in {len(places)} cells before its check"
    assert not [c for c in course.cells if c.metadata.get("nbgrader", {}).get("solution")], \
        f"{name}: an nbgrader answer cell besides the stub"
    ids = [c.metadata["nbgrader"]["grade_id"] for c in course.cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", PRESENT)
def test_a_released_notebook_carries_no_widget_state(name):
    # issue 45: the released 19 carried 46 KB of the author's widget state in its metadata
    released = make_student.student_edition(NOTEBOOKS / f"{name}.ipynb")
    assert "widgets" not in released.metadata, f"{name}: widget state in the student edition"
    assert "application/vnd.jupyter.widget-view+json" not in json.dumps(released.cells)


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_a_graded_check_prints_its_verdict_and_returns_nothing(name):
    # a value the test cell returns is read by nbgrader's autograde as partial credit ("cannot be converted to
    # a float" when it is a Verdict): the cell prints the verdict instead
    course = make_student.course_notebook(_load(name), name[:2])
    for cell in (c for c in course.cells if c.metadata.get("nbgrader", {}).get("grade")):
        last = ast.parse(cell.source).body[-1]
        assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and last.value.func.id == "print", \
            f"{name}: the test cell ends with {ast.unparse(last)!r}"


class _AlwaysRight:
    message = "✓ correct: (a check the answer cell wrote)"

    def __bool__(self):
        return True


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_a_check_redefined_in_the_answer_cell_changes_no_grade(name, monkeypatch):
    import teachgrad.exercises as exercises_package
    nb = _load(name)
    course = make_student.course_notebook(nb, name[:2])
    tests = [c for c in course.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for exercise, cell in zip(make_student.find_exercises(nb), tests):
        # the answer cell: no answer (None), and the check replaced wherever the test cell might look for it
        namespace = {answer: None for answer in exercise.names}
        exec(f"{exercise.checker} = lambda *args, **kwargs: always_right()", {"always_right": _AlwaysRight},
             namespace)
        module = importlib.import_module(getattr(exercises_package, exercise.checker).__module__)
        monkeypatch.setattr(exercises_package, exercise.checker, namespace[exercise.checker])
        monkeypatch.setattr(module, exercise.checker, namespace[exercise.checker])
        with pytest.raises(AssertionError, match="^not yet"):
            exec(cell.source, namespace)
        monkeypatch.undo()


def _normal(text):
    """A formula as code, LaTeX or prose writes it, reduced to one spelling: `P.T @ d_out`, `$P^T d_{out}$` and
    `Pᵀ d_out` all read 'pᵀd_out'."""
    for a, b in ((".T", "ᵀ"), ("^T", "ᵀ"), ("math.", ""), ("torch.", ""), ("sqrt", "√"), ("\\sum", "Σ"),
                 ("\\bar", ""), ("−", "-"), ("\\", "")):
        text = text.replace(a, b)
    return re.sub(r"[\s@*·×(){}\[\],$`]", "", text).lower()


def _solution_formulas(nb, exercise):
    """The formulas of an exercise's solution: every arithmetic expression of its code cell, and every
    equation or code span with an operator in its folded reasoning."""
    code = "\n".join(line for line in nb.cells[exercise.solution].source.split("\n")
                     if line.strip() not in (make_student.BEGIN, make_student.END))
    found = [ast.unparse(node) for node in ast.walk(ast.parse(code)) if isinstance(node, ast.BinOp)]
    if exercise.why is not None:
        text = nb.cells[exercise.why].source
        spans = re.findall(r"\$([^$]+)\$", text) + re.findall(r"`([^`]+)`", text)
        for span in spans:
            found += [side for side in span.split("=") if re.search(r"[-+/*@^ᵀ√]|\\sum|\s", side.strip())]
    return [f for f in found if len(_normal(f)) >= 5 and ".shape" not in f]   # the shape to aim at may be said


def _method_hint(check, n_answers):
    return check(*([None] * n_answers), hint=2).message.split("method:", 1)[1]


def test_a_method_hint_giving_the_solutions_formula_is_caught():
    nb = _load("19_attention_and_a_small_gpt")
    exercise = make_student.find_exercises(nb)[1]
    leaked = "dv = Pᵀ d_out and dP = d_out vᵀ; dq = dS k / √d"          # issue 45: the hint of 19 before
    assert [f for f in _solution_formulas(nb, exercise) if _normal(f) in _normal(leaked)]


def _solution_calls(nb, exercise):
    """The library functions and methods the solution calls, by name (`movedim`, `jvp`); not the notebook's own
    helpers (a function a cell of the notebook defines, such as 04's `run`)."""
    code = "\n".join(line for line in nb.cells[exercise.solution].source.split("\n")
                     if line.strip() not in (make_student.BEGIN, make_student.END))
    own = {node.name for cell in nb.cells if cell.cell_type == "code" and "solution" not in _tags(cell)
           for node in ast.walk(ast.parse(_python(cell.source))) if isinstance(node, ast.FunctionDef)}
    called = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
              for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Call) and node.args}
    return called - own - {"", exercise.checker, "range", "len", "zip", "list", "tuple", "dict"}


def _python(source):
    return "\n".join(line for line in source.split("\n") if not line.lstrip().startswith(("%", "!")))


def _calls_written_out(hint, names):
    """The calls in a hint written with their arguments, `movedim(bdim, 0)`, of functions in `names`."""
    return [m.group(0) for m in re.finditer(r"([A-Za-z_]\w*)\([^)\s]", hint) if m.group(1) in names]


def test_a_method_hint_writing_out_the_solutions_calls_is_caught():
    nb = _load("18_function_transforms")
    batch_rule, vjp = make_student.find_exercises(nb)
    before = ("move each batch dim to the front with movedim(bdim, 0)",            # issue 45: 18's hints before
              "for each j, tg.func.jvp(f, (x,), (e_j,)) gives J e_j")
    assert _calls_written_out(before[0], _solution_calls(nb, batch_rule))
    assert _calls_written_out(before[1], _solution_calls(nb, vjp))


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_method_hints_never_give_the_solutions_formulas(name):
    # a method hint asks a question, gives the shape to aim at or names the rule; never the solution's lines
    import teachgrad.exercises as exercises
    nb = _load(name)
    for exercise in make_student.find_exercises(nb):
        text = _method_hint(getattr(exercises, exercise.checker), len(exercise.names))
        given = [f for f in _solution_formulas(nb, exercise) if _normal(f) in _normal(text)]
        given += _calls_written_out(text, _solution_calls(nb, exercise))
        assert not given, f"{name}: {exercise.checker}(..., hint=2) gives the solution's {given}"


def _significant_lines(source):
    lines = [line.strip() for line in source.split("\n")]
    return {line for line in lines if line and not line.startswith("#") and len(line) >= 8}


def _region(source):
    inside, out = False, []
    for line in source.split("\n"):
        if line.strip() == make_student.BEGIN:
            inside = True
        elif line.strip() == make_student.END:
            inside = False
        elif inside:
            out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_no_cell_before_a_check_gives_its_answer(name):
    nb = _load(name)
    for exercise in make_student.find_exercises(nb):
        answer = _significant_lines(_region(nb.cells[exercise.solution].source))
        assert answer, f"{name}: the solution has no solution region"
        for index, cell in enumerate(nb.cells[:exercise.check]):
            given = answer & _significant_lines(cell.source)
            assert len(given) * 2 <= len(answer) or not given, \
                f"{name}: cell {index} already holds the answer of the exercise checked by {exercise.checker}: {given}"


EXERCISES = ROOT / "teachgrad" / "exercises"   # the checks: one module per notebook, nb<notebook's name>.py
LONGEST_MODULE = 250                            # lines: a module of the package stays readable at a sitting


def _checkers():
    """checker name -> (the module of teachgrad/exercises/ that defines it, its two hint texts), read with ast."""
    checkers = {}
    for path in sorted(EXERCISES.glob("*.py")):
        tree = ast.parse(path.read_text())
        for function in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("check_")):
            assert function.name not in checkers, f"{function.name} is defined twice"
            hints = None
            for node in ast.walk(function):
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "hints"
                                                        for t in node.targets):
                    hints = ast.literal_eval(node.value)
            checkers[function.name] = (path.stem, hints)
    return checkers


CHECKERS = _checkers()
HINTS = {name: hints for name, (_, hints) in CHECKERS.items() if hints is not None}


def _calls_not_shown(text, shown):
    """The functions a hint calls (`name(`) that the notebook's text never calls (`d(out)`: notation)."""
    calls = [c for c in re.findall(r"([A-Za-z_][\w.]*)\(", text) if len(c) > 1]
    return [c for c in calls if not re.search(rf"\b{re.escape(c.split('.')[-1])}\(", shown)]


def test_a_hint_calling_what_the_notebook_never_shows_is_caught():
    shown = "def run(node, grad):\n    sent = node(grad)\nrun(node, torch.ones(()))"
    assert _calls_not_shown("pop a ready node and call run(node, grad)", shown) == []
    assert _calls_not_shown("use torch.autograd.backward(root) on it", shown) == ["torch.autograd.backward"]


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_every_hint_names_only_what_the_notebook_shows(name):
    nb = _load(name)
    shown = "\n".join(c.source for c in nb.cells if "solution" not in _tags(c))
    for exercise in make_student.find_exercises(nb):
        assert exercise.checker in HINTS, f"{exercise.checker} has no hints"
        for text in HINTS[exercise.checker]:
            assert not _calls_not_shown(text, shown), \
                f"{name}: a hint of {exercise.checker} names {_calls_not_shown(text, shown)}, never shown in the notebook"


@pytest.mark.parametrize("name", WITH_EXERCISES)
def test_a_notebook_checks_with_its_own_module_only(name):
    """Notebook NN_topic's check cells call only checkers of teachgrad/exercises/nbNN_topic.py."""
    assert (EXERCISES / f"nb{name}.py").exists(), f"{name}: no module teachgrad/exercises/nb{name}.py"
    for exercise in make_student.find_exercises(_load(name)):
        assert exercise.checker in CHECKERS, f"{name}: {exercise.checker} is defined in no module of the package"
        module, _ = CHECKERS[exercise.checker]
        assert module == f"nb{name}", f"{name}: its check calls {exercise.checker}, which lives in {module}.py"


def test_every_notebook_module_serves_a_notebook():
    modules = sorted(path.stem for path in EXERCISES.glob("nb*.py"))
    assert modules and [m for m in modules if m[2:] not in PRESENT] == [], "a module named after no notebook"


def test_no_exercises_module_is_long():
    lines = {path.name: len(path.read_text().splitlines()) for path in EXERCISES.glob("*.py")}
    long = {name: n for name, n in lines.items() if n > LONGEST_MODULE}
    assert lines and long == {}, f"more than {LONGEST_MODULE} lines, split them: {long}"


def test_every_name_a_notebook_imports_from_exercises_is_there():
    import teachgrad.exercises as exercises

    for name in PRESENT:
        cells = [c.source for c in _load(name).cells if c.cell_type == "code" and "teachgrad.exercises" in c.source]
        for source in cells:
            # IPython's magics (%load_ext ...) and shell lines are no Python: read them as comments
            source = "\n".join("#" + line if line.lstrip().startswith(("%", "!")) else line
                               for line in source.splitlines())
            imports = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
                       and node.module == "teachgrad.exercises"]
            assert imports, f"{name}: a cell names teachgrad.exercises but imports nothing from it"
            for node in imports:
                missing = [a.name for a in node.names if not hasattr(exercises, a.name)]
                assert missing == [], f"{name} imports {missing} from teachgrad.exercises"


def _two_exercises():
    code = lambda source, *tags: nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})
    md = lambda source, *tags: nbformat.v4.new_markdown_cell(source, metadata={"tags": list(tags)} if tags else {})
    return nbformat.v4.new_notebook(cells=[
        md("## Exercise 1"), code("def f(x):\n    return None"), code("check_f(f)", "check"),
        md("## Exercise 2"), code("a = None   # your answer"), code("# the check\ncheck_a(a)", "check"),
        md("## Solution"),
        md("<details><summary>Why</summary>\n\n1\n\n</details>", "solution"),
        code("def f_solution(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n\ncheck_f(f_solution)",
             "solution"),
        md("<details><summary>Why</summary>\n\n2\n\n</details>", "solution"),
        code("a_solution = 3\ncheck_a(a_solution)", "solution"),
    ])


def test_marking_two_exercises_is_idempotent_and_names_them_for_the_notebook():
    nb = _two_exercises()
    assert make_student.mark_exercises(nb, "21")
    assert "solution" in _tags(nb.cells[6]), "the ## Solution heading must leave with the solution"
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    assert ids == ["21-solution-why", "21-solution-code", "21-solution-why-2", "21-solution-code-2"]
    assert all(c.metadata["jupyter"]["source_hidden"] for c in nb.cells[7:])
    sources = [c.source for c in nb.cells]
    assert not make_student.mark_exercises(nb, "21"), "a second run changed something"
    assert [c.source for c in nb.cells] == sources


def test_course_form_of_two_exercises():
    nb = _two_exercises()
    make_student.mark_exercises(nb, "21")
    exercises = make_student.find_exercises(nb)
    assert [(e.answer, e.check, e.checker, e.names, e.solution_names) for e in exercises] == \
        [(1, 2, "check_f", ["f"], ["f_solution"]), (4, 5, "check_a", ["a"], ["a_solution"])]
    course = make_student.release(make_student.course_notebook(nb, "21"))
    assert [c.source for c in course.cells] == [
        "## Exercise 1", "def f(x):\n    return None",
        f"{make_student.FRESH_IMPORT}\nverdict = fresh_check(\"check_f\")(f)\nassert verdict, verdict.message\n"
        "print(verdict)",
        "## Exercise 2", "a = None   # your answer",
        f"# the check\n{make_student.FRESH_IMPORT}\nverdict = fresh_check(\"check_a\")(a)\n"
        "assert verdict, verdict.message\nprint(verdict)"]
    graded = [c.metadata["nbgrader"] for c in course.cells if "nbgrader" in c.metadata]
    assert [(g["grade_id"], g["points"], g["locked"]) for g in graded] == [("21-check", 1, True), ("21-check-2", 1, True)]
    assert make_student.right_answer(nb, exercises[0], nb.cells[8].source) == \
        "def f(x):\n    return None\n\ndef f_solution(x):\n    return 2 * x\n\nf = f_solution"


# --- issue 35: what a learner and an instructor found ---

def test_17_student_edition_hands_over_no_linear_rule():
    # its first cell imported linear_backward from teachgrad.exercises: the exercise's rule, ready to call
    student = make_student.student_edition(NOTEBOOKS / "17_backprop_by_hand.ipynb")
    code = "\n".join(c.source for c in student.cells if c.cell_type == "code")
    imported = [line for line in code.split("\n") if "teachgrad.exercises" in line]
    assert imported and not any("linear_backward" in line for line in imported), imported
    assert not re.search(r"\.T\s*@", code), "a transposed product (the rule for dW or dA) in the student edition"


def test_every_solution_heading_says_the_same():
    headings = {name: next(c.source for c in _load(name).cells if "solution" in _tags(c)
                           and c.source.startswith("## Solution")) for name in WITH_EXERCISES}
    assert len(set(headings.values())) == 1, headings


@pytest.mark.parametrize("name", PRESENT)
def test_the_short_errors_load_first_and_every_notebook_but_the_last_says_what_is_next(name):
    cells = _load(name).cells
    first = next(c for c in cells if c.cell_type == "code").source.split("\n")
    code = [line for line in first if line.strip() and not line.lstrip().startswith("#")]
    assert code[0] == "%load_ext teachgrad.short_errors", f"{name}: the first code line is {code[0]!r}"
    if name != PRESENT[-1]:
        prose = [c.source for c in cells if c.cell_type == "markdown" and "solution" not in _tags(c)]
        assert any("Next:" in text for text in prose), f"{name}: no Next: line"


def _printed(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.notebooks
def test_17_every_cell_prints_the_same_when_run_again_after_run_all():
    # section 6 rebound y, W1, b1, W2, b2: section 3's worked step, run again, printed "dlogits (8,3) differs".
    # Run All, then each code cell again from the last to the second, so that each runs after every later one
    from nbclient import NotebookClient

    nb = _load("17_backprop_by_hand")
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}})
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    with client.setup_kernel():
        for index in code:
            client.execute_cell(nb.cells[index], index)
        first = {i: _printed(nb.cells[i]) for i in code}
        for index in reversed(code[1:]):
            nb.cells[index].outputs = []
            client.execute_cell(nb.cells[index], index)
            assert _printed(nb.cells[index]) == first[index], (index, nb.cells[index].source[:200])
