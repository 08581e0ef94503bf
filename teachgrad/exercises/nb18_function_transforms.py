"""Notebook 18 · function transforms: a batching rule written by hand, and a VJP made of JVPs (the transpose)."""
from __future__ import annotations

import sys
from typing import Callable

import torch
from torch.overrides import TorchFunctionMode

import teachgrad as tg
from teachgrad.rules import tangents
from ._verdicts import Verdict, _AutogradWatch, _correct, _not_yet, _raised, _tensor

__all__ = ["check_mm_batch_rule", "check_vjp_from_jvps"]

BATCH = 4          # samples in every batched case of check_mm_batch_rule
_VMAP_MODULES = {"torch._functorch.vmap", "teachgrad.features.vmap"}   # where each library's vmap runs a function
_MATMULS = {"mm", "matmul", "bmm", "__matmul__", "__rmatmul__", "einsum", "baddbmm", "addmm", "addbmm"}


class _BatchWatch(TorchFunctionMode):
    """What a batching rule ran: how many matrix products (one per sample is a loop over the batch, not a rule),
    and whether vmap did the work: an op that runs while a vmap (torch.func's or teachgrad's, however the learner
    named it) is on the call stack."""

    def __init__(self):
        super().__init__()
        self.products = 0
        self.vmapped = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.products += getattr(func, "__name__", "") in _MATMULS
        frame = sys._getframe(1)
        while frame is not None and not self.vmapped:
            self.vmapped = frame.f_globals.get("__name__") in _VMAP_MODULES
            frame = frame.f_back
        return func(*args, **(kwargs or {}))


def _mm_cases():
    """(name, a, a_bdim, b, b_bdim): per sample a is (2, 3) and b is (3, 5); None means unbatched."""
    gen = torch.Generator().manual_seed(18)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)
    return [("a batched at dim 0, b unbatched", rand(BATCH, 2, 3), 0, rand(3, 5), None),
            ("a unbatched, b batched at dim 2", rand(2, 3), None, rand(3, 5, BATCH), 2),
            ("a batched at dim 1, b batched at dim 0", rand(2, BATCH, 3), 1, rand(BATCH, 3, 5), 0)]


def _per_sample(a, a_bdim, b, b_bdim):
    """teachgrad's mm run once per sample, stacked on dim 0: what vmap(mm) must give."""
    pick = (lambda t, bdim, i: t if bdim is None else t.select(bdim, i))
    return tg.stack([tg.mm(pick(a, a_bdim, i), pick(b, b_bdim, i)) for i in range(BATCH)])


def check_mm_batch_rule(mm_batch_rule: Callable, hint: int = 1) -> Verdict:
    """mm_batch_rule(a, a_bdim, b, b_bdim) -> (out, out_bdim), against torch.func.vmap(torch.mm) on three cases."""
    hints = ("a rule first puts each batch dim where the op can treat it as one more dim;\n"
             "      an operand without a batch dim is the same for every sample.",
             "move each batch dim to the front with movedim(bdim, 0);\n"
             "        a matrix product of (B, n, k) and (k, m) or (B, k, m) broadcasts over B\n"
             "        in one call of `@`; the result's batch dim is then 0.")
    call = "check_mm_batch_rule(mm_batch_rule, hint=2)"
    for name, a, a_bdim, b, b_bdim in _mm_cases():
        expected = torch.func.vmap(torch.mm, in_dims=(a_bdim, b_bdim))(a, b)
        assert torch.allclose(_per_sample(tg.Variable(a), a_bdim, tg.Variable(b), b_bdim).data, expected)
        watch = _BatchWatch()
        try:
            with watch:
                answer = mm_batch_rule(tg.Variable(a.clone()), a_bdim, tg.Variable(b.clone()), b_bdim)
        except Exception as error:  # noqa: BLE001 (the learner's code may raise anything)
            if not watch.vmapped:
                return _not_yet(_raised("mm_batch_rule", error) + f"\n      for {name}", hints, hint, call)
        if watch.vmapped:
            return _not_yet("mm_batch_rule handed the batch to vmap: here the rule is yours,\n"
                            "      written with ordinary tensor ops", hints, hint, call)
        if not (isinstance(answer, tuple) and len(answer) == 2):
            return _not_yet("return a pair (out, out_bdim): the result and where its batch dim is", hints, hint, call)
        out, out_bdim = answer
        got = _tensor(out)
        if got is None or isinstance(out_bdim, bool) or not isinstance(out_bdim, int) \
                or not -got.dim() <= out_bdim < got.dim():
            return _not_yet(f"for {name} it returned ({type(out).__name__}, {out_bdim!r}); return a tensor and\n"
                            "      the int index of its batch dim", hints, hint, call)
        if watch.products >= BATCH:
            return _not_yet(f"mm_batch_rule ran {watch.products} matrix products for {BATCH} samples: a loop over\n"
                            "      the batch, where a rule treats the batch in one call", hints, hint, call)
        got = got.movedim(out_bdim, 0)
        if tuple(got.shape) != tuple(expected.shape):
            return _not_yet(f"for {name}, the result with its batch dim moved to the front\n"
                            f"      has shape {tuple(got.shape)}; vmap(torch.mm) gives {tuple(expected.shape)}",
                            hints, hint, call)
        if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
            return _not_yet(f"for {name} the numbers differ from mm run once per sample", hints, hint, call)
    return _correct("all three cases equal torch.func.vmap(torch.mm), one matrix product each")


