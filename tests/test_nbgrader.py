"""The series graded by real nbgrader, as an instructor would: full marks for right answers, fewer for wrong.

nbgrader (0.9.x) runs from its own virtual environment, build/nbgrader-venv (git-ignored; made from
PyPI on the first run and kept, so later runs start at once): its pins never meet JupyterLab's in
.venv. The notebooks run on the kernel `teachgrad`, this interpreter (.venv, with teachgrad and torch),
which scripts/make_student.py installs for the user (here a temporary JUPYTER_DATA_DIR).

For a few notebooks: `scripts/make_student.py` writes the course; `nbgrader generate_assignment`
releases it (and what it releases is `make student`'s student edition); a right submission (the
stub completed with the instructor's solution) and a wrong one (the stub as released) are autograded
and validated. The kernel is the one `make student` installs, named `teachgrad` (not `python3`, which
nbgrader's own virtualenv provides without teachgrad), and the course's notebooks select it.
Set TEACHGRAD_NBGRADER_ALL=1 to grade every notebook of the series (slow).
"""
import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NBGRADER_PIN = "nbgrader==0.9.6"
VENV = ROOT / "build" / "nbgrader-venv"
GRADED = ["00_why_autograd", "15_memory", "16_devices"]
if os.environ.get("TEACHGRAD_NBGRADER_ALL"):
    GRADED = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))

spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_student)

pytestmark = pytest.mark.notebooks


