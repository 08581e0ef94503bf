#!/usr/bin/env python
"""What teachgrad's Python engine costs next to torch.autograd's C++ one, and next to two other
autograds written in Python: MyGrad and HIPS autograd (both over numpy).

    make bench                          (sets up, then runs this with the full number of rounds)
    python benchmarks/bench.py --quick  (fewer rounds: a rough look, not figures to quote)
    python benchmarks/bench.py --only chain

MyGrad and HIPS autograd are the `bench` extras (pip install -c constraints.txt -e '.[bench]',
which `make bench` does). Every figure is a ratio to torch.autograd: lower is better, 1.0 is parity.

How it times: each case runs every library in interleaved rounds, each round running every library
once, for the same number of steps (about 20 ms of torch's), in an order that rotates from round to
round; after a warm-up. A library's figure is the median over the rounds of its per-round ratio to
torch, so a burst of other work on the machine spoils a round or two, not the result. Before timing,
every library's result is checked against torch's on the same data (same loss, same gradients, within
float32 round-off): a benchmark of a different computation is worthless.

1. mse: a training step (forward and backward, no parameter update) of a 4-layer MLP, `h @ W + b`,
   relu, mean squared error, float32, at widths 4 to 1024. Rows: torch.autograd, three references
   (the same kernels with a hand-written backward and no autograd at all: the floor; one
   torch.autograd.Function per op: torch's own Python path; the contract floor, a Python engine that
   does only what teachgrad does on every op and node, written inline: benchmarks/contract_floor.py),
   teachgrad, MyGrad, HIPS autograd, each written in its own idiom. The peers get the same float32
   values as numpy arrays.
2. nograd: the same forward, with the loss, and no graph recorded: under `no_grad` (torch,
   teachgrad, the contract floor), `mygrad.no_autodiff` (MyGrad), on plain numpy arrays (HIPS autograd).
3. linear-bce: the MLP step with `F.linear` and binary cross-entropy with logits: teachgrad and
   torch only (the peers have no F.linear).
4. chain: a long chain `y = y * 1.0` on a scalar, forward and backward, all four libraries and the
   contract floor: time a node at 1e3, 1e4 and 1e5 nodes (each library in its default dtype: a
   scalar's). Flat per-node time means the engine does no more than linear work. A library that
   cannot build or differentiate a chain that long shows "—", with the reason printed under the table.
5. views: a long chain of views `y = y[:]` (each a view of the one before), forward and backward:
   teachgrad and torch only. Flat per-view time means a view costs the same whatever came before it.
6. program: a whole program, the same text run with lib=torch and lib=teachgrad: a character-level model
   (embedding, linear layers, cross-entropy, AdamW) trained for a fixed number of steps, then sampled under
   no_grad; its loss, gradients and sampled text checked against torch's.

The mse case also prints each engine's bookkeeping: its step minus the same kernels with no autograd (torch's
for teachgrad and the contract floor, numpy's, written by hand the same way, for MyGrad and HIPS autograd).
"""
import os
import sys


def threads_asked(argv):
    """The --threads N on the command line (1 if none), read before numpy is imported: numpy's BLAS
    takes its thread count from the environment once, when it loads."""
    for i, arg in enumerate(argv):
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
    return "1"


for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = threads_asked(sys.argv[1:])

import argparse                                      # noqa: E402 (after the thread counts, on purpose)
import platform                                      # noqa: E402
import statistics                                    # noqa: E402
import time                                          # noqa: E402
from importlib.metadata import version             # noqa: E402

import numpy as np                                   # noqa: E402
import torch                                         # noqa: E402

import teachgrad as tg                               # noqa: E402
import contract_floor                                # noqa: E402  (benchmarks/contract_floor.py, beside this file)
from char_model import char_model                    # noqa: E402  (benchmarks/char_model.py: the whole program)
from mlp import mlp_data, mse_step                   # noqa: E402  (benchmarks/mlp.py: the MLP's data and step)

try:
    import autograd                                  # HIPS autograd
    import autograd.numpy as anp
    import mygrad as mg
    import mygrad.nnet
except ImportError as error:
    sys.exit(f"{error.name} is missing: MyGrad and HIPS autograd are the bench extras; `make bench` installs them "
             f"(or: pip install -c constraints.txt -e '.[bench]')")

