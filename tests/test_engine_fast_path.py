"""The engine runs a node without hooks itself (teachgrad/core/engine.py's loop, issue 36) and everything else
through _call_function: each case here sits on the line between the two, against torch.

A hook that was registered and removed leaves an empty list behind; a leaf's post-accumulate-grad hook is not one
of the node's hooks; a leaf's first `.grad` is copied from a gradient someone else holds, as torch's.
"""
import torch

from .twins import same


def _leaves(lib):
    w = lib.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=torch.float64, requires_grad=True)
    b = lib.tensor([0.25, -1.0], dtype=torch.float64, requires_grad=True)
    return w, b


def test_leaf_hook_registered_then_removed():
    def snippet(lib):
        w, b = _leaves(lib)
        handle = w.register_hook(lambda g: g * 100)
        handle.remove()
        ((w * 3.0 + b) ** 2).sum().backward()
        return w.grad, b.grad
    same(snippet)


def test_node_hooks_registered_then_removed():
    def snippet(lib):
        w, b = _leaves(lib)
        y = w * 3.0 + b
        leaf_node = y.grad_fn.next_functions[0][0].next_functions[0][0]   # w's AccumulateGrad
        handles = [y.grad_fn.register_hook(lambda gi, go: (gi[0] * 7, gi[1])),
                   y.grad_fn.register_prehook(lambda go: (go[0] * 5,)),
                   leaf_node.register_prehook(lambda go: (go[0] * 11,)),
                   leaf_node.register_hook(lambda gi, go: None)]
        for handle in handles:
            handle.remove()
        (y ** 2).sum().backward()
        return w.grad, b.grad, type(leaf_node).__name__
    same(snippet)


def test_post_accumulate_grad_hook_runs_on_a_leaf_without_other_hooks():
    def snippet(lib):
        w, b = _leaves(lib)
        seen = []
        w.register_post_accumulate_grad_hook(lambda leaf: seen.append(leaf.grad.clone()))
        ((w * 3.0 + b) ** 2).sum().backward()
        ((w * 3.0 + b) ** 2).sum().backward()
        return seen, w.grad, b.grad
    same(snippet)


def test_leaf_pre_hook_still_runs():
    def snippet(lib):
        w, b = _leaves(lib)
        y = w * 3.0 + b
        y.grad_fn.next_functions[1][0].register_prehook(lambda go: (go[0] * 2,))   # b's AccumulateGrad
        (y ** 2).sum().backward()
        return w.grad, b.grad
    same(snippet)


def test_first_grad_copies_a_gradient_someone_else_holds():
    """A leaf's first `.grad` is a copy when the gradient that reaches it is held elsewhere: here the caller's own
    `gradient`, which AddBackward0 passes on unchanged (a fresh result of a built-in backward is kept uncopied)."""
    def snippet(lib):
        w, b = _leaves(lib)
        other = lib.tensor([[0.5, 0.5], [2.0, -1.0]], dtype=torch.float64, requires_grad=True)
        seed = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
        (w + other).backward(seed)
        return w.grad.data_ptr() == seed.data_ptr(), other.grad.data_ptr() == seed.data_ptr(), w.grad, other.grad
    same(snippet)


def test_anomaly_mode_and_retain_graph_take_the_long_way_with_the_same_result():
    def snippet(lib):
        w, b = _leaves(lib)
        y = ((w * 3.0 + b) ** 2).sum()
        with lib.autograd.detect_anomaly(check_nan=True):
            y.backward(retain_graph=True)
        first = w.grad.clone()
        y.backward()
        return first, w.grad, b.grad
    same(snippet)
