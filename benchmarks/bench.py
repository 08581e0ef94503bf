#!/usr/bin/env python
"""How much teachgrad's Python engine costs next to torch.autograd's C++ one.

    make bench

1. A training step (forward and backward) of a 4-layer MLP at several widths: teachgrad's time
   divided by torch's. Both run the same torch kernels; the difference is graph bookkeeping.
2. A long chain y = y * 1.0 (forward and backward): time per node at 1e3, 1e4 and 1e5 nodes,
   for both. Flat per-node time means the engine does no more than linear work.
"""
import argparse
import gc
import time

import torch

import teachgrad as tg


def timed(fn, repeats, warmup=3):
    """The best of `repeats` runs: the least disturbed by other work on the machine."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def mlp_step(lib, F, params, x, y):
    def step():
        h = x
        for i, (w, b) in enumerate(params):
            h = F.linear(h, w, b)
            if i < len(params) - 1:
                h = h.relu()
        loss = F.binary_cross_entropy_with_logits(h, y)
        for w, b in params:
            w.grad = b.grad = None
        loss.backward()
    return step


def make_mlp(lib, width, batch, seed=0):
    gen = torch.Generator().manual_seed(seed)
    sizes = [width] * 4 + [1]
    params = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        w = torch.randn(n_out, n_in, generator=gen) / n_in ** 0.5
        b = torch.zeros(n_out)
        params.append((leaf(lib, w, True), leaf(lib, b, True)))
    x = leaf(lib, torch.randn(batch, width, generator=gen), False)
    y = leaf(lib, (torch.rand(batch, 1, generator=gen) > 0.5).float(), False)
    return params, x, y


def leaf(lib, data, requires_grad):
    return tg.Variable(data, requires_grad=requires_grad) if lib is tg else data.requires_grad_(requires_grad)


def chain(lib, n):
    def run():
        x = lib.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(n):
            y = y * 1.0
        y.backward()
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    torch.set_num_threads(1)
    repeats = 5 if args.quick else 20

    print(f"torch {torch.__version__}, 1 thread, best of {repeats} runs\n")
    print("MLP training step (4 layers, batch 64): forward + backward")
    print(f"{'width':>6} {'teachgrad ms':>13} {'torch ms':>9} {'ratio':>6}")
    for width in (4, 16, 64, 256, 1024):
        ours = timed(mlp_step(tg, tg.nn.functional, *make_mlp(tg, width, 64)), repeats)
        theirs = timed(mlp_step(torch, torch.nn.functional, *make_mlp(torch, width, 64)), repeats)
        print(f"{width:>6} {ours * 1e3:>13.3f} {theirs * 1e3:>9.3f} {ours / theirs:>6.2f}")

    print("\nChain y = y * 1.0, forward + backward: time per node")
    print(f"{'nodes':>7} {'teachgrad µs':>13} {'torch µs':>9} {'ratio':>6}")
    for n in (1_000, 10_000, 100_000):
        reps = max(3, repeats // (n // 1000)) if n > 1000 else repeats
        ours = timed(chain(tg, n), reps, warmup=1)
        theirs = timed(chain(torch, n), reps, warmup=1)
        print(f"{n:>7} {ours / n * 1e6:>13.2f} {theirs / n * 1e6:>9.2f} {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
