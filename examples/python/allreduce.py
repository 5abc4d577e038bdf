"""AllReduce from Python, two ways (docs/python.md).

1. NumPy, ranks as threads of this process (no launcher):
       PYTHONPATH=build/python /usr/bin/python3 examples/python/allreduce.py
2. torch.distributed with the "hostccl" backend, ranks as processes started by torchrun:
       PYTHONPATH=build/python torchrun --nproc_per_node 4 --redirects 1 --tee 1 \
           examples/python/allreduce.py
   (--redirects/--tee: Debian 12's torchrun cannot parse their default; docs/python.md)

Each rank r contributes x_r[i] = 10 r + i (8 values); every rank gets the sum over the ranks,
printed with the expected values.
"""

import os
import threading

import numpy as np

import hostccl

COUNT = 8


def expected(size):
    return sum(10.0 * r + np.arange(COUNT) for r in range(size))


def with_numpy(size=4):
    root_info = hostccl.get_root_info()  # one rank makes it; every rank needs its bytes
    lock = threading.Lock()

    def rank_main(rank):
        comm = hostccl.Communicator(root_info, rank, size)
        x = (10.0 * rank + np.arange(COUNT)).astype(np.float32)
        comm.all_reduce(x)  # in place, op="sum"
        with lock:
            print(f"numpy rank {rank}: {x}  expected {expected(size)}")
        assert (x == expected(size)).all()
        comm.close()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def with_torch():
    import torch
    import torch.distributed as dist

    import hostccl.torch  # noqa: F401  registers the backend

    dist.init_process_group("hostccl")  # env:// from torchrun
    rank, size = dist.get_rank(), dist.get_world_size()
    x = 10.0 * rank + torch.arange(COUNT, dtype=torch.float32)
    dist.all_reduce(x)
    print(f"torch rank {rank}: {x.tolist()}  expected {expected(size).tolist()}")
    assert torch.equal(x, torch.tensor(expected(size), dtype=torch.float32))
    dist.destroy_process_group()


if __name__ == "__main__":
    print("hostccl", hostccl.__version__, hostccl.info())
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        with_torch()
    else:
        with_numpy()