WIDTHS = {4: 16, 16: 32, 64: 64, 256: 128, 1024: 256}   # width: batch
CHAIN_LENGTHS = (1_000, 10_000, 100_000)
ROUND_SECONDS = 0.02
NAMES = {   # a library's key: the name its row shows
    "torch": "torch.autograd",
    "floor": "same torch kernels, no autograd (the floor)",
    "function": "one torch.autograd.Function per op (torch's own Python path)",
    "contract": "the contract floor: teachgrad's always-on bookkeeping, inline (benchmarks/contract_floor.py)",
    "teachgrad": "teachgrad",
    "mygrad": "MyGrad",
    "autograd": "HIPS autograd",
    "numpy_floor": "same numpy kernels, no autograd (MyGrad's and HIPS autograd's floor)",
}


# ---- the shared timing loop ----------------------------------------------------------------------------------

def timed_round(fn, steps):
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def compare(runs, rounds, warmup=3, same_dtype=True, times_out=None):
    """Time `runs` ({library: function of no arguments}, torch's first) in interleaved rounds.

    Returns ({library: (median seconds a step, median of the per-round ratios to torch)}, {library: why it
    could not run}). Each one's first call, the first of the warm-up, is checked against torch's result (its
    dtype too where `same_dtype`) before anything is timed.
    """
    results, failed = {}, {}
    for name, run in runs.items():
        try:
            results[name] = run()
        except RecursionError as error:   # a peer whose engine recurses, on a deep graph
            failed[name] = f"{type(error).__name__}: {error}"
    runs = {name: run for name, run in runs.items() if name not in failed}
    for name in runs:
        check_agrees(name, results[name], results["torch"], same_dtype)
    for _ in range(warmup - 1):
        for run in runs.values():
            run()

    steps = max(1, round(ROUND_SECONDS / timed_round(runs["torch"], 1)))
    names = list(runs)
    times = {name: [] for name in names}
    for r in range(rounds):
        start = r % len(names)
        for name in names[start:] + names[:start]:
            times[name].append(timed_round(runs[name], steps))
    if times_out is not None:   # each round's seconds a step, for figures made of several libraries' times
        times_out.update(times)
    figures = {name: (statistics.median(times[name]),
                      statistics.median(mine / torchs for mine, torchs in zip(times[name], times["torch"])))
               for name in names}
    return figures, failed


# ---- a whole program: a character-level model trained and sampled, the same text under torch and teachgrad ----

def program(lib):
    """The whole program, run once a step: what it returns is checked against torch's (the sampled text too)."""
    def run():
        loss, grads, text = char_model(lib)
        run.text = text
        return loss, grads
    return run


PROGRAMS = {"torch": program(torch), "teachgrad": program(tg)}


def program_table(rounds):
    """One row: teachgrad's whole program as a ratio to the same program under torch."""
    runs = {name: make for name, make in PROGRAMS.items()}
    measured, _ = compare(runs, rounds)
    if runs["teachgrad"].text != runs["torch"].text:
        sys.exit(f"the sampled text differs: teachgrad {runs['teachgrad'].text!r}, torch {runs['torch'].text!r}")
    rows = [[f"{NAMES['torch']}: ms a program", f"{measured['torch'][0] * 1e3:.1f}"],
            ["teachgrad", f"{measured['teachgrad'][1]:.2f}"]]
    print_table("A whole program: a character-level model (embedding, two linear layers, tanh, cross-entropy, AdamW; "
                "20 training steps, then 20 characters sampled under no_grad): ratio to torch", "case", ["figure"], rows)


# ---- the check: every library computes what torch computes ----------------------------------------------------

def as_numpy(value):
    """A library's loss, gradient or list of them, as numpy arrays (or lists of them)."""
    if isinstance(value, (list, tuple)):
        return [as_numpy(v) for v in value]
    if isinstance(value, (tg.Variable, contract_floor.Variable)):
        value = value.data
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, mg.Tensor):
        return value.data
    return np.asarray(value)


