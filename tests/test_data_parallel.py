"""Data-parallel training over torch.distributed (gloo ranks on 127.0.0.1, each a forked process).

- torch's own DistributedDataParallel around a model that runs on teachgrad is refused, never silently wrong
  (its reducer waits on hooks in torch's engine, which never runs for teachgrad's graph);
- torch.distributed's collectives given Variables work on the data, as on torch tensors;
- teachgrad.nn.parallel.DistributedDataParallel gives every rank torch's DDP's gradients and parameters bit for bit.

Each test starts its ranks with `fork` (a few seconds at most) and asserts inside each rank; a rank's failure
comes back as the test's failure, with the rank's traceback.
"""
import contextlib
import copy
import os
from pathlib import Path
import socket
import subprocess
import sys

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import teachgrad as tg

import torch._dynamo  # noqa: F401,E402  (torch's DDP asks it for a mode: imported here once, not in every forked rank)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank, world, port, body, args):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        body(rank, world, *args)
    finally:
        dist.destroy_process_group()


def run_ranks(body, world=2, *args):
    """Run `body(rank, world, *args)` in `world` forked gloo ranks; a rank that raises fails the caller."""
    mp.start_processes(_rank_main, args=(world, _free_port(), body, args), nprocs=world, start_method="fork")


# --- torch's DistributedDataParallel: refused with teachgrad's graph ---

def _torch_ddp_around_a_teachgrad_model(rank, world):
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 2))
    x = tg.randn(4, 3)
    with pytest.raises(RuntimeError, match=r"torch\.nn\.parallel\.DistributedDataParallel cannot train a model "
                                           r"that runs on teachgrad.*teachgrad\.nn\.parallel\.DistributedDataParallel"):
        model(x)
    assert model.module.weight.grad is None
    with tg.no_grad():   # nothing to reduce: torch's DDP may run it
        assert torch.equal(model(x).data, model.module(x.data))
    out = model(torch.randn(4, 3))   # a plain torch model under torch's DDP stays torch's
    assert out.grad_fn is not None


def test_torch_ddp_around_a_teachgrad_model_is_refused_not_silently_unreduced():
    run_ranks(_torch_ddp_around_a_teachgrad_model, 2)


# --- torch.distributed's collectives given Variables ---

def _collectives_on_variables(rank, world):
    def start(lib, requires_grad):
        return lib.tensor([1.0 + rank, 2.0 * (rank + 1)], requires_grad=requires_grad)

    def results(lib, requires_grad):
        out = {}
        v = start(lib, requires_grad)
        dist.all_reduce(v)
        out["all_reduce"] = v
        v = start(lib, requires_grad)
        dist.all_reduce(v, op=dist.ReduceOp.MAX)
        out["all_reduce max"] = v
        v = start(lib, requires_grad)
        dist.broadcast(v, src=1)
        out["broadcast"] = v
        v = start(lib, requires_grad)
        gathered = [lib.zeros(2) for _ in range(world)]
        dist.all_gather(gathered, v)
        out["all_gather"] = gathered
        v = start(lib, requires_grad)
        dist.all_reduce(v, async_op=True).wait()
        out["async all_reduce"] = v
        return out

    for requires_grad in (False, True):
        ours, theirs = results(tg, requires_grad), results(torch, requires_grad)
        for name in theirs:
            a = ours[name] if isinstance(ours[name], list) else [ours[name]]
            b = theirs[name] if isinstance(theirs[name], list) else [theirs[name]]
            for x, y in zip(a, b, strict=True):
                assert isinstance(x, tg.Variable), name
                assert torch.equal(x.data, y.detach()), (name, x, y)
                assert x.requires_grad == y.requires_grad and x.grad_fn is None, name
    assert torch.equal(results(tg, False)["all_reduce"].data, torch.tensor([3.0, 6.0]))


def test_collectives_given_variables_work_on_the_data_as_on_torch_tensors():
    run_ranks(_collectives_on_variables, 2)


# --- teachgrad.nn.parallel.DistributedDataParallel against torch's, bit for bit ---

class _Net(torch.nn.Module):
    """Three layers (and, with `unused`, a fourth that forward never calls)."""

    def __init__(self, unused=False, batchnorm=False):
        super().__init__()
        self.first = torch.nn.Linear(5, 8)
        self.norm = torch.nn.BatchNorm1d(8) if batchnorm else torch.nn.Identity()
        self.second = torch.nn.Linear(8, 8)
        self.skipped = torch.nn.Linear(8, 8) if unused else None
        self.last = torch.nn.Linear(8, 3)

    use_skipped = False   # set on one rank only: a parameter some ranks use and others do not
    two_outputs = False   # (out, another): the loss uses only out, so no gradient reaches `skipped`

    def forward(self, x):
        h = torch.relu(self.norm(self.first(x)))
        h = torch.tanh(self.second(h))
        if self.two_outputs:
            return self.last(h), self.skipped(h)
        return self.last(torch.tanh(self.skipped(h)) if self.use_skipped else h)


