"""Short errors in notebooks: the learner's line and the message, never teachgrad's or torch's frames.

    %load_ext teachgrad.short_errors

An IPython extension. An error shows the frames of the notebook's own code (the cell, and functions
the cell defined) and the message; frames inside teachgrad or torch are left out, as IPython leaves
out frames marked `__tracebackhide__`. At most the header, the cell's frames and the message remain.
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
    """The same traceback without teachgrad's and torch's frames (None if nothing else is left)."""
    kept = []
    while tb is not None:
        if not _is_library(tb):
            kept.append(tb)
        tb = tb.tb_next
    short = None
    for frame in reversed(kept):
        short = types.TracebackType(short, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return short


def _handler(shell, etype, value, tb, tb_offset=None):
    """Show the error without library frames (IPython leaves the showing to a custom handler)."""
    short = without_library_frames(tb)
    stb = shell.InteractiveTB.structured_traceback(etype, value.with_traceback(short), short, tb_offset=tb_offset)
    stb = [entry for entry in stb if _ANSI.sub("", entry).strip("-\n ")]   # the rule line above the header
    shell._showtraceback(etype, value, stb)


def load_ipython_extension(ipython) -> None:
    """Show the cell's lines with context (IPython's "Context" mode), without library frames."""
    ipython.InteractiveTB.set_mode("Context")
    ipython.set_custom_exc((Exception,), _handler)


def unload_ipython_extension(ipython) -> None:
    ipython.set_custom_exc((), None)
