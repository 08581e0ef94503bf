"""Grad mode: whether new operations are recorded in the graph.

    with tg.no_grad():          # nothing in here builds a graph
        w -= lr * w.grad

There is one flag, torch's own (per thread, as torch's): `tg.no_grad()` and `torch.no_grad()`,
`tg.set_grad_enabled` and `torch.set_grad_enabled`, `tg.inference_mode` and `torch.inference_mode`
are interchangeable, and nested in any mix. Each manager also works as a decorator, on functions and
on generators (the mode holds while the generator runs), and `no_grad`, `enable_grad` and
`inference_mode` also bare: `@tg.no_grad`.

`inference_mode` is `no_grad` made strict: what it computes are *inference tensors*, which
can never enter a graph later (saved for backward, or changed in place outside the mode).

Guarded by tests/test_engine.py (grad modes, per thread), tests/test_inference_mode.py and
tests/test_torch_boundary.py (torch's own managers, mixed with teachgrad's).
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import TYPE_CHECKING, Any, Callable, Literal, TypeVar

import torch

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    from typing_extensions import Self   # (typing.Self from Python 3.11)
    F = TypeVar("F", bound=Callable[..., Any])   # a function: a decorator returns one of the same type


# torch's switches, read and set directly: a learner's `with torch.no_grad():` turns teachgrad's recording
# off too (a separate flag would let teachgrad record where the learner asked for nothing to be)
is_grad_enabled = torch._C.is_grad_enabled
set_enabled = torch._C._set_grad_enabled

# Forward mode's level: -1 while no dual level is open (teachgrad/rules/tangents.py opens and closes it). Every op
# reads it (`forward_level >= 0`), so forward mode costs one comparison per op while it is not in use.
forward_level = -1

INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
    "in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor "
    "and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)
INFERENCE_REQUIRES_GRAD = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."


def is_inference_mode_enabled() -> bool:
    """True inside `inference_mode()` (teachgrad's or torch's: they are one)."""
    return torch.is_inference_mode_enabled()


class _DecoratorContextManager:
    """Base for the managers: a context manager that also decorates functions and generators."""

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> Self:
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A manager without arguments may decorate bare: `@tg.no_grad` as well as `@tg.no_grad()`."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Self:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


def _wrap_generator(make_context, fn):
    """Run each step of the generator `fn` returns inside a fresh context from `make_context`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        generator = fn(*args, **kwargs)
        try:
            with make_context():
                response = generator.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        generator.close()
                    raise
                except BaseException:
                    with make_context():
                        response = generator.throw(*sys.exc_info())
                else:
                    with make_context():
                        response = generator.send(request)
        except StopIteration as stop:
            return stop.value

    return wrapper


class _GradModeContext(_NoParamDecoratorContextManager):
    """Set grad mode on entry, restore the previous one on exit."""

    mode = True

    def __enter__(self) -> None:
        self.prev = is_grad_enabled()
        set_enabled(self.mode)

    def __exit__(self, *exc: object) -> Literal[False]:
        set_enabled(self.prev)
        return False


class no_grad(_GradModeContext):
    """Turn graph recording off: results do not require grad, nothing is saved for backward."""

    mode = False


class enable_grad(_GradModeContext):
    """Turn graph recording back on, e.g. inside a `no_grad` block."""

    mode = True


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to `mode`; takes effect at once, and as a context manager restores the old mode on exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}")
        self.prev = is_grad_enabled()
        self.mode = mode
        set_enabled(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> Literal[False]:
        set_enabled(self.prev)
        return False

    def __call__(self, fn: F) -> F:
        set_enabled(self.prev)
        return super().__call__(fn)

    def clone(self) -> Self:
        return self.__class__(self.mode)

    def __repr__(self) -> str:
        return f"teachgrad.autograd.grad_mode.set_grad_enabled(mode={self.mode})"   # torch.autograd.grad_mode's, at teachgrad's path


class inference_mode(_DecoratorContextManager):
    """Like `no_grad`, and what is computed inside are inference tensors: they never enter a graph.

    Also `inference_mode(False)` (a normal region inside one), and bare `@tg.inference_mode`.
    """

    def __new__(cls, mode: bool | Callable[..., Any] = True) -> Self:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        # torch's own: its kernels make inference tensors, and grad mode goes off (on for inference_mode(False))
        self._torch_mode = torch.inference_mode(self.mode)
        self._torch_mode.__enter__()

    def __exit__(self, *exc: object) -> Literal[False]:
        self._torch_mode.__exit__(*exc)
        return False

    def clone(self) -> Self:
        return self.__class__(self.mode)
