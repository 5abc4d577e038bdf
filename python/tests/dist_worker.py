"""One rank of a hostccl.torch test job (started by conftest.launch or by torchrun).

    dist_worker.py ops       every operation, hostccl vs Gloo (data movement, bitwise) and vs the
                             rank-order fold computed here (reductions, bitwise)
    dist_worker.py mismatch  rank 0 and rank 1 all_reduce different shapes: both must raise,
                             naming both ranks
    dist_worker.py kill      the last rank is killed before an all_reduce: the others must raise
                             within the bound
    dist_worker.py timeout   a group with a 1 s timeout, rank 1 enters the second all_reduce 3 s
                             late: rank 0 must raise a timeout after about 1 s
    dist_worker.py ddp       an MLP trained 20 steps with DDP: 3 hostccl runs and 1 Gloo run

The rank reads RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (env://). It prints "FAIL <what>" lines for
each failed check and "RESULT <json>" once; it exits 0 when nothing failed.
"""

import json
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import hostccl.torch  # noqa: F401  (registers "hostccl")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
          torch.int32, torch.int64, torch.uint8]
GLOO_DTYPES = (torch.float32, torch.float16, torch.float64, torch.int8, torch.int32, torch.int64,
               torch.uint8)
FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what, flush=True)


def same(a, b):
    """Bitwise equality (NaN-safe, dtype included)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def data(rank, n, dtype, kind="any", shape=None):
    """Rank r's deterministic input; every rank can compute every rank's input."""
    g = torch.Generator().manual_seed(1000 + 17 * rank + n)
    if kind == "prod":  # stays small under a product of a few ranks
        base = torch.randint(1, 3, (n,), generator=g)
        t = base.to(dtype) if dtype not in FLOATS else (base.double() * 0.75).to(dtype)
    elif dtype in FLOATS:
        t = (torch.randn(n, generator=g, dtype=torch.float64) * 3).to(dtype)
    elif dtype == torch.uint8:
        t = torch.randint(0, 50, (n,), generator=g, dtype=torch.int64).to(dtype)
    else:
        t = torch.randint(-20, 20, (n,), generator=g, dtype=torch.int64).to(dtype)
    return t.reshape(shape) if shape is not None else t


def fold(tensors, op):
    """The documented result: ((x0 op x1) op x2) ... in the tensor's dtype; AVG = SUM / size."""
    acc = tensors[0].clone()
    for x in tensors[1:]:
        if op in ("sum", "avg"):
            acc = acc + x
        elif op == "prod":
            acc = acc * x
        elif op == "min":
            acc = torch.minimum(acc, x)
        else:
            acc = torch.maximum(acc, x)
        acc = acc.to(tensors[0].dtype)
    if op == "avg":
        acc = acc / len(tensors)
        acc = acc.to(tensors[0].dtype)
    return acc


OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
       "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}


