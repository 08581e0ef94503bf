"""Notebook 18 · function transforms: a batching rule written by hand, and a VJP made of JVPs (the transpose)."""
from __future__ import annotations

from collections import Counter
from typing import Callable

import torch

import teachgrad as tg
from teachgrad.rules import tangents
from ._method import refusal
from ._verdicts import Verdict, _correct, _not_yet, _raised, _tensor, _watched

__all__ = ["check_mm_batch_rule", "check_vjp_from_jvps"]

BATCHES = (4, 8)   # every case of check_mm_batch_rule is run with 4 samples, then with 8


def _mm_cases(batch: int):
    """(name, a, a_bdim, b, b_bdim): per sample a is (2, 3) and b is (3, 5); None means unbatched."""
    gen = torch.Generator().manual_seed(18 + batch)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)
    return [("a batched at dim 0, b unbatched", rand(batch, 2, 3), 0, rand(3, 5), None),
            ("a unbatched, b batched at dim 2", rand(2, 3), None, rand(3, 5, batch), 2),
            ("a batched at dim 1, b batched at dim 0", rand(2, batch, 3), 1, rand(batch, 3, 5), 0)]


def _per_sample(a, a_bdim, b, b_bdim, batch):
    """teachgrad's mm run once per sample, stacked on dim 0: what vmap(mm) must give."""
    pick = (lambda t, bdim, i: t if bdim is None else t.select(bdim, i))
    return tg.stack([tg.mm(pick(a, a_bdim, i), pick(b, b_bdim, i)) for i in range(batch)])


def _grown(small: Counter, large: Counter) -> str:
    """The ops that ran more often for more samples, as 'aten.mm 4 → 8 times'."""
    grown = [f"aten.{op} {small[op]} → {large[op]} times" for op in large if large[op] > small[op]]
    return ", ".join(grown[:2])


def check_mm_batch_rule(mm_batch_rule: Callable, hint: int = 1) -> Verdict:
    """mm_batch_rule(a, a_bdim, b, b_bdim) -> (out, out_bdim), against torch.func.vmap(torch.mm) on three cases,
    each with 4 and with 8 samples: a rule runs as many ops for 8 as for 4 (a loop over samples runs more)."""
    hints = ("a rule first puts each batch dim where the op can treat it as one more dim;\n"
             "      an operand without a batch dim is the same for every sample.",
             "which dim of each operand is the batch? Make it the same dim in both (the front is easiest),\n"
             "        then ask: which one call of a matrix product takes a stack of matrices at once?")
    call = "check_mm_batch_rule(mm_batch_rule, hint=2)"
    small, large = _mm_cases(BATCHES[0]), _mm_cases(BATCHES[1])
    for (name, *case), (_, *case_large) in zip(small, large):
        counts = []
        for batch, (a, a_bdim, b, b_bdim) in zip(BATCHES, (case, case_large)):
            expected = torch.func.vmap(torch.mm, in_dims=(a_bdim, b_bdim))(a, b)
            assert torch.allclose(_per_sample(tg.Variable(a), a_bdim, tg.Variable(b), b_bdim, batch).data, expected)
            answer, error, watch = _watched(mm_batch_rule, tg.Variable(a.clone()), a_bdim, tg.Variable(b.clone()),
                                            b_bdim)
            refused = watch.refused(("vmap",))
            if refused is not None:
                return _not_yet(refusal("mm_batch_rule", refused, "here the rule is yours, written with ordinary "
                                        "tensor ops"), hints, hint, call)
            if error is not None:
                return _not_yet(_raised("mm_batch_rule", error) + f"\n      for {name}", hints, hint, call)
            if not (isinstance(answer, tuple) and len(answer) == 2):
                return _not_yet("return a pair (out, out_bdim): the result and where its batch dim is",
                                hints, hint, call)
            out, out_bdim = answer
            got = _tensor(out)
            if got is None or isinstance(out_bdim, bool) or not isinstance(out_bdim, int) \
                    or not -got.dim() <= out_bdim < got.dim():
                return _not_yet(f"for {name} it returned ({type(out).__name__}, {out_bdim!r}); return a tensor "
                                "and\n      the int index of its batch dim", hints, hint, call)
            got = got.movedim(out_bdim, 0)
            if tuple(got.shape) != tuple(expected.shape):
                return _not_yet(f"for {name}, the result with its batch dim moved to the front\n"
                                f"      has shape {tuple(got.shape)}; vmap(torch.mm) gives {tuple(expected.shape)}",
                                hints, hint, call)
            if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
                return _not_yet(f"for {name} the numbers differ from mm run once per sample", hints, hint, call)
            counts.append(watch.ops)
        if sum(counts[1].values()) > sum(counts[0].values()):
            return _not_yet(f"for {name}, mm_batch_rule ran {sum(counts[0].values())} ops for {BATCHES[0]} samples "
                            f"and {sum(counts[1].values())} for {BATCHES[1]}\n      ({_grown(*counts)}):\n"
                            "      a product done per sample, where a rule treats the batch in one call",
                            hints, hint, call)
    return _correct(f"all three cases equal torch.func.vmap(torch.mm), with as many ops for {BATCHES[1]} samples "
                    f"as for {BATCHES[0]}")


