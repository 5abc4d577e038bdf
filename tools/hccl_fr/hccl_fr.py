#!/usr/bin/python3
"""hccl_fr: merge hostccl flight-recorder dumps (one JSON file per rank) and diagnose a hang or a
failure: which rank is behind, which call mismatched, who waits for whom. See
docs/flight_recorder.md.

  hccl_fr [DIR_OR_FILE ...]            diagnosis (default: $HOSTCCL_FR_DIR or /tmp/hostccl-fr-*)
  hccl_fr --json [DIR_OR_FILE ...]     the same as JSON (for scripts and tests)
  hccl_fr trace -o OUT [DIR_OR_FILE ...]  merge HOSTCCL_TRACE files into one Perfetto trace
Only the Python standard library is used.
"""
import glob
import json
import os
import re
import sys


def collect(args, pattern):
    paths = []
    if not args:
        d = os.environ.get("HOSTCCL_FR_DIR")
        args = [d] if d else sorted(glob.glob("/tmp/hostccl-fr-*"))
    for a in args:
        if os.path.isdir(a):
            paths += sorted(glob.glob(os.path.join(a, pattern)))
        else:
            paths.append(a)
    return paths


def load_dumps(paths):
    dumps = []
    for p in paths:
        try:
            with open(p) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            print("hccl_fr: skipping %s: %s" % (p, e), file=sys.stderr)
            continue
        if d.get("format") != "hostccl-flight-recorder-1":
            continue
        d["_path"] = p
        dumps.append(d)
    return dumps


RANKS_IN_ERROR = [re.compile(r"waiting for rank\(s\) ([0-9][0-9, ]*)"),
                  re.compile(r"rank (\d+) \([^)]*\) has not answered"),
                  re.compile(r"waits for rank (\d+)")]


def waits_of(entry):
    """The ranks an entry waits (or waited) for: the recorder's word, else its error text."""
    for k in ("waiting_for", "waited_for"):
        if k in entry:
            return [entry[k]]
    err = entry.get("error", "")
    for rx in RANKS_IN_ERROR:
        m = rx.search(err)
        if m:
            return [int(x) for x in re.findall(r"\d+", m.group(1))]
    return []


def progress(d):
    """(last entered seq, last completed seq, the last entry) of one rank's dump."""
    es = d.get("entries", [])
    last = es[-1] if es else None
    done = [e["seq"] for e in es if e["state"] == "done"]
    return (last["seq"] if last else 0), (max(done) if done else 0), last


def diagnose_comm(dumps):
    """Findings for one communicator (all dumps share comm_id)."""
    out = {"comm_name": dumps[0].get("comm_name"), "comm_id": dumps[0].get("comm_id"),
           "nranks": dumps[0].get("nranks"), "ranks": {}, "missing": [], "behind": [],
           "mismatches": [], "waits": [], "cycles": [], "waits_on_stopped": []}
    by_rank = {}
    for d in dumps:  # the newest dump of a rank wins
        r = d["rank"]
        if r not in by_rank or d.get("dump_time_us", 0) >= by_rank[r].get("dump_time_us", 0):
            by_rank[r] = d
    n = out["nranks"] or (max(by_rank) + 1)
    out["missing"] = [r for r in range(n) if r not in by_rank]
    prog = {}
    for r, d in sorted(by_rank.items()):
        entered, completed, last = progress(d)
        prog[r] = (entered, completed, last)
        out["ranks"][r] = {"entered": entered, "completed": completed, "pid": d.get("pid"), "host": d.get("host"),
                           "reason": d.get("reason"),
                           "last": None if last is None else {k: last.get(k) for k in
                                                              ("seq", "op", "state", "fingerprint", "error")}}
    # Behind: the lowest entered sequence number (a rank that never reached the others' call).
    if prog:
        top = max(p[0] for p in prog.values())
        low = min(p[0] for p in prog.values())
        if low < top:
            out["behind"] = [{"rank": r, "entered": p[0], "completed": p[1], "others_reached": top}
                             for r, p in sorted(prog.items()) if p[0] == low]
    # Mismatch: same sequence number, different operator or fingerprint.
    seqs = {}
    for r, d in by_rank.items():
        for e in d.get("entries", []):
            seqs.setdefault(e["seq"], {})[r] = e
    for s in sorted(seqs):
        fps = {}
        for r, e in sorted(seqs[s].items()):
            fps.setdefault((e["op"], e["fingerprint"]), []).append(r)
        if len(fps) > 1:
            out["mismatches"].append({"seq": s, "variants": [{"op": k[0], "fingerprint": k[1], "ranks": v}
                                                             for k, v in fps.items()]})
    # Wait-for graph: from each rank's last unfinished (or failed) entry.
    edges = {}
    for r, (entered, completed, last) in prog.items():
        if last is None or last["state"] == "done":
            continue
        for w in waits_of(last):
            if w != r:
                edges.setdefault(r, set()).add(w)
                out["waits"].append({"rank": r, "seq": last["seq"], "op": last["op"], "state": last["state"],
                                     "waits_for": w})
    # A waited-for rank that has not entered the waiter's call (or left no dump): stopped or elsewhere.
    for wt in out["waits"]:
        w, s = wt["waits_for"], wt["seq"]
        if w not in prog:
            wt["target"] = "no dump (dead, stopped or not signalled)"
            out["waits_on_stopped"].append(wt)
        elif prog[w][0] < s:
            wt["target"] = "has not entered #%d (last #%d %s)" % (s, prog[w][0],
                                                                    prog[w][2]["state"] if prog[w][2] else "-")
            out["waits_on_stopped"].append(wt)
    # Cycles in the wait-for graph (a deadlock among ranks that all entered their calls).
    seen_cycles = set()
    for start in edges:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == start:
                    key = tuple(sorted(path))
                    if key not in seen_cycles:
                        seen_cycles.add(key)
                        out["cycles"].append(path + [start])
                elif nxt not in path and len(path) < 64:
                    stack.append((nxt, path + [nxt]))
    return out


