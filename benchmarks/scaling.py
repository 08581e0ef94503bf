#!/usr/bin/env python
"""Work that should grow with the graph, and no faster: a node with many inputs, and a long chain of views.

    python benchmarks/scaling.py              (counted work at every size, then wall time beside torch)
    python benchmarks/scaling.py --quick      (smaller sizes: what tests/test_scaling.py checks)

Two cases, each counted in bytecodes (benchmarks/opcount.py's tracer: the same count on any machine, however
busy) and divided by the size:
- `fan-in n`: n leaves stacked, squared and summed, then backward. StackBackward0 sends one gradient on each of
  its n edges, and the engine asks of each one whether a leaf may keep it uncopied (rules/grad_layout.py). Asked
  by scanning the node's other gradients, that was n * n: 44 s for 20,000 leaves, where torch takes 0.2 s.
- `views n`: a chain of n views (`y.view(16).view(4, 4)` over and over), then backward through all of them.

Flat counts per input and per view say the engine's Python work is linear. Wall time is printed too, beside torch's,
in one run (the medians of a few rounds, the two libraries interleaved): it also holds what no bytecode counts, the
kernels and Python's garbage collector, which walks the nodes a long graph keeps alive (torch's graph lives in C++,
where no collector walks it), so teachgrad's time per view grows a little with the chain while its counted work does not.
"""
import argparse
import gc
import importlib.util
import os
import pathlib
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

import teachgrad as tg  # noqa: E402

_spec = importlib.util.spec_from_file_location("opcount", pathlib.Path(__file__).with_name("opcount.py"))
opcount = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(opcount)

FAN_IN = (1_000, 10_000, 100_000)
VIEWS = (1_000, 24_000)
QUICK_FAN_IN = (100, 1_000, 4_000)
QUICK_VIEWS = (100, 2_000)


def fan_in(lib, n):
    """n leaves of 3 values, stacked, squared, summed; backward. Returns a function that runs it."""
    leaves = [lib.randn(3, requires_grad=True) for _ in range(n)]

    def run():
        (lib.stack(leaves) ** 2).sum().backward()
    return run


def view_chain(lib, n):
    """A chain of n views of one non-leaf (n/2 round trips 4x4 -> 16 -> 4x4), summed; backward."""
    x = lib.randn(4, 4, requires_grad=True)

    def run():
        y = x * 1
        for _ in range(n // 2):
            y = y.view(16).view(4, 4)
        y.sum().backward()
    return run


CASES = {"fan-in": fan_in, "views": view_chain}


def counted_per_item(case, n):
    """Bytecodes teachgrad runs per input (or per view) for one run of the case at size n (warmed at a small size)."""
    CASES[case](tg, 10)()
    return sum(opcount.count_run(CASES[case](tg, n)).values()) / n


def timed_per_item(case, n, rounds):
    """Median seconds per input (or view) of one run, for teachgrad and for torch, interleaved round by round."""
    times = {tg: [], torch: []}
    for _ in range(rounds):
        for lib in (tg, torch):
            run = CASES[case](lib, n)
            gc.collect()
            started = time.perf_counter()
            run()
            times[lib].append((time.perf_counter() - started) / n)
    return statistics.median(times[tg]), statistics.median(times[torch])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per size (median)")
    args = parser.parse_args()
    sizes = {"fan-in": QUICK_FAN_IN if args.quick else FAN_IN, "views": QUICK_VIEWS if args.quick else VIEWS}
    print("Counted: bytecodes per input (fan-in) or per view (views); flat means linear")
    for case, ns in sizes.items():
        counts = [counted_per_item(case, n) for n in ns]
        print(f"  {case:7s} " + "  ".join(f"n={n:>7,}: {c:7.1f}" for n, c in zip(ns, counts))
              + f"   (largest / smallest {counts[-1] / counts[0]:.3f})")
    print(f"Timed: microseconds per input or per view, median of {args.rounds} interleaved rounds")
    for case, ns in sizes.items():
        for n in ns:
            ours, theirs = timed_per_item(case, n, args.rounds)
            print(f"  {case:7s} n={n:>7,}: teachgrad {ours * 1e6:7.2f}  torch {theirs * 1e6:7.2f}  "
                  f"({ours / theirs:5.2f}x torch; whole run {ours * n:.3f} s against {theirs * n:.3f} s)")


if __name__ == "__main__":
    main()