def _vjp_cases():
    """(name, f, x, u) in float64: f's Jacobian is 2 × 3, 3 × 3 and 1 × 4."""
    w = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.0, 2.0]], dtype=torch.float64)
    f64 = (lambda *v: torch.tensor(v, dtype=torch.float64))
    return [("x ↦ W @ tanh(x) (3 → 2)", lambda x: (x.tanh() * w).sum(1), f64(0.1, 0.7, -0.4), f64(1.0, -1.0)),
            ("x ↦ sin(x)·x[0] (3 → 3)", lambda x: x.sin() * x[0], f64(0.5, -1.0, 2.0), f64(0.2, 1.5, -0.7)),
            ("x ↦ Σ exp(x)·x (4 → 1)", lambda x: (x.exp() * x).sum().reshape(1), f64(0.3, -0.2, 0.0, 1.1), f64(2.0))]


def check_vjp_from_jvps(vjp_from_jvps: Callable, hint: int = 1) -> Verdict:
    """vjp_from_jvps(f, x, u) -> uᵀ J made with forward mode only, against torch.func.vjp on three functions."""
    hints = ("entry j of uᵀ J is u · (J e_j): how u's weighting of the outputs moves\n"
             "      when only x's element j moves.",
             "for each j, tg.func.jvp(f, (x,), (e_j,)) gives J e_j\n"
             "        (e_j is 1 at j, 0 elsewhere, shaped like x);\n"
             "        (u * that).sum() is entry j of the answer; stack the entries.")
    call = "check_vjp_from_jvps(vjp_from_jvps, hint=2)"
    for name, f, x0, u in _vjp_cases():
        expected = torch.func.vjp(f, x0.clone())[1](u)[0]
        ours = tg.func.vjp(f, tg.Variable(x0.clone()))[1](u)[0]
        assert torch.allclose(ours.data, expected)
        duals = []

        def counting(x, f=f):
            duals.append(isinstance(x, tg.Variable) and tangents.is_dual(x))
            return f(x)

        watch = _AutogradWatch()
        try:
            with watch:
                answer = vjp_from_jvps(counting, tg.Variable(x0.clone()), tg.Variable(u.clone()))
        except Exception as error:  # noqa: BLE001 (the learner's code may raise anything)
            if watch.used is None:
                return _not_yet(_raised("vjp_from_jvps", error) + f"\n      for {name}", hints, hint, call)
        if watch.used is not None:
            return _not_yet(f"vjp_from_jvps used {watch.used}: that is reverse mode;\n"
                            "      here uᵀ J is built from forward passes only", hints, hint, call)
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
