"""Fixtures for the browser smoke test: one JupyterLab server and one Chromium for the session.

Environment:
  TEACHGRAD_NOTEBOOKS   folder of notebooks to test (default: <repo>/notebooks)
  TEACHGRAD_BROWSER_OUT where failure screenshots go (default: <repo>/build/browser)
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import time
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import lab_harness  # noqa: E402

def _missing_browser() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return ("browser test skipped: the Python package playwright is not installed; "
                "run `make setup` (or `pip install playwright`)")
    if not shutil.which("chromium"):
        return ("browser test skipped: no `chromium` on PATH; run `make setup-browser` as root, "
                "or install it yourself (Debian/Ubuntu: sudo apt-get install chromium)")
    return None


@pytest.fixture(scope="module")
def chromium_context():
    """A headless Chromium (Debian's, no download) and one browser context shared by all pages.

    Module-scoped: Playwright's sync API cannot run twice at once in a thread, and the book test
    starts its own after this module is done.
    """
    why = _missing_browser()
    if why:
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"),
                                     args=lab_harness.CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            yield context
            context.close()
        finally:
            browser.close()


@pytest.fixture(scope="module")
def lab_server(chromium_context):
    """`jupyter lab` over a temporary copy of the notebooks; stopped even when tests fail."""
    _clock["start"] = time.monotonic()
    with lab_harness.LabServer(lab_harness.notebook_dir()) as server:
        yield server


@pytest.fixture(scope="module")
def notebook_runner(request, chromium_context, lab_server):
    """Runs the selected notebooks in test order, TEACHGRAD_BROWSER_PARALLEL (default 2) at once."""
    order = [item.callspec.params["notebook"] for item in request.session.items
             if getattr(item, "callspec", None) and item.callspec.params.get("notebook")]
    parallel = int(os.environ.get("TEACHGRAD_BROWSER_PARALLEL") or min(2, os.cpu_count() or 1))
    runner = lab_harness.Runner(chromium_context, lab_server, lab_harness.notebook_dir(), order,
                                parallel=parallel, screenshot_dir=lab_harness.screenshot_dir())
    yield runner
    runner.close()


@pytest.fixture
def record_report(record_property):
    """Hands a notebook's Report to the summary at the end of the run (tests/conftest.py prints it): as a
    user property of the test's report, which reaches the main process under pytest-xdist too."""
    def record(report):
        record_property("browser_report", {
            "notebook": report.notebook, "ok": report.ok, "timings": report.timings, "notes": report.notes,
            "lab_started": _clock["start"], "ended": time.monotonic()})
    return record


_clock: dict[str, float] = {}
