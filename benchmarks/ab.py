#!/usr/bin/env python
"""teachgrad at two commits, side by side: is a change to the package faster, slower, or within noise?

    python benchmarks/ab.py BEFORE_DIR AFTER_DIR [--rounds 15]

BEFORE_DIR and AFTER_DIR are checkouts of teachgrad (e.g. `git worktree add /tmp/before <commit>`). Each round
runs one fresh process per checkout, in an order that alternates from round to round; each process times
teachgrad and torch.autograd on the same case, so its figure is teachgrad's time as a ratio to torch's measured
a moment before in the same process. The result per case is the median over rounds of after / before: 1.00 is
the same speed, below 1 faster.

Cases: the training step of bench.py's MLP (`h @ W + b`, relu, MSE, float32, batch 16) at widths 4 to 1024,
the same forward under no_grad, and the chain `y = y * 1.0` of 1000 nodes, forward and backward.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = ["step w4", "step w16", "step w64", "step w256", "step w1024", "no_grad w4", "no_grad w64", "chain 1e3"]


def _child(case):
    """Run in a child process: teachgrad's time / torch's for `case`, the median of 5 interleaved repeats."""
    import torch
    import teachgrad as tg

    kind, size = case.split()
    torch.manual_seed(0)
    if kind == "chain":
        def run(lib):
            x = lib.tensor(1.0, requires_grad=True)
            y = x
            for _ in range(1000):
                y = y * 1.0
            y.backward()
        steps = 3
    else:
        width = int(size[1:])
        shapes = [(width, width)] * 4
        data = [(torch.randn(s) / width ** 0.5, torch.zeros(s[1])) for s in shapes]
        x, target = torch.randn(16, width), torch.randn(16, width)
        params = {torch: [(w.clone().requires_grad_(), b.clone().requires_grad_()) for w, b in data],
                  tg: [(tg.tensor(w, requires_grad=True), tg.tensor(b, requires_grad=True)) for w, b in data]}

        def run(lib):
            h = x
            with (lib.no_grad() if kind == "no_grad" else lib.enable_grad()):
                for i, (w, b) in enumerate(params[lib]):
                    h = h @ w + b
                    if i < len(params[lib]) - 1:
                        h = h.relu()
                loss = ((h - target) ** 2).mean()
            if kind == "step":
                loss.backward()
                for w, b in params[lib]:
                    w.grad = b.grad = None
        steps = max(3, int(5e3 / (width * width)))

    def timed(lib):
        start = time.perf_counter()
        for _ in range(steps):
            run(lib)
        return (time.perf_counter() - start) / steps

    for lib in (torch, tg, torch, tg):   # warm-up
        timed(lib)
    ratios = []
    for _ in range(5):
        t_torch = timed(torch)
        ratios.append(timed(tg) / t_torch)
    print(json.dumps(statistics.median(ratios)))


def _run(checkout, case):
    env = dict(os.environ, PYTHONPATH=checkout, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", case], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", nargs="?")
    parser.add_argument("after", nargs="?")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return _child(args.child)
    print(f"{'case':<12} {'before/torch':>13} {'after/torch':>12} {'after/before':>13}  (medians of {args.rounds} rounds)")
    for case in CASES:
        before, after, ratio = [], [], []
        for r in range(args.rounds):
            order = (args.before, args.after) if r % 2 == 0 else (args.after, args.before)
            got = {checkout: _run(checkout, case) for checkout in order}
            before.append(got[args.before])
            after.append(got[args.after])
            ratio.append(got[args.after] / got[args.before])
        print(f"{case:<12} {statistics.median(before):>13.3f} {statistics.median(after):>12.3f} "
              f"{statistics.median(ratio):>13.3f}", flush=True)


if __name__ == "__main__":
    main()