CONFIGS = {
    "default buckets, a no_sync step": dict(ddp={}, no_sync=(1,)),
    "small buckets": dict(ddp=dict(bucket_cap_mb=0.0002), no_sync=(2,)),
    "gradient_as_bucket_view": dict(ddp=dict(bucket_cap_mb=0.0002, gradient_as_bucket_view=True), no_sync=(1,)),
    "buffers broadcast": dict(ddp=dict(bucket_cap_mb=0.0002), net=dict(batchnorm=True), no_sync=()),
    "an unused parameter found": dict(ddp=dict(bucket_cap_mb=0.0002, find_unused_parameters=True),
                                      net=dict(unused=True), no_sync=(1,)),
    "a parameter only rank 0 uses": dict(ddp=dict(bucket_cap_mb=0.0002, find_unused_parameters=True),
                                         net=dict(unused=True), used_by_rank_0=True, no_sync=()),
    "an output left out of the loss": dict(ddp=dict(bucket_cap_mb=0.0002, find_unused_parameters=True),
                                           net=dict(unused=True), two_outputs=True, no_sync=()),
    "allreduce_hook": dict(ddp=dict(bucket_cap_mb=0.0002), hook="allreduce_hook", no_sync=()),
    "fp16_compress_hook": dict(ddp=dict(bucket_cap_mb=0.0002, gradient_as_bucket_view=True),
                               hook="fp16_compress_hook", no_sync=(1,)),
}


def _twins(rank, config):
    """A teachgrad DDP and torch's DDP around two copies of one model, each rank's copy made different at first
    (construction must broadcast rank 0's)."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    torch.manual_seed(0)
    net = _Net(**config.get("net", {}))
    with torch.no_grad():
        for p in net.parameters():
            p.add_(rank)
    net.use_skipped = config.get("used_by_rank_0", False) and rank == 0
    net.two_outputs = config.get("two_outputs", False)
    twin = copy.deepcopy(net)
    ours = tg.nn.parallel.DistributedDataParallel(net, **config["ddp"])
    theirs = torch.nn.parallel.DistributedDataParallel(twin, **config["ddp"])
    if "hook" in config:
        ours.register_comm_hook(None, getattr(default_hooks, config["hook"]))
        theirs.register_comm_hook(None, getattr(default_hooks, config["hook"]))
    return ours, theirs


def _hook_order(model, order):
    for i, p in enumerate(model.parameters()):
        p.register_post_accumulate_grad_hook(lambda p, i=i: order.append(i))


def _same(ours, theirs, what):
    for (name, a), b in zip(ours.module.named_parameters(), theirs.module.parameters(), strict=True):
        assert (a.grad is None) == (b.grad is None), (what, name)
        if a.grad is not None:
            assert torch.equal(a.grad, b.grad), (what, name, (a.grad - b.grad).abs().max().item())
        assert torch.equal(a, b), (what, name)
    for (name, a), b in zip(ours.module.named_buffers(), theirs.module.buffers(), strict=True):
        assert torch.equal(a, b), (what, name)


def _train_against_torch(rank, world, names):
    for name in names:
        config = CONFIGS[name]
        ours, theirs = _twins(rank, config)
        _same(ours, theirs, (name, "after construction"))
        order_ours, order_theirs = [], []
        _hook_order(ours.module, order_ours)
        _hook_order(theirs.module, order_theirs)
        opt_ours = torch.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
        opt_theirs = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
        for step in range(4):
            g = torch.Generator().manual_seed(100 * step + rank)   # each rank its own share of the batch
            x, y = torch.randn(6, 5, generator=g), torch.randn(6, 3, generator=g)
            quiet = step in config["no_sync"]
            first = (lambda out: out[0]) if config.get("two_outputs") else (lambda out: out)
            with ours.no_sync() if quiet else contextlib.nullcontext():
                tg.nn.functional.mse_loss(first(ours(tg.Variable(x))), tg.Variable(y)).backward()
            with theirs.no_sync() if quiet else contextlib.nullcontext():
                torch.nn.functional.mse_loss(first(theirs(x)), y).backward()
            _same(ours, theirs, (name, "step", step, "grads"))
            if not quiet:
                opt_ours.step()
                opt_theirs.step()
                opt_ours.zero_grad()
                opt_theirs.zero_grad()
                _same(ours, theirs, (name, "step", step, "params"))
        assert order_ours == order_theirs, name
        if not config["no_sync"] and "hook" not in config:   # every rank holds the same model
            flat = torch.cat([p.detach().flatten() for p in ours.parameters()])
            gathered = [torch.empty_like(flat) for _ in range(world)]
            dist.all_gather(gathered, flat)
            assert all(torch.equal(flat, other) for other in gathered), name


@pytest.mark.parametrize("world", [2, 4])
def test_every_rank_gets_torchs_ddp_gradients_and_parameters_bit_for_bit(world):
    run_ranks(_train_against_torch, world, list(CONFIGS))


def _unused_parameter_without_find_unused(rank, world):
    """A parameter forward never uses keeps its bucket from being sent: the next forward raises torch's error."""
    messages = []
    for make in (tg.nn.parallel.DistributedDataParallel, torch.nn.parallel.DistributedDataParallel):
        torch.manual_seed(0)
        model = make(_Net(unused=True), bucket_cap_mb=0.0002)
        lib = tg if make is tg.nn.parallel.DistributedDataParallel else torch
        x = lib.ones(6, 5) if lib is torch else tg.Variable(torch.ones(6, 5))
        model(x).sum().backward()
        with pytest.raises(RuntimeError) as error:
            model(x)
        messages.append(str(error.value))
    ours, theirs = messages
    assert ours.startswith("Expected to have finished reduction in the prior iteration before starting a new one.")
    assert ours == theirs