def nbgrader_venv() -> Path:
    """build/nbgrader-venv with nbgrader installed; made once, then reused (its stamp names the pin)."""
    stamp = VENV / ".installed"
    if not (stamp.exists() and stamp.read_text() == NBGRADER_PIN):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
        result = subprocess.run([str(VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                                 NBGRADER_PIN], capture_output=True, text=True)
        assert result.returncode == 0, f"could not install {NBGRADER_PIN} into {VENV}:\n{result.stderr[-3000:]}"
        stamp.write_text(NBGRADER_PIN)
    return VENV


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Run nbgrader on a course of GRADED; return the folders, scores and validate's reports."""
    venv = nbgrader_venv()
    # the trap an instructor meets: nbgrader's virtualenv has a "python3" kernel of its own, without teachgrad,
    # which Jupyter prefers to a kernel of the same name installed with --user
    assert (venv / "share" / "jupyter" / "kernels" / "python3" / "kernel.json").exists()
    tmp = tmp_path_factory.mktemp("nbgrader")
    # As an instructor: `make student` (scripts/make_student.py, run by .venv's python) installs the kernel for
    # this user (Jupyter's user data folder: JUPYTER_DATA_DIR here) and writes the course; nbgrader runs with
    # its virtualenv's bin on PATH (as docs/grading.md says), Jupyter's search path as it comes.
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_PATH", "JUPYTER_PREFER_ENV_PATH")}
    env.update({"JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_DATA_DIR": str(tmp / "data"),
                "OMP_NUM_THREADS": "1", "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"})
    course, student, chosen = tmp / "course", tmp / "student", tmp / "notebooks"
    chosen.mkdir()
    for name in GRADED:                    # the series' notebooks/, cut down to GRADED to keep the test short
        shutil.copy(NOTEBOOKS / f"{name}.ipynb", chosen)
    made = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_student.py"), str(chosen), str(student),
                           str(course)], env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (tmp / "data" / "kernels" / make_student.KERNEL["name"] / "kernel.json").exists(), made.stdout

    def nbgrader(*args):
        result = subprocess.run([str(venv / "bin" / "nbgrader"), *args], cwd=course, env=env,
                                capture_output=True, text=True, timeout=1200)
        return result

    done = nbgrader("generate_assignment", make_student.ASSIGNMENT, "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    release = course / "release" / make_student.ASSIGNMENT
    for who in ("right", "wrong", "redefined"):
        folder = course / "submitted" / who / make_student.ASSIGNMENT
        folder.mkdir(parents=True)
        for name in GRADED:
            nb = nbformat.read(release / f"{name}.ipynb", as_version=4)
            if who == "right":
                source = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
                for exercise in make_student.find_exercises(source):
                    answer = source.cells[exercise.answer]
                    cell = next(c for c in nb.cells if c.source == answer.source)
                    cell.source = make_student.right_answer(source, exercise, source.cells[exercise.solution].source)
            if who == "redefined":             # the stub, and the check defined again to say "correct"
                source = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
                for exercise in make_student.find_exercises(source):
                    cell = next(c for c in nb.cells if c.source == source.cells[exercise.answer].source)
                    cell.source += (f"\n\nclass Right:\n    message = 'correct'\n\n    def __bool__(self):\n"
                                    f"        return True\n\n\ndef {exercise.checker}(*args, **kwargs):\n"
                                    "    return Right()\n")
            nbformat.write(nb, folder / f"{name}.ipynb")
    # `nbgrader validate` (what a student runs before submitting) only reads its submitted notebook and runs
    # it in a kernel of its own, so the six run side by side with each other and with autograde instead of
    # one after another (about 15 s each, half of this module's time); each still gets its own output.
    submissions = [(who, name) for who in ("right", "wrong") for name in GRADED]   # (validate: not "redefined")
    with ThreadPoolExecutor(max_workers=min(len(submissions), max(2, os.cpu_count() or 1))) as pool:
        validating = {(who, name): pool.submit(nbgrader, "validate", str(
            course / "submitted" / who / make_student.ASSIGNMENT / f"{name}.ipynb")) for who, name in submissions}
        done = nbgrader("autograde", make_student.ASSIGNMENT, "--create", "--force")
        assert done.returncode == 0, done.stdout + done.stderr
        autograde_log = done.stdout + done.stderr
        report = subprocess.run([str(venv / "bin" / "python"), "-c", SCORES], cwd=course, env=env,
                                capture_output=True, text=True, check=True)
        scores = json.loads(report.stdout)
        validated = {key: future.result().stdout + future.result().stderr for key, future in validating.items()}
    print(json.dumps(scores, indent=1))
    return course, scores, validated, student, autograde_log


SCORES = """
import json
from nbgrader.api import Gradebook
scores = {}
with Gradebook("sqlite:///gradebook.db") as gb:
    for submission in gb.assignment_submissions("teachgrad"):
        for nb in submission.notebooks:
            scores[submission.student_id + "/" + nb.name] = [nb.score, nb.max_score]
print(json.dumps(scores))
"""


@pytest.mark.parametrize("name", GRADED)
def test_right_answers_get_full_marks_and_wrong_ones_fewer(graded, name):
    _, scores, _, _, _ = graded
    right, most = scores[f"right/{name}"]
    wrong, _ = scores[f"wrong/{name}"]
    exercises = len(make_student.find_exercises(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)))
    assert most == exercises * make_student.POINTS > 0, f"{name}: maximum score {most}"
    assert right == most, f"{name}: a right submission scored {right}/{most}"
    assert wrong < most, f"{name}: a wrong submission scored {wrong}/{most}"


@pytest.mark.parametrize("name", GRADED)
def test_a_check_defined_again_in_the_answer_cell_scores_nothing(graded, name):
    _, scores, _, _, _ = graded
    assert scores[f"redefined/{name}"][0] == 0, f"{name}: an answer that redefines the check scored {scores}"


def test_autograde_warns_of_nothing(graded):
    # a test cell whose last line is the verdict gave "cannot be converted to a float" on every right answer
    *_, log = graded
    assert "cannot be converted to a float" not in log and "[WARNING]" not in log, log[-3000:]


