"""The checks as a graded test cell calls them: loaded afresh from teachgrad's files, every time.

In the course nbgrader grades (scripts/make_student.py), a learner's answer cell runs before the test cell in
the same kernel: an answer cell that defines `check_dg` again, or replaces it in `teachgrad.exercises`, would
otherwise be the check that grades it. The test cell asks this module instead:

    from teachgrad.exercises.grading import fresh_check
    verdict = fresh_check("check_dg")(dg)

and gets the check as the files of teachgrad.exercises define it, from a private copy of the package made for
this call alone (never put in `sys.modules` for later code to find).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Callable

__all__ = ["fresh_check"]

_PRIVATE = "_teachgrad_exercises_as_shipped"


def fresh_check(name: str) -> Callable:
    """The check called `name` (e.g. "check_dg"), from a copy of teachgrad.exercises loaded anew from its files."""
    folder = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location(_PRIVATE, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    package = importlib.util.module_from_spec(spec)
    ours = lambda key: key == _PRIVATE or key.startswith(_PRIVATE + ".")   # noqa: E731
    sys.modules[_PRIVATE] = package          # the package's relative imports find it there while it loads
    try:
        spec.loader.exec_module(package)
        return getattr(package, name)
    finally:
        for key in [key for key in sys.modules if ours(key)]:
            del sys.modules[key]
