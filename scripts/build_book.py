#!/usr/bin/env python
"""Build the book: a static site of the whole series from the notebooks' stored outputs.

    python scripts/build_book.py                       # notebooks/ -> build/book/
    python scripts/build_book.py --notebooks DIR --out DIR

    TEACHGRAD_REPOSITORY=https://host/owner/teachgrad python scripts/build_book.py   # source + Binder links

Writes the pages into a staging folder (build/book-src): a landing page listing the series in
order (titles from the notebooks, "what it teaches" from the README's table) with a BibTeX entry
made from CITATION.cff, a page on the API, the pages of docs/ (as "Guides", in the order the
README lists them), and a copy of each notebook with a "Run this notebook
yourself" box (downloads, source, the two commands, Binder), its solutions folded behind "Show
solution" (worded for the book, nbgrader's markers left out), its deliberate errors cut to the
learner's line and the message, and alt text on its drawings. Then Sphinx with MyST-NB
(book/conf.py) turns them into HTML without running a single cell, and each notebook and its
student edition are put beside their page for download.
"""
import argparse
import ast
import copy
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "book"
DOCS = ROOT / "docs"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"   # as scripts/make_student.py

LAUNCH_NOTE = """\
:::{{admonition}} Run this notebook yourself
:class: tip tg-run
Every cell on this page was run and checked against PyTorch; what you read are the stored outputs.

- **Download** <a class="tg-download" href="{name}.ipynb" download>{name}.ipynb</a>, the notebook as on
  this page, or <a class="tg-download-student" href="student/{name}.ipynb" download>the student
  edition</a>: the same notebook without its solutions (the exercise is yours to write).
- **Source**: {source}
- **On your machine**: clone the repository, then

  ```bash
  make lab    # set up, then open JupyterLab
  make test   # set up, then run every test
  ```

  and open `{name}.ipynb`. With conda instead: `conda env create -f environment.yml`,
  `conda activate teachgrad`, `jupyter lab notebooks/{name}.ipynb`.
- **In the cloud**: {binder}
:::
"""

# A BinderHub builds the repository from its environment.yml; `v2/git/<clone URL>` works wherever the
# repository is hosted (mybinder.org is the public BinderHub; --binder picks another).
BINDER = "https://mybinder.org"
SOURCE_KNOWN = '<a class="tg-source" href="{url}">notebooks/{name}.ipynb</a> in the repository.'
SOURCE_UNKNOWN = ('<a class="tg-source" href="{name}.ipynb">{name}.ipynb</a>, the notebook this page is built '
                  'from (it is `notebooks/{name}.ipynb` in the repository).')
BINDER_KNOWN = ('<a class="tg-binder" href="{url}">launch it on Binder</a>: JupyterLab in your browser, set '
                'up from the repository\'s `environment.yml` (the first launch takes a few minutes).')
BINDER_UNKNOWN = ('any BinderHub runs it: give it the repository\'s address; it sets up from '
                  '`environment.yml` and opens JupyterLab, where you open `notebooks/{name}.ipynb`.')

# In JupyterLab a solution cell is collapsed and opened by clicking; in the book it is folded
# behind "Show solution". A solution's introduction that explains the clicking reads, in the book:
BOOK_SOLUTION_NOTE = ("Try the exercise first. The reasoning is folded under *Why*; the code is folded "
                      "behind **Show solution** below it.")
JUPYTERLAB_WORDS = re.compile(r"\bclick|\bcollapsed\b|…", re.I)

SOLUTION_PROMPTS = {"code_prompt_show": "Show solution", "code_prompt_hide": "Hide solution"}

