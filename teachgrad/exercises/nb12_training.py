"""Notebook 12 · training: a momentum step, step for step as torch.optim.SGD(momentum=β)."""
from __future__ import annotations

import math
from typing import Callable

import torch

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised

__all__ = ["check_momentum"]


def _moons_problem():
    """The training notebook's two moons and starting weights, regenerated from its seed."""
    generator = torch.Generator().manual_seed(0)
    n, noise = 100, 0.1
    a = torch.rand(n, generator=generator) * math.pi
    b = torch.rand(n, generator=generator) * math.pi
    upper = torch.stack([a.cos(), a.sin()], dim=1)
    lower = torch.stack([1 - b.cos(), 0.5 - b.sin()], dim=1)
    X = torch.cat([upper, lower]) + noise * torch.randn(2 * n, 2, generator=generator)
    y = torch.cat([torch.zeros(n), torch.ones(n)])
    init = [torch.randn(2, 16, generator=generator), torch.zeros(16),
            torch.randn(16, 1, generator=generator) * 0.5, torch.zeros(1)]
    return X, y, init


def _moons_loss(lib, params, X, y):
    W1, b1, W2, b2 = params
    logits = ((X @ W1 + b1).tanh() @ W2 + b2).reshape(-1)
    return lib.nn.functional.binary_cross_entropy_with_logits(logits, y)


def check_momentum(momentum_step: Callable, hint: int = 1, steps: int = 200, lr: float = 0.5,
                   beta: float = 0.9, target: float = 0.01) -> Verdict:
    """momentum_step(params, velocities, lr, beta) updates v and then p in place, as torch.optim.SGD(momentum=beta)."""
    hints = ("update the velocity first, then the parameter, and change both in place: the check keeps the "
             "same Variables from step to step.",
             "v ← βv + grad is one in-place multiply and one in-place add on v; then w ← w − ηv is one "
             "in-place subtraction on p (the check already runs your step under no_grad).")
    call = "check_momentum(momentum_step, hint=2)"
    X, y, init = _moons_problem()
    Xv, yv = tg.Variable(X), tg.Variable(y)
    params = [tg.Variable(w.clone(), requires_grad=True) for w in init]
    velocities = [tg.zeros_like(p) for p in params]
    params_t = [w.clone().requires_grad_() for w in init]
    optimizer = torch.optim.SGD(params_t, lr=lr, momentum=beta)
    start = [p.data.clone() for p in params]
    for step in range(steps):
        loss = _moons_loss(tg, params, Xv, yv)
        loss.backward()
        try:
            with tg.no_grad():
                momentum_step(params, velocities, lr, beta)
        except Exception as error:
            return _not_yet(_raised("momentum_step", error), hints, hint, call)
        for p in params:
            p.grad = None
        loss_t = _moons_loss(torch, params_t, X, y)
        optimizer.zero_grad()
        loss_t.backward()
        optimizer.step()
        if step == 0 and all(torch.equal(p.data, w) for p, w in zip(params, start)):
            return _not_yet("after your step the parameters did not move: change each p in place", hints, hint,
                            call)
        if not math.isfinite(loss.item()) or abs(loss.item() - loss_t.item()) > 1e-4:
            return _not_yet(f"at step {step} your loss is {loss.item():.4f}, torch.optim.SGD's is {loss_t.item():.4f}",
                            hints, hint, call)
    if loss.item() >= target:
        return _not_yet(f"the losses match torch's but end at {loss.item():.4f}, not below {target}", hints, hint, call)
    return _correct(f"your momentum matches torch.optim.SGD for {steps} steps; final loss {loss.item():.4f} "
                    f"(below {target})")
