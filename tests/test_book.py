"""The book (`make book`): built from the stored outputs, served on 127.0.0.1, read in headless Chromium.

The series is built as it is in notebooks/ (whatever notebooks it holds), plus one small notebook
made here with a backward stepper, a graph, a solution and a deliberate error, so that each of those
is checked even before the stored notebooks are re-executed. Without Chromium the book is still built
and only the reading is skipped, saying why.
"""
import contextlib
import functools
import http.server
import importlib.util
import io
import json
import re
import shutil
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FIXTURE = "99_book_fixture"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")]


def _missing_book():
    if importlib.util.find_spec("myst_nb") is None:
        return "book test skipped: the book's packages are not installed; run `make setup`"
    return None


def _missing_browser():
    if importlib.util.find_spec("playwright") is None:
        return "book test skipped: the Python package playwright is not installed; run `make setup`"
    if not shutil.which("chromium"):
        return ("book test skipped: no `chromium` on PATH; run `make setup-browser` as root, "
                "or install it yourself (Debian/Ubuntu: sudo apt-get install chromium)")
    return None


def _cell(source, outputs=(), tags=(), count=1):
    return {"cell_type": "code", "execution_count": count, "id": f"c{count}",
            "metadata": {"tags": list(tags)} if tags else {}, "outputs": list(outputs), "source": source}


def _result(bundle, count):
    return {"output_type": "execute_result", "execution_count": count, "metadata": {}, "data": bundle}


def fixture_notebook():
    """What a kernel would store for a stepper, a graph, a solution and an error (no kernel needed)."""
    import teachgrad as tg
    from teachgrad import viz

    p, q, s = (tg.tensor(v, requires_grad=True) for v in (3.0, 5.0, 2.0))
    r = p + q
    t = r * s
    graph = viz.draw(t, names={"p": p, "q": q, "s": s, "r": r, "t": t})._repr_mimebundle_()
    steps = viz.backward_steps(t, names={"p": p, "q": q, "s": s, "r": r, "t": t})._repr_mimebundle_()
    error = {"output_type": "error", "ename": "RuntimeError", "evalue": "element 0 of tensors does not require grad",
             "traceback": ["\x1b[31m-----\x1b[39m", "\x1b[31mRuntimeError\x1b[39m    Traceback (most recent call last)",
                           "\x1b[36mCell\x1b[39m In[4], line 1\n----> 1 tg.tensor(1.0).backward()",
                           "\x1b[36mFile\x1b[39m /somewhere/teachgrad/engine.py:99, in backward\n  99 raise",
                           "\x1b[31mRuntimeError\x1b[39m: element 0 of tensors does not require grad"]}
    cells = [
        {"cell_type": "markdown", "id": "m0", "metadata": {},
         "source": "# 99 · Book fixture\n\nA stepper, a graph, a solution and an error, for the book test."},
        _cell("tg.viz.draw(t, names=locals())", [_result(graph, 1)], count=1),
        _cell("tg.viz.backward_steps(t, names=locals())", [_result(steps, 2)], count=2),
        _cell("answer_is_forty_two = 42", tags=["solution"], count=3),
        _cell("tg.tensor(1.0).backward()", [error], tags=["raises-exception"], count=4),
    ]
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def _outputs(path):
    return [o for c in json.loads(path.read_text())["cells"] for o in c.get("outputs", [])]


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    why = _missing_book()
    if why:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("book")
    notebooks = work / "notebooks"
    notebooks.mkdir()
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        shutil.copy(path, notebooks / path.name)
    (notebooks / f"{FIXTURE}.ipynb").write_text(json.dumps(fixture_notebook()))
    out, log = work / "site", io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):   # in this process: torch is loaded
        status = _build_book_module().build(notebooks, out, work / "src")
    seconds = time.perf_counter() - started
    assert status == 0, log.getvalue()
    assert seconds < 120, f"the book took {seconds:.0f} s to build"
    return {"out": out, "notebooks": sorted(notebooks.glob("*.ipynb")), "log": log.getvalue()}


