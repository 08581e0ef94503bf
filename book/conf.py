"""Sphinx configuration of the book (`make book`): the notebooks' stored outputs, never re-run.

scripts/build_book.py writes the pages next to this file's settings (build/book-src) and runs Sphinx.
"""
import inspect
import os
import re

project = "teachgrad"
author = "the teachgrad authors"
copyright = "teachgrad authors"
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
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}

html_theme = "sphinx_book_theme"
html_static_path = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "_static")]
html_css_files = ["teachgrad.css"]
html_favicon = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_static", "favicon.svg")
html_context = {"default_mode": "light"}   # unset, the theme logs "invalid theme mode" on a first visit
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


def setup(app):
    app.connect("autodoc-process-docstring", _as_rest)
    app.connect("autodoc-skip-member", _skip_torchs_methods)