API_PAGE = """\
# The teachgrad API

`import teachgrad as tg`, then use `tg.` where you would write `torch.`: the same names, arguments,
values, gradients and error messages, on the subset teachgrad covers.

```{eval-rst}
.. automodule:: teachgrad
   :members: Variable, Function, once_differentiable, grad, no_grad, enable_grad, set_grad_enabled, is_grad_enabled

.. automodule:: teachgrad.core.engine
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


def guides(docs: Path = DOCS) -> list[dict]:
    """The pages of docs/ for the book: each page's name and title, in the order the README's "Read more"
    list names them (`docs/speed.md`), then any page it does not name, by name."""
    pages = {path.stem: path for path in sorted(docs.glob("*.md"))}
    named = re.findall(r"docs/([\w-]+)\.md", _readme().split("## Read more", 1)[-1])
    order = [name for name in dict.fromkeys(named) if name in pages] + [n for n in pages if n not in named]
    return [{"name": name, "path": pages[name], "title": _markdown_title(pages[name].read_text()) or name}
            for name in order]


def _markdown_title(text: str) -> str:
    return next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")


def two_commands() -> str:
    """The README's fenced block under "Two commands"."""
    section = _readme().split("## Two commands", 1)[-1]
    found = re.search(r"```bash\n.*?```", section, re.S)
    return found.group(0) if found else "```bash\nmake lab\nmake test\n```"


def landing_page(entries, repository: str | None = None, guide_pages=()) -> str:
    rows = "\n".join(f"| {e['name'][:2]} | [{e['title']}](notebooks/{e['name']}.ipynb) | {e['teaches']} |"
                     for e in entries)
    toc = "\n".join(f"notebooks/{e['name']}" for e in entries)
    guide_list = "\n".join(f"- [{g['title']}](docs/{g['name']}.md)" for g in guide_pages)
    guide_toc = "\n".join(f"docs/{g['name']}" for g in guide_pages)
    guide_section = f"""
## Guides

The repository's `docs/`, on what the notebooks do not cover:

{guide_list}
""" if guide_pages else ""
    guide_tree = f"""
```{{toctree}}
:hidden:
:caption: Guides
:maxdepth: 1

{guide_toc}
```
""" if guide_pages else ""
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

| no. | notebook | what it teaches |
|---|---|---|
{rows}

The [API page](api.md) lists what `teachgrad` offers.
{guide_section}
## Cite this book

To cite teachgrad, its notebooks or these pages:

```bibtex
{bibtex(citation(), repository)}
```