@pytest.mark.parametrize("name", GRADED)
def test_validate_passes_right_answers_and_fails_wrong_ones(graded, name):
    _, _, validated, _, _ = graded
    assert "Success! Your notebook passes all the tests." in validated["right", name], validated["right", name]
    assert "VALIDATION FAILED ON" in validated["wrong", name], validated["wrong", name]
    assert "not yet:" in validated["wrong", name], "the failure does not show the checker's verdict and hint"


@pytest.mark.parametrize("name", GRADED)
def test_make_student_gives_what_nbgrader_releases(graded, name, tmp_path):
    course, _, _, _, _ = graded
    theirs = nbformat.read(course / "release" / make_student.ASSIGNMENT / f"{name}.ipynb", as_version=4)
    ours = make_student.release(nbformat.read(course / "source" / make_student.ASSIGNMENT / f"{name}.ipynb",
                                              as_version=4))

    def seen(nb):
        out = []
        for cell in nb.cells:
            meta = {k: v for k, v in cell.metadata.items() if k != "nbgrader"}
            grader = {k: v for k, v in cell.metadata.get("nbgrader", {}).items() if k != "checksum"}
            out.append((cell.cell_type, cell.source, json.dumps(meta, sort_keys=True), json.dumps(grader, sort_keys=True),
                        json.dumps(cell.get("outputs", [])), cell.get("execution_count")))
        return out

    assert seen(ours) == seen(theirs)
    places = [c for c in theirs.cells if "YOUR CODE HERE" in c.source or c.metadata.get("nbgrader", {}).get("solution")]
    assert not places, f"{name}: a second place to answer in the release"
    assert not [c for c in theirs.cells if "solution" in _tags(c)], f"{name}: solution cells released"


@pytest.mark.parametrize("name", GRADED)
def test_the_course_and_the_student_edition_select_the_teachgrad_kernel(graded, name):
    course, _, _, student, _ = graded
    for path in (course / "source" / make_student.ASSIGNMENT / f"{name}.ipynb",
                 course / "release" / make_student.ASSIGNMENT / f"{name}.ipynb", student / f"{name}.ipynb"):
        kernelspec = nbformat.read(path, as_version=4).metadata.get("kernelspec", {})
        assert kernelspec.get("name") == "teachgrad", f"{path}: kernel {kernelspec.get('name')!r}"


# --- docs/grading.md, step by step: release, fetch, submit, collect, autograde (one notebook, then all), feedback ---

EXCHANGED = ["00_why_autograd", "05_gradient_accumulation"]   # two short notebooks: one assignment of two


@pytest.fixture(scope="module")
def exchanged(tmp_path_factory):
    """The walk-through of docs/grading.md, run as written: a course of two notebooks through nbgrader's
    exchange (a folder here), two students faked on one machine with --student, feedback fetched back."""
    venv = nbgrader_venv()
    tmp = tmp_path_factory.mktemp("exchange")
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_PATH", "JUPYTER_PREFER_ENV_PATH")}
    env.update({"JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_DATA_DIR": str(tmp / "data"),
                "OMP_NUM_THREADS": "1", "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"})
    chosen, course, exchange = tmp / "notebooks", tmp / "course", tmp / "exchange"
    chosen.mkdir()
    exchange.mkdir()
    for name in EXCHANGED:
        shutil.copy(NOTEBOOKS / f"{name}.ipynb", chosen)
    made = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_student.py"), str(chosen),
                           str(tmp / "student"), str(course)], env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    ran = []

    def nbgrader(*args, cwd=course):
        result = subprocess.run(["nbgrader", *args, f"--Exchange.root={exchange}"], cwd=cwd, env=env,
                                capture_output=True, text=True, timeout=1200)
        ran.append((args, result.returncode, result.stdout + result.stderr))
        assert result.returncode == 0, f"nbgrader {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result.stdout + result.stderr

    A = make_student.ASSIGNMENT
    nbgrader("generate_assignment", A, "--force")
    nbgrader("release_assignment", A, "--force")
    for student in ("alice", "bob"):             # each in a home of their own
        home = tmp / "home" / student
        home.mkdir(parents=True)
        nbgrader("fetch_assignment", A, f"--course={A}", cwd=home)
        if student == "alice":                   # alice answers notebook 05's exercise; bob hands in the stubs
            path = home / A / "05_gradient_accumulation.ipynb"
            nb = nbformat.read(path, as_version=4)
            source = nbformat.read(NOTEBOOKS / "05_gradient_accumulation.ipynb", as_version=4)
            exercise, = make_student.find_exercises(source)
            cell = next(c for c in nb.cells if c.source == source.cells[exercise.answer].source)
            cell.source = make_student.right_answer(source, exercise, source.cells[exercise.solution].source)
            nbformat.write(nb, path)
        nbgrader("submit", A, f"--course={A}", f"--student={student}", cwd=home)
    nbgrader("collect", A)
    nbgrader("autograde", A, "--notebook=05_gradient_accumulation", "--create")
    one = sorted(str(p.relative_to(course / "autograded")) for p in (course / "autograded").rglob("*.ipynb"))
    nbgrader("autograde", A, "--force")
    scores = _scores(venv, course, env)
    nbgrader("export")                           # grades.csv
    nbgrader("generate_feedback", A, "--force")
    nbgrader("release_feedback", A)
    nbgrader("fetch_feedback", A, f"--course={A}", "--student=alice", cwd=tmp / "home" / "alice")
    return {"course": course, "tmp": tmp, "one": one, "scores": scores, "ran": ran}


