#!/usr/bin/env python3
"""Tables of led.txt (or the files named): per ranks, collective and size,
each forced algorithm's time (us, range over runs) and, per repetition, its
ratio against the better of Open MPI's two settings in that repetition
(the median of Open MPI's times in that repetition's runs of each setting;
Open MPI's time / duct's: above 1, duct faster)."""
import collections, os, sys

here = os.path.dirname(os.path.abspath(__file__))
rows = []
for name in sys.argv[1:] or ["led.txt"]:
    with open(os.path.join(here, name)) as f:
        for line in f:
            p = line.split()
            if len(p) == 9:
                rep, np, setting, coll, algo, size, duct, mpi, _ = p
                rows.append((name + rep, int(np), setting, coll, algo, int(size), float(duct), float(mpi)))

duct = collections.defaultdict(list)  # (np, coll, size, algo) -> times
mpi = collections.defaultdict(list)   # (np, coll, size, setting) -> times
rep_duct = collections.defaultdict(list)  # (run, np, coll, size, algo) -> times
rep_mpi = collections.defaultdict(list)   # (run, np, coll, size, setting) -> times
for run, np, setting, coll, algo, size, d, m in rows:
    duct[(np, coll, size, algo)].append(d)
    mpi[(np, coll, size, setting)].append(m)
    rep_duct[(run, np, coll, size, algo)].append(d)
    rep_mpi[(run, np, coll, size, setting)].append(m)
runs = sorted({r[0] for r in rows})

def med(v):
    v = sorted(v)
    return v[len(v) // 2]

def ratios(np, coll, s, a):
    out = []
    for run in runs:
        d, md, mn = (rep_duct.get((run, np, coll, s, a)), rep_mpi.get((run, np, coll, s, "default")),
                     rep_mpi.get((run, np, coll, s, "none")))
        if d and md and mn:
            out.append(f"{min(med(md), med(mn)) / med(d):.2f}")
    return "/".join(out)

def rng(v):
    return f"{min(v):.0f}-{max(v):.0f}" if len(v) > 1 and round(min(v)) != round(max(v)) else f"{min(v):.0f}"

def size_name(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"

keys = sorted({(np, coll) for np, coll, _, _ in duct})
for np, coll in keys:
    algos = sorted({a for n, c, _, a in duct if (n, c) == (np, coll)})
    sizes = sorted({s for n, c, s, _ in duct if (n, c) == (np, coll)})
    print(f"\n{np} ranks, {coll} (us, range over runs; ratios per repetition: the better Open MPI / duct)\n")
    print("| size | " + " | ".join(algos) + " | Open MPI default | single copy off |")
    print("| --- |" + " --- |" * (len(algos) + 2))
    for s in sizes:
        md = sorted(mpi[(np, coll, s, "default")])
        mn = sorted(mpi[(np, coll, s, "none")])
        if not md or not mn:
            continue
        best = min(md[len(md) // 2], mn[len(mn) // 2])
        cells = []
        for a in algos:
            v = sorted(duct[(np, coll, s, a)])
            cells.append(f"{rng(v)} ({ratios(np, coll, s, a)})")
        print(f"| {size_name(s)} | " + " | ".join(cells) + f" | {rng(md)} | {rng(mn)} |")
