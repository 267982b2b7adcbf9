#!/usr/bin/env python3
"""The reduce table from ab.sh's OUTDIR: us per size and node count, duct
before and after, mpich and mvapich2 tables. Usage: table.py OUTDIR"""
import pathlib, re, sys
rows = {}
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.txt")):
    label, nodes = f.name.split("-")[0], f.name.split("-")[1]
    for line in f.read_text().splitlines():
        m = re.match(r"\s+(\d+)\s+\d+\s+\S+\s+\S+\s+\d+\s+(\S+)\s+\S+\s+\S+\s+(\S+)(.*)", line)
        if not m:
            continue
        size = int(m.group(1))
        if label in ("mpich", "mvapich2"):  # -D 0: the MPI column is the last group
            cols = line.split()
            t, wrong = cols[-5], cols[-2]
        else:
            t, wrong = m.group(2), m.group(3)
        rows.setdefault((int(nodes.split("x")[0]), size), {})[label] = (float(t), wrong)
print("| nodes x 8 | size | duct before | duct after | after / before | mpich | mvapich2 | best table / after |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for (n, size), d in sorted(rows.items()):
    g = lambda k: d[k][0] if k in d else None
    b, a = g("before"), g("after")
    tables = [x for x in (g("mpich"), g("mvapich2")) if x]
    fmt = lambda x: f"{x:.1f}" if x else "-"
    print(f"| {n} | {size // 1024} KiB | {fmt(b)} | {fmt(a)} | {a / b:.2f} | {fmt(g('mpich'))} | {fmt(g('mvapich2'))} | "
          f"{(min(tables) / a):.2f} |" if a and b and tables else
          f"| {n} | {size // 1024} KiB | {fmt(b)} | {fmt(a)} | {(a / b if a and b else 0):.2f} | {fmt(g('mpich'))} | {fmt(g('mvapich2'))} | - |")
wrong = [(k, l) for k, d in rows.items() for l, (t, w) in d.items() if w not in ("0", "-")]
print(f"\nwrong elements: {wrong if wrong else 'none'}")
