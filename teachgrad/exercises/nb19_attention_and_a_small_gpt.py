"""Notebook 19 · attention and a small GPT: softmax's backward and one causal attention head's backward, by hand."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch

import teachgrad as tg
from ._method import refusal
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor, _watched

__all__ = ["check_softmax_backward", "check_attention_backward"]


_TAUGHT = ("reverse", "forward", "formula")   # what these backward passes by hand may not hand over


def _run(answer: Callable, name: str, most: int, what_most: str, *args: Any):
    """(what answer(*args) returned, why its method is refused or None, the exception it raised or None).
    `most` is the largest tensor the method needs (elements): one larger is a Jacobian built in full."""
    result, error, watch = _watched(answer, *args)
    refused = watch.refused(_TAUGHT)
    if refused is not None:
        return None, refusal(name, refused, "here the backward is yours, with plain tensor operations"), None
    if watch.largest > most:
        return None, (f"{name} made a tensor of {watch.largest} elements, more than {what_most} ({most}):\n"
                      "      that is a Jacobian built in full; the rule needs none"), None
    return result, None, error


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Equal within a tolerance that float32 answers pass (the problems are float64)."""
    return got.shape == expected.shape and torch.allclose(got, expected, rtol=1e-4, atol=1e-6)


# --- exercise 1: softmax's backward ---

def _softmax_problems():
    """(what, p, g, dim): a vector, a batch along its last dim, a batch along dim 0, and causal-masked rows."""
    gen = torch.Generator().manual_seed(19)
    cases = [("a vector of 5", (5,), 0), ("shape (3, 6), dim=-1", (3, 6), -1),
             ("shape (4, 2, 3), dim=0", (4, 2, 3), 0), ("causal-masked rows (4, 4), dim=-1", (4, 4), -1)]
    problems = []
    for what, shape, dim in cases:
        z = torch.randn(shape, generator=gen, dtype=torch.float64) * 2
        if what.startswith("causal"):
            z = z.masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))
        g = torch.randn(shape, generator=gen, dtype=torch.float64)
        problems.append((what, z, g, dim))
    return problems


def _softmax_reference(lib, z: torch.Tensor, g: torch.Tensor, dim: int) -> torch.Tensor:
    """dL/dz for L = sum(softmax(z, dim) * g), by lib's autograd, as a torch tensor."""
    leaf = tg.Variable(z.clone(), requires_grad=True) if lib is tg else z.clone().requires_grad_()
    gl = tg.Variable(g) if lib is tg else g
    (leaf.softmax(dim) * gl).sum().backward()
    return leaf.grad.data if lib is tg else leaf.grad


def check_softmax_backward(softmax_backward: Callable, hint: int = 1) -> Verdict:
    """softmax_backward(p, g, dim) -> dL/dz, where p = softmax(z, dim) and g = dL/dp, on four problems."""
    hints = ("take ∂p_i/∂z_j as the text above gives it, times g_i, summed over i:\n"
             "      it splits into two terms; the second is the same for a whole slice along dim.",
             "gᵀ J has two terms: p times g, and p times one number per slice along dim. Which number?\n"
             "        Keep it as a dimension of size 1 (keepdim) so that it broadcasts back over the slice;\n"
             "        the answer has p's shape, and no n × n matrix is needed on the way.")
    call = "check_softmax_backward(softmax_backward, hint=2)"
    for what, z, g, dim in _softmax_problems():
        expected = _softmax_reference(torch, z, g, dim)
        assert torch.allclose(_softmax_reference(tg, z, g, dim), expected), "teachgrad and torch differ"
        p = z.softmax(dim)
        result, refused, error = _run(softmax_backward, "softmax_backward", p.numel(), "p itself",
                                      p.clone(), g.clone(), dim)
        if refused is not None:
            return _not_yet(refused, hints, hint, call)
        if error is not None:
            return _not_yet(_raised("softmax_backward", error), hints, hint, call)
        got = _tensor(result)
        if got is None:
            return _not_yet(f"softmax_backward returned {type(result).__name__}; return a tensor shaped like p",
                            hints, hint, call)
        if got.shape != expected.shape:
            return _not_yet(f"for {what} the gradient has shape {tuple(got.shape)}; "
                            f"it should be p's, {tuple(expected.shape)}", hints, hint, call)
        if not _close(got, expected):
            return _not_yet(f"for {what} the gradient differs from torch's", hints, hint, call)
    return _correct("equal to torch's softmax backward on a vector, along dim -1 and 0, and on masked rows")


