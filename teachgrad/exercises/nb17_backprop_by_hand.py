"""Notebook 17 · backprop by hand: the seven gradients of a small MLP, table by table."""
from __future__ import annotations

from typing import Callable

import torch

import teachgrad as tg
from ._method import refusal
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor, _watched

__all__ = ["BACKPROP_NAMES", "backprop_problem", "backprop_reference", "compare_table", "ROUND_OFF", "check_backprop"]


BACKPROP_NAMES = ("dlogits", "dW2", "db2", "dh", "dpre", "dW1", "db1")


def backprop_problem(seed: int = 0, n: int = 8, features: int = 4, hidden: int = 5, classes: int = 3):
    """A small batch and MLP weights, float64: X (n, features), y (n,) class labels, W1, b1, W2, b2."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, features, generator=gen, dtype=torch.float64)
    y = torch.randint(0, classes, (n,), generator=gen)
    W1 = torch.randn(features, hidden, generator=gen, dtype=torch.float64) * 0.5
    b1 = torch.randn(hidden, generator=gen, dtype=torch.float64) * 0.1
    W2 = torch.randn(hidden, classes, generator=gen, dtype=torch.float64) * 0.5
    b2 = torch.randn(classes, generator=gen, dtype=torch.float64) * 0.1
    return X, y, W1, b1, W2, b2


def backprop_reference(lib, X, y, W1, b1, W2, b2):
    """Every gradient of the MLP loss by autograd (lib = teachgrad or torch), intermediates included."""
    wrap = (lambda t: tg.Variable(t.clone(), requires_grad=True)) if lib is tg else \
        (lambda t: t.clone().requires_grad_())
    W1, b1, W2, b2 = (wrap(t) for t in (W1, b1, W2, b2))
    Xl = tg.Variable(X) if lib is tg else X
    yl = tg.Variable(y) if lib is tg else y
    pre = Xl @ W1 + b1
    h = pre.tanh()
    logits = h @ W2 + b2
    for t in (pre, h, logits):
        t.retain_grad()
    lib.nn.functional.cross_entropy(logits, yl).backward()
    grads = dict(dlogits=logits.grad, dW2=W2.grad, db2=b2.grad, dh=h.grad, dpre=pre.grad, dW1=W1.grad, db1=b1.grad)
    return {k: (v.data if lib is tg else v) for k, v in grads.items()}


def compare_table(mine: dict, reference: dict) -> str:
    """A table, one row per gradient: shape, close / differs, and the largest difference.

    Agreement is judged within a tolerance (``atol=1e-10``, ``rtol=1e-8``), never bit for bit: which rows
    come out bit-for-bit equal depends on the vector kernels torch picks for the CPU it runs on, so a
    table that said "exact" on one machine would say otherwise on the next. For the same reason a
    difference below ``1e-12`` (round-off in float64) is printed as ``< 1e-12``, not as its digits.
    """
    lines = [f"{'gradient':<9} {'shape':<9} {'verdict':<8} max |yours - torch|"]
    for name, ref in reference.items():
        got = _tensor(mine.get(name)) if isinstance(mine, dict) else None
        shape = str(tuple(ref.shape)).replace(" ", "")
        if got is None:
            lines.append(f"{name:<9} {shape:<9} {'missing':<8} -")
        elif got.shape != ref.shape:
            lines.append(f"{name:<9} {shape:<9} {'shape':<8} yours is {tuple(got.shape)}")
        else:
            ref = ref.double()
            diff = (got - ref).abs().max().item() if ref.numel() else 0.0
            verdict = "close" if torch.allclose(got, ref, atol=1e-10, rtol=1e-8) else "differs"
            lines.append(f"{name:<9} {shape:<9} {verdict:<8} {_difference(diff)}")
    return "\n".join(lines)


ROUND_OFF = 1e-12  # float64 round-off on values of order 1 is ~1e-16: anything below this is rounding


def _difference(diff: float) -> str:
    """A difference as the lesson means it: round-off as ``< 1e-12``, anything larger with its size."""
    return f"< {ROUND_OFF:.0e}" if diff < ROUND_OFF else f"{diff:.1e}"


def check_backprop(backprop_by_hand: Callable, hint: int = 1) -> Verdict:
    """backprop_by_hand(X, y, W1, b1, W2, b2) -> dict of the seven gradients, each compared with torch's."""
    hints = ("go backwards one line of the forward pass at a time;\n"
             "      each gradient has the shape of the tensor it belongs to.",
             "dlogits = (softmax of the logits − one-hot of y) / n; for a product A @ B, dA = d(out) @ Bᵀ and "
             "dB = Aᵀ @ d(out); a bias's gradient sums d(out) over the batch; tanh' = 1 − tanh².")
    call = "check_backprop(backprop_by_hand, hint=2)"
    tables = []
    for seed in (0, 1):
        problem = backprop_problem(seed)
        expected = backprop_reference(torch, *problem)
        ours = backprop_reference(tg, *problem)
        for name in expected:
            assert torch.allclose(ours[name], expected[name]), f"{name}: teachgrad and torch differ"
        mine, error, watch = _watched(backprop_by_hand, *problem)
        refused = watch.refused(("reverse", "forward", "formula"))
        if refused is not None:
            return _not_yet(refusal("backprop_by_hand", refused, "here every gradient is yours, with plain tensor "
                                    "operations and no autograd"), hints, hint, call)
        if error is not None:
            return _not_yet(_raised("backprop_by_hand", error), hints, hint, call)
        if not isinstance(mine, dict):
            return _not_yet("return a dict with the keys " + ", ".join(BACKPROP_NAMES), hints, hint, call)
        table = compare_table(mine, expected)
        tables.append(table)
        bad = [line.split()[0] for line in table.splitlines()[1:] if line.split()[2] != "close"]
        if bad:
            return _not_yet(f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not yet torch's "
                            f"(problem {seed}):\n{table}", hints, hint, call)
    return _correct("every gradient equals torch's (and teachgrad's) on two random problems:\n" + tables[0])

