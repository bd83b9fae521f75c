#!/usr/bin/env python3
"""Checks the Chrome traces hympi writes with HYMPI_TRACE (used by tests/diag/run).

  check_trace.py halo DIR        rank-0/1.json of the halo sample at 2 ranks x 2 threads
  check_trace.py merged FILE     hympi-trace-merge's output of that run
  check_trace.py pingpong DIR    rank-0/1.json of the pingpong sample (1 B .. 256 KiB)
  check_trace.py bounded DIR N   every thread kept at most N events, and some were dropped
  check_trace.py abort FILE      the trace of a rank that called MPI_Abort

Exits 1 with the reasons when a check fails.
"""
import json
import os
import sys

problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    need(isinstance(doc.get("traceEvents"), list), f"{path}: no traceEvents list")
    return doc


def spans(doc):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def check_event_shape(path, doc):
    for e in spans(doc):
        for k in ("name", "cat", "ts", "dur", "pid", "tid", "args"):
            if k not in e:
                need(False, f"{path}: event without {k}: {e}")
                return
        need(e["dur"] >= 0, f"{path}: negative duration: {e}")


def rank_docs(d, ranks=(0, 1)):
    docs = {}
    for r in ranks:
        path = os.path.join(d, f"rank-{r}.json")
        need(os.path.exists(path), f"{path} missing")
        if os.path.exists(path):
            docs[r] = load(path)
            check_event_shape(path, docs[r])
            need(docs[r]["otherData"]["rank"] == r, f"{path}: otherData.rank is not {r}")
    return docs


def halo(d):
    for r, doc in rank_docs(d).items():
        ev = spans(doc)
        names = {m["tid"]: m["args"]["name"] for m in doc["traceEvents"]
                 if m.get("ph") == "M" and m.get("name") == "thread_name"}
        need(len(names) >= 2, f"rank {r}: {len(names)} thread tracks, want >= 2")
        p2p = [e for e in ev if e["name"] in ("MPI_Isend", "MPI_Irecv")]
        tids = {e["tid"] for e in p2p}
        need(len(tids) >= 2, f"rank {r}: MPI_Isend/MPI_Irecv on {len(tids)} threads, want >= 2")
        for e in p2p:
            a = e["args"]
            ok = all(k in a for k in ("comm", "peer", "tag", "bytes", "vci", "code"))
            need(ok, f"rank {r}: {e['name']} lacks fields: {a}")
            if not ok:
                break
            need(a["bytes"] > 0 and a["code"] == 0 and a["comm"].startswith("context "),
                 f"rank {r}: {e['name']} args {a}")
        # Each thread has a communicator of its own (and so, with 2 threads, 2 VCIs in use).
        comms = {e["args"].get("comm") for e in p2p}
        need(len(comms) >= 2, f"rank {r}: p2p on {len(comms)} communicators, want >= 2")
        need(any(e["name"] == "MPI_Waitall" for e in ev), f"rank {r}: no MPI_Waitall")
        rounds = [e for e in ev if e["cat"] == "coll"]
        need(rounds, f"rank {r}: no collective schedule rounds")
        need(all("round" in e["args"] and "steps" in e["args"] for e in rounds),
             f"rank {r}: rounds without round/steps")
        need(any(e["name"] == "MPI_Barrier" and e["args"].get("comm", "").startswith("context ")
                 for e in ev), f"rank {r}: no MPI_Barrier on the cartesian communicator")
        need(any(e["name"] == "MPI_Init_thread" or e["name"] == "MPI_Comm_free" for e in ev),
             f"rank {r}: setup calls missing")


def merged(path):
    doc = load(path)
    check_event_shape(path, doc)
    pids = {e["pid"] for e in spans(doc)}
    need(pids == {0, 1}, f"{path}: ranks {sorted(pids)}, want [0, 1]")
    need(min(e["ts"] for e in spans(doc)) == 0, f"{path}: time does not start at 0")
    need(doc["otherData"]["ranks"] == [0, 1], f"{path}: otherData.ranks {doc['otherData']}")


def pingpong(d):
    for r, doc in rank_docs(d).items():
        ev = spans(doc)
        reads = [e for e in ev if e["name"] == "cma read"]
        # The largest message, 256 KiB, is read in one piece or split with a waiting sender.
        need(any(e["args"].get("bytes", 0) >= 1 << 17 for e in reads),
             f"rank {r}: no cma read of 128 KiB or more ({len(reads)} reads)")
        need(all("peer" in e["args"] and e["args"]["peer"] == 1 - r for e in reads),
             f"rank {r}: cma reads without the peer")
        for name in ("MPI_Send", "MPI_Recv"):
            sizes = {e["args"].get("bytes") for e in ev if e["name"] == name}
            need(1 << 18 in sizes and 1 in sizes,
                 f"rank {r}: {name} sizes {sorted(s for s in sizes if s is not None)[:5]}...")
        need(any(e["name"] == "MPI_Allreduce" for e in ev), f"rank {r}: no MPI_Allreduce")


def bounded(d, n):
    for r, doc in rank_docs(d).items():
        per_tid = {}
        for e in spans(doc):
            per_tid[e["tid"]] = per_tid.get(e["tid"], 0) + 1
        need(per_tid and max(per_tid.values()) <= n, f"rank {r}: events per thread {per_tid}")
        need(doc["otherData"]["dropped_events"] > 0, f"rank {r}: no dropped events counted")
        # The ring keeps the newest: the start-up calls are gone, the final reduction stays.
        names = {e["name"] for e in spans(doc)}
        need("MPI_Comm_size" not in names, f"rank {r}: the oldest events were kept: {names}")
        need("MPI_Allreduce" in names, f"rank {r}: the newest events were lost: {names}")


def abort(path):
    doc = load(path)
    check_event_shape(path, doc)
    names = [e["name"] for e in spans(doc)]
    need("MPI_Barrier" in names and "MPI_Comm_rank" in names, f"{path}: calls {names}")


def main():
    mode, arg = sys.argv[1], sys.argv[2]
    if mode == "halo":
        halo(arg)
    elif mode == "merged":
        merged(arg)
    elif mode == "pingpong":
        pingpong(arg)
    elif mode == "bounded":
        bounded(arg, int(sys.argv[3]))
    elif mode == "abort":
        abort(arg)
    else:
        sys.exit(f"unknown mode {mode}")
    if problems:
        print("\n".join(problems[:20]))
        sys.exit(1)
    print(f"check_trace {mode}: ok")


if __name__ == "__main__":
    main()