def run_ops(rank, size, gloo):
    n = 37
    root = size - 1
    # all_reduce: every dtype and op, and a non-contiguous tensor.
    for dt in DTYPES:
        for op in ("sum", "prod", "min", "max", "avg"):
            if op == "avg" and dt not in FLOATS:
                continue
            kind = "prod" if op == "prod" else "any"
            t = data(rank, n, dt, kind)
            dist.all_reduce(t, op=OPS[op])
            want = fold([data(r, n, dt, kind) for r in range(size)], op)
            check(same(t, want), f"all_reduce {dt} {op}")
    base = data(rank, 6 * 5, torch.float32).reshape(6, 5)
    t = base.t()  # non-contiguous
    dist.all_reduce(t)
    want = fold([data(r, 30, torch.float32).reshape(6, 5).t() for r in range(size)], "sum")
    check(same(t.contiguous(), want.contiguous()), "all_reduce non-contiguous")
    # async all_reduce: Work.wait() and the future
    t = data(rank, n, torch.float32)
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    check(same(t, fold([data(r, n, torch.float32) for r in range(size)], "sum")), "all_reduce async")
    t = data(rank, n, torch.float32)
    fut = dist.all_reduce(t, async_op=True).get_future()
    res = fut.wait()
    check(same(res[0], fold([data(r, n, torch.float32) for r in range(size)], "sum")),
          "all_reduce future")
    # get_future() returns before the operation completes (the others join 0.5 s later), and a
    # callback chained with then() runs when it does, like DDP's comm hooks.
    t = data(rank, n, torch.float32)
    if rank != 0:
        time.sleep(0.5)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    if rank == 0:
        check(not fut.done(), "get_future() waited for the operation")
    doubled = fut.then(lambda f: f.value()[0] * 2)
    want = fold([data(r, n, torch.float32) for r in range(size)], "sum")
    check(same(doubled.wait(), want * 2), "future then()")
    work.wait()  # a wait after the completer finished: no second epilogue
    check(same(t, want), "all_reduce future, then wait()")
    check(same(work.get_future().wait()[0], want), "get_future() asked again")
    t = data(rank, n, torch.float32)
    dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True).get_future().wait()
    wa = dist.all_reduce(data(rank, n, torch.float32), op=dist.ReduceOp.AVG, async_op=True)
    fa = wa.get_future()
    wa.wait()
    check(same(fa.wait()[0], want / size), "AVG through a future and wait(): divided once")

    # reduce: root only.
    for dt in (torch.float32, torch.bfloat16, torch.int32):
        for op in ("sum", "max"):
            t = data(rank, n, dt)
            dist.reduce(t, dst=1 % size, op=OPS[op])
            if rank == 1 % size:
                check(same(t, fold([data(r, n, dt) for r in range(size)], op)), f"reduce {dt} {op}")

    # Data movement: hostccl and Gloo must agree bitwise, for every dtype.
    def both(fn):
        return fn(None), fn(gloo)

    for dt in DTYPES + [torch.bool]:
        def mk(r, count):
            x = data(r, count, dt if dt != torch.bool else torch.uint8)
            return (x % 2).bool() if dt == torch.bool else x

        t = mk(rank, n)
        dist.broadcast(t, src=root)
        check(same(t, mk(root, n)), f"broadcast {dt}")
        out = torch.empty(size * n, dtype=t.dtype)
        dist.all_gather_into_tensor(out, mk(rank, n))
        check(same(out, torch.cat([mk(r, n) for r in range(size)])), f"all_gather_into_tensor {dt}")
        if dt in GLOO_DTYPES:
            t2 = mk(rank, n)
            dist.broadcast(t2, src=root, group=gloo)
            check(same(t, t2), f"broadcast {dt} vs gloo")
            out2 = torch.empty(size * n, dtype=t.dtype)
            dist.all_gather(list(out2.split(n)), mk(rank, n), group=gloo)
            check(same(out, out2), f"all_gather_into_tensor {dt} vs gloo")

    # broadcast of a non-contiguous slice: the slice becomes the root's, the rest stays
    t = data(rank, 40, torch.float64).reshape(8, 5)
    dist.broadcast(t[:, 1], src=root)
    want = data(rank, 40, torch.float64).reshape(8, 5)
    want[:, 1] = data(root, 40, torch.float64).reshape(8, 5)[:, 1]
    check(same(t, want), "broadcast non-contiguous")

    def ag_list(group):
        x = data(rank, n, torch.float16).reshape(37)
        outs = [torch.empty(37, dtype=torch.float16) for _ in range(size)]
        dist.all_gather(outs, x, group=group)
        return torch.stack(outs)
    a, b = both(ag_list)
    check(same(a, b), "all_gather list")

    for dt in (torch.float32, torch.float16, torch.int64):
        for op in ("sum", "min"):
            x = data(rank, size * n, dt)
            out = torch.empty(n, dtype=dt)
            dist.reduce_scatter_tensor(out, x, op=OPS[op])
            want = fold([data(r, size * n, dt) for r in range(size)], op)[rank * n:(rank + 1) * n]
            check(same(out, want), f"reduce_scatter_tensor {dt} {op}")
    x = data(rank, size * n, torch.float32)
    out = torch.empty(n, dtype=torch.float32)
    dist.reduce_scatter(out, list(x.split(n)), op=dist.ReduceOp.AVG)
    want = fold([data(r, size * n, torch.float32) for r in range(size)], "avg")[rank * n:(rank + 1) * n]
    check(same(out, want), "reduce_scatter list avg")

    def a2a_equal(group):
        x = data(rank, size * 6, torch.int32)
        out = torch.empty_like(x)
        dist.all_to_all_single(out, x, group=group)
        return out
    a, b = both(a2a_equal)
    check(same(a, b), "all_to_all_single equal splits")

    # split sizes in rows of a 2-D tensor: rank r sends (r + j) % 3 + ... rows to rank j
    def rows(src, dst):
        return (src + 2 * dst) % 3

    def a2a_split(group):
        ins = [rows(rank, j) for j in range(size)]
        outs = [rows(j, rank) for j in range(size)]
        x = data(rank, sum(ins) * 4, torch.float16).reshape(sum(ins), 4)
        out = torch.full((sum(outs), 4), -7, dtype=torch.float16)
        dist.all_to_all_single(out, x, output_split_sizes=outs, input_split_sizes=ins, group=group)
        return out
    a, b = both(a2a_split)
    check(same(a, b), "all_to_all_single split sizes")

    # all_to_all with a tensor list of different sizes (Gloo has no alltoall: local expectation)
    ins = [data(rank * 10 + j, 1 + (rank + j) % 4, torch.float32) for j in range(size)]
    outs = [torch.empty(1 + (j + rank) % 4, dtype=torch.float32) for j in range(size)]
    dist.all_to_all(outs, ins)
    want = [data(j * 10 + rank, 1 + (j + rank) % 4, torch.float32) for j in range(size)]
    check(all(same(a, b) for a, b in zip(outs, want)), "all_to_all list")

    def gather(group):
        x = data(rank, n, torch.int32)
        outs = [torch.empty(n, dtype=torch.int32) for _ in range(size)] if rank == root else None
        dist.gather(x, gather_list=outs, dst=root, group=group)
        return torch.stack(outs) if outs else torch.zeros(1)
    a, b = both(gather)
    check(same(a, b), "gather")

    def scatter(group):
        out = torch.empty(n, dtype=torch.float64)
        ins = [data(100 + j, n, torch.float64) for j in range(size)] if rank == 0 else None
        dist.scatter(out, scatter_list=ins, src=0, group=group)
        return out
    a, b = both(scatter)
    check(same(a, b), "scatter")

    # send/recv: 0 -> 1 blocking; then a ring with isend/irecv both ways at once
    if rank == 0:
        dist.send(data(0, 1000, torch.float32), dst=1)
    elif rank == 1:
        t = torch.empty(1000, dtype=torch.float32)
        dist.recv(t, src=0)
        check(same(t, data(0, 1000, torch.float32)), "send/recv")
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    big = 300000  # above the eager sizes: both directions must progress together
    sreq = dist.isend(data(rank, big, torch.float32), dst=nxt)
    rbuf = torch.empty(big, dtype=torch.float32)
    rreq = dist.irecv(rbuf, src=prv)
    sreq.wait()
    rreq.wait()
    check(same(rbuf, data(prv, big, torch.float32)), "isend/irecv ring")

    # Large tensors: from aclrtMalloc (the backend's CPU allocator, >= 1 MiB) and, with the
    # allocator off, from torch's own (the library stages them)
    check(hostccl.torch._c10d.shared_allocator_min_bytes() == 1 << 20, "shared allocator installed")
    for label in ("aclrtMalloc", "malloc"):
        t = data(rank, big, torch.float32)
        dist.all_reduce(t)
        check(same(t, fold([data(r, big, torch.float32) for r in range(size)], "sum")),
              f"all_reduce 1.2 MB ({label})")
        out = torch.empty(size * big, dtype=torch.float32)
        dist.all_gather_into_tensor(out, data(rank, big, torch.float32))
        check(same(out, torch.cat([data(r, big, torch.float32) for r in range(size)])),
              f"all_gather_into_tensor 1.2 MB ({label})")
        hostccl.torch.set_shared_allocator(0)
    hostccl.torch.set_shared_allocator(1 << 20)

    dist.barrier()
    w = dist.barrier(async_op=True)
    w.wait()

    # Bad arguments are refused at the call, on this rank, before anything is sent
    for what, call in (
            ("list size", lambda: dist.all_gather([torch.empty(3)] * size, torch.empty(4))),
            ("dtype", lambda: dist.all_gather_into_tensor(torch.empty(2 * size, dtype=torch.float64),
                                                          torch.empty(2))),
            ("bool reduction", lambda: dist.all_reduce(torch.zeros(4, dtype=torch.bool))),
            ("bitwise op", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32),
                                                   op=dist.ReduceOp.BAND))):
        try:
            call()
            check(False, f"bad argument ({what}) accepted")
        except (RuntimeError, ValueError) as e:
            check("hostccl" in str(e), f"bad argument ({what}): hostccl's message: {e}")
    t = data(rank, n, torch.float32)
    dist.all_reduce(t)  # the group still works
    check(same(t, fold([data(r, n, torch.float32) for r in range(size)], "sum")), "after bad arguments")