def check_agrees(name, result, torchs, same_dtype=True):
    """Stop the benchmark if `result` is not torch's: same structure, same values within float32 round-off,
    and (where `same_dtype`) computed in torch's dtype."""
    got, want = as_numpy(result), as_numpy(torchs)
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            sys.exit(f"{NAMES[name]} does not compute what torch computes: {len(got)} results, torch {len(want)}")
        for g, w in zip(got, want):
            check_agrees(name, g, w, same_dtype)
        return
    if got.shape != want.shape or (same_dtype and got.dtype != want.dtype):
        sys.exit(f"{NAMES[name]} does not compute what torch computes: {got.dtype}{list(got.shape)} "
                 f"where torch has {want.dtype}{list(want.shape)}")
    scale = float(np.abs(want).max()) if want.size else 0.0
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5 * scale):
        sys.exit(f"{NAMES[name]} does not compute what torch computes: off by up to "
                 f"{float(np.abs(got - want).max()):.3g} (torch's largest value {scale:.3g})")


# ---- the MLP: data, and one step in each library's idiom ------------------------------------------------------

def numpy_data(params, x, y):
    """The same values as numpy float32 arrays of their own (not sharing torch's memory): the peers' data."""
    params = [(w.numpy().copy(), b.numpy().copy()) for w, b in params]
    return params, x.numpy().copy(), y.numpy().copy()


def torch_leaves(params):
    return [(w.clone().requires_grad_(), b.clone().requires_grad_()) for w, b in params]


def teachgrad_leaves(params):
    return [(tg.Variable(w.clone(), requires_grad=True), tg.Variable(b.clone(), requires_grad=True))
            for w, b in params]


def contract_leaves(params):
    return [(contract_floor.Variable(w.clone(), True), contract_floor.Variable(b.clone(), True)) for w, b in params]


def torch_mse_step(params, x, y):
    return mse_step(torch_leaves(params), x, y)


def teachgrad_mse_step(params, x, y):
    return mse_step(teachgrad_leaves(params), tg.Variable(x), tg.Variable(y))


def floor_mse_step(params, x, y):
    """The kernels torch's engine runs for this step, called straight from Python with no graph: the forward,
    then the backward written out by hand (what MmBackward0, AddBackward0, ReluBackward0, ... compute)."""
    def step():
        inputs, h = [], x
        for i, (w, b) in enumerate(params):
            inputs.append(h)
            h = h @ w + b
            if i < len(params) - 1:
                h = h.relu()
        diff = h - y
        loss = diff.pow(2).mean()
        grad = diff * (2 / diff.numel())                  # d loss / d h: mean's and pow's backward in one
        grads = []
        for i in reversed(range(len(params))):
            w, _ = params[i]
            grads = [inputs[i].t() @ grad, grad.sum(0)] + grads
            if i > 0:
                grad = torch.ops.aten.threshold_backward(grad @ w.t(), inputs[i], 0)   # relu's: 0 where it was
        return loss, grads
    return step


class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad @ b.t() if ctx.needs_input_grad[0] else None,
                a.t() @ grad if ctx.needs_input_grad[1] else None)


class AddBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, b):
        return h + b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad.sum(0)


class Relu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h):
        result = h.relu()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return torch.ops.aten.threshold_backward(grad, result, 0)


class Sub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad


class Pow(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, n):
        ctx.save_for_backward(a)
        ctx.n = n
        return a.pow(n)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * (ctx.n * a.pow(ctx.n - 1)), None


class Mean(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.shape, ctx.count = a.shape, a.numel()
        return a.mean()

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape) / ctx.count


def function_mse_step(params, x, y):
    """Torch's engine driving a Python torch.autograd.Function for each op: torch's own Python path."""
    params = torch_leaves(params)

    def step():
        h = x
        for i, (w, b) in enumerate(params):
            h = AddBias.apply(MatMul.apply(h, w), b)
            if i < len(params) - 1:
                h = Relu.apply(h)
        loss = Mean.apply(Pow.apply(Sub.apply(h, y), 2))
        for w, b in params:
            w.grad = b.grad = None
        loss.backward()
        return loss, [p.grad for pair in params for p in pair]
    return step


def mygrad_mse_step(params, x, y):
    """MyGrad: tensors over numpy arrays; numpy arrays (x, y) are constants; a new op on a tensor clears its grad."""
    params, x, y = numpy_data(params, x, y)
    params = [(mg.tensor(w), mg.tensor(b)) for w, b in params]

    def step():
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = mygrad.nnet.relu(h)
        loss = mg.mean((h - y) ** 2)
        loss.backward()
        return loss, [p.grad for pair in params for p in pair]
    return step