The same is in the repository's `CITATION.cff`. teachgrad, its notebooks and this book are free to use,
change and share under the MIT licence (the repository's `LICENSE`).

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
{guide_tree}"""


def citation() -> dict:
    """CITATION.cff, read."""
    import yaml   # comes with myst-parser

    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def bibtex(cff: dict, repository: str | None = None, year: int | None = None) -> str:
    """A BibTeX entry made from CITATION.cff (year: the book's build year unless the file dates a release)."""
    released = str(cff.get("date-released", ""))
    year = year or (int(released[:4]) if released[:4].isdigit() else time.gmtime().tm_year)
    authors = " and ".join("{" + a["name"] + "}" if "name" in a else f"{a['family-names']}, {a['given-names']}"
                           for a in cff["authors"])
    fields = [("title", "{" + cff["title"] + "}"), ("author", authors), ("year", str(year)),
              ("note", f"Version {cff['version']}, {cff['license']} licence")]
    web = cff.get("repository-code") or (web_address(repository) if repository else None)
    if web:
        fields.append(("howpublished", f"\\url{{{web}}}"))
    body = ",\n".join(f"  {key} = {{{value}}}" for key, value in fields)
    return f"@misc{{teachgrad,\n{body}\n}}"


def book_notebook(nb: dict, name: str, repository: str | None = None, binder: str = BINDER,
                  ref: str = "HEAD") -> dict:
    """A copy for the page: the launch note, solutions folded and worded for the book, errors short,
    drawings with alt text that says what they show."""
    nb = copy.deepcopy(nb)
    note = {"cell_type": "markdown", "id": "launch-note", "metadata": {},
            "source": launch_note(name, repository, binder, ref)}
    first_markdown = next((i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"), -1)
    nb["cells"].insert(first_markdown + 1, note)
    known = constants(nb)
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            cell["metadata"]["tags"] = [*tags, "hide-cell"]
            cell["metadata"]["mystnb"] = {**cell["metadata"].get("mystnb", {}), **SOLUTION_PROMPTS}
            if cell["cell_type"] == "markdown":
                cell["source"] = book_solution_words(_text(cell["source"]))
        if cell["cell_type"] == "code":
            cell["source"] = without_solution_markers(_text(cell["source"]))
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                output["traceback"] = short_traceback(output["traceback"])
            _give_alt_text(cell, output, known)
    nb["metadata"].pop("widgets", None)   # the widgets' state is for a live kernel
    return nb


def launch_note(name: str, repository: str | None, binder: str = BINDER, ref: str = "HEAD") -> str:
    """The "Run this notebook yourself" box: downloads, the source, the two commands, Binder."""
    web = web_address(repository) if repository else None
    if web:
        source = SOURCE_KNOWN.format(url=f"{web}/blob/{ref}/notebooks/{name}.ipynb", name=name)
        launch = BINDER_KNOWN.format(url=binder_url(web, name, binder, ref))
    else:
        source, launch = SOURCE_UNKNOWN.format(name=name), BINDER_UNKNOWN.format(name=name)
    return LAUNCH_NOTE.format(name=name, source=source, binder=launch)


def web_address(repository: str) -> str | None:
    """`git@host:owner/repo.git`, `ssh://git@host/owner/repo` or `https://host/owner/repo.git` ->
    `https://host/owner/repo`; None for a local path (nothing a reader could open)."""
    url = repository.strip().rstrip("/")
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):(?!//)(.+)", url)
    if scp:
        url = f"https://{scp.group(1)}/{scp.group(2)}"
    url = re.sub(r"^(?:ssh|git)://(?:[\w.-]+@)?", "https://", url)
    if not re.match(r"https?://[\w.-]+/", url):
        return None
    return url[:-4] if url.endswith(".git") else url


def binder_url(web: str, name: str, binder: str = BINDER, ref: str = "HEAD") -> str:
    """A BinderHub's launch address for the repository at `web`, opening the notebook in JupyterLab.
    `v2/git/` takes any git host's clone address (BinderHub's `gh/`, `gl/` ... are shortcuts)."""
    clone = urllib.parse.quote(f"{web}.git", safe="")
    path = urllib.parse.quote(f"lab/tree/notebooks/{name}.ipynb", safe="/")
    return f"{binder.rstrip('/')}/v2/git/{clone}/{ref}?urlpath={path}"


def book_solution_words(source: str) -> str:
    """A solution's introduction reworded for the book: paragraphs on JupyterLab's clicking go."""
    paragraphs = source.split("\n\n")
    kept = [p for p in paragraphs if p.lstrip().startswith(("#", "<")) or not JUPYTERLAB_WORDS.search(p)]
    if len(kept) < len(paragraphs):
        at = next((i for i, p in enumerate(paragraphs) if p not in kept), len(kept))
        kept.insert(at, BOOK_SOLUTION_NOTE)
    return "\n\n".join(kept)


def without_solution_markers(source: str) -> str:
    """nbgrader's `### BEGIN SOLUTION` / `### END SOLUTION` lines are for graders, not readers."""
    lines = source.split("\n")
    return "\n".join(line for line in lines if line.strip() not in (SOLUTION_BEGIN, SOLUTION_END))


def constants(nb: dict) -> dict:
    """The notebook's constants: names its code cells bind, at the top level, to a number or a string
    (`STEPS = 300`), so that a plot's alt text can say 300 where its title has `{STEPS}`."""
    found = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(_text(cell["source"]))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, (int, float, str)) and not isinstance(node.value.value, bool):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node.value.value
    return found


def _give_alt_text(cell: dict, output: dict, known: dict | None = None):
    """A graph's <img> gets its nodes in order (from its DOT source); a plot, what its cell draws (with the
    notebook's constants, `known`, filled into its f-strings)."""
    data = output.get("data", {})
    html_image = _text(data.get("text/html", ""))
    if "image/svg+xml" in data and html_image.startswith("<img") and "digraph" in _text(data.get("text/plain", "")):
        alt = graph_alt(_text(data["text/plain"]))
        data["text/html"] = re.sub(r'alt="[^"]*"', lambda _: f'alt="{html.escape(alt)}"', html_image, count=1)
    elif "image/png" in data and cell["cell_type"] == "code":
        options = cell["metadata"].setdefault("mystnb", {}).setdefault("image", {})
        options.setdefault("alt", plot_alt(_text(cell["source"]), known))


DOT_NODE = re.compile(r"^\s*(\w+)\s*\[(.*)\]\s*$")
DOT_LABEL = re.compile(r'label=(<.*>|"(?:[^"\\]|\\.)*"|[^\s\]]+)')


def graph_alt(dot: str) -> str:
    """`Computation graph, 5 nodes in order: t (data 16); MulBackward0; ...` from graphviz DOT text."""
    labels, legend = [], False
    for line in dot.splitlines():
        node = DOT_NODE.match(line)
        if not node or node.group(1) in ("graph", "node", "edge"):
            continue
        if node.group(1) == "legend":
            legend = True
            continue
        found = DOT_LABEL.search(node.group(2))
        label = found.group(1) if found else node.group(1)
        if label.startswith("<"):
            label = re.sub(r"<[^>]*>", " ", label[1:-1])
        label = label.strip('"').replace('\\"', '"').replace("\\l", "\n").replace("\\n", "\n")
        parts = [" ".join(part.split()) for part in label.split("\n") if part.strip()]
        labels.append(parts[0] + (f" ({', '.join(parts[1:])})" if parts[1:] else ""))
    nodes = "node" if len(labels) == 1 else "nodes"
    text = f"Computation graph, {len(labels)} {nodes} in order: " + "; ".join(labels)
    return text + (". With a legend of the node colours." if legend else ".")


PLOT_KINDS = {"plot": "lines", "scatter": "points", "contourf": "shaded regions", "contour": "contour lines",
              "bar": "bars", "hist": "a histogram", "imshow": "an image"}


def plot_alt(source: str, known: dict | None = None) -> str:
    """What a matplotlib cell draws, from its calls: titles, axes, what is drawn, the legend. An f-string's
    `{NAME}` is NAME's value where `known` has it (the notebook's constants), else the name itself."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "A plot (its code is in the cell above)."
    titles, xs, ys, kinds, labels = [], [], [], [], []
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    for call in calls:   # in the order they are written
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = _words(call.args[0], known) if call.args else None
        if name in ("set_title", "title", "suptitle") and first:
            titles.append(first)
        elif name in ("set_xlabel", "xlabel") and first:
            xs.append(first)
        elif name in ("set_ylabel", "ylabel") and first:
            ys.append(first)
        if name in PLOT_KINDS and PLOT_KINDS[name] not in kinds:
            kinds.append(PLOT_KINDS[name])
        label = next((_words(k.value, known) for k in call.keywords if k.arg == "label"), None)
        if label and label not in labels:
            labels.append(label)
    text = "Plot: " + "; ".join(titles) + "." if titles else "Plot."
    axes = ([f"{y} against {x}" for x, y in zip(xs, ys)] or [f"horizontal axis: {x}" for x in xs]
            or [f"vertical axis: {y}" for y in ys])
    if axes:
        text += " " + "; ".join(axes)[:1].upper() + "; ".join(axes)[1:] + "."
    if kinds:
        text += " Drawn as " + ", ".join(kinds) + "."
    if labels:
        text += " Labelled: " + "; ".join(labels) + "."
    return text


def _words(node, known: dict | None = None) -> str | None:
    """A string argument as text: a plain string, or an f-string with each `{x}` shown as x's value where
    `known` has it, else as x."""
    known = known or {}

    def field(value):
        return str(known[value.id]) if isinstance(value, ast.Name) and value.id in known else ast.unparse(value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else field(v.value) for v in node.values)
    return None


def short_traceback(traceback: list[str]) -> list[str]:
    """The learner's own line and the message: no separator, no header, no library frames."""
    mine = [entry for entry in traceback[:-1] if ANSI.sub("", entry).startswith("Cell ")]
    return mine[-1:] + traceback[-1:]


def write_sources(notebooks: Path, src: Path, repository: str | None = None, binder: str = BINDER,
                  ref: str = "HEAD") -> list[dict]:
    entries = series(notebooks)
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    guide_pages = guides()
    (src / "index.md").write_text(landing_page(entries, repository, guide_pages))
    (src / "api.md").write_text(API_PAGE)
    (src / "docs").mkdir()
    for g in guide_pages:
        shutil.copyfile(g["path"], src / "docs" / f"{g['name']}.md")
    for e in entries:
        nb = book_notebook(json.loads(e["path"].read_text()), e["name"], repository, binder, ref)
        (src / "notebooks" / f"{e['name']}.ipynb").write_text(json.dumps(nb, indent=1))
    return entries


def write_downloads(entries, out: Path):
    """Beside each page notebooks/NAME.html: NAME.ipynb as stored, and student/NAME.ipynb (scripts/make_student.py)."""
    import nbformat

    make_student = _script("make_student")
    (out / "notebooks" / "student").mkdir(parents=True, exist_ok=True)
    for e in entries:
        shutil.copyfile(e["path"], out / "notebooks" / f"{e['name']}.ipynb")
        nbformat.write(make_student.student_edition(e["path"]), out / "notebooks" / "student" / f"{e['name']}.ipynb")


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_repository() -> str | None:
    """Where the repository is hosted: $TEACHGRAD_REPOSITORY, else the git remote `origin` (if any)."""
    if os.environ.get("TEACHGRAD_REPOSITORY"):
        return os.environ["TEACHGRAD_REPOSITORY"]
    try:
        found = subprocess.run(["git", "-C", str(ROOT), "remote", "get-url", "origin"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    url = found.stdout.strip()
    return url if found.returncode == 0 and url and web_address(url) else None


def build(notebooks: Path, out: Path, src: Path, repository: str | None = None, binder: str = BINDER,
          ref: str = "HEAD") -> int:
    from sphinx.cmd.build import build_main

    started = time.perf_counter()
    entries = write_sources(notebooks, src, repository, binder, ref)
    if out.exists():
        shutil.rmtree(out)
    status = build_main(["-b", "html", "-q", "-j", "auto", "-c", str(CONF_DIR), "-d", str(src / ".doctrees"),
                         str(src), str(out)])
    if status == 0:
        write_downloads(entries, out)
        print(f"book: {len(entries)} notebooks -> {out}/index.html in {time.perf_counter() - started:.1f} s")
    return status


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    parser.add_argument("--src", type=Path, default=None, help="staging folder (default: OUT next to it, -src)")
    parser.add_argument("--repository", default=default_repository(),
                        help="the repository's address, for the source links and the Binder launch "
                             "(default: $TEACHGRAD_REPOSITORY, else the git remote origin; none: no such links)")
    parser.add_argument("--binder", default=BINDER, help=f"the BinderHub to launch on (default: {BINDER})")
    parser.add_argument("--ref", default="HEAD", help="the branch, tag or commit they point at (default: HEAD)")
    args = parser.parse_args(argv)
    src = args.src or args.out.with_name(args.out.name + "-src")
    return build(args.notebooks.resolve(), args.out.resolve(), src.resolve(), args.repository, args.binder, args.ref)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