def diagnose(dumps):
    comms = {}
    for d in dumps:
        comms.setdefault(d.get("comm_id"), []).append(d)
    return [diagnose_comm(v) for _, v in sorted(comms.items(), key=lambda kv: str(kv[0]))]


def ranks_text(rs):
    return ("rank %d" % rs[0]) if len(rs) == 1 else "ranks " + ", ".join(str(r) for r in rs)


def print_report(reports):
    if not reports:
        print("hccl_fr: no flight-recorder dumps found")
        return
    for c in reports:
        print("communicator '%s' (id %s, %s ranks)" % (c["comm_name"], c["comm_id"], c["nranks"]))
        for r, p in sorted(c["ranks"].items()):
            last = p["last"]
            lt = "no operations" if last is None else "last #%d %s %s %s" % (last["seq"], last["op"], last["fingerprint"],
                                                                              last["state"])
            print("  rank %d (pid %s on %s, dump on %s): entered #%d, completed #%d; %s" % (
                r, p["pid"], p["host"], p["reason"], p["entered"], p["completed"], lt))
        if c["missing"]:
            print("  no dump from %s" % ranks_text(c["missing"]))
        for b in c["behind"]:
            print("  BEHIND: rank %d entered only #%d (completed #%d); the others reached #%d" % (
                b["rank"], b["entered"], b["completed"], b["others_reached"]))
        for m in c["mismatches"]:
            print("  MISMATCH at #%d: " % m["seq"] + "; ".join("%s %s %s" % (ranks_text(v["ranks"]), v["op"], v["fingerprint"])
                                                               for v in m["variants"]))
        for w in c["waits"]:
            print("  WAIT: rank %d (#%d %s, %s) waits for rank %d%s" % (
                w["rank"], w["seq"], w["op"], w["state"], w["waits_for"],
                (": " + w["target"]) if "target" in w else ""))
        for cy in c["cycles"]:
            print("  CYCLE: " + " -> ".join("rank %d" % r for r in cy))
        stopped = sorted({w["waits_for"] for w in c["waits_on_stopped"]})
        for s in stopped:
            waiters = sorted({w["rank"] for w in c["waits_on_stopped"] if w["waits_for"] == s})
            print("  DIAGNOSIS: %s wait(s) for rank %d, which never entered their call: rank %d is stopped, dead "
                  "or busy elsewhere" % (ranks_text(waiters), s, s))
        if not (c["behind"] or c["mismatches"] or c["waits"] or c["missing"]):
            print("  no hang or mismatch visible")


def merge_traces(paths, out_path):
    events = []
    for p in paths:
        with open(p) as f:
            events += json.load(f).get("traceEvents", [])
    with open(out_path, "w") as f:
        json.dump({"displayTimeUnit": "ms", "traceEvents": events}, f)
    print("hccl_fr: %d trace files, %d events -> %s" % (len(paths), len(events), out_path))


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv and argv[0] == "trace":
        rest = argv[1:]
        if "-o" not in rest or rest.index("-o") + 1 >= len(rest):
            print("usage: hccl_fr trace -o OUT [DIR_OR_FILE ...]", file=sys.stderr)
            return 2
        i = rest.index("-o")
        out = rest[i + 1]
        merge_traces(collect(rest[:i] + rest[i + 2:], "hostccl_trace_*.json"), out)
        return 0
    as_json = bool(argv) and argv[0] == "--json"
    if as_json:
        argv = argv[1:]
    reports = diagnose(load_dumps(collect(argv, "hostccl_fr_*.json")))
    if as_json:
        json.dump(reports, sys.stdout, indent=1, default=list)
        print()
    else:
        print_report(reports)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
