"""torch.distributed level benchmark: hostccl's backend next to Gloo in the same job (CPU tensors).

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_bench.py [--ranks 4] [--reps 3]
        [--sizes 8,64M] [--ops all_reduce,all_gather_into_tensor,reduce_scatter_tensor,all_to_all_single]

Starts --ranks processes on this host (env://, MASTER_ADDR=127.0.0.1). In each, the default group
is "hostccl" and a second group over the same ranks is "gloo". For every op, size and backend it
times a loop of calls (a barrier first; the slowest rank's time counts), --reps times, and prints
the median per call. Sizes are bytes per rank's input (fp32). Torch 1.13's Gloo has no
_allgather_base and no reduce_scatter: its all_gather_into_tensor row is all_gather into a list
and its reduce_scatter_tensor row is all_reduce of the whole input (what a Gloo user does).
all_reduce at 8 B also gets the backend's per-call overhead: dist.all_reduce and the process
group's own allreduce([t]).wait() against the same HcclAllReduce + stream synchronize issued
straight through the C API on the group's communicator and stream (interleaved, medians).
Output: one Markdown table (docs/python.md explains the columns).
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def fmt_size(b):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m and b % m == 0:
            return f"{b // m} {unit}"
    return f"{b} B"


def fmt_time(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def worker(args):
    import torch
    import torch.distributed as dist

    import hostccl.torch
    from hostccl import _c10d  # noqa: F401

    dist.init_process_group("hostccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    groups = {"hostccl": None, "gloo": dist.new_group(backend="gloo")}

    def run(op, group, nbytes):
        n = max(1, nbytes // 4)
        if op == "all_reduce":
            t = torch.ones(n)
            return lambda: dist.all_reduce(t, group=group)
        if op == "all_gather_into_tensor":
            x, out = torch.ones(n), torch.empty(n * size)
            if group is None:
                return lambda: dist.all_gather_into_tensor(out, x, group=group)
            outs = list(out.split(n))  # Gloo in torch 1.13 has no _allgather_base
            return lambda: dist.all_gather(outs, x, group=group)
        if op == "reduce_scatter_tensor":
            x, out = torch.ones(n), torch.empty(max(1, n // size))
            x = torch.ones(out.numel() * size)
            if group is None:
                return lambda: dist.reduce_scatter_tensor(out, x, group=group)
            # Gloo in torch 1.13 has no reduce_scatter: its closest is all_reduce + slice
            return lambda: dist.all_reduce(x, group=group)
        if op == "all_to_all_single":
            x = torch.ones(max(size, n // size * size))
            out = torch.empty_like(x)
            return lambda: dist.all_to_all_single(out, x, group=group)
        raise ValueError(op)

    def timed(fn, group, nbytes):
        fn()  # warm-up
        iters = max(3, min(2000, int(args.budget / max(1e-6, nbytes / 2e9 + 20e-6))))
        # every rank agrees on the iteration count (rank 0's)
        it = torch.tensor([iters])
        dist.broadcast(it, src=0)
        iters = int(it.item())
        dist.barrier(group=group)
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        dt = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
        dist.all_reduce(dt, op=dist.ReduceOp.MAX)
        return dt.item()

    rows = []
    for op in args.ops:
        for nbytes in args.sizes:
            line = {"op": op, "bytes": nbytes}
            for name, group in groups.items():
                fn = run(op, group, nbytes)
                line[name] = statistics.median(timed(fn, group, nbytes) for _ in range(args.reps))
            rows.append(line)
    # per-call overhead: 8 B all_reduce through the backend vs straight through the C API
    t = torch.ones(2)
    pg = dist.distributed_c10d._get_default_group()
    iters = 2000
    backend, direct, capi = [], [], []
    opts = dist.AllreduceOptions()
    for _ in range(args.reps):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        backend.append((time.perf_counter() - t0) / iters)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            pg.allreduce([t], opts).wait()
        direct.append((time.perf_counter() - t0) / iters)
        dist.barrier()
        capi.append(hostccl._c10d._time_c_api_all_reduce(pg, t, iters) / iters)
    if rank == 0:
        print(f"| op | bytes per rank | hostccl | gloo | gloo / hostccl |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['op']} | {fmt_size(r['bytes'])} | {fmt_time(r['hostccl'])} | "
                  f"{fmt_time(r['gloo'])} | {r['gloo'] / r['hostccl']:.1f}x |")
        b, d, c = statistics.median(backend), statistics.median(direct), statistics.median(capi)
        print(f"\nper-call overhead, all_reduce 8 B at {size} ranks: dist.all_reduce {fmt_time(b)}, "
              f"pg.allreduce([t]).wait() {fmt_time(d)}, C API {fmt_time(c)}; backend over the C API "
              f"{(d - c) * 1e6:.2f} us, torch's Python layer {(b - d) * 1e6:.2f} us more")
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="8,64M")
    ap.add_argument("--ops", default="all_reduce,all_gather_into_tensor,reduce_scatter_tensor,"
                                     "all_to_all_single")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds per timed loop (about)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    args.ops = args.ops.split(",")
    if args.worker:
        worker(args)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(args.ranks):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.ranks), LOCAL_RANK=str(r),
                   LOCAL_WORLD_SIZE=str(args.ranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker"] + sys.argv[1:], env=env))
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()