def autograd_mse_loss(params, x, y):
    """The loss as a function of the parameters, in autograd.numpy. Relu is `h * (h > 0)` and the mean a sum
    over the count: HIPS autograd's own gradients of np.maximum and np.mean come back in float64 for
    float32 inputs (turning the rest of the backward into float64 work), these stay in float32."""
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = h * (h > 0)
    return anp.sum((h - y) ** 2) / y.size


def autograd_mse_step(params, x, y):
    """HIPS autograd: value_and_grad of the loss function of the parameters, on numpy arrays."""
    params, x, y = numpy_data(params, x, y)
    loss_and_grads = autograd.value_and_grad(autograd_mse_loss)

    def step():
        loss, grads = loss_and_grads(params, x, y)
        return loss, [g for pair in grads for g in pair]
    return step


def contract_mse_step(params, x, y):
    """The same lines on the contract floor's Variables (x and y need no gradient)."""
    return mse_step(contract_leaves(params), contract_floor.Variable(x), contract_floor.Variable(y))


def numpy_floor_mse_step(params, x, y):
    """The numpy kernels the peers run for this step, called straight from Python with no graph: the forward, then
    the backward written out by hand, as the torch floor is (MyGrad's and HIPS autograd's own floor)."""
    params, x, y = numpy_data(params, x, y)

    def step():
        inputs, h = [], x
        for i, (w, b) in enumerate(params):
            inputs.append(h)
            h = h @ w + b
            if i < len(params) - 1:
                h = np.maximum(h, 0)
        diff = h - y
        loss = (diff ** 2).mean()
        grad = diff * np.float32(2 / diff.size)           # d loss / d h: mean's and square's backward in one
        grads = []
        for i in reversed(range(len(params))):
            w, _ = params[i]
            grads = [inputs[i].T @ grad, grad.sum(0)] + grads
            if i > 0:
                grad = (grad @ w.T) * (inputs[i] > 0)    # relu's: 0 where it was
        return loss, grads
    return step


MSE_STEPS = {"torch": torch_mse_step, "floor": floor_mse_step, "function": function_mse_step,
             "contract": contract_mse_step, "teachgrad": teachgrad_mse_step, "mygrad": mygrad_mse_step,
             "autograd": autograd_mse_step, "numpy_floor": numpy_floor_mse_step}

# Each engine's bookkeeping: its step minus the floor of its own kernels (a ratio to torch's step, per round).
BOOKKEEPING = {"torch": "floor", "contract": "floor", "teachgrad": "floor", "mygrad": "numpy_floor",
               "autograd": "numpy_floor"}


# ---- the forward with no graph recorded --------------------------------------------------------------------

