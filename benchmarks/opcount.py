#!/usr/bin/env python
"""How much Python teachgrad runs for one case, counted rather than timed: the bytecodes each function executes.

    python benchmarks/opcount.py step                     (the bench's MLP step at width 4: total, then by function)
    python benchmarks/opcount.py chain program --top 10
    python benchmarks/opcount.py step --compare BEFORE_DIR AFTER_DIR   (two checkouts of teachgrad, side by side)

On a machine shared with others, timings of a change worth 1-3% drown in noise; the count does not move from run to
run, so it says at once whether a change to the hot path made Python do less. It says nothing about the time torch's
kernels take, nor about what C code (attribute lookups, allocation) costs per bytecode: confirm a change that counts
well with `make bench` or `benchmarks/ab.py`. For the machine instructions of everything, C included, run a case
under valgrind (`valgrind --tool=callgrind --toggle-collect='_operator_call*' python ...`, the case called through
`operator.call`, which nothing else calls), as docs/speed.md describes.

Cases: `step` (one training step of bench.py's MLP, benchmarks/mlp.py, at width 4, batch 16), `chain` (`y = y * 1.0`, 300 nodes, and
backward), `program` (benchmarks/char_model.py's whole program under teachgrad).
"""
import argparse
import collections
import gc
import json
import os
import subprocess
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
CASES = ("step", "chain", "program")


def make_case(name):
    """The case as a function of no arguments (its data made once, outside what is counted)."""
    import torch
    import teachgrad as tg

    if name == "step":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from mlp import mlp_data, mse_step
        params, x, y = mlp_data(4, 16)
        return mse_step([(tg.Variable(w, requires_grad=True), tg.Variable(b, requires_grad=True)) for w, b in params],
                        tg.Variable(x), tg.Variable(y))
    if name == "chain":
        def chain():
            y = x = tg.tensor(1.0, requires_grad=True)
            for _ in range(300):
                y = y * 1.0
            y.backward()
        return chain
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from char_model import char_model
    return lambda: char_model(tg)


def count(name):
    """{(file, function): bytecodes} for one run of the case, after two runs that warm it up."""
    case = make_case(name)
    case()
    case()
    return count_run(case)


def count_run(case):
    """{(file, function): bytecodes} for one call of `case` (a function of no arguments), as it runs now."""
    counts = collections.Counter()
    import teachgrad
    here = os.path.dirname(os.path.dirname(os.path.abspath(teachgrad.__file__)))   # (the checkout counted)

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            counts[(frame.f_code.co_filename, frame.f_code.co_name)] += 1
        return tracer

    gc.collect()      # (a collection inside the counted run would count whatever finalizers and weakref callbacks it
    gc.disable()      # runs: the count would move with the process's history)
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        case()
    finally:
        sys.settrace(previous)
        gc.enable()
    return {f"{_short(path, here)}:{function}": n for (path, function), n in counts.items()}


def _short(path, here):
    """A file's path as the same for every checkout: from site-packages, from this folder, or from the checkout."""
    if "site-packages/" in path:
        return path.split("site-packages/")[-1]
    for root in (os.path.dirname(os.path.abspath(__file__)), here):
        if path.startswith(root + os.sep):
            return os.path.relpath(path, root)
    return path


def _in_checkout(checkout, name):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    out = subprocess.run([sys.executable, __file__, name, "--json"], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", choices=CASES, default=["step"])
    parser.add_argument("--top", type=int, default=25, help="how many functions to list")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two checkouts of teachgrad")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for name in args.cases:
        if args.json:
            print(json.dumps(count(name)))
            continue
        if args.compare:
            before, after = (_in_checkout(checkout, name) for checkout in args.compare)
            print(f"{name}: {sum(before.values())} bytecodes before, {sum(after.values())} after "
                  f"({sum(after.values()) / sum(before.values()):.3f})")
            changed = sorted(set(before) | set(after), key=lambda f: after.get(f, 0) - before.get(f, 0))
            for function in [f for f in changed if after.get(f, 0) != before.get(f, 0)][:args.top]:
                print(f"  {after.get(function, 0) - before.get(function, 0):+7d}  {function}")
            continue
        counts = count(name)
        total = sum(counts.values())
        print(f"{name}: {total} bytecodes")
        for function, n in sorted(counts.items(), key=lambda item: -item[1])[:args.top]:
            print(f"  {n:7d} {n / total:6.1%}  {function}")


if __name__ == "__main__":
    main()