def _vjp_cases():
    """(name, f, x, u) in float64: f's Jacobian is 2 × 3, 3 × 3 and 1 × 4."""
    w = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.0, 2.0]], dtype=torch.float64)
    f64 = (lambda *v: torch.tensor(v, dtype=torch.float64))
    return [("x ↦ W @ tanh(x) (3 → 2)", lambda x: (x.tanh() * w).sum(1), f64(0.1, 0.7, -0.4), f64(1.0, -1.0)),
            ("x ↦ sin(x)·x[0] (3 → 3)", lambda x: x.sin() * x[0], f64(0.5, -1.0, 2.0), f64(0.2, 1.5, -0.7)),
            ("x ↦ Σ exp(x)·x (4 → 1)", lambda x: (x.exp() * x).sum().reshape(1), f64(0.3, -0.2, 0.0, 1.1), f64(2.0))]


def _primal(x) -> torch.Tensor | None:
    """The values f was called at: a dual tensor's primal, a plain tensor itself (None if unreadable)."""
    try:
        return (x.data if isinstance(x, tg.Variable) else x).detach().to(torch.float64)
    except Exception:  # noqa: BLE001 (whatever the learner passed to f)
        return None


def check_vjp_from_jvps(vjp_from_jvps: Callable, hint: int = 1) -> Verdict:
    """vjp_from_jvps(f, x, u) -> uᵀ J made with forward mode only, against torch.func.vjp on three functions:
    f must see dual tensors, always at x itself (a finite difference calls f at x moved a little)."""
    hints = ("entry j of uᵀ J is u · (J e_j): how u's weighting of the outputs moves\n"
             "      when only x's element j moves.",
             "what does one JVP give you, and with which tangent does it give column j of J?\n"
             "        Then how do you turn that column into entry j of uᵀ J?")
    call = "check_vjp_from_jvps(vjp_from_jvps, hint=2)"
    for name, f, x0, u in _vjp_cases():
        expected = torch.func.vjp(f, x0.clone())[1](u)[0]
        ours = tg.func.vjp(f, tg.Variable(x0.clone()))[1](u)[0]
        assert torch.allclose(ours.data, expected)
        duals, moved = [], []

        def counting(x, f=f, x0=x0):
            duals.append(isinstance(x, tg.Variable) and tangents.is_dual(x))
            at = _primal(x)
            if at is not None and at.shape == x0.shape and not torch.equal(at, x0):
                moved.append((at - x0).abs().max().item())
            return f(x)

        answer, error, watch = _watched(vjp_from_jvps, counting, tg.Variable(x0.clone()), tg.Variable(u.clone()))
        refused = watch.refused(("reverse",))
        if refused is not None:
            return _not_yet(refusal("vjp_from_jvps", refused, "here uᵀ J is built from forward passes only"),
                            hints, hint, call)
        if moved:
            return _not_yet(f"vjp_from_jvps called f at x moved by {max(moved):.0e}: that is a finite difference;"
                            "\n      here every column of J comes from a JVP at x itself", hints, hint, call)
        if error is not None:
            return _not_yet(_raised("vjp_from_jvps", error) + f"\n      for {name}", hints, hint, call)
        if answer is None:
            return _not_yet("vjp_from_jvps returns None; return uᵀ J", hints, hint, call)
        got = _tensor(answer)
        if got is None:
            return _not_yet(f"for {name} it returned a {type(answer).__name__}, not a tensor", hints, hint, call)
        if tuple(got.shape) != tuple(expected.shape):
            return _not_yet(f"for {name} uᵀ J has shape {tuple(got.shape)}; it should be x's shape "
                            f"{tuple(expected.shape)}", hints, hint, call)
        if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
            return _not_yet(f"for {name} the numbers differ from torch.func.vjp", hints, hint, call)
        if not any(duals):
            return _not_yet("the numbers are right, but f never saw a dual tensor: build uᵀ J from JVPs",
                            hints, hint, call)
    return _correct("all three equal torch.func.vjp, made from JVPs alone (reverse mode never ran)")
