"""Drive JupyterLab in headless Chromium the way a learner uses it after `make lab`.

`LabServer` starts `jupyter lab` on 127.0.0.1 (token auth, free port) over a temporary copy of
the notebooks, with its own config/data/runtime/settings/workspace directories so the user's
Jupyter set-up is neither read nor written.  `check_notebook` opens one notebook in a fresh
page, waits for an idle kernel, runs all cells from the Run menu, and returns a `Report` whose
`problems` list says what a learner would see go wrong.  The pytest side lives in conftest.py
and test_jupyterlab.py; this module has no pytest dependency.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

# Flags for Debian's Chromium as root in a sandbox with no network: without the
# background-networking ones Chromium floods the console with failed requests.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# Console messages (type "error") that are not a notebook's fault.  Each entry: a regex and why.
# Keep this list short and specific; a new entry needs a reason a reviewer can check.
BENIGN_CONSOLE_ERRORS: list[tuple[str, str]] = []

# The "is a rebuild of JupyterLab extensions needed?" check costs the server ~1.4 s of CPU on
# every page load and concerns extension authors, not notebooks.
PAGE_CONFIG = {"buildCheck": False, "buildAvailable": False}

# User settings for the temporary settings directory.  JupyterLab's default windowing mode
# ("contentVisibility") attaches off-screen cells only when the browser is idle, which on a busy
# two-core machine adds many seconds per notebook; "none" attaches the same cells at once.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}

RAISES_TAG = "raises-exception"

REPO = Path(__file__).resolve().parents[2]

sys.path.insert(0, str(REPO / "scripts"))
import lab_setup  # noqa: E402  (what `make lab` runs)


def notebook_dir() -> Path:
    """The notebooks under test: $TEACHGRAD_NOTEBOOKS, else <repo>/notebooks."""
    return Path(os.environ.get("TEACHGRAD_NOTEBOOKS") or REPO / "notebooks").resolve()


def screenshot_dir() -> Path:
    """Where failure screenshots go: $TEACHGRAD_BROWSER_OUT, else <repo>/build/browser."""
    return Path(os.environ.get("TEACHGRAD_BROWSER_OUT") or REPO / "build" / "browser").resolve()
_PROMPT_RE = re.compile(r"^\[(\d+)\]:$")

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

# Order in which JupyterLab's default rendermime picks the one representation it shows.
_MIME_RANK = [
    WIDGET_MIME,
    "application/javascript",
    "text/html",
    "text/markdown",
    "text/latex",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "image/gif",
    "application/pdf",
    "text/plain",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def strip_outputs(path: Path) -> None:
    """Clear outputs and counts so every prompt starts as `[ ]` and every image is new."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.write(nb, path)


