#!/usr/bin/env python
"""The compiled step (issue 43): a 4-layer MLP's forward + backward, compiled with `tg.compile`, beside torch's eager
step, teachgrad's eager step and `torch.compile(backend="aot_eager")` (torch's own capture and partition, its
programs run as Python, no kernel fusion: the like-for-like row).

    python benchmarks/compiled.py            (make bench runs it after bench.py)
    python benchmarks/compiled.py --quick    (or --rounds N)

The same MLP as benchmarks/bench.py (benchmarks/mlp.py: widths 4 to 256, `h @ W + b`, relu, mean squared error,
float32). Every library's loss and gradients are checked against torch's before anything is timed. Timing: rounds
that each run every library for the same number of steps (about 20 ms of torch's), in an order that rotates, after
a warm-up; a library's figure is the median over the rounds of its per-round ratio to torch's step (lower is
better, 1.0 is parity). Tracing: the first call of a fresh `tg.compile` (capture, partition, generate, compile),
median of 5, in ms.
"""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import teachgrad as tg  # noqa: E402
from mlp import mlp_data  # noqa: E402

torch.set_num_threads(1)
WIDTHS = {4: 16, 16: 32, 64: 64, 256: 128}   # width: batch (as bench.py)
ROUND_SECONDS = 0.02


def loss_fn(x, y, *params):
    """The MLP's loss, for any library: the same lines."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i < len(params) - 2:
            h = h.relu()
    return ((h - y) ** 2).mean()


def make_step(lib, params, x, y, compiled=None):
    leaves = [lib.tensor(t.clone(), requires_grad=True) if lib is tg else t.clone().requires_grad_()
              for pair in params for t in pair]
    x, y = (tg.Variable(x), tg.Variable(y)) if lib is tg else (x, y)
    f = compiled(loss_fn) if compiled else loss_fn

    def step():
        for p in leaves:
            p.grad = None
        loss = f(x, y, *leaves)
        loss.backward()
        return loss, [p.grad for p in leaves]
    return step


def check(name, result, torchs):
    for a, b in zip([result[0]] + result[1], [torchs[0]] + torchs[1]):
        a = a.data if isinstance(a, tg.Variable) else a
        if not torch.allclose(a.detach(), b.detach(), rtol=1e-4, atol=1e-6):
            raise AssertionError(f"{name} does not agree with torch")


def timed(fn, steps):
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def trace_ms(params, x, y):
    times = []
    for _ in range(5):
        step = make_step(tg, params, x, y, compiled=tg.compile)
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    rounds = 7 if "--quick" in sys.argv else 31
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
    rows = {"torch µs": [], "teachgrad eager": [], "teachgrad compiled": [], "torch aot_eager": [],
            "tracing ms": []}
    for width, batch in WIDTHS.items():
        params, x, y = mlp_data(width, batch)
        runs = {"torch": make_step(torch, params, x, y),
                "teachgrad eager": make_step(tg, params, x, y),
                "teachgrad compiled": make_step(tg, params, x, y, compiled=tg.compile),
                "torch aot_eager": make_step(torch, params, x, y,
                                             compiled=lambda f: torch.compile(f, backend="aot_eager"))}
        torchs = runs["torch"]()
        for name, run in runs.items():
            check(name, run(), torchs)
            run()
        steps = max(1, round(ROUND_SECONDS / timed(runs["torch"], 3)))
        names, times = list(runs), {name: [] for name in runs}
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(timed(runs[name], steps))
        rows["torch µs"].append(f"{statistics.median(times['torch']) * 1e6:.0f}")
        for name in names[1:]:
            ratio = statistics.median(a / b for a, b in zip(times[name], times["torch"]))
            rows[name].append(f"{ratio:.2f}x")
        rows["tracing ms"].append(f"{trace_ms(params, x, y):.0f}")
    print(f"compiled MLP step (forward + backward), ratio to torch's eager step; {rounds} rounds, median")
    print(f"{'':22}" + "".join(f"{f'{w} ({b})':>12}" for w, b in WIDTHS.items()))
    for name, cells in rows.items():
        print(f"{name:22}" + "".join(f"{c:>12}" for c in cells))


if __name__ == "__main__":
    main()
