"""Sphinx configuration of the book (`make book`): the notebooks' stored outputs, never re-run.

scripts/build_book.py writes the pages next to this file's settings (build/book-src) and runs Sphinx.
"""
import importlib.util
import inspect
import os
import re
import shutil

project = "teachgrad"
author = "the teachgrad authors"
copyright = "the teachgrad authors (MIT licence)"
html_title = "teachgrad: autograd, rebuilt to be read"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
exclude_patterns = ["_build", ".doctrees", "**.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# Stored outputs only: the book shows what nbval checks, and builds in seconds.
nb_execution_mode = "off"
# The live ipywidgets slider needs a kernel; the page takes the stepper's self-contained HTML
# (and loads no widget scripts from the internet).
nb_mime_priority_overrides = [(builder, "application/vnd.jupyter.widget-view+json", None)
                              for builder in ("html", "dirhtml", "singlehtml")]
nb_ipywidgets_js = {}
nb_merge_streams = True
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "amsmath"]
myst_heading_anchors = 3
myst_dmath_double_inline = True   # `$$...$$` inside a paragraph is a displayed formula, as in JupyterLab

# Maths: MathJax 3 served from the built site (_static/mathjax), never from a CDN, so the book reads
# offline. It comes from the PyPI package django-static-mathjax (the `book` extra; Apache-2.0, its
# LICENSE is copied along); only the files the pages use are copied (see _copy_mathjax).
MATHJAX_PACKAGE = "mathjax"           # the import name of django-static-mathjax
MATHJAX_FILES = ["LICENSE", "es5/tex-chtml.js", "es5/output/chtml/fonts/woff-v2"]
mathjax_path = "mathjax/es5/tex-chtml.js"
mathjax3_config = {}   # MathJax 3's defaults; MyST adds which HTML classes it typesets

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}

html_theme = "sphinx_book_theme"
html_static_path = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "_static")]
html_css_files = ["teachgrad.css"]
html_js_files = ["teachgrad.js"]   # the phone's navigation drawer (a theme bug worked around), drawings full-size

html_favicon = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_static", "favicon.svg")
# "auto": the page follows the reader's device (prefers-color-scheme), dark or light, until the reader
# picks one with the theme's switch. Unset, the theme logs "invalid theme mode" on a first visit.
html_context = {"default_mode": "auto"}
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "show_prev_next": True,
    "navigation_with_keys": False,
}

# teachgrad's docstrings are plain text read in a terminal: `code`, indented examples, numbered steps.
CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LIST_ITEM = re.compile(r"\d+\. |[-*] ")


def _as_written(obj, lines):
    """The docstring indented as in the source, relative to its closing quotes.

    inspect.cleandoc drops the common indentation, so a summary line followed only by an indented
    example loses the example's indentation; the closing quotes' line keeps the body's.
    """
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return lines
    raw, clean = doc.splitlines(), inspect.cleandoc(doc).splitlines()
    if len(raw) < 2 or raw[-1].strip() or lines[:len(clean)] != clean:
        return lines
    base = len(raw[-1])
    body = [line[base:] if line[:base].isspace() else line.strip() for line in raw[1:]]
    return [raw[0].strip(), *body] + lines[len(clean):]


def _as_rest(app, what, name, obj, options, lines):
    """Make such a docstring valid reST: code as literals, indented examples as literal blocks."""
    out, block, in_list = [], False, False
    lines[:] = _as_written(obj, lines)
    for line in lines:
        if line.strip() and line.startswith("    ") and not block and not in_list:
            if out and out[-1].strip():
                out.append("")
            out += ["::", ""]
            block = True
        elif line.strip() and not line.startswith(" ") and (block or (in_list and not LIST_ITEM.match(line))):
            if out and out[-1].strip():
                out.append("")
            block = False
        if not block:
            in_list = bool(LIST_ITEM.match(line)) or (in_list and line.startswith(" "))
            line = CODE.sub(lambda m: f"``{m.group(1)}``\\ ", line)
        out.append(line)
    lines[:] = out


def _skip_torchs_methods(app, what, name, obj, skip, options):
    """The torch Tensor methods Variable gets from teachgrad.interop are torch's: not listed on the API page."""
    return True if getattr(obj, "runs_torchs", False) else None


def _mathjax_folder():
    spec = importlib.util.find_spec(MATHJAX_PACKAGE)   # found, not imported: it is a Django app
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("MathJax is not installed: run `make setup` (the `book` extra brings django-static-mathjax)")
    return os.path.join(spec.submodule_search_locations[0], "static", "mathjax")


def _copy_mathjax(app, exception):
    """The part of MathJax the book uses, into the site's _static/mathjax."""
    if exception is not None or app.builder.format != "html":
        return
    source, target = _mathjax_folder(), os.path.join(app.outdir, "_static", "mathjax")
    for name in MATHJAX_FILES:
        src, dst = os.path.join(source, name), os.path.join(target, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copyfile(src, dst)


def setup(app):
    _mathjax_folder()   # fail early, saying what to install
    app.set_html_assets_policy("always")   # MathJax on every page: a heading's formula shows in every page's navigation
    app.connect("build-finished", _copy_mathjax)
    app.connect("autodoc-process-docstring", _as_rest)
    app.connect("autodoc-skip-member", _skip_torchs_methods)
