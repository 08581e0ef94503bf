"""Session-wide: the order pytest-xdist hands files to its workers (slowest first), and the browser test's
seconds per notebook, printed at the end of the run.

Here rather than in tests/browser/conftest.py: under pytest-xdist (`make test` runs the tests on
several workers) only this top-level conftest runs in the main process, which prints the summary.
Each browser test hands its timings over as a user property of its report (see record_report).
"""
from __future__ import annotations

from collections import Counter

_browser: list[dict] = []

# pytest-xdist (`make test`: -n 2 --dist loadfile) gives each worker whole files, by default those with the
# most tests first. Here that is a poor guide to time: test_nbgrader.py has 9 tests and takes minutes, so it
# came last and one worker sat idle for its last four minutes. So the slowest files go first, longest first
# (seconds measured with 2 workers on 2 busy cores: a rough order, not a budget), and the rest keep xdist's
# order; while the two workers share the slow files, the quick ones fill in at the end.
SLOW_FILES = {
    "tests/browser/test_jupyterlab.py": 415,
    "tests/test_book.py": 363,
    "tests/test_nbgrader.py": 318,  # with making build/nbgrader-venv on a fresh clone
    "tests/test_exercise_notebooks.py": 250,
    "tests/test_whole_programs_runner.py": 76,
    "tests/test_viz.py": 35,
    "tests/test_new_ops.py": 30,
    "tests/test_op_db.py": 30,
}


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # xdist keeps the order pytest_collection_modifyitems gives


def pytest_collection_modifyitems(config, items):
    files = [item.nodeid.split("::")[0] for item in items]
    count = Counter(files)
    first = {f: i for i, f in reversed(list(enumerate(files)))}
    key = {item.nodeid: (-SLOW_FILES.get(f, 0), -count[f], first[f]) for item, f in zip(items, files)}
    items.sort(key=lambda item: key[item.nodeid])  # stable: each file's own tests keep their order


def pytest_runtest_logreport(report):
    if report.when == "call":
        _browser.extend(value for name, value in report.user_properties if name == "browser_report")


def pytest_terminal_summary(terminalreporter):
    if not _browser:
        return
    tr = terminalreporter
    tr.section("browser: seconds per notebook (open page / idle kernel / Run All / checks / total)")
    for r in _browser:
        t = r["timings"]
        cols = " ".join(f"{t.get(k, float('nan')):6.1f}" for k in ("open", "kernel", "run", "check", "total"))
        tr.write_line(f"{cols}  {r['notebook']}{'' if r['ok'] else '  FAILED'}")
        for note in r["notes"]:
            tr.write_line(f"        {note}")
    wall = max(r["ended"] for r in _browser) - min(r["lab_started"] for r in _browser)
    tr.write_line(f"{wall:6.1f}  wall, from starting JupyterLab to the last notebook ({len(_browser)} notebooks; "
                  "pages run side by side, so totals overlap)")