def run_mismatch(rank, size):
    t = torch.ones(8 if rank == 0 else 16)
    try:
        dist.all_reduce(t)
        check(False, "mismatch: all_reduce returned without an error")
    except RuntimeError as e:
        msg = str(e)
        print("ERROR", msg, flush=True)
        check("rank 0" in msg and "rank 1" in msg, f"mismatch: message names both ranks: {msg}")


def run_kill(rank, size):
    t = torch.ones(1000)
    dist.all_reduce(t)
    if rank == size - 1:
        os.kill(os.getpid(), 9)
    t0 = time.monotonic()
    try:
        dist.all_reduce(t)
        dist.all_reduce(t)  # the second collective at the latest must see the dead rank
        check(False, "kill: all_reduce returned without an error")
    except RuntimeError as e:
        print("ERROR", str(e), flush=True)
        print("ELAPSED %.2f" % (time.monotonic() - t0), flush=True)
        check(f"rank {size - 1}" in str(e), f"kill: message names the dead rank: {e}")


def run_timeout(rank, size):
    """A group's timeout (TEST_GROUP_TIMEOUT_S) bounds each operation: rank 1 comes late."""
    g = dist.new_group(backend="hostccl",
                       timeout=timedelta(seconds=float(os.environ["TEST_GROUP_TIMEOUT_S"])))
    t = torch.ones(100)
    dist.all_reduce(t, group=g)
    if rank == 1:
        time.sleep(float(os.environ["TEST_LATE_S"]))
    t0 = time.monotonic()
    try:
        dist.all_reduce(t, group=g)
        check(rank == 1, "timeout: rank 0's all_reduce returned although rank 1 was late")
    except RuntimeError as e:
        print("ERROR", str(e), flush=True)
        print("ELAPSED %.2f" % (time.monotonic() - t0), flush=True)
        if rank == 0:
            check("HCCL_E_TIMEOUT" in str(e) or "timed out" in str(e).lower(),
                  f"timeout: the error is a timeout: {e}")