def test_an_unused_parameter_without_find_unused_parameters_raises_torchs_error():
    run_ranks(_unused_parameter_without_find_unused, 2)


def _comm_hook_registration(rank, world):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    for make in (tg.nn.parallel.DistributedDataParallel, torch.nn.parallel.DistributedDataParallel):
        model = make(torch.nn.Linear(2, 2))
        with pytest.raises(TypeError, match="^Communication hook must be callable.$"):
            model.register_comm_hook(None, "allreduce")
        model.register_comm_hook(None, default_hooks.allreduce_hook)
        with pytest.raises(RuntimeError, match="register_comm_hook or register_builtin_comm_hook can only be called once."):
            model.register_comm_hook(None, default_hooks.allreduce_hook)


def test_a_comm_hook_is_checked_and_registered_once_as_by_torch():
    run_ranks(_comm_hook_registration, 2)


def test_data_parallel_without_devices_calls_the_module_as_torchs_does():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    ours, theirs = tg.nn.DataParallel(net), torch.nn.DataParallel(copy.deepcopy(net))
    assert tg.nn.parallel.DataParallel is tg.nn.DataParallel
    ours(tg.Variable(x)).sum().backward()
    theirs(x).sum().backward()
    assert torch.equal(ours.module.weight.grad, theirs.module.weight.grad)


# --- the torchrun script ---

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "ddp_train.py"


def test_the_torchrun_script_trains_on_two_ranks_and_checks_itself():
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
               "--master-port", str(_free_port()), str(SCRIPT), "--steps", "4"]   # (torchrun is this module)
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 ranks, 4 steps: every rank's parameters equal: True" in result.stdout
    assert "as one process on the whole batch (max difference below 1e-5): True" in result.stdout


def test_the_script_outside_torchrun_says_how_to_start_it():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "RANK"})
    assert result.returncode == 1
    assert "torchrun --nproc-per-node 2 scripts/ddp_train.py" in result.stderr


# --- the bucket assignment, against torch's own function ---

@pytest.mark.parametrize("limits", [[2 ** 63 - 1], [100], [64, 200], [1, 1], [40, 1000, 64]])
def test_bucket_assignment_is_torchs(limits):
    from teachgrad.nn.parallel.reducer import compute_bucket_assignment_by_size
    tensors = [torch.empty(n, dtype=dtype) for n, dtype in
               [(3, torch.float32), (20, torch.float32), (5, torch.float64), (7, torch.float32), (1, torch.float64),
                (30, torch.float32), (2, torch.float32), (16, torch.float64), (9, torch.float32)]]
    theirs, _ = dist._compute_bucket_assignment_by_size(tensors, limits)
    assert compute_bucket_assignment_by_size(tensors, limits) == theirs
    # after the first backward: in the order the gradients arrived, not sorted (one dtype: with several, torch
    # appends the buckets left open in the order of a C++ hash map; their contents are the same)
    tensors = [t.float() for t in tensors]
    arrival = [5, 2, 8, 0, 7, 1, 3, 6, 4]
    theirs, _ = dist._compute_bucket_assignment_by_size([tensors[i] for i in arrival], limits, [], arrival)
    assert compute_bucket_assignment_by_size([tensors[i] for i in arrival], limits, arrival) == theirs
