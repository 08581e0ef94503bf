"""Session-wide reporting: the browser test's seconds per notebook, printed at the end of the run.

Here rather than in tests/browser/conftest.py: under pytest-xdist (`make test` runs the tests on
several workers) only this top-level conftest runs in the main process, which prints the summary.
Each browser test hands its timings over as a user property of its report (see record_report).
"""
from __future__ import annotations

_browser: list[dict] = []


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