def _scores(venv, course, env):
    report = subprocess.run([str(venv / "bin" / "python"), "-c", SCORES], cwd=course, env=env,
                            capture_output=True, text=True, check=True)
    return json.loads(report.stdout)


def test_the_exchange_walk_through_grades_each_faked_student_as_themselves(exchanged):
    scores = exchanged["scores"]
    assert sorted(scores) == sorted(f"{who}/{name}" for who in ("alice", "bob") for name in EXCHANGED), scores
    assert scores["alice/05_gradient_accumulation"] == [1.0, 1.0], scores
    assert scores["bob/05_gradient_accumulation"] == [0.0, 1.0], scores
    assert all(scores[f"{who}/00_why_autograd"] == [0.0, 1.0] for who in ("alice", "bob")), scores
    submitted = sorted(p.name for p in (exchanged["course"] / "submitted").iterdir())
    assert submitted == ["alice", "bob"], f"the submissions came in as {submitted}, not as the students"
    with open(exchanged["course"] / "grades.csv") as grades:
        rows = {(row["student_id"], row["score"]) for row in csv.DictReader(grades)}
    assert rows == {("alice", "1.0"), ("bob", "0.0")}, rows


def test_autograde_of_one_notebook_grades_only_that_notebook(exchanged):
    assert exchanged["one"] == [f"{who}/{make_student.ASSIGNMENT}/05_gradient_accumulation.ipynb"
                                for who in ("alice", "bob")], exchanged["one"]


def test_feedback_reaches_the_student(exchanged):
    feedback = list((exchanged["tmp"] / "home" / "alice" / make_student.ASSIGNMENT / "feedback").rglob("*.html"))
    assert sorted({p.stem for p in feedback}) == EXCHANGED, feedback
    assert "not yet" in next(p for p in feedback if p.stem == "00_why_autograd").read_text()


def test_the_maximum_score_docs_grading_states_is_the_series(exchanged):
    total = sum(len(make_student.find_exercises(nbformat.read(p, as_version=4))) * make_student.POINTS
                for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
    docs = (ROOT / "docs" / "grading.md").read_text()
    assert f"maximum {total} points" in docs, f"docs/grading.md should say the series is worth {total} points"
    for args, _, _ in exchanged["ran"]:                 # every command the walk-through ran is in the docs
        assert f"nbgrader {args[0]}" in docs, f"docs/grading.md never shows nbgrader {args[0]}"
