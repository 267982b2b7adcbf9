#!/usr/bin/env python3
"""Tables of ab.sh's output: per row, duct's time (us) with each build and
Open MPI's in the same run, the ratio Open MPI / duct, and the time of the
second build over the first's (median over repetitions)."""
import collections, statistics, sys

d = collections.defaultdict(lambda: collections.defaultdict(list))
builds = []
h = None
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    if f[0] == '==':
        kind, np, build, coll = f[1], f[2].split('-')[0], f[3], f[4]
        if build not in builds:
            builds.append(build)
        h = (kind, np, coll, build)
        continue
    if h is None or not f[0].isdigit():
        continue
    d[(h[0], h[1], h[2], int(f[0]))][h[3]].append((float(f[5]), float(f[13])))
a, b = builds[0], builds[1]
cur = None
for key in d:
    v = d[key]
    if (key[0], key[1]) != cur:
        cur = (key[0], key[1])
        print(f"\n{key[1]} ranks, {key[0]} sizes\n")
        print(f"| collective | size | {a}: duct / Open MPI (ratio) | {b}: duct / Open MPI (ratio) | {b} / {a} |")
        print("| --- | --- | --- | --- | --- |")
    cell = lambda k: "; ".join(f"{x:.2f} / {y:.2f} ({y / x:.2f})" for x, y in v[k])
    t = statistics.median(x for x, _ in v[b]) / statistics.median(x for x, _ in v[a])
    print(f"| {key[2]} | {key[3]} | {cell(a)} | {cell(b)} | {t:.2f} |")
