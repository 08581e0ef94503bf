#!/usr/bin/env python
"""Build the book: a static site of the whole series from the notebooks' stored outputs.

    python scripts/build_book.py                       # notebooks/ -> build/book/
    python scripts/build_book.py --notebooks DIR --out DIR

Writes the pages into a staging folder (build/book-src): a landing page listing the series in
order (titles from the notebooks, "what it teaches" from the README's table), a page on the API,
and a copy of each notebook with a note on how to run it, its solutions folded behind "Show
solution" and its deliberate errors cut to the learner's line and the message. Then Sphinx with
MyST-NB (book/conf.py) turns them into HTML without running a single cell.
"""
import argparse
import copy
import json
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "book"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

LAUNCH_NOTE = """\
:::{{admonition}} Run this notebook yourself
:class: tip
Every cell on this page was run and checked against PyTorch; the outputs are the stored ones.
To change a cell and run it, clone the repository and run `make lab` (it sets everything up, then
opens JupyterLab on a working copy of the notebooks), then open `{name}.ipynb`. With conda or on
Binder, `environment.yml` has everything: `conda env create -f environment.yml`,
`conda activate teachgrad`, `jupyter lab notebooks/{name}.ipynb`.
:::
"""

SOLUTION_PROMPTS = {"code_prompt_show": "Show solution", "code_prompt_hide": "Hide solution"}

API_PAGE = """\
# The teachgrad API

`import teachgrad as tg`, then use `tg.` where you would write `torch.`: the same names, arguments,
values, gradients and error messages, on the subset teachgrad covers.

```{eval-rst}
.. automodule:: teachgrad
   :members: Variable, Function, once_differentiable, grad, no_grad, enable_grad, set_grad_enabled, is_grad_enabled

.. automodule:: teachgrad.engine
   :members: backward, grad, record_backward, Step

.. automodule:: teachgrad.viz
   :members: draw, backward_steps, Drawing, Steps, GraphvizNotFound
   :exclude-members: Step

.. automodule:: teachgrad.check
   :members:

.. automodule:: teachgrad.nn.functional
   :members:
```
"""


def series(notebooks: Path) -> list[dict]:
    """The notebooks in order: file stem, title, what it teaches."""
    teaches = _readme_table()
    entries = []
    for path in sorted(notebooks.glob(NOTEBOOK_GLOB)):
        nb = json.loads(path.read_text())
        title, first_line = _title_and_first_line(nb)
        entries.append({"name": path.stem, "path": path, "title": title or path.stem,
                        "teaches": teaches.get(path.stem) or first_line})
    return entries


def _readme_table() -> dict:
    """`| `03_graph_and_engine` | nodes, ... |` rows of the README, by notebook name."""
    rows = re.findall(r"^\|\s*`(\d\d_\w+)`\s*\|\s*(.*?)\s*\|\s*$", _readme(), re.M)
    return dict(rows)


def _readme() -> str:
    path = ROOT / "README.md"
    return path.read_text() if path.exists() else ""


def _title_and_first_line(nb):
    """The first `# ` heading of the first markdown cell, and the first sentence after it."""
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = _text(cell["source"]).splitlines()
        title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
        prose = " ".join(line.strip() for line in lines if line.strip() and not line.startswith("#"))
        sentence = re.split(r"(?<=[.!?])\s", prose, maxsplit=1)[0]
        return title, sentence[:160]
    return "", ""


def _text(source):
    return "".join(source) if isinstance(source, list) else source


def two_commands() -> str:
    """The README's fenced block under "Two commands"."""
    section = _readme().split("## Two commands", 1)[-1]
    found = re.search(r"```bash\n.*?```", section, re.S)
    return found.group(0) if found else "```bash\nmake lab\nmake test\n```"


def landing_page(entries) -> str:
    rows = "\n".join(f"| {e['name'][:2]} | [{e['title']}](notebooks/{e['name']}.ipynb) | {e['teaches']} |"
                     for e in entries)
    toc = "\n".join(f"notebooks/{e['name']}" for e in entries)
    return f"""\
# teachgrad: autograd, rebuilt to be read

PyTorch's autograd re-implemented in small, readable Python on top of torch tensors, and a series of
notebooks that builds it up step by step. Every result in them is computed by teachgrad *and* by
torch, and checked to agree; every graph is drawn. On these pages you read the notebooks as they were
last run, and step through a backward pass with the slider under each stepper, no Python needed.

## Two commands

{two_commands()}

`make lab` sets everything up and opens the notebooks in JupyterLab; `make test` runs every test.
`make book` builds these pages.

## The series

| | notebook | what it teaches |
|---|---|---|
{rows}

The [API page](api.md) lists what `teachgrad` offers.

```{{toctree}}
:hidden:
:caption: The series
:maxdepth: 1

{toc}
```

```{{toctree}}
:hidden:
:caption: Reference

api
```
"""


def book_notebook(nb: dict, name: str) -> dict:
    """A copy for the page: the launch note, solutions folded, errors short."""
    nb = copy.deepcopy(nb)
    note = {"cell_type": "markdown", "id": "launch-note", "metadata": {}, "source": LAUNCH_NOTE.format(name=name)}
    first_markdown = next((i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"), -1)
    nb["cells"].insert(first_markdown + 1, note)
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            cell["metadata"]["tags"] = [*tags, "hide-cell"]
            cell["metadata"]["mystnb"] = {**cell["metadata"].get("mystnb", {}), **SOLUTION_PROMPTS}
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                output["traceback"] = short_traceback(output["traceback"])
    nb["metadata"].pop("widgets", None)   # the widgets' state is for a live kernel
    return nb


def short_traceback(traceback: list[str]) -> list[str]:
    """The learner's own line and the message: no separator, no header, no library frames."""
    mine = [entry for entry in traceback[:-1] if ANSI.sub("", entry).startswith("Cell ")]
    return mine[-1:] + traceback[-1:]


def write_sources(notebooks: Path, src: Path) -> list[dict]:
    entries = series(notebooks)
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    (src / "index.md").write_text(landing_page(entries))
    (src / "api.md").write_text(API_PAGE)
    for e in entries:
        nb = book_notebook(json.loads(e["path"].read_text()), e["name"])
        (src / "notebooks" / f"{e['name']}.ipynb").write_text(json.dumps(nb, indent=1))
    return entries


def build(notebooks: Path, out: Path, src: Path) -> int:
    from sphinx.cmd.build import build_main

    started = time.perf_counter()
    entries = write_sources(notebooks, src)
    if out.exists():
        shutil.rmtree(out)
    status = build_main(["-b", "html", "-q", "-j", "auto", "-c", str(CONF_DIR), "-d", str(src / ".doctrees"),
                         str(src), str(out)])
    if status == 0:
        print(f"book: {len(entries)} notebooks -> {out}/index.html in {time.perf_counter() - started:.1f} s")
    return status


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    parser.add_argument("--src", type=Path, default=None, help="staging folder (default: OUT next to it, -src)")
    args = parser.parse_args(argv)
    src = args.src or args.out.with_name(args.out.name + "-src")
    return build(args.notebooks.resolve(), args.out.resolve(), src.resolve())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
