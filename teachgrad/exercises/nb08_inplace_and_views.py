"""Notebook 08 · in-place operations and views: x.grad after a write through a view (and a softmax
whose in-place division must not overwrite what exp saved)."""
from __future__ import annotations

from typing import Any, Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor

__all__ = ["VIEW_WRITE_W", "view_write", "check_view_write", "check_normalize_rows"]


VIEW_WRITE_W = [[1.0, -1.0, 2.0], [0.5, 3.0, -2.0]]


def view_write(lib):
    """y = x * 1, then column 0 of y overwritten with twice column 1; the loss weighs y by w."""
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    w = lib.tensor(VIEW_WRITE_W, dtype=torch.float64)
    y = x * 1
    y[:, 0] = y[:, 1] * 2
    loss = (y * w).sum()
    loss.backward()
    return {"x": x, "y": y, "loss": loss}


def check_view_write(x_grad_prediction: Any, hint: int = 1) -> Verdict:
    """x_grad_prediction: x.grad after view_write's backward, as a 2 × 3 nested list (or a tensor)."""
    hints = ("after the write, which elements of x does each element of y come from? Column 0 of y no longer "
             "comes from column 0 of x.",
             "write each element of y after the write as a formula in x: the written slice takes its values from "
             "the write's source, the other elements keep y's old history (that is what CopySlices does in "
             "backward). Then ∂loss/∂x[i, j] adds up w over every element of y that uses x[i, j], times that "
             "element's local derivative; an element of x that no element of y uses any more gets 0.")
    call = "check_view_write(my_x_grad, hint=2)"
    ours, theirs = view_write(tg), view_write(torch)
    assert ours["y"].grad_fn.name() == theirs["y"].grad_fn.name() == "torch::autograd::CopySlices"
    assert torch.equal(ours["x"].grad.data, theirs["x"].grad), "teachgrad and torch differ"
    expected = theirs["x"].grad
    answer = _tensor(x_grad_prediction)
    if answer is None or (answer.numel() and torch.isnan(answer).any()):
        return _not_yet("fill in my_x_grad with 2 rows of 3 numbers", hints, hint, call)
    if tuple(answer.shape) != (2, 3):
        return _not_yet(f"my_x_grad has shape {tuple(answer.shape)}; x.grad has x's shape, (2, 3)", hints, hint, call)
    if torch.allclose(answer, expected, atol=1e-6):
        return _correct("that is x.grad in teachgrad and in torch: the overwritten column gets nothing, the "
                        "column the write copied from gets its own weight plus twice the overwritten one's")
    if torch.allclose(answer, torch.tensor(VIEW_WRITE_W, dtype=torch.float64)):
        return _not_yet("that is x.grad as if the write had not happened (∂loss/∂y = w, passed straight through)",
                        hints, hint, call)
    wrong = [f"column {j}" for j in range(3) if not torch.allclose(answer[:, j], expected[:, j], atol=1e-6)]
    return _not_yet(f"{' and '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not yet right", hints, hint, call)


def _rows(lib):
    """The data the check uses: a 3 x 4 float64 input that requires grad, and a weight for the loss."""
    x = lib.tensor([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 1.0], [-2.0, 0.75, 0.0, 0.5]],
                   dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.0, -2.0, 0.5, 3.0], dtype=lib.float64)
    return x, w


def check_normalize_rows(normalize_rows: Callable, hint: int = 1) -> Verdict:
    """normalize_rows(lib, x): exp(x) with each row divided by its sum (a softmax), backward must work."""
    hints = ("backward needs a value that your function overwrote: which op saved it, and which line changed it?",
             "exp keeps its result for backward, and the in-place division overwrites that result: divide "
             "out of place (a new tensor), or divide a clone, so the saved result stays as it was.")
    call = "check_normalize_rows(normalize_rows, hint=2)"
    x_t, w_t = _rows(torch)
    expected = torch.softmax(x_t, dim=1)
    (expected * w_t).sum().backward()
    expected_grad = x_t.grad
    for lib in (tg, torch):
        x, w = _rows(lib)
        try:
            out = normalize_rows(lib, x)
            (out * w).sum().backward()
        except Exception as error:
            return _not_yet(_raised("normalize_rows", error) + f" (with lib = {lib.__name__})", hints, hint, call)
        values = _tensor(out)
        if values is None or values.shape != expected.shape or not torch.allclose(values, expected.detach()):
            return _not_yet("normalize_rows(lib, x) should return exp(x) divided by its row sums "
                            f"(with lib = {lib.__name__})", hints, hint, call)
        grad = _tensor(x.grad)
        if grad is None or not torch.allclose(grad, expected_grad):
            return _not_yet("the values are right but x.grad is not: is the result still connected to x "
                            "by autograd?", hints, hint, call)
    return _correct("the rows sum to 1 and backward gives torch's gradient (teachgrad and torch)")
