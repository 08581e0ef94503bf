"""Notebook 23 · data parallel: a bucketed reducer of one's own, on two gloo ranks.

The check starts its own two ranks (forked, gloo on 127.0.0.1), builds the same model in each, and calls the
learner's `bucketed_reducer(params, buckets, world)` there; then one backward per rank on its half of a batch.
It asks that, once `backward()` returns, every rank's gradients are the average over the ranks (those of one
process on the whole batch); that one asynchronous all-reduce went out per bucket, the first before the last
gradient had arrived (the overlap); and that no DistributedDataParallel, torch's or teachgrad's, did the work.
"""
from __future__ import annotations

import datetime
import gc
import multiprocessing
import socket
import time
from typing import Callable

import torch
import torch.distributed as dist

import teachgrad as tg
from ._verdicts import Verdict, _correct, _not_yet, _raised

__all__ = ["check_bucketed_reducer"]

BUCKETS = [[4, 5], [2, 3], [0, 1]]   # the last layer's weight and bias first: backward produces them first
WORLD = 2


def _model():
    torch.manual_seed(23)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4), torch.nn.Tanh(),
                               torch.nn.Linear(4, 2))


def _batch():
    g = torch.Generator().manual_seed(230)
    return torch.randn(8, 3, generator=g), torch.randn(8, 2, generator=g)


def _whole_batch_grads():
    """One process, the whole batch: what every rank's gradients must average to."""
    model = _model()
    x, y = _batch()
    tg.nn.functional.mse_loss(model(tg.Variable(x)), tg.Variable(y)).backward()
    twin = _model()
    torch.nn.functional.mse_loss(twin(x), y).backward()
    for p, p_t in zip(model.parameters(), twin.parameters()):
        assert torch.allclose(p.grad, p_t.grad, atol=1e-7), "teachgrad and torch disagree on the whole batch"
    return [p.grad.clone() for p in model.parameters()]


def _rank(rank, port, reducer, results):
    """One rank: the learner's reducer on this rank's half of the batch; what happened goes back on `results`."""
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD,
                                timeout=datetime.timedelta(seconds=60))
        model = _model()
        params = list(model.parameters())
        arrived, sends = [0], []
        for p in params:   # registered first, so it counts a gradient before the learner's hook sees it
            p.register_post_accumulate_grad_hook(lambda p: arrived.__setitem__(0, arrived[0] + 1))
        real_all_reduce = dist.all_reduce

        def watched_all_reduce(tensor, *args, **kwargs):   # (this rank's process only)
            sends.append((arrived[0], tensor.numel(), bool(kwargs.get("async_op", args[2] if len(args) > 2 else 0))))
            return real_all_reduce(tensor, *args, **kwargs)
        dist.all_reduce = watched_all_reduce
        try:
            reducer(params, [list(b) for b in BUCKETS], WORLD)
            # (type(o), not isinstance: a weakref proxy among the objects, its referent gone, raises on isinstance)
            wrapped = [type(o).__module__ for o in gc.get_objects()
                       if issubclass(type(o), (torch.nn.parallel.DistributedDataParallel,
                                               tg.nn.parallel.DistributedDataParallel))]
            x, y = _batch()
            share = slice(rank * 4, rank * 4 + 4)
            tg.nn.functional.mse_loss(model(tg.Variable(x[share])), tg.Variable(y[share])).backward()
            grads = [None if p.grad is None else (tuple(p.grad.shape), p.grad.flatten().tolist()) for p in params]
        finally:
            dist.all_reduce = real_all_reduce
        results.put((rank, ("ok", grads, sends, wrapped)))
    except Exception as error:   # a learner's error comes back as a message
        results.put((rank, ("raised", _raised("your reducer, in a rank,", error))))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _run_two_ranks(reducer):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    context = multiprocessing.get_context("fork")
    results = context.SimpleQueue()
    ranks = [context.Process(target=_rank, args=(r, port, reducer, results)) for r in range(WORLD)]
    for process in ranks:
        process.start()
    answers, deadline = {}, time.monotonic() + 120
    while len(answers) < WORLD and time.monotonic() < deadline:
        if not results.empty():
            rank, answer = results.get()
            answers[rank] = answer
        else:
            time.sleep(0.02)
    for process in ranks:
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
    silent = ("raised", "a rank did not answer in 2 minutes: one may wait for an all-reduce the other never sent")
    return [answers.get(r, silent) for r in range(WORLD)]


def check_bucketed_reducer(bucketed_reducer: Callable, hint: int = 1) -> Verdict:
    """bucketed_reducer(params, buckets, world) hooks the parameters so that each backward averages their
    gradients over the ranks, one asynchronous all-reduce per bucket, finished by a callback at backward's end."""
    hints = ("count, per bucket, the gradients it still waits for; when none is left, send the bucket at once,\n"
             "  and let a callback queued on the engine wait for every bucket at the end of backward.",
             "which hook says that a parameter's .grad is complete? Keep, per bucket, how many are still\n"
             "  missing. A full bucket travels as one flat tensor: what must it be divided by, so that the sum over\n"
             "  the ranks is an average? Send it without waiting (an all-reduce can hand back a work to wait on\n"
             "  later), and ask the engine to call you back when backward ends: wait there, and put each slice\n"
             "  back into its parameter's .grad.")
    call = "check_bucketed_reducer(bucketed_reducer, hint=2)"
    expected = _whole_batch_grads()
    answers = _run_two_ranks(bucketed_reducer)
    for rank, answer in enumerate(answers):
        if answer[0] == "raised":
            return _not_yet(answer[1], hints, hint, call)
        _, grads, sends, wrapped = answer   # (tensors travel as lists: a tensor's shared memory dies with its rank)
        grads = [None if g is None else torch.tensor(g[1], dtype=torch.float32).view(g[0]) for g in grads]
        answers[rank] = grads
        if wrapped:
            library = "teachgrad's" if wrapped[0].startswith("teachgrad") else "torch's"
            return _not_yet(f"a DistributedDataParallel ({library}) did the reducing: write the buckets and hooks "
                            "yourself", hints, hint, call)
        if any(g is None for g in grads):
            return _not_yet(f"after backward, rank {rank} has a parameter without .grad", hints, hint, call)
        if not sends:
            return _not_yet("no dist.all_reduce was called: each rank kept its own gradients", hints, hint, call)
        if len(sends) != len(BUCKETS):
            return _not_yet(f"{len(sends)} all-reduces for {len(BUCKETS)} buckets: send each bucket once, as one "
                            "flat tensor", hints, hint, call)
        if not all(asynchronous for _, _, asynchronous in sends):
            return _not_yet("an all-reduce waited where it was called: pass async_op=True and wait at the end",
                            hints, hint, call)
        if sends[0][0] == len(grads):
            return _not_yet("the first bucket went out only after the last gradient: send each bucket as soon "
                            "as it is complete", hints, hint, call)
        for name, g, e in zip(("0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"), grads, expected):
            if not torch.allclose(g, e, atol=1e-6):
                return _not_yet(f"once backward returned, rank {rank}'s gradient of {name} is not the average over "
                                "the ranks (the whole batch's)", hints, hint, call)
    if not all(torch.equal(a, b) for a, b in zip(answers[0], answers[1])):
        return _not_yet("the two ranks' gradients differ", hints, hint, call)
    return _correct(f"{len(BUCKETS)} buckets, each sent as soon as it was complete; both ranks' gradients are the "
                    "whole batch's")
