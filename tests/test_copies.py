"""Copies and files by torch's rules (torch/_tensor.py: __deepcopy__ and __reduce_ex__): copy.copy,
copy.deepcopy, pickle and torch.save/torch.load (weights_only True and False) of leaves with and
without .grad, non-leaves, views, tensors with hooks and dicts of them, each run under teachgrad and
under torch and compared: what survives, what is refused (type and message), and that a copy never
shares the original's .grad, accumulator or hooks."""
import copy
import io
import pickle
import re
import warnings

import pytest
import torch

from tests.twins import same


def _save_load(weights_only):
    def roundtrip(x):
        buffer = io.BytesIO()
        torch.save(x, buffer)
        buffer.seek(0)
        return torch.load(buffer, weights_only=weights_only)
    return roundtrip


COPIES = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda x: pickle.loads(pickle.dumps(x)),
    "torch.save, weights_only": _save_load(True),
    "torch.save": _save_load(False),
}


def _leaf(lib):
    return lib.tensor([1.0, 2.0, 3.0], requires_grad=True)


def _leaf_with_grad(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).sum().backward()
    return x


KINDS = {
    "leaf": _leaf,
    "leaf with grad": _leaf_with_grad,
    "no grad": lambda lib: lib.tensor([1.0, 2.0, 3.0]),
    "non-leaf": lambda lib: lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 2,
    "view": lambda lib: lib.tensor([1.0, 2.0, 3.0, 4.0])[1:],
    "view of a non-leaf": lambda lib: (lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True) * 1)[1:],
    "float64 matrix": lambda lib: lib.ones(2, 3, dtype=torch.float64, requires_grad=True).t(),
}


def describe(original, c):
    """What a copy keeps: requires_grad, leaf, .grad, view-ness, storage shared, layout, values."""
    return (c.requires_grad, c.is_leaf, None if not c.is_leaf or c.grad is None else c.grad,
            c._base is not None, c.data_ptr() == original.data_ptr(), c.stride(), c.storage_offset(), c.dtype, c)


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("kind", KINDS)
def test_copy_matrix(how, kind):
    def snippet(lib):
        x = KINDS[kind](lib)
        c = COPIES[how](x)
        return describe(x, c)
    same(snippet)


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copy_has_its_own_grad_and_no_hooks(how):
    def snippet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * 2).sum().backward()
        x.register_hook(lambda g: g * 100)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = COPIES[how](x)
        (c * 3).sum().backward()     # the copy's gradient: 3, in the copy's .grad only (not 300, not into x)
        (x * 1).sum().backward()
        messages = [re.sub(r" at 0x[0-9a-f]+", "", str(w.message)) for w in caught]
        return c.grad, x.grad, messages, type(caught[0].message).__name__ if caught else None
    same(snippet)


@pytest.mark.parametrize("how", COPIES)
def test_dict_of_parameters(how):
    def snippet(lib):
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = lib.zeros(2, requires_grad=True)
        (w.sum() + 2 * b.sum()).backward()
        state = COPIES[how]({"weight": w, "bias": b, "step": 3})
        return {k: describe(v, v) if k != "step" else v for k, v in state.items()}
    same(snippet)


def test_deepcopy_keeps_views_copied_together_on_one_storage():
    def snippet(lib):
        base = lib.tensor([1.0, 2.0, 3.0, 4.0])
        view = base[1:]
        new_base, new_view = copy.deepcopy((base, view))
        new_view.mul_(10)
        return new_base, base, new_view._base is not None
    same(snippet)


def test_deepcopy_of_a_module_state_trains_apart_from_the_original():
    def snippet(lib):
        w = lib.tensor([1.0, -1.0], requires_grad=True)
        (w * w).sum().backward()
        twin = copy.deepcopy(w)
        (twin * 5).sum().backward()
        return w.grad, twin.grad, twin.grad.data_ptr() == w.grad.data_ptr()
    same(snippet)


def test_a_copy_of_a_non_leaf_is_a_leaf_off_the_graph():
    def snippet(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        c = copy.copy(y)
        (c * c).sum().backward()
        return x.grad, c.grad, c.grad_fn is None
    same(snippet)


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("old_module", ["teachgrad.variable", "teachgrad.tensor_methods"])
def test_a_file_saved_when_the_rebuild_function_was_elsewhere_still_loads(monkeypatch, weights_only, old_module):
    """Files saved before `_rebuild_variable` moved to teachgrad/api/tensor_methods.py name it
    teachgrad.variable._rebuild_variable or teachgrad.tensor_methods._rebuild_variable: those names still find it,
    and weights_only allows them."""
    import teachgrad as tg
    from teachgrad.api import tensor_methods

    monkeypatch.setattr(tensor_methods._rebuild_variable, "__module__", old_module)   # pickled as before
    buffer, pickled = io.BytesIO(), pickle.dumps(tg.tensor([1.0, 2.0], requires_grad=True))
    torch.save(tg.tensor([1.0, 2.0], requires_grad=True), buffer)
    monkeypatch.undo()
    for saved in (pickled, buffer.getvalue()):
        assert old_module.encode() in saved
        assert b"teachgrad.api" not in saved
    buffer.seek(0)
    for loaded in (torch.load(buffer, weights_only=weights_only), pickle.loads(pickled)):
        assert isinstance(loaded, tg.Variable) and loaded.requires_grad and loaded.tolist() == [1.0, 2.0]
