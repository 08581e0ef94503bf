"""Browser smoke test: every notebook, opened in JupyterLab in headless Chromium, runs cleanly.

For each notebook: Run All from the Run menu, then every code cell has an execution number, no
cell shows error output unless tagged `raises-exception`, at least as many graphs (SVG `<img>`)
and plots (PNG `<img>`) are visible as the committed outputs hold, and the browser console has
no errors.  `make test-browser` runs only this; `make test` includes it.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

sys.path.insert(0, str(Path(__file__).parent))
import lab_harness  # noqa: E402

pytestmark = pytest.mark.browser

NOTEBOOK_DIR = lab_harness.notebook_dir()
_NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
_PARAMS = [pytest.param(p, id=p.name) for p in _NOTEBOOKS] or [
    pytest.param(None, id="no-notebooks",
                 marks=pytest.mark.skip(reason=f"no notebooks (*.ipynb) in {NOTEBOOK_DIR}"))]


def _explain(report: lab_harness.Report) -> str:
    lines = [f"{report.notebook} in JupyterLab:"] + [f"  - {p}" for p in report.problems]
    if report.screenshot:
        lines.append(f"  screenshot: {report.screenshot}")
    return "\n".join(lines)


@pytest.mark.parametrize("notebook", _PARAMS)
def test_notebook_runs_in_jupyterlab(notebook, notebook_runner, record_report):
    report = notebook_runner.report(notebook)
    record_report(report)
    assert report.ok, _explain(report)


def test_opening_a_notebook_hands_nothing_back(chromium_context, lab_server):
    """The open command resolves to the notebook widget; the harness must not ask for it back.

    Playwright serializes what a page evaluation returns, and the widget tree is deep enough that
    this failed now and then in CI ("object reference chain is too long"), before Run All began.
    """
    if not _NOTEBOOKS:
        pytest.skip(f"no notebooks (*.ipynb) in {NOTEBOOK_DIR}")
    lab = lab_harness.LabPage(chromium_context, lab_server)
    try:
        page = lab.ensure()
        assert page.evaluate(lab_harness._OPEN_JS, _NOTEBOOKS[0].name) is None
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
        lab.close_documents()
    finally:
        lab.discard()


class _FakeResponse:
    def __init__(self, status):
        self.status = status


class _FakeRoute:
    """Stands in for a Playwright route: its first `fetch` fails as given, later ones answer 200."""

    def __init__(self, first, method="GET", url="http://127.0.0.1:1/static/lab/main.js?v=1"):
        self.request = type("Request", (), {"method": method, "url": url})()
        self.first, self.fetches, self.done = first, 0, []

    def fetch(self, timeout):
        self.fetches += 1
        if self.fetches == 1 and isinstance(self.first, Exception):
            raise self.first
        return _FakeResponse(self.first if self.fetches == 1 else 200)

    def fulfill(self, response):
        self.done.append(("fulfill", response.status))

    def fallback(self):
        self.done.append(("fallback", None))


@pytest.mark.parametrize("first, expected_note", [
    (TimeoutError("no answer"), "retried once: GET /static/lab/main.js (TimeoutError the first time)"),
    (503, "retried once: GET /static/lab/main.js (HTTP 503 the first time)"),
])
def test_a_failed_load_is_tried_once_more_and_said(first, expected_note):
    notes = []
    route = _FakeRoute(first)
    lab_harness.load_with_one_retry(route, notes)
    # the browser makes the second try itself, so a second failure still reaches the console
    assert route.done == [("fallback", None)] and notes == [expected_note]


def test_a_good_load_passes_through_and_only_static_gets_are_retried():
    notes = []
    ok, missing = _FakeRoute(200), _FakeRoute(404)
    post = _FakeRoute(503, method="POST")
    api = _FakeRoute(503, url="http://127.0.0.1:1/api/sessions")
    for route in (ok, missing, post, api):
        lab_harness.load_with_one_retry(route, notes)
    assert ok.done == [("fulfill", 200)] and missing.done == [("fulfill", 404)]
    for left_to_the_browser in (post, api):
        assert left_to_the_browser.done == [("fallback", None)] and left_to_the_browser.fetches == 0
    assert notes == []


_SVG = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="62pt" height="44pt" viewBox="0 0 62 44">'
        '<ellipse cx="31" cy="22" rx="27" ry="18" fill="none" stroke="black"/></svg>\n')


def _broken_notebook():
    """A committed-looking notebook that has since broken in two ways a learner would see."""
    on_purpose = new_code_cell("raise ValueError('this one fails on purpose')", execution_count=1,
                               outputs=[new_output("error", ename="ValueError",
                                                   evalue="this one fails on purpose", traceback=[])])
    on_purpose.metadata["tags"] = ["raises-exception"]
    graph_ok = new_code_cell("import graphviz\ng = graphviz.Digraph()\ng.edge('x', 'y')\ng",
                             execution_count=2,
                             outputs=[new_output("execute_result", execution_count=2,
                                                 data={"image/svg+xml": _SVG, "text/plain": "digraph"})])
    graph_gone = new_code_cell("g = 'this used to be a graphviz.Digraph'\ng", execution_count=3,
                               outputs=[new_output("display_data",
                                                   data={"image/svg+xml": _SVG, "text/plain": "digraph"})])
    raises = new_code_cell("1 / 0", execution_count=4,
                           outputs=[new_output("execute_result", execution_count=4,
                                               data={"text/plain": "1.0"})])
    after = new_code_cell("print('never reached')", execution_count=5,
                          outputs=[new_output("stream", name="stdout", text="never reached\n")])
    nb = new_notebook(cells=[new_markdown_cell("# broken on purpose"), on_purpose, graph_ok,
                             graph_gone, raises, after])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    return nb


def test_harness_catches_a_broken_notebook(notebook_runner, lab_server, tmp_path):
    """The checker must fail a notebook with an untagged exception and a graph that vanished."""
    if not shutil.which("dot"):
        pytest.skip("Graphviz `dot` is not installed (make setup-dot); the self-test draws a graph")
    stored = tmp_path / "broken.ipynb"
    nbformat.write(_broken_notebook(), stored)
    served = lab_server.root / "_harness_selftest" / "broken.ipynb"
    served.parent.mkdir(exist_ok=True)
    nbformat.write(_broken_notebook(), served)
    lab_harness.strip_outputs(served)  # as the server fixture did for the real notebooks

    expected = lab_harness.Expectation.from_notebook(stored)
    assert (expected.graphs, expected.raises) == (2, [False, True, False, False, False, False])
    report = notebook_runner.check("_harness_selftest/broken.ipynb", expected, screenshot_dir=tmp_path)
    text = "\n".join(report.problems)
    assert not report.ok
    assert "cell 4 shows error output but is not tagged raises-exception: ZeroDivisionError" in text, text
    assert "1 code cell(s) did not run (no execution number): cell 5" in text, text
    assert "1 visible graph image(s)" in text and "shows 2" in text, text
    assert "cell 1" not in text, text  # the tagged cell raised, as it should
    assert "cell 2 " not in text and "cell 3 " not in text, text
    assert report.screenshot is not None and report.screenshot.stat().st_size > 0
