"""Short errors in notebooks: the learner's line and the message, never teachgrad's or torch's frames.

    %load_ext teachgrad.short_errors

An IPython extension. An error shows three things: the header, the line of the cell that raised it
(with a little context), and the message. A SyntaxError (a typo) shows the line and a caret under
the place Python stopped, as plain IPython does. Frames inside teachgrad, torch or functions the cell
called are left out (IPython leaves out frames marked `__tracebackhide__` in the same spirit);
`%unload_ext teachgrad.short_errors` brings back the whole traceback.

Guarded by tests/test_short_errors.py.
"""
import os
import re
import types

import torch

import teachgrad

_LIBRARY_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (teachgrad, torch))

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _is_library(tb: types.TracebackType) -> bool:
    return tb.tb_frame.f_code.co_filename.startswith(_LIBRARY_DIRS)


def without_library_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """IPython's own frame (which it skips) and the first frame after it outside teachgrad and torch:
    the line of the cell that ran."""
    if tb is None:
        return None
    user = tb.tb_next
    while user is not None and _is_library(user):
        user = user.tb_next
    if user is not None:
        user = types.TracebackType(None, user.tb_frame, user.tb_lasti, user.tb_lineno)
    return types.TracebackType(user, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)


def _handler(shell, etype, value, tb, tb_offset=None):
    """Show the error without library frames (IPython leaves the showing to a custom handler)."""
    if issubclass(etype, SyntaxError):
        # A typo: no frame to show, but the line and the caret under it, as plain IPython shows them.
        shell._showtraceback(etype, value, shell.SyntaxTB.structured_traceback(etype, value, []))
        return
    short = without_library_frames(tb)
    stb = shell.InteractiveTB.structured_traceback(etype, value.with_traceback(short), short, tb_offset=tb_offset)
    stb = [entry for entry in stb if _ANSI.sub("", entry).strip("-\n ")]   # the rule line above the header
    shell._showtraceback(etype, value, stb)


def load_ipython_extension(ipython) -> None:
    """Show the cell's line with context (IPython's "Context" mode) and the message, nothing deeper."""
    ipython.InteractiveTB.set_mode("Context")
    ipython.set_custom_exc((Exception,), _handler)


def unload_ipython_extension(ipython) -> None:
    ipython.set_custom_exc((), None)
