#!/usr/bin/env python3
"""Combine the repetitions of bench_cluster.sh (repN/table.txt) into one
markdown table: per collective and size, Open MPI's better time (default or
coll/han) / duct's, each repetition and their median; bold where the median
is below 0.95."""
import glob, os, statistics, sys
here = os.path.dirname(os.path.abspath(__file__))
reps = sorted(glob.glob(os.path.join(here, "rep*/table.txt")))
rows = {}  # (coll, size) -> [(duct, mpi, han)]
order = []
for f in reps:
    for line in open(f):
        p = line.split()
        if not p or line.startswith("#") or p[0] == "collective" or len(p) < 9:
            continue
        key = (p[0], int(p[1]))
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append((float(p[2]), float(p[3]), float(p[4]), p[7]))
def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B"
print(f"{len(reps)} repetitions: " + ", ".join(os.path.relpath(r, here) for r in reps))
print()
print("| collective | size | duct us (median) | Open MPI default us | coll/han us | better MPI / duct, each rep | median | share of bound |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
below = []
for key in order:
    v = rows[key]
    ratios = [min(m, h) / d for d, m, h, _ in v]
    med = statistics.median(ratios)
    d = statistics.median(x[0] for x in v)
    m = statistics.median(x[1] for x in v)
    h = statistics.median(x[2] for x in v)
    mark = f"**{med:.2f}**" if med < 0.95 else f"{med:.2f}"
    if med < 0.95:
        below.append(f"{key[0]} {size(key[1])}")
    print(f"| {key[0]} | {size(key[1])} | {d:.1f} | {m:.1f} | {h:.1f} | {' / '.join(f'{r:.2f}' for r in ratios)} | {mark} | {v[0][3]} |")
print()
print("Median below 0.95: " + (", ".join(below) if below else "none"))
