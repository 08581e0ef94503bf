"""Grad mode: whether new operations are recorded in the graph.

    with tg.no_grad():          # nothing in here builds a graph
        w -= lr * w.grad

The flag is per thread, as in torch. Each manager also works as a decorator.
"""
import functools
import threading

class _State(threading.local):
    enabled = True   # each new thread starts with grad mode on


_state = _State()


def is_grad_enabled():
    """True when operations on Variables that require grad are recorded."""
    return _state.enabled


def _set_enabled(mode):
    _state.enabled = bool(mode)


class _GradModeContext:
    """Base for the grad-mode managers: set a mode on entry, restore the previous one on exit."""

    mode = True

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(self.mode)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Turn graph recording off: results do not require grad, nothing is saved for backward."""

    mode = False


class enable_grad(_GradModeContext):
    """Turn graph recording back on, e.g. inside a `no_grad` block."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to `mode`; takes effect at once, and as a context manager restores the old mode on exit."""

    def __init__(self, mode):
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False

    def __call__(self, fn):
        _set_enabled(self.prev)
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper
