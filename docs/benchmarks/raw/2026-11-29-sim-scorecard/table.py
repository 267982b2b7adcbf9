#!/usr/bin/env python3
"""The scorecard from run.sh's files: per collective and size, duct's rules
(out of place, from the ompi run, and from any `<coll>-<N>x8-duct*.txt`
run with -m 0), each SMPI table's time, and the best table's time over
duct's (above 1: duct faster). Usage: table.py OUTDIR [NODES]"""
import collections
import glob
import os
import sys

out = sys.argv[1]
nodes = sys.argv[2] if len(sys.argv) > 2 else "64"
colls = ["allreduce", "bcast", "reduce", "allgather", "reduce_scatter", "alltoall", "gather", "scatter"]
sels = ["ompi", "mpich", "mvapich2"]


def rows(path):
    """size -> (duct us or None, MPI us or None, duct's wrong elements)"""
    r = {}
    for line in open(path):
        f = line.split()
        if not f or not f[0].isdigit() or len(f) < 18:
            continue
        num = lambda x: None if x == "-" else float(x)
        r[int(f[0])] = (num(f[5]), num(f[13]), f[8])
    return r


for c in colls:
    duct, mpi, wrong = {}, collections.defaultdict(dict), {}
    for s in sels:
        p = os.path.join(out, f"{c}-{nodes}x8-{s}.txt")
        if not os.path.exists(p):
            continue
        for size, (d, m, w) in rows(p).items():
            if d is not None:
                duct[size], wrong[size] = d, w
            if m is not None:
                mpi[size][s] = m
    for p in sorted(glob.glob(os.path.join(out, f"{c}-{nodes}x8-duct*.txt"))):
        for size, (d, m, w) in rows(p).items():
            if d is not None and size not in duct:
                duct[size], wrong[size] = d, w
    if not duct and not mpi:
        continue
    print(f"\n{c}, {nodes} x 8, us (best table / duct: above 1, duct faster)\n")
    print("| size | duct (rules) | ompi | mpich | mvapich2 | best / duct |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in sorted(set(duct) | set(mpi)):
        d = duct.get(size)
        ms = mpi.get(size, {})
        cells = [f"{ms[s]:.1f}" if s in ms else "-" for s in sels]
        best = min(ms.values()) if ms else None
        ratio = f"{best / d:.2f}" if (best and d) else "-"
        dc = f"{d:.1f}" + ("" if wrong.get(size) in ("0", "N/A", None) else f" ({wrong[size]} wrong)") if d else "-"
        print(f"| {size} B | {dc} | " + " | ".join(cells) + f" | {ratio} |")
