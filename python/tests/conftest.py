"""Helpers for hostccl's Python tests: where the package is and how to start a job of ranks."""

import os
import socket
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "dist_worker.py")


def build_python_dir():
    d = os.environ.get("HOSTCCL_PYTHON_DIR")
    if not d:
        pytest.skip("HOSTCCL_PYTHON_DIR is not set (run through ctest, which sets it)")
    return d


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = build_python_dir() + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HOSTCCL_CONNECT_TIMEOUT_MS", "30000")
    env["OMP_NUM_THREADS"] = "1"  # 4 ranks on 2 busy cores
    env.update(extra or {})
    return env


class Job:
    def __init__(self, rcs, outs, elapsed):
        self.rcs, self.outs, self.elapsed = rcs, outs, elapsed

    def text(self):
        return "\n".join(f"--- rank {r} rc={rc}\n{o}" for r, (rc, o) in enumerate(zip(self.rcs, self.outs)))


def launch(size, mode, extra_env=None, timeout=120):
    """Starts `size` ranks of dist_worker.py <mode> with env:// variables; waits for all."""
    port = free_port()
    procs = []
    t0 = time.monotonic()
    for r in range(size):
        env = rank_env(extra_env)
        env.update(RANK=str(r), WORLD_SIZE=str(size), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(size),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, WORKER, mode], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs, rcs = [], []
    deadline = t0 + timeout
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out, _ = p.communicate()
            out += "\n(killed by the test: job timeout)"
        outs.append(out)
        rcs.append(p.returncode)
    return Job(rcs, outs, time.monotonic() - t0)
