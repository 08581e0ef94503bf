"""`%load_ext teachgrad.short_errors`: short tracebacks that never lose the learner's own line.

An IPython shell runs in this process, with the extension loaded, and what it shows for an error is read
back: a typo (SyntaxError) keeps the line and the caret under it, as plain IPython shows them; an error
inside teachgrad or torch shows the cell's line and the message, and no library frame.
"""
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def shell():
    shell = InteractiveShell.instance(colors="nocolor")
    shown = []
    original = shell._showtraceback

    def record(etype, value, stb):
        shown.append(stb)

    shell._showtraceback = record
    shell.extension_manager.load_extension("teachgrad.short_errors")
    shell.run_cell("import teachgrad as tg, torch")
    yield shell, shown
    shell.extension_manager.unload_extension("teachgrad.short_errors")
    shell._showtraceback = original
    InteractiveShell.clear_instance()


def _text(stb):
    return ANSI.sub("", "\n".join(stb))


@pytest.mark.parametrize("cell, line", [
    ("a = [1 2]", "a = [1 2]"),                                   # Perhaps you forgot a comma?
    ("x = 1\nif x > 0\n    print(x)", "if x > 0"),                # expected ':'
    ("y = (1 +", "y = (1 +"),                                      # '(' was never closed
])
def test_a_syntax_error_keeps_the_line_and_the_caret(shell, cell, line):
    shell, shown = shell
    result = shell.run_cell(cell)
    assert isinstance(result.error_before_exec, SyntaxError)
    (stb,) = shown
    text = _text(stb)
    lines = text.splitlines()
    assert any(l.strip() == line for l in lines), f"the learner's line is not shown:\n{text}"
    at = next(i for i, l in enumerate(lines) if l.strip() == line)
    assert "^" in lines[at + 1], f"no caret under the line:\n{text}"
    assert "SyntaxError" in lines[-1], text
    assert len(stb) <= 3 and len(lines) <= 8, f"a long traceback for a typo:\n{text}"


def test_an_indentation_error_keeps_the_line_too(shell):
    shell, shown = shell
    shell.run_cell("def f():\nreturn 1")
    text = _text(shown[0])
    assert "return 1" in text and "^" in text and "IndentationError" in text, text


def test_an_error_inside_the_library_shows_only_the_learners_line(shell):
    shell, shown = shell
    result = shell.run_cell("a = tg.ones(2, 3)\nb = tg.ones(2, 3)\nc = a @ b   # shapes do not fit")
    assert isinstance(result.error_in_exec, RuntimeError)
    (stb,) = shown
    text = _text(stb)
    assert len(stb) <= 3, f"{len(stb)} traceback entries:\n{text}"
    assert "c = a @ b" in text and "Cell In[" in text
    assert "teachgrad/" not in text and "torch/" not in text, text
    torch_message = str(result.error_in_exec)
    assert text.rstrip().endswith(torch_message.splitlines()[-1]), text


def test_unloading_brings_back_the_whole_traceback(shell):
    shell, shown = shell
    shell.extension_manager.unload_extension("teachgrad.short_errors")
    shell.run_cell("c = tg.ones(2, 3) @ tg.ones(2, 3)")
    assert "teachgrad/" in _text(shown[0])
    shell.extension_manager.load_extension("teachgrad.short_errors")