def run_ddp(rank, size):
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(group):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        ddp = DDP(model, process_group=group)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
        g = torch.Generator().manual_seed(rank)
        losses = []
        for _ in range(20):
            x = torch.randn(8, 16, generator=g)
            y = torch.randn(8, 4, generator=g)
            opt.zero_grad()
            loss = ((ddp(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            l = loss.detach().clone()
            dist.all_reduce(l, group=group)
            losses.append(l.item())
        return losses

    curves = [train(None) for _ in range(3)]
    gloo = train(dist.new_group(backend="gloo"))
    check(curves[0] == curves[1] == curves[2], "ddp: the 3 hostccl loss curves are bitwise equal")
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(curves[0], gloo))
    check(worst < 1e-4, f"ddp: hostccl's loss curve is close to Gloo's (worst rel diff {worst})")
    check(curves[0][-1] < curves[0][0], "ddp: the loss decreases")
    return {"hostccl": curves[0], "gloo": gloo}


def main():
    mode = sys.argv[1]
    timeout = timedelta(seconds=float(os.environ.get("TEST_PG_TIMEOUT_S", "60")))
    dist.init_process_group("hostccl", timeout=timeout)
    rank, size = dist.get_rank(), dist.get_world_size()
    result = {"rank": rank, "size": size, "backends": hostccl.torch.BACKEND_NAMES,
              "default_backend": str(dist.get_backend())}
    if mode == "ops":
        run_ops(rank, size, dist.new_group(backend="gloo"))
    elif mode == "mismatch":
        run_mismatch(rank, size)
    elif mode == "kill":
        run_kill(rank, size)
    elif mode == "timeout":
        run_timeout(rank, size)
    elif mode == "ddp":
        result.update(run_ddp(rank, size))
    result["failures"] = failures
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")  # one write: a reader never sees half
    sys.stdout.flush()
    if mode in ("mismatch", "kill", "timeout"):
        os._exit(1 if failures else 0)  # the group is failed: skip the orderly teardown
    dist.destroy_process_group()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
