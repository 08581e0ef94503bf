#!/usr/bin/env python
"""How much teachgrad's Python engine costs next to torch.autograd's C++ one.

    make bench            (python benchmarks/bench.py --quick: fewer rounds)

Both libraries run the same torch kernels; what differs is the graph bookkeeping. Each case
is timed in interleaved rounds (teachgrad, torch, teachgrad, torch, ...), each round enough
steps for about 20 ms, after a warm-up; the figure is the median of the per-round ratios, so a
burst of other work on the machine spoils a round or two, not the result.

1. A training step of a 4-layer MLP (`h @ W + b`, relu, mean squared error): forward, backward.
2. The same with `F.linear` and binary cross-entropy with logits.
3. A long chain `y = y * 1.0`, forward and backward: time per node at 1e3, 1e4 and 1e5 nodes.
   Flat per-node time means the engine does no more than linear work.
4. A long chain of views `y = y[:]` (each a view of the one before), forward and backward: flat
   per-view time means a view costs the same whatever came before it.
"""
import argparse
import platform
import statistics
import time

import torch

import teachgrad as tg

WIDTHS = {4: 16, 16: 32, 64: 64, 256: 128, 1024: 256}   # width: batch
ROUND_SECONDS = 0.02


def timed_round(fn, steps):
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def compare(ours, theirs, rounds, warmup=3):
    """Median seconds per step of each, and the median of the per-round ratios (ours / theirs)."""
    for _ in range(warmup):
        ours()
        theirs()
    step = timed_round(theirs, 1)
    steps = max(1, round(ROUND_SECONDS / step))
    ours_times, theirs_times, ratios = [], [], []
    for _ in range(rounds):
        a = timed_round(ours, steps)
        b = timed_round(theirs, steps)
        ours_times.append(a)
        theirs_times.append(b)
        ratios.append(a / b)
    return statistics.median(ours_times), statistics.median(theirs_times), statistics.median(ratios)


def leaf(lib, data, requires_grad=False):
    return tg.Variable(data, requires_grad=requires_grad) if lib is tg else data.requires_grad_(requires_grad)


def make_mlp(lib, width, batch, seed=0):
    """Four layers width -> width -> width -> width -> 1, weights stored (in, out) for `h @ W + b`."""
    gen = torch.Generator().manual_seed(seed)
    sizes = [width] * 4 + [1]
    params = [(leaf(lib, torch.randn(n_in, n_out, generator=gen) / n_in ** 0.5, True),
               leaf(lib, torch.zeros(n_out), True))
              for n_in, n_out in zip(sizes, sizes[1:])]
    x = leaf(lib, torch.randn(batch, width, generator=gen))
    y = leaf(lib, (torch.rand(batch, 1, generator=gen) > 0.5).float())
    return params, x, y


def mse_step(lib, params, x, y):
    def step():
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = h.relu()
        loss = ((h - y) ** 2).mean()
        for w, b in params:
            w.grad = b.grad = None
        loss.backward()
    return step


def linear_bce_step(lib, params, x, y):
    F = lib.nn.functional
    transposed = [(leaf(lib, w.detach().t().contiguous(), True), b) for w, b in params]   # F.linear takes (out, in)

    def step():
        h = x
        for i, (w, b) in enumerate(transposed):
            h = F.linear(h, w, b)
            if i < len(transposed) - 1:
                h = h.relu()
        loss = F.binary_cross_entropy_with_logits(h, y)
        for w, b in transposed:
            w.grad = b.grad = None
        loss.backward()
    return step


def chain(lib, n):
    def run():
        x = lib.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(n):
            y = y * 1.0
        y.backward()
    return run


def view_chain(lib, n):
    def run():
        x = lib.ones(4, requires_grad=True)
        y = x * 1.0
        for _ in range(n):
            y = y[:]
        y.sum().backward()
    return run


def chain_table(title, make_chain, rounds):
    print(title)
    print(f"{'nodes':>7} {'teachgrad µs':>13} {'torch µs':>9} {'ratio':>6}")
    for n in (1_000, 10_000, 100_000):
        ours, theirs, ratio = compare(make_chain(tg, n), make_chain(torch, n), max(3, rounds * 1000 // n + 2), warmup=1)
        print(f"{n:>7} {ours / n * 1e6:>13.2f} {theirs / n * 1e6:>9.2f} {ratio:>6.2f}", flush=True)


def mlp_table(title, make_step, rounds):
    print(title)
    print(f"{'width':>6} {'batch':>6} {'teachgrad µs':>13} {'torch µs':>9} {'ratio':>6}")
    for width, batch in WIDTHS.items():
        ours, theirs, ratio = compare(make_step(tg, *make_mlp(tg, width, batch)),
                                      make_step(torch, *make_mlp(torch, width, batch)), rounds)
        print(f"{width:>6} {batch:>6} {ours * 1e6:>13.0f} {theirs * 1e6:>9.0f} {ratio:>6.2f}", flush=True)
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a rough look, not figures to quote)")
    parser.add_argument("--threads", type=int, default=1, help="torch's intra-op threads (default 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rounds = 5 if args.quick else 21

    print(f"teachgrad {tg.__version__}, torch {torch.__version__}, Python {platform.python_version()}, "
          f"{torch.get_num_threads()} torch thread(s); median of {rounds} interleaved rounds of ~20 ms\n")
    mlp_table("MLP training step (4 layers, h @ W + b, relu, mean squared error)", mse_step, rounds)
    mlp_table("MLP training step (4 layers, F.linear, relu, BCE with logits)", linear_bce_step, rounds)

    chain_table("Chain y = y * 1.0, forward + backward: time per node", chain, rounds)
    print()
    chain_table("Chain of views y = y[:], forward + backward: time per view", view_chain, rounds)


if __name__ == "__main__":
    main()
