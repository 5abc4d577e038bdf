"""import hostccl: version, info, and the NumPy communicator (ranks as threads of this process)."""

import threading

import numpy as np
import pytest

from conftest import build_python_dir

build_python_dir()
import sys  # noqa: E402

sys.path.insert(0, build_python_dir())
import hostccl  # noqa: E402


def test_version_and_info():
    assert hostccl.__version__.count(".") == 2
    facts = hostccl.info()
    assert facts["version"] == hostccl.__version__
    assert facts["devices"] >= 1
    assert "build_type" in facts


def run_threads(size, body):
    """Runs body(comm, rank) on `size` threads, one communicator each (one rank per thread)."""
    root = hostccl.get_root_info()
    errors, comms = [], [None] * size

    def rank_main(r):
        try:
            comms[r] = hostccl.Communicator(root, r, size)
            body(comms[r], r)
        except Exception as e:  # noqa: BLE001
            errors.append((r, e))
        finally:
            if comms[r] is not None:
                comms[r].close()

    ts = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return errors


def test_numpy_collectives():
    size = 3

    def body(c, r):
        assert (c.rank, c.size) == (r, size)
        x = np.arange(10, dtype=np.float32) + 100 * r
        c.all_reduce(x)
        np.testing.assert_array_equal(x, sum(np.arange(10, dtype=np.float32) + 100 * k for k in range(size)))
        y = np.full(5, r, np.int64)
        c.broadcast(y, root=2)
        np.testing.assert_array_equal(y, np.full(5, 2))
        out = np.zeros(size * 4, np.float64)
        c.all_gather(np.full(4, r, np.float64), out)
        np.testing.assert_array_equal(out, np.repeat(np.arange(size, dtype=np.float64), 4))
        rs = np.zeros(2, np.int32)
        c.reduce_scatter(np.arange(2 * size, dtype=np.int32), rs, op="max")
        np.testing.assert_array_equal(rs, np.arange(2 * r, 2 * r + 2))
        a2a = np.zeros(size, np.int16)
        c.all_to_all(np.arange(size, dtype=np.int16) + 10 * r, a2a)
        np.testing.assert_array_equal(a2a, np.arange(size) * 10 + r)
        if r == 0:
            c.send(np.arange(3, dtype=np.uint8), dst=1)
        elif r == 1:
            got = np.zeros(3, np.uint8)
            c.recv(got, src=0)
            np.testing.assert_array_equal(got, np.arange(3))
        c.barrier()

    assert run_threads(size, body) == []


def test_numpy_errors():
    def body(c, r):
        with pytest.raises(ValueError, match="C-contiguous"):
            c.all_reduce(np.zeros((4, 4), np.float32)[:, 1])
        with pytest.raises(hostccl.HcclError, match="root"):
            c.broadcast(np.zeros(4, np.float32), root=7)
        with pytest.raises(TypeError):
            c.all_reduce(np.zeros(4, np.complex64))

    assert run_threads(2, body) == []


def test_example_allreduce_numpy():
    import os
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    example = os.path.join(here, "..", "..", "examples", "python", "allreduce.py")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    env["PYTHONPATH"] = build_python_dir()
    out = subprocess.run([sys.executable, example], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("expected [60. 64. 68. 72. 76. 80. 84. 88.]") == 4, out.stdout
