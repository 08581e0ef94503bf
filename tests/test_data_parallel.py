"""Data-parallel training over torch.distributed (gloo ranks on 127.0.0.1, each a forked process).

- torch's own DistributedDataParallel around a model that runs on teachgrad is refused, never silently wrong
  (its reducer waits on hooks in torch's engine, which never runs for teachgrad's graph);
- torch.distributed's collectives given Variables work on the data, as on torch tensors;
- teachgrad.nn.parallel.DistributedDataParallel gives every rank torch's DDP's gradients and parameters bit for bit.

Each test starts its ranks with `fork` (a few seconds at most) and asserts inside each rank; a rank's failure
comes back as the test's failure, with the rank's traceback.
"""
import os
import socket

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
