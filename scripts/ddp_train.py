"""Train a small model on teachgrad with data parallelism, one process per rank, and check the result.

    torchrun --nproc-per-node 2 scripts/ddp_train.py            # two ranks on this machine (gloo, the CPU)
    torchrun --nproc-per-node 4 scripts/ddp_train.py --steps 50

torchrun starts the processes and tells each its rank (RANK, WORLD_SIZE, MASTER_ADDR, ... in the environment).
Each rank takes its share of every batch; teachgrad.nn.parallel.DistributedDataParallel averages the gradients
over the ranks during backward, so every rank takes the same optimizer step. At the end, the script checks:
- every rank holds the same parameters, bit for bit;
- they are those of one process trained on the whole batch (close: the sums are taken in another order).
It prints what it checked and exits with status 1 if a check fails.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.distributed as dist

import teachgrad as tg


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def whole_batch(step: int, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The step's batch, the same in every process: y = sin(x0) + x1 * x2 - x3, with some noise."""
    g = torch.Generator().manual_seed(step)
    x = torch.randn(batch, 4, generator=g)
    y = torch.sin(x[:, :1]) + x[:, 1:2] * x[:, 2:3] - x[:, 3:] + 0.05 * torch.randn(batch, 1, generator=g)
    return x, y


def train(model: torch.nn.Module, steps: int, batch: int, rank: int, world: int, log: bool) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(steps):
        x, y = whole_batch(step, batch)
        x, y = x[rank::world], y[rank::world]   # this rank's share (the whole batch when world is 1)
        loss = tg.nn.functional.mse_loss(model(tg.Variable(x)), tg.Variable(y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if log and (step % 10 == 0 or step == steps - 1):
            print(f"step {step:3d}  loss on rank 0's share {loss.item():.3f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=32, help="the whole batch, shared out over the ranks")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch % world:
        sys.exit(f"--batch {args.batch} must be a multiple of the {world} ranks (equal shares average exactly)")
    model = tg.nn.parallel.DistributedDataParallel(make_model())
    train(model, args.steps, args.batch, rank, world, log=rank == 0)

    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    ranks_agree = all(torch.equal(flat, other) for other in gathered)
    alone = make_model()   # one process, the whole batch, the same steps
    train(alone, args.steps, args.batch, 0, 1, log=False)
    difference = (flat - torch.cat([p.detach().flatten() for p in alone.parameters()])).abs().max().item()
    matches_one_process = difference < 1e-5
    dist.destroy_process_group()
    if rank == 0:
        print(f"{world} ranks, {args.steps} steps: every rank's parameters equal: {ranks_agree}")
        print(f"as one process on the whole batch (max difference below 1e-5): {matches_one_process}")
    return 0 if ranks_agree and matches_one_process else 1


if __name__ == "__main__":
    if "RANK" not in os.environ:
        sys.exit("run it with torchrun: torchrun --nproc-per-node 2 scripts/ddp_train.py")
    sys.exit(main())
