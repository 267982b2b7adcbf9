#!/usr/bin/env python3
"""The regret table from run.sh's output: per collective, the rules' time and
every forced algorithm's (us, duct out of place, slowest rank), the best
forced one and rules / best. Usage: table.py DIR [NODES]"""
import glob, os, re, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
nodes = sys.argv[2] if len(sys.argv) > 2 else "64"

def rows(path):
    out = {}
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) > 6 and re.fullmatch(r"\d+", f[0]) and not line.startswith("#"):
            try:
                out[int(f[0])] = float(f[5])
            except ValueError:
                pass
    return out

def size(b):
    for u, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {u}"
    return f"{b} B"

colls = []
for p in sorted(glob.glob(os.path.join(d, f"*-{nodes}x8.txt"))):
    c = re.match(r"(allreduce|bcast|reduce_scatter|reduce|allgather|alltoall|gather|scatter)-", os.path.basename(p))
    if c and c.group(1) not in colls:
        colls.append(c.group(1))
for c in colls:
    algos = {}
    for p in sorted(glob.glob(os.path.join(d, f"{c}-*-{nodes}x8.txt"))):
        a = os.path.basename(p)[len(c) + 1:-len(f"-{nodes}x8.txt")]
        if "-" in a:  # another collective's prefix (reduce vs reduce_scatter)
            continue
        algos[a] = rows(p)
    rules = algos.pop("rules", {})
    names = sorted(algos)
    print(f"\n### {c}, {nodes} x 8\n")
    print("| size | rules | " + " | ".join(names) + " | rules / best |")
    print("| --- " * (len(names) + 3) + "|")
    for b in sorted(set().union(rules, *algos.values())):
        t = [algos[a].get(b) for a in names]
        have = [x for x in t if x is not None]
        best = min(have) if have else None
        cells = [f"**{x:.1f}**" if x is not None and x == best else (f"{x:.1f}" if x is not None else "-") for x in t]
        r = rules.get(b)
        ratio = f"{r / best:.2f}" if r is not None and best else "-"
        print(f"| {size(b)} | {r:.1f} | " if r is not None else f"| {size(b)} | - | ", end="")
        print(" | ".join(cells) + f" | {ratio} |")