def mse_forward(params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = h.relu()
    return ((h - y) ** 2).mean()


def torch_forward(params, x, y):
    params = torch_leaves(params)

    def forward():
        with torch.no_grad():
            return mse_forward(params, x, y)
    return forward


def teachgrad_forward(params, x, y):
    params, x, y = teachgrad_leaves(params), tg.Variable(x), tg.Variable(y)

    def forward():
        with tg.no_grad():
            return mse_forward(params, x, y)
    return forward


def mygrad_forward(params, x, y):
    params, x, y = numpy_data(params, x, y)
    params = [(mg.tensor(w), mg.tensor(b)) for w, b in params]

    def forward():
        with mg.no_autodiff:
            h = x
            for i, (w, b) in enumerate(params):
                h = h @ w + b
                if i < len(params) - 1:
                    h = mygrad.nnet.relu(h)
            return mg.mean((h - y) ** 2)
    return forward


def autograd_forward(params, x, y):
    """HIPS autograd's forward on plain numpy arrays records nothing: it is its no-grad forward."""
    params, x, y = numpy_data(params, x, y)
    return lambda: autograd_mse_loss(params, x, y)


def contract_forward(params, x, y):
    params, x, y = contract_leaves(params), contract_floor.Variable(x), contract_floor.Variable(y)

    def forward():
        with contract_floor.no_grad():
            return mse_forward(params, x, y)
    return forward


FORWARDS = {"torch": torch_forward, "contract": contract_forward, "teachgrad": teachgrad_forward,
            "mygrad": mygrad_forward, "autograd": autograd_forward}


# ---- F.linear and BCE with logits: teachgrad and torch only ----------------------------------------------------

def linear_bce_step(lib):
    def make(params, x, y):
        F = lib.nn.functional
        leaves = torch_leaves if lib is torch else teachgrad_leaves
        params = leaves([(w.t().contiguous(), b) for w, b in params])   # F.linear takes weights (out, in)
        if lib is tg:
            x, y = tg.Variable(x), tg.Variable(y)

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
            return loss, [p.grad for pair in params for p in pair]
        return step
    return make


LINEAR_BCE_STEPS = {"torch": linear_bce_step(torch), "teachgrad": linear_bce_step(tg)}


# ---- long chains ------------------------------------------------------------------------------------------

def chain(lib):
    """torch's chain, and teachgrad's: the same lines."""
    def make(n):
        def run():
            x = lib.tensor(1.0, requires_grad=True)
            y = x
            for _ in range(n):
                y = y * 1.0
            y.backward()
            return x.grad
        return run
    return make


def mygrad_chain(n):
    def run():
        x = mg.tensor(1.0)
        y = x
        for _ in range(n):
            y = y * 1.0
        y.backward()
        return x.grad
    return run


def autograd_chain(n):
    def f(x):
        for _ in range(n):
            x = x * 1.0
        return x
    grad = autograd.grad(f)
    return lambda: grad(1.0)


CHAINS = {"torch": chain(torch), "contract": chain(contract_floor), "teachgrad": chain(tg), "mygrad": mygrad_chain,
          "autograd": autograd_chain}


def view_chain(lib):
    def make(n):
        def run():
            x = lib.ones(4, requires_grad=True)
            y = x * 1.0
            for _ in range(n):
                y = y[:]
            y.sum().backward()
            return x.grad
        return run
    return make


VIEW_CHAINS = {"torch": view_chain(torch), "teachgrad": view_chain(tg)}


# ---- the tables ------------------------------------------------------------------------------------------

def markdown_row(cells):
    return "| " + " | ".join(cells) + " |"


def power_of_ten(n):
    return f"1e{len(str(n)) - 1}"


def print_table(title, first_column, columns, rows, notes=()):
    print(f"{title}\n")
    print(markdown_row([first_column] + columns))
    print(markdown_row(["---"] * (len(columns) + 1)))
    for row in rows:
        print(markdown_row(row))
    for note in notes:
        print(f"\n{note}")
    print(flush=True)


def mlp_table(title, makers, rounds, unit="step", bookkeeping=None):
    """Rows: torch's µs a step, then each library's ratio to torch; a column for each width (batch).

    With `bookkeeping` ({library: the library whose time is its kernels' floor}), a second table from the same
    rounds: each library's step minus its floor's, as a ratio to torch's step (the median over rounds)."""
    columns, figures, spent = [], {}, {}
    for width, batch in WIDTHS.items():
        data = mlp_data(width, batch)
        times = {}
        measured, _ = compare({name: make(*data) for name, make in makers.items()}, rounds, times_out=times)
        columns.append(f"{width} ({batch})")
        for name, figure in measured.items():
            figures.setdefault(name, []).append(figure)
        for name, floor in (bookkeeping or {}).items():
            spent.setdefault(name, []).append(statistics.median(
                (mine - floors) / torchs for mine, floors, torchs in zip(times[name], times[floor], times["torch"])))
        print(f"  ... width {width} measured", file=sys.stderr, flush=True)
    rows = [[f"{NAMES['torch']}: µs a {unit}"] + [f"{seconds * 1e6:.0f}" for seconds, _ in figures["torch"]]]
    rows += [[NAMES[name]] + [f"{ratio:.2f}" for _, ratio in figures[name]] for name in makers if name != "torch"]
    print_table(title, "width (batch)", columns, rows)
    if bookkeeping:
        rows = [[NAMES[floor]] + [f"{ratio:.2f}" for _, ratio in figures[floor]] for floor in ("floor", "numpy_floor")]
        rows += [[f"{NAMES[name]} (its step minus {'numpy' if floor == 'numpy_floor' else 'torch'}'s floor)"]
                 + [f"{figure:.2f}" for figure in spent[name]] for name, floor in bookkeeping.items()]
        print_table("Bookkeeping: each engine's training step minus the same kernels with no autograd (its own "
                    "floor), as a ratio to torch.autograd's step (same rounds as above)", "width (batch)", columns, rows)


def chain_table(title, makers, rounds, unit):
    """Rows: each library's ratio to torch with its µs a node in brackets; a column for each length."""
    cells = {name: [] for name in makers}
    notes, rounds_run = [], []
    for n in CHAIN_LENGTHS:
        rounds_run.append(max(3, rounds * 1000 // n + 2))   # a long chain is one long step: fewer rounds
        measured, failed = compare({name: make(n) for name, make in makers.items()},
                                   rounds_run[-1], warmup=1, same_dtype=False)
        for name in makers:
            if name in failed:
                cells[name].append("—")
                notes.append(f"— {NAMES[name]} at {power_of_ten(n)} {unit}s: {failed[name]}")
            else:
                seconds, ratio = measured[name]
                cell = f"{seconds / n * 1e6:.2f}" if name == "torch" else f"{ratio:.2f} ({seconds / n * 1e6:.2f})"
                cells[name].append(cell)
        print(f"  ... {n} {unit}s measured", file=sys.stderr, flush=True)
    rows = [[f"{NAMES['torch']}: µs a {unit}"] + cells["torch"]]
    rows += [[f"{NAMES[name]}: ratio (µs a {unit})"] + cells[name] for name in makers if name != "torch"]
    notes.append(f"Rounds: {', '.join(map(str, rounds_run))} at {', '.join(map(power_of_ten, CHAIN_LENGTHS))} {unit}s.")
    print_table(title, unit + "s", [power_of_ten(n) for n in CHAIN_LENGTHS], rows, notes)


def numpy_blas():
    try:
        return np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except (KeyError, TypeError):
        return "BLAS"


def header(rounds):
    libraries = [("torch", "torch"), ("MyGrad", "mygrad"), ("HIPS autograd", "autograd"), ("numpy", "numpy")]
    versions = ", ".join(f"{name} {version(package)}" for name, package in libraries)
    threads = os.environ["OPENBLAS_NUM_THREADS"]
    return (f"teachgrad {tg.__version__}, {versions}, Python {platform.python_version()}; "
            f"{torch.get_num_threads()} torch thread(s), numpy's {numpy_blas()} at {threads} thread(s) "
            f"(OMP/OPENBLAS/MKL_NUM_THREADS={threads}); median of {rounds} interleaved rounds of ~20 ms "
            f"(of torch's steps) each, fewer on long chains; figures are ratios to torch.autograd "
            f"(lower is better)\n")


CASES = ("mse", "nograd", "linear-bce", "chain", "views", "program")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a rough look, not figures to quote)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch's intra-op threads and numpy's BLAS threads (default 1)")
    parser.add_argument("--only", choices=CASES, help="run this one case")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rounds = 5 if args.quick else 21
    cases = [args.only] if args.only else CASES

    print(header(rounds))
    if "mse" in cases:
        mlp_table("MLP training step (4 layers, `h @ W + b`, relu, mean squared error, float32): "
                  "forward and backward, ratio to torch.autograd", MSE_STEPS, rounds, bookkeeping=BOOKKEEPING)
    if "nograd" in cases:
        mlp_table("MLP forward with the loss, no graph recorded (`no_grad`; MyGrad's `no_autodiff`; "
                  "HIPS autograd on plain arrays): ratio to torch's under `no_grad`", FORWARDS, rounds, "forward")
    if "linear-bce" in cases:
        mlp_table("MLP training step (4 layers, `F.linear`, relu, BCE with logits): teachgrad and torch only",
                  LINEAR_BCE_STEPS, rounds)
    if "chain" in cases:
        chain_table("Chain `y = y * 1.0`, forward and backward: ratio to torch.autograd (µs a node)",
                    CHAINS, rounds, "node")
    if "views" in cases:
        chain_table("Chain of views `y = y[:]`, forward and backward: teachgrad and torch only",
                    VIEW_CHAINS, rounds, "view")
    if "program" in cases:
        program_table(rounds)


if __name__ == "__main__":
    main()
