"""A node's saved tensors under torch's names: `node._saved_self`, `node._raw_saved_self`, and the freed message.

torch shows what a node saved as attributes named for the op's arguments (`_saved_self`, `_saved_other`,
`_saved_result`), which `dir(node)` lists once the node has saved something; `_raw_saved_<name>` is the saved
tensor itself, whose hooks can be set once. Each built-in declares the names in its class line (`saves=`);
`Function.__init_subclass__` gives the node class one property per name.

Guarded by tests/test_engine.py and tests/test_engine_fidelity.py (names, values, freed tensors),
tests/test_saved_tensors_hooks.py (`_raw_saved_<name>.register_hooks`), tests/test_new_ops.py and
tests/test_interop.py (the names of each op's saved tensors, as torch's).
"""
import functools

import torch

from . import variable_class

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def saved_attributes(names):
    """torch shows a node's saved tensors as attributes named `_saved_<name>` (and `_raw_saved_<name>`),
    which `dir(node)` lists once the node has saved something; a name ending in "[]" is a tuple of all the
    saved tensors from there on (`_saved_indices` of an index).

    Properties on each node class rather than a `__getattr__`: a class with `__getattr__` makes every
    attribute read on its instances about twice as slow, and the engine reads node attributes all the time.
    """
    attributes = {}
    for index, name in enumerate(names):
        if name.endswith("[]"):
            attributes["_saved_" + name[:-2]] = property(functools.partial(_saved_from, start=index))
        else:
            attributes["_saved_" + name] = property(functools.partial(saved_tensor, index=index))
            attributes["_raw_saved_" + name] = property(functools.partial(_raw_saved, index=index))
    attributes["__dir__"] = _dir_with_saved
    return attributes


def saved_tensor(node, index):
    """One saved tensor, as `node._saved_<name>` shows it: None stays None even once freed."""
    number = node.__dict__.get("numbers", (None,) * (index + 1))[index]
    if number is not None and (node._saved or node._freed):
        if node._freed:
            raise RuntimeError(FREED_MESSAGE)
        return variable_class.Variable._make(torch.tensor(number, dtype=torch.float64 if isinstance(number, float) else None))
    if node._freed and node._saved[index] is None:
        return None
    return node.saved_tensors[index]


def _dir_with_saved(node):
    """A node's `__dir__`: the `_saved_<name>` attributes are listed once the node has saved something to show."""
    saved = set(saved_attributes(node._forward_cls.saved_names)) - {"__dir__"}
    return sorted((set(object.__dir__(node)) - saved) | (saved if node._saved else set()))


def _saved_from(node, start):
    return tuple(saved_tensor(node, i) for i in range(start, max(len(node._saved), start)))


def _raw_saved(node, index):
    if not node._saved:   # nothing was saved (nothing required grad): as torch, no such attribute
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{node._forward_cls.saved_names[index]}'")
    return RawSavedTensor(node, index)


class RawSavedTensor:
    """What `node._raw_saved_<name>` gives: the saved tensor itself, whose hooks can be set once."""

    def __init__(self, node, index):
        self._node, self._index = node, index

    def register_hooks(self, pack_hook, unpack_hook):
        saved = self._node._saved[self._index]
        if self._node._freed:
            raise RuntimeError(FREED_MESSAGE)
        saved.set_hooks(pack_hook, unpack_hook, saved.unpack(self._node, True))
        self._node._hooked = True

    def unpack(self):
        """The saved tensor, as `node._saved_<name>` gives it (torch's message once backward has freed it)."""
        return saved_tensor(self._node, self._index)
