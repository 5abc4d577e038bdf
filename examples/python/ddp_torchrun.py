"""Data-parallel training of a small MLP with DistributedDataParallel on the "hostccl" backend.

    PYTHONPATH=build/python torchrun --nproc_per_node 4 --redirects 1 --tee 1 \
        examples/python/ddp_torchrun.py [--backend hostccl|gloo] [--steps 20]

Every rank trains on its own random batches; DDP all-reduces (averages) the gradients after each
backward. Rank 0 prints the loss averaged over the ranks. With hostccl the curve is bitwise the
same from run to run (reductions are the rank-order fold); Gloo's is close to it.
"""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import hostccl.torch  # noqa: F401  registers "hostccl" (and "hccl")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="hostccl")
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = DDP(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(rank)
    for step in range(args.steps):
        x = torch.randn(32, 16, generator=data)
        y = torch.randn(32, 4, generator=data)
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"step {step:2d} loss {avg.item():.9f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