def _build_book_module():
    spec = importlib.util.spec_from_file_location("build_book", ROOT / "scripts" / "build_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(book):
    """The built book on http://127.0.0.1:<free port>/."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(book["out"])))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(site):
    why = _missing_browser()
    if why:
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium.new_context(viewport={"width": 1280, "height": 900})
        finally:
            chromium.close()


class Page:
    """A browser tab on the book, recording every console error and every request off this server."""

    def __init__(self, context, site, path=None):
        self.site, self.problems, self.path = site, [], path
        self.page = context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"{self.path}: console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"{self.path}: page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"{self.path}: request failed: {r.url}"))
        self.page.on("request", lambda r: r.url.startswith((site, "data:"))
                     or self.problems.append(f"{self.path}: request outside the book: {r.url}"))
        if path:
            self.open(path)

    def open(self, path):
        self.path = path
        response = self.page.goto(self.site + path)
        assert response.ok, f"{path}: HTTP {response.status}"

    def visible_images(self, selector):
        """How many images match selector, are laid out on the page and have loaded."""
        return self.page.eval_on_selector_all(selector, """images => images.filter(
            i => i.complete && i.naturalWidth > 0 && i.getClientRects().length > 0).length""")


@pytest.mark.book
@pytest.mark.browser
def test_build_is_clean(book):
    """No error; no warning from the generated pages or the API docstrings (a notebook's own is reported)."""
    lines = book["log"].splitlines()
    assert not [line for line in lines if "ERROR" in line or "CRITICAL" in line], book["log"]
    ours = [line for line in lines if "WARNING" in line and re.search(r"index\.md|api\.md|docstring of", line)]
    assert not ours, "\n".join(ours)
    for line in lines:
        if "WARNING" in line:
            warnings.warn(f"book: {line}")


@pytest.mark.book
@pytest.mark.browser
def test_every_notebook_has_a_page_reachable_from_the_landing_page(book, site, browser):
    landing = Page(browser, site, "index.html")
    links = landing.page.eval_on_selector_all("article a[href*='notebooks/']", "as => as.map(a => a.href)")
    for path in book["notebooks"]:
        assert any(link.split("#")[0].endswith(f"notebooks/{path.stem}.html") for link in links), \
            f"the landing page does not link to {path.stem}"
    text = landing.page.inner_text("article")
    assert "make lab" in text and "make test" in text
    linked = [re.search(r"notebooks/(\w+)\.html", link).group(1) for link in links]
    assert list(dict.fromkeys(linked)) == [p.stem for p in book["notebooks"]], "the series is not listed in order"
    nav = landing.page.eval_on_selector_all("nav.bd-links a", "as => as.map(a => a.href)")
    assert any(href.endswith("api.html") for href in nav), "no API page in the navigation"
    landing.page.close()
    assert landing.problems == []


@pytest.mark.book
@pytest.mark.browser
def test_each_page_has_its_launch_note_its_graphs_and_plots_and_no_console_error(book, site, browser):
    page = Page(browser, site)
    for path in book["notebooks"]:
        page.open(f"notebooks/{path.stem}.html")
        assert "make lab" in page.page.inner_text(".admonition"), f"{path.stem}: no launch note"
        assert page.page.query_selector(".prev-next-area a") is not None, f"{path.stem}: no previous/next links"
        outputs = _outputs(path)
        stored_svg = sum("image/svg+xml" in o.get("data", {}) and "text/html" not in o.get("data", {})
                         for o in outputs)
        stored_png = sum("image/png" in o.get("data", {}) for o in outputs)
        shown_svg = page.visible_images("div.cell_output img[src$='.svg']")
        shown_png = page.visible_images("div.cell_output img[src$='.png']")
        assert shown_svg >= stored_svg, f"{path.stem}: {shown_svg} of {stored_svg} graphs visible"
        assert shown_png >= stored_png, f"{path.stem}: {shown_png} of {stored_png} plots visible"
        dead = page.page.eval_on_selector_all(".tg-steps", "s => s.filter(x => !x.querySelector('.tg-steps-bar')).length")
        assert dead == 0, f"{path.stem}: {dead} steppers without their slider (did their script run?)"
    page.open("api.html")
    assert "backward_steps" in page.page.inner_text("article")
    page.page.close()
    assert page.problems == []


@pytest.mark.book
@pytest.mark.browser
def test_the_stepper_changes_the_drawing_when_moved(site, browser):
    page = Page(browser, site, f"notebooks/{FIXTURE}.html")
    stepper = page.page.locator(".tg-steps").first
    figures = stepper.locator("figure.tg-step")
    count = figures.count()
    assert count == 5

    def shown():
        visible = [i for i in range(count) if figures.nth(i).is_visible()]
        assert len(visible) == 1, f"frames visible: {visible}"
        return visible[0], figures.nth(visible[0]).inner_html()

    first = shown()
    assert first[0] == 0 and "n1 MulBackward0 runs" in first[1]
    stepper.locator("input[type=range]").fill("3")
    third = shown()
    assert third[0] == 2 and third[1] != first[1] and "n2 AddBackward0 runs" in third[1]
    stepper.locator("button", has_text="next").click()
    assert shown()[0] == 3
    stepper.locator("button", has_text="prev").click()
    stepper.locator("button", has_text="prev").click()
    assert shown()[0] == 1
    stepper.locator("button", has_text="play").click()
    page.page.wait_for_function("f => !f.hidden", arg=figures.nth(2).element_handle(), timeout=5000)
    assert shown()[0] >= 2
    if shutil.which("dot"):
        assert page.visible_images(".tg-steps figure.tg-step img") == 1
    page.page.close()
    assert page.problems == []


@pytest.mark.book
@pytest.mark.browser
def test_solutions_fold_and_errors_are_short(site, browser):
    page = Page(browser, site, f"notebooks/{FIXTURE}.html")
    solution = page.page.locator("text=answer_is_forty_two").first
    assert not solution.is_visible(), "a solution is shown before asking"
    page.page.locator("summary", has_text="Show solution").first.click()
    assert solution.is_visible()
    error = page.page.locator("div.cell_output .output.traceback").first
    text = error.inner_text()
    assert error.is_visible() and "RuntimeError: element 0 of tensors does not require grad" in text
    assert "engine.py" not in text and "Traceback (most recent call last)" not in text
    assert len(text.strip().splitlines()) <= 4
    page.page.close()
    assert page.problems == []


def test_landing_page_lists_what_each_notebook_teaches():
    build_book = _build_book_module()
    entries = build_book.series(NOTEBOOKS)
    assert [e["name"] for e in entries] == sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    readme = (ROOT / "README.md").read_text()
    for e in entries:
        assert e["title"] and e["teaches"], e["name"]
        if f"`{e['name']}`" in readme:
            assert e["teaches"] in readme
    assert re.search(r"make lab .*\n.*make test", build_book.two_commands())


def test_book_copy_of_a_notebook_folds_solutions_adds_the_launch_note_and_shortens_errors():
    build_book = _build_book_module()
    nb = build_book.book_notebook(fixture_notebook(), FIXTURE)
    cells = nb["cells"]
    assert cells[0]["source"].startswith("# 99") and "make lab" in cells[1]["source"]
    assert f"{FIXTURE}.ipynb" in cells[1]["source"] and "environment.yml" in cells[1]["source"]
    solution = next(c for c in cells if "solution" in c.get("metadata", {}).get("tags", []))
    assert "hide-cell" in solution["metadata"]["tags"]
    assert solution["metadata"]["mystnb"]["code_prompt_show"] == "Show solution"
    error = next(o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error")
    assert error["traceback"] == ["\x1b[36mCell\x1b[39m In[4], line 1\n----> 1 tg.tensor(1.0).backward()",
                                  "\x1b[31mRuntimeError\x1b[39m: element 0 of tensors does not require grad"]
    assert fixture_notebook()["cells"][4]["outputs"][0]["traceback"][0].startswith("\x1b[31m-----")  # a copy


def test_short_traceback_keeps_the_message_when_there_is_no_cell_frame():
    build_book = _build_book_module()
    assert build_book.short_traceback(["\x1b[31mValueError\x1b[39m: bad"]) == ["\x1b[31mValueError\x1b[39m: bad"]
