"""Notebook 23's check, `check_bucketed_reducer`: a right reducer passes; reducers that all-reduce per parameter,
only at the end, never, or that hand the work to a DistributedDataParallel (torch's or teachgrad's) are refused
with a hint. Each check starts two gloo ranks of its own (forked): about a second."""
import pytest
import torch
import torch.distributed as dist

import teachgrad as tg
from teachgrad.exercises import check_bucketed_reducer


def _reducer(params, buckets, world):
    where = {i: b for b, bucket in enumerate(buckets) for i in bucket}
    waiting = [len(bucket) for bucket in buckets]
    sent = []

    def finish():
        for bucket, flat, work in sent:
            work.wait()
            offset = 0
            for i in bucket:
                params[i].grad.copy_(flat[offset:offset + params[i].numel()].view_as(params[i]))
                offset += params[i].numel()

    def hook_for(i):
        def hook(p):
            waiting[where[i]] -= 1
            if waiting[where[i]] == 0:
                flat = torch.cat([params[j].grad.flatten() for j in buckets[where[i]]]) / world
                sent.append((buckets[where[i]], flat, dist.all_reduce(flat, async_op=True)))
                if len(sent) == len(buckets):
                    tg.autograd.Variable._execution_engine.queue_callback(finish)
        return hook

    for i, p in enumerate(params):
        p.register_post_accumulate_grad_hook(hook_for(i))


def _per_parameter(params, buckets, world):
    for p in params:
        p.register_post_accumulate_grad_hook(lambda p: dist.all_reduce(p.grad.div_(world)) and None)


def _all_at_the_end(params, buckets, world):
    arrived = [0]

    def hook(p):
        arrived[0] += 1
        if arrived[0] == len(params):
            for bucket in buckets:
                flat = torch.cat([params[j].grad.flatten() for j in bucket]) / world
                dist.all_reduce(flat, async_op=True).wait()
                offset = 0
                for j in bucket:
                    params[j].grad.copy_(flat[offset:offset + params[j].numel()].view_as(params[j]))
                    offset += params[j].numel()
    for p in params:
        p.register_post_accumulate_grad_hook(hook)


_kept = []


def _ddp_of(make):
    def answer(params, buckets, world):
        _kept.append(make(torch.nn.ParameterList(params)))
    return answer


def _stub(params, buckets, world):
    raise NotImplementedError()


def test_a_bucketed_reducer_passes():
    verdict = check_bucketed_reducer(_reducer)
    assert verdict and verdict.message.startswith("✓ correct"), verdict.message


@pytest.mark.parametrize("wrong, says", [
    (_stub, "not written yet"),
    (lambda params, buckets, world: None, "no dist.all_reduce was called"),
    (_per_parameter, "6 all-reduces for 3 buckets"),
    (_all_at_the_end, "the first bucket went out only after the last gradient"),
    (_ddp_of(tg.nn.parallel.DistributedDataParallel), "a DistributedDataParallel (teachgrad's) did the reducing"),
    (_ddp_of(torch.nn.parallel.DistributedDataParallel), "a DistributedDataParallel (torch's) did the reducing"),
], ids=["stub", "nothing", "per parameter", "at the end", "teachgrad's DDP", "torch's DDP"])
def test_wrong_reducers_get_a_hint(wrong, says):
    verdict = check_bucketed_reducer(wrong)
    assert not verdict and says in verdict.message, verdict.message
    assert "hint:" in verdict.message and "queue_callback(finish)" not in verdict.message
    method = check_bucketed_reducer(wrong, hint=2).message
    assert "method:" in method and "call you back when backward ends" in method
    assert "queue_callback(" not in method and "all_reduce(" not in method   # the rule, never the solution's calls