class LabServer:
    """`jupyter lab` over a temporary copy of a notebook folder; use as a context manager."""

    def __init__(self, notebook_dir: Path, startup_timeout: float = 60.0):
        self.source_dir = Path(notebook_dir)
        self.startup_timeout = startup_timeout
        self.tmp = Path(tempfile.mkdtemp(prefix="teachgrad-lab-"))
        self.root = self.tmp / "notebooks"
        self.token = secrets.token_hex(24)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log_path = self.tmp / "jupyter-lab.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- set-up -------------------------------------------------------------------------
    def _prepare(self) -> dict:
        # the working copy and the lab config exactly as `make lab` makes them (scripts/lab_setup.py)
        lab_setup.make_working_copy(self.source_dir, self.root)
        for nb in self.root.rglob("*.ipynb"):
            strip_outputs(nb)
        config = self.tmp / "config"
        lab_setup.write_lab_config(config, **PAGE_CONFIG)
        for plugin, values in LAB_SETTINGS.items():
            path = self.tmp / "user-settings" / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)  # let ipykernel pick the inline backend, as in `make lab`
        env.update(
            JUPYTER_CONFIG_DIR=str(config),
            JUPYTER_DATA_DIR=str(self.tmp / "data"),
            JUPYTER_RUNTIME_DIR=str(self.tmp / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(self.tmp / "user-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(self.tmp / "workspaces"),
            IPYTHONDIR=str(self.tmp / "ipython"),
            # the kernel spec says "python": make it this interpreter, and keep `dot` reachable
            PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        )
        return env

    def _command(self) -> list[str]:
        cmd = [
            sys.executable, "-m", "jupyter", "lab",
            "--no-browser", "--ip=127.0.0.1", f"--port={self.port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            # window.jupyterapp: lets the harness open and close documents as the file browser does
            "--LabApp.expose_app_in_browser=True",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def start(self) -> "LabServer":
        env = self._prepare()
        for _attempt in range(3):  # the free port can be taken between probe and bind
            self.port = _free_port()
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(self._command(), env=env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
            if self._wait_ready():
                return self
            self._kill()
        raise RuntimeError(f"jupyter lab did not start; log:\n{self.log_tail()}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                self.api("GET", "/api/status", timeout=2)
                return True
            except (OSError, urllib.error.URLError):
                time.sleep(0.1)
        return False

    # -- REST -----------------------------------------------------------------------------
    def api(self, method: str, path: str, timeout: float = 10):
        req = urllib.request.Request(self.base_url + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def session_for(self, nb_path: str) -> dict | None:
        for s in self.api("GET", "/api/sessions"):
            if s.get("path") == nb_path and s.get("kernel"):
                return s
        return None

    def shutdown_session(self, nb_path: str) -> None:
        try:
            s = self.session_for(nb_path)
            if s:
                self.api("DELETE", f"/api/sessions/{s['id']}", timeout=30)
        except (OSError, urllib.error.URLError):
            pass

    # -- tear-down ------------------------------------------------------------------------
    def _kill(self) -> None:
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        # SIGTERM lets the server shut its kernels down; kernels also exit when their parent dies.
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                return
            try:
                p.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        try:
            self._kill()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> "LabServer":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


# -- what a notebook should show ----------------------------------------------------------
def _shown_mime(output: dict) -> str | None:
    data = output.get("data") or {}
    for mime in _MIME_RANK:
        if mime in data:
            return mime
    return next(iter(data), None)


@dataclass
class Expectation:
    """What the stored (executed, committed) notebook says Run All must produce."""
    cell_types: list[str]
    runnable: list[bool]         # code cell with non-blank source: must get a number
    raises: list[bool]           # tagged raises-exception
    stored_error: list[bool]     # stored outputs contain an error
    stored_stderr: list[bool]    # stored outputs contain a stderr stream
    graphs: int                  # outputs shown as image/svg+xml
    plots: int                   # outputs shown as image/png
    steppers: int = 0            # backward_steps sliders (a widget whose stored HTML is the tg-steps stepper)

    @classmethod
    def from_notebook(cls, path: Path) -> "Expectation":
        nb = nbformat.read(path, as_version=4)
        e = cls([], [], [], [], [], 0, 0)
        for cell in nb.cells:
            e.cell_types.append(cell.cell_type)
            code = cell.cell_type == "code"
            outputs = cell.get("outputs", []) if code else []
            e.runnable.append(code and bool(cell.source.strip()))
            e.raises.append(code and RAISES_TAG in cell.metadata.get("tags", []))
            e.stored_error.append(any(o.output_type == "error" for o in outputs))
            e.stored_stderr.append(any(o.output_type == "stream" and o.get("name") == "stderr"
                                       for o in outputs))
            for o in outputs:
                if o.output_type in ("display_data", "execute_result"):
                    shown = _shown_mime(o)
                    e.graphs += shown == "image/svg+xml"
                    e.plots += shown == "image/png"
                    e.steppers += (shown == WIDGET_MIME
                                   and '<div class="tg-steps">' in o["data"].get("text/html", ""))
        return e


@dataclass
class Report:
    notebook: str
    problems: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    screenshot: Path | None = None
    notes: list[str] = field(default_factory=list)   # what went wrong once and was recovered (see below)

    @property
    def ok(self) -> bool:
        return not self.problems


# Collects, per cell in DOM order: kind, prompt text, and the mime type + text head of outputs.
_CELLS_JS = """
() => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')].map(c => ({
  code: c.classList.contains('jp-CodeCell'),
  // a collapsed (source-hidden) solution cell shows its execution number only on its output
  prompt: [c.querySelector('.jp-InputArea-prompt'), c.querySelector('.jp-OutputArea-prompt')]
    .map(p => (p?.textContent || '').trim()).find(t => /^\\[\\d+\\]:$/.test(t))
    || (c.querySelector('.jp-InputArea-prompt')?.textContent || '').trim(),
  outputs: [...c.querySelectorAll('.jp-OutputArea-output')].map(o => ({
    mime: o.dataset.mimeType || '',
    text: (o.textContent || '').slice(-400),
  })),
}))
"""

# Opens a notebook as double-clicking it in the file browser does.  It awaits the command and
# returns nothing: the command resolves to the notebook widget, and handing that back makes
# Playwright serialize the whole widget tree, which fails now and then with "object reference
# chain is too long".
_OPEN_JS = """
async p => {
  await window.jupyterapp.commands.execute('docmanager:open', {path: p, factory: 'Notebook'});
}
"""

# Run All's own promise (and the prompts) settle early: when one cell replies with an error,
# JupyterLab resets the prompts of cells still queued in the kernel to `[ ]`, and the kernel goes
# on running them.  So count execute replies on the page's kernel connection instead.
_WATCH_KERNEL_JS = """
p => {
  const w = [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === p);
  const kernel = w.sessionContext.session.kernel;
  const watch = {replied: 0, kernel};
  kernel.anyMessage.connect((_, a) => {
    if (a.direction === 'recv' && a.msg.header.msg_type === 'execute_reply') watch.replied++;
  });
  window.__teachgradWatch = watch;
}
"""

_RUN_DONE_JS = """
n => {
  const w = window.__teachgradWatch;
  const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-CodeCell .jp-InputArea-prompt')];
  return w.replied >= n && w.kernel.status === 'idle' && !prompts.some(p => p.textContent.trim() === '[*]:');
}
"""


# For each <img> in outputs of one mime type: scroll it to the middle of the notebook, and count
# it as shown when it is decoded, has a size, lies in the window and is the element on top at
# its centre (no dialog or toast covering it).
_VISIBLE_IMAGES_JS = """
async mime => {
  const imgs = [...document.querySelectorAll(
      `.jp-NotebookPanel .jp-OutputArea-output[data-mime-type="${mime}"] img`)];
  let shown = 0;
  for (const img of imgs) {
    img.scrollIntoView({block: 'center'});
    if (!img.complete) await img.decode().catch(() => {});
    const r = img.getBoundingClientRect();
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    const inWindow = r.width > 0 && r.height > 0 && cx > 0 && cy > 0 &&
                     cx < window.innerWidth && cy < window.innerHeight;
    if (img.naturalWidth > 0 && inWindow &&
        img.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}) &&
        document.elementFromPoint(cx, cy) === img) shown++;
  }
  return [shown, imgs.length];
}
"""


# Each backward_steps slider's drawing (its `tg-step-view`), scrolled into view: how wide it is drawn, how wide
# its output area is, and how high its smallest label is drawn (its SVG font size times the scale the image is
# shown at: the SVG's viewBox is in the same units as its font sizes).
_STEPPERS_JS = """
async () => {
  const found = [];
  for (const img of document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output .tg-step-view img')) {
    img.scrollIntoView({block: 'center'});
    if (!img.complete) await img.decode().catch(() => {});
    const shown = img.getBoundingClientRect(), area = img.closest('.jp-OutputArea-output').getBoundingClientRect();
    const svg = new DOMParser().parseFromString(atob(img.src.split(',')[1]), 'image/svg+xml').documentElement;
    const box = svg.getAttribute('viewBox').trim().split(/[\\s,]+/).map(Number);
    const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(t.getAttribute('font-size')));
    found.push({width: shown.width, right: shown.right, area: area.width, areaRight: area.right,
                label: Math.min(...sizes) * shown.width / box[2]});
  }
  return found;
}
"""
MIN_LABEL_PX = 10   # the smallest a stepper's label may be drawn (issue 45: 5-6 px was unreadable)


def stepper_problems(page, expected: int) -> list[str]:
    """What is wrong with the steppers' drawings as shown: fewer than the notebook shows, one wider than its
    output area (or running off its right), or a label drawn under MIN_LABEL_PX."""
    found = page.evaluate(_STEPPERS_JS)
    problems = []
    if len(found) < expected:
        problems.append(f"{len(found)} stepper drawing(s) (.tg-step-view img) measured, the committed notebook "
                        f"shows {expected} stepper(s)")
    for i, s in enumerate(found, 1):
        if s["width"] > s["area"] + 0.5 or s["right"] > s["areaRight"] + 0.5:
            problems.append(f"stepper {i}: its drawing is {s['width']:.0f} px wide in a {s['area']:.0f} px "
                            "output area")
        if s["label"] < MIN_LABEL_PX:
            problems.append(f"stepper {i}: its smallest label is drawn {s['label']:.1f} px high "
                            f"(in a {s['area']:.0f} px output area), under {MIN_LABEL_PX} px")
    return problems


def _visible_images(page, mime: str) -> tuple[int, int]:
    """(shown, total) `<img>` elements inside outputs of this mime type."""
    shown, total = page.evaluate(_VISIBLE_IMAGES_JS, mime)
    return shown, total


def _benign(text: str) -> bool:
    return any(re.search(rx, text) for rx, _why in BENIGN_CONSOLE_ERRORS)


# Where JupyterLab's server keeps the files a page loads (see load_with_one_retry).
STATIC_PATHS = ("/static/", "/lab/extensions/")


def load_with_one_retry(route, notes: list[str]) -> None:
    """Route handler: a static file of the lab server that gets no answer, or a 5xx, is tried once more.

    On a busy two-core machine JupyterLab's server has now and then failed one static load ("Failed
    to load resource" in the console), which failed a notebook that was fine. The first try is made
    here (`route.fetch`); when it fails, the failure is written to `notes` (the test's summary prints
    it) and the browser loads the file itself. A second failure shows in the console and fails the
    notebook as before, so nothing is checked less.
    Only static files are routed here (JupyterLab's bundles, extensions, fonts, images: GETs that
    change nothing and need no session). The page itself and the REST and kernel traffic are not
    routed at all: a document that Playwright hands over counts as coming from outside this machine,
    and Chromium then refuses its WebSockets to 127.0.0.1; and a routed request waits until this
    process next calls Playwright, so while the harness polls the REST API a routed session request
    would hang (the harness waits with `page.wait_for_timeout`, which serves routed loads meanwhile).
    """
    request = route.request
    path = "/" + request.url.split("?", 1)[0].split("/", 3)[-1]
    if request.method != "GET" or not path.startswith(STATIC_PATHS):
        route.fallback()
        return
    try:
        response = route.fetch(timeout=60_000)
    except Exception as exc:  # no answer in time, connection reset: the server was too busy
        why = type(exc).__name__
    else:
        if response.status < 500:
            route.fulfill(response=response)
            return
        why = f"HTTP {response.status}"
    notes.append(f"retried once: GET {path} ({why} the first time)")
    route.fallback()


class LabPage:
    """One JupyterLab tab in the browser, reused for notebook after notebook.

    Loading the JupyterLab application costs ~5 s of CPU on a small machine, opening a notebook
    in a running one well under a second, so notebooks are opened one after another in the same
    page (as a learner does from the file browser) and closed when done.  After any failure the
    page is thrown away and the next notebook gets a freshly loaded JupyterLab.
    """

    def __init__(self, context, server: LabServer):
        self.context = context
        self.server = server
        self.page = None
        self.console: list[str] = []
        self.retried: list[str] = []   # notes from load_with_one_retry

    def ensure(self):
        if self.page is None:
            page = self.context.new_page()
            self.page = page
            page.on("console", lambda m: m.type == "error" and self.console.append(
                f"console.error: {m.text}" + (f" ({m.location['url']})" if m.location.get("url") else "")))
            for static in STATIC_PATHS:
                page.route(f"{self.server.base_url}{static}**", lambda route: load_with_one_retry(route, self.retried))
            page.on("pageerror", lambda e: self.console.append(f"page error: {e}"))
            # a fresh workspace, so nothing from an earlier page is restored into this one
            page.goto(f"{self.server.base_url}/lab/workspaces/t{uuid.uuid4().hex[:12]}"
                      f"?token={self.server.token}", wait_until="domcontentloaded", timeout=60_000)
            page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
            page.evaluate("() => window.jupyterapp.restored")
        return self.page

    def discard(self) -> None:
        page, self.page = self.page, None
        if page is not None:
            try:
                page.close()
            except Exception:
                pass

    def open(self, nb_rel: str) -> None:
        self.ensure().evaluate(_OPEN_JS, nb_rel)

    def close_documents(self) -> None:
        """Close every open document without the "save your work?" dialog; shut its kernel down.

        The shutdown is not awaited: the kernel exits while the next notebook opens.
        """
        self.page.evaluate("""() => {
            for (const w of [...window.jupyterapp.shell.widgets('main')]) {
                if (w.context) w.context.model.dirty = false;
                if (w.sessionContext) w.sessionContext.shutdown().catch(e => console.warn(e));
                w.dispose();
            }
        }""")


@dataclass
class NotebookRun:
    """A notebook whose Run All has been started in a page and not yet judged."""
    lab: LabPage
    nb_rel: str
    expected: Expectation
    report: Report
    t0: float
    console_from: int = 0
    retried_from: int = 0
    started: bool = False


# How many code cells show an execution number (as _CELLS_JS reads a cell's prompt).
_NUMBERED_JS = f"n => ({_CELLS_JS.strip()})().filter(c => c.code && /^\\[\\d+\\]:$/.test(c.prompt)).length >= n"


def start_notebook(lab: LabPage, nb_rel: str, expected: Expectation) -> NotebookRun:
    """Open `nb_rel` (path relative to the server root), wait for its kernel, click Run All.

    Returns at once after the click, so another notebook can be started in another page while
    this one runs; `finish_notebook` waits for it and judges it.
    """
    run = NotebookRun(lab, nb_rel, expected, Report(nb_rel), time.monotonic())
    timings = run.report.timings
    run.retried_from = len(lab.retried)   # a retry while the page itself loads counts for this notebook
    try:
        page = lab.ensure()
        run.console_from = len(lab.console)
        lab.open(nb_rel)
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
        timings["open"] = time.monotonic() - run.t0

        t = time.monotonic()
        deadline = t + 60
        while True:
            s = lab.server.session_for(nb_rel)
            if s and s["kernel"].get("execution_state") == "idle":
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no idle kernel for {nb_rel}; sessions: {lab.server.api('GET', '/api/sessions')}")
            page.wait_for_timeout(50)   # not time.sleep: the page's routed loads are served meanwhile
        # the page's own kernel indicator must agree before we click Run All
        page.wait_for_selector(
            '.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]',
            state="attached", timeout=30_000)
        timings["kernel"] = time.monotonic() - t

        # JupyterLab attaches long notebooks' cells in batches: wait for all of them
        n_cells = len(expected.cell_types)
        try:
            page.wait_for_function(
                "n => document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell').length >= n",
                arg=n_cells, timeout=30_000, polling=100)
        except Exception:
            pass
        n_dom = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").count()
        if n_dom != n_cells:
            run.report.problems.append(f"page shows {n_dom} cells, the notebook has {n_cells}")
        run.started = True  # from here on, the page has something to judge
        if any(expected.runnable):
            page.evaluate(_WATCH_KERNEL_JS, nb_rel)
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        timings["start"] = time.monotonic() - run.t0
    except Exception as exc:  # timeouts, missing menu, server gone: failures of this notebook
        msg = str(exc).strip().splitlines()
        run.report.problems.append(f"{type(exc).__name__}: {msg[0] if msg else ''}")
    return run


def finish_notebook(run: NotebookRun, screenshot_dir: Path | None = None,
                    run_timeout: float = 90.0) -> Report:
    """Wait until the kernel has answered every cell of Run All, then judge what the page shows."""
    lab, expected, report = run.lab, run.expected, run.report
    problems = report.problems
    page = lab.page
    first_bad_cell = None
    try:
        if not run.started:
            raise RuntimeError("the notebook could not be started")
        t = time.monotonic()
        n_runnable = sum(expected.runnable)
        if n_runnable:
            page.wait_for_function(_RUN_DONE_JS, arg=n_runnable, timeout=run_timeout * 1000, polling=100)
            try:   # the last replies are in; on a busy machine the page may draw their numbers a moment later
                page.wait_for_function(_NUMBERED_JS, arg=n_runnable, timeout=10_000, polling=100)
            except Exception:
                pass   # the checks below name the cells that never got a number
        report.timings["run"] = time.monotonic() - t

        t = time.monotonic()
        cells = page.evaluate(_CELLS_JS)
        not_run: list[int] = []
        for i, (cell, typ) in enumerate(zip(cells, expected.cell_types)):
            if typ != "code":
                continue
            label = f"cell {i}"
            bad = []
            shown_error = [o for o in cell["outputs"] if o["mime"] == "application/vnd.jupyter.stderr"]
            if expected.runnable[i] and not _PROMPT_RE.match(cell["prompt"]):
                not_run.append(i)
            if shown_error and not expected.raises[i] and not expected.stored_stderr[i]:
                tail = shown_error[-1]["text"].strip().splitlines()[-1:] or [""]
                bad.append(f"{label} shows error output but is not tagged {RAISES_TAG}: {tail[0][:200]}")
            if expected.raises[i] and expected.stored_error[i] and not shown_error:
                bad.append(f"{label} is tagged {RAISES_TAG} and raised when committed, but shows no error now")
            if bad and first_bad_cell is None:
                first_bad_cell = i
            problems.extend(bad)
        if not_run:
            problems.append(f"{len(not_run)} code cell(s) did not run (no execution number): "
                            f"cell {', '.join(map(str, not_run))}")
            first_bad_cell = not_run[0] if first_bad_cell is None else first_bad_cell
        graphs, graph_imgs = _visible_images(page, "image/svg+xml")
        plots, plot_imgs = _visible_images(page, "image/png")
        if graphs < expected.graphs:
            problems.append(f"{graphs} visible graph image(s) (of {graph_imgs} SVG <img>), "
                            f"the committed notebook shows {expected.graphs}")
        if plots < expected.plots:
            problems.append(f"{plots} visible plot image(s) (of {plot_imgs} PNG <img>), "
                            f"the committed notebook shows {expected.plots}")
        problems.extend(stepper_problems(page, expected.steppers))
        report.timings["check"] = time.monotonic() - t
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        problems.append(f"{type(exc).__name__}: {msg[0] if msg else ''}")
    finally:
        if page is not None:
            problems.extend(c[:500] for c in lab.console[run.console_from:] if not _benign(c))
        report.notes.extend(lab.retried[run.retried_from:])
        if problems and page is not None and screenshot_dir is not None:
            try:
                if first_bad_cell is not None:
                    # show the end of the failing cell: the last line of a traceback says the most
                    cell = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(first_bad_cell)
                    outputs = cell.locator(".jp-OutputArea-output")
                    target = outputs.last if outputs.count() else cell
                    target.evaluate("e => e.scrollIntoView({block: 'end'})")
                screenshot_dir.mkdir(parents=True, exist_ok=True)
                report.screenshot = screenshot_dir / (Path(run.nb_rel).stem + ".png")
                page.screenshot(path=str(report.screenshot), timeout=15_000)
            except Exception as exc:
                problems.append(f"(could not save a screenshot: {type(exc).__name__})")
        if problems or page is None:
            lab.discard()                    # the next notebook gets a freshly loaded page
            lab.server.shutdown_session(run.nb_rel)
        else:
            try:
                lab.close_documents()
            except Exception:
                lab.discard()
                lab.server.shutdown_session(run.nb_rel)
        report.timings["total"] = time.monotonic() - run.t0
    return report


def check_notebook(lab: LabPage, nb_rel: str, expected: Expectation,
                   screenshot_dir: Path | None = None, run_timeout: float = 90.0) -> Report:
    """Open `nb_rel` in `lab`, Run All from the menu, wait, and judge it."""
    return finish_notebook(start_notebook(lab, nb_rel, expected), screenshot_dir, run_timeout)


class Runner:
    """Runs notebooks `parallel` at a time, each in its own JupyterLab page.

    The kernels do nearly all the work and each uses about one core, so on two cores two
    notebooks run side by side.  `report(path)` starts the notebooks that come next in `order`
    while it waits for `path`, so tests asking for notebooks in order keep every page busy.
    """

    def __init__(self, context, server: LabServer, notebook_root: Path, order: list[Path],
                 parallel: int = 2, screenshot_dir: Path | None = None, run_timeout: float = 90.0):
        self.server = server
        self.root = notebook_root
        self.pending = list(order)
        self.free = [LabPage(context, server) for _ in range(max(1, parallel))]
        self.pages = list(self.free)
        self.running: dict[Path, NotebookRun] = {}
        self.done: dict[Path, Report] = {}
        self.screenshot_dir = screenshot_dir
        self.run_timeout = run_timeout

    def _start(self, path: Path) -> None:
        if path in self.pending:
            self.pending.remove(path)
        lab = self.free.pop(0)
        rel = path.relative_to(self.root).as_posix()
        self.running[path] = start_notebook(lab, rel, Expectation.from_notebook(path))

    def _finish(self, path: Path) -> None:
        run = self.running.pop(path)
        self.done[path] = finish_notebook(run, self.screenshot_dir, self.run_timeout)
        self.free.append(run.lab)

    def report(self, path: Path) -> Report:
        if path not in self.done:
            if path not in self.running:
                if not self.free:  # every page is busy with notebooks started ahead of this one
                    self._finish(next(iter(self.running)))
                self._start(path)
            while self.free and self.pending:
                self._start(self.pending[0])
            self._finish(path)
        return self.done.pop(path)

    def check(self, nb_rel: str, expected: Expectation, screenshot_dir: Path | None = None) -> Report:
        """Run one notebook now, outside `order` (the harness self-test uses it)."""
        if not self.free:
            self._finish(next(iter(self.running)))
        lab = self.free.pop(0)
        try:
            return check_notebook(lab, nb_rel, expected, screenshot_dir, self.run_timeout)
        finally:
            self.free.append(lab)

    def close(self) -> None:
        for lab in self.pages:
            lab.discard()
