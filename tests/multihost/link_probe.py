#!/usr/bin/python3
# link_probe.py: what the rig's links really deliver, measured with plain TCP sockets (no hostccl).
# Run one rank per host under scripts/netns_rig.sh (-n 1); it reads RANK, WORLD_SIZE, HCCL_IF_IP
# and the host addresses (<subnet>.(i+1), from HCCL_IF_IP's /24) that the rig sets.
#   stream MiB   : rank 0 streams MiB to rank 1; rank 1 prints the goodput (first to last byte).
#   chain MiB    : every rank i streams MiB to rank i+1 while receiving from rank i-1 (the
#                  node_chain pattern: each inner link busy in both directions); every receiver
#                  prints its goodput.
#   pingpong N   : rank 0 sends 8 B to rank 1, which echoes it; N round trips after 100 warm-up;
#                  prints the median and minimum round-trip time.
# Output lines: "probe <mode> rank <r>: ..."; exit 0 on success. TCP_NODELAY, 4 MiB buffers
# (like hostccl's data sockets). Every socket operation is bounded by a 120 s timeout.
import os
import socket
import statistics
import sys
import threading
import time

PORT = 29600
BUF = 1 << 20


def host_ip(i):
    base = os.environ["HCCL_IF_IP"].rsplit(".", 1)[0]
    return f"{base}.{i + 1}"


def tune(s):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.settimeout(120)


def listen():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((os.environ["HCCL_IF_IP"], PORT))
    ls.listen(4)
    ls.settimeout(120)
    return ls


def connect(i):
    deadline = time.time() + 60
    while True:
        try:
            s = socket.create_connection((host_ip(i), PORT), timeout=5)
            tune(s)
            return s
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def send_all(s, mib):
    buf = bytearray(BUF)
    for _ in range(mib):
        s.sendall(buf)
    s.shutdown(socket.SHUT_WR)


def recv_all(s, mib, out, label):
    buf = bytearray(BUF)
    view = memoryview(buf)
    want = mib * BUF
    got = 0
    t0 = None
    while got < want:
        n = s.recv_into(view)
        if n == 0:
            raise RuntimeError(f"{label}: peer closed after {got} of {want} bytes")
        if t0 is None:
            t0 = time.perf_counter()
            got_first = n
        got += n
    dt = time.perf_counter() - t0
    rate = (got - got_first) / dt
    out.append(f"{label}: {got} bytes, {rate / 1e6:.1f} MB/s = {rate * 8 / 1e9:.4f} Gbit/s")


def main():
    mode, arg = sys.argv[1], int(sys.argv[2])
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    out = []
    if mode == "stream":
        if rank == 1:
            ls = listen()
            s, _ = ls.accept()
            tune(s)
            recv_all(s, arg, out, f"probe stream rank 1 from rank 0")
        elif rank == 0:
            send_all(connect(1), arg)
    elif mode == "chain":
        ls = listen() if rank > 0 else None
        threads = []
        if rank + 1 < world:
            t = threading.Thread(target=lambda: send_all(connect(rank + 1), arg))
            t.start()
            threads.append(t)
        if ls is not None:
            s, _ = ls.accept()
            tune(s)
            recv_all(s, arg, out, f"probe chain rank {rank} from rank {rank - 1}")
        for t in threads:
            t.join()
    elif mode == "pingpong":
        msg = bytearray(8)
        if rank == 1:
            ls = listen()
            s, _ = ls.accept()
            tune(s)
            for _ in range(arg + 100):
                got = 0
                while got < 8:
                    n = s.recv_into(memoryview(msg)[got:])
                    if n == 0:
                        raise RuntimeError("pingpong: peer closed")
                    got += n
                s.sendall(msg)
        elif rank == 0:
            s = connect(1)
            rtts = []
            for k in range(arg + 100):
                t0 = time.perf_counter()
                s.sendall(msg)
                got = 0
                while got < 8:
                    n = s.recv_into(memoryview(msg)[got:])
                    if n == 0:
                        raise RuntimeError("pingpong: peer closed")
                    got += n
                if k >= 100:
                    rtts.append(time.perf_counter() - t0)
            out.append(f"probe pingpong rank 0: {arg} round trips of 8 B, median {statistics.median(rtts) * 1e6:.1f} us, "
                       f"min {min(rtts) * 1e6:.1f} us")
    else:
        print(f"link_probe: unknown mode {mode}", file=sys.stderr)
        return 2
    for line in out:
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