# --- exercise 2: one causal attention head's backward ---

ATTENTION_NAMES = ("dq", "dk", "dv")


def _attention_problem(seed: int, T: int, d: int):
    """q, k, v (T, d) and the gradient d_out arriving at the head's output (T, d), float64."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(T, d, generator=gen, dtype=torch.float64) for _ in range(4))


def _attention_reference(lib, q, k, v, d_out) -> tuple:
    """(dq, dk, dv) of one causal head, out = softmax(mask(q kᵀ / √d)) v, by lib's autograd."""
    leaves = [tg.Variable(t.clone(), requires_grad=True) if lib is tg else t.clone().requires_grad_()
              for t in (q, k, v)]
    ql, kl, vl = leaves
    T, d = q.shape
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = (ql @ kl.transpose(0, 1)) / math.sqrt(d)
    scores = scores.masked_fill(tg.Variable(~causal) if lib is tg else ~causal, float("-inf"))
    out = scores.softmax(dim=-1) @ vl
    out.backward(tg.Variable(d_out) if lib is tg else d_out)
    return tuple(t.grad.data if lib is tg else t.grad for t in leaves)


def _three(result: Any):
    """(dq, dk, dv) from a tuple or list of three, or a dict with those keys; None if neither."""
    if isinstance(result, dict):
        return tuple(_tensor(result.get(name)) for name in ATTENTION_NAMES)
    if isinstance(result, (tuple, list)) and len(result) == 3:
        return tuple(_tensor(t) for t in result)
    return None


def check_attention_backward(attention_backward: Callable, hint: int = 1) -> Verdict:
    """attention_backward(q, k, v, d_out) -> (dq, dk, dv) of one causal head, on two problems."""
    hints = ("go backwards one forward line at a time: out = P @ v, P = softmax of the scores,\n"
             "      the scores = q @ kᵀ / √d with the masked ones set to −inf.",
             "two rules do all the work: a matrix product's (for C = A @ B, which products give the\n"
             "        gradients of A and of B?) and softmax's backward, your first exercise, along each row.\n"
             "        Which line does 1/√d belong to, and why do the masked entries need nothing extra?")
    call = "check_attention_backward(attention_backward, hint=2)"
    for seed, T, d in ((0, 5, 3), (1, 6, 4)):
        q, k, v, d_out = _attention_problem(seed, T, d)
        expected = _attention_reference(torch, q, k, v, d_out)
        ours = _attention_reference(tg, q, k, v, d_out)
        assert all(torch.allclose(a, b) for a, b in zip(ours, expected)), "teachgrad and torch differ"
        result, refused, error = _run(attention_backward, "attention_backward", T * T * d, "T·T·d",
                                      q.clone(), k.clone(), v.clone(), d_out.clone())
        if refused is not None:
            return _not_yet(refused, hints, hint, call)
        if error is not None:
            return _not_yet(_raised("attention_backward", error), hints, hint, call)
        got = _three(result)
        if got is None:
            return _not_yet("return the three gradients (dq, dk, dv) as a tuple", hints, hint, call)
        wrong = [name for name, mine, ref in zip(ATTENTION_NAMES, got, expected) if mine is None or not _close(mine, ref)]
        if wrong:
            return _not_yet(f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not yet torch's "
                            f"(a head with T = {T}, d = {d})", hints, hint, call)
    return _correct("dq, dk and dv equal torch's (and teachgrad's) for two causal heads")
