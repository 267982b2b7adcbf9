#!/usr/bin/env python3
"""out.txt -> DUCT_MEASURE=1 against DUCT_MEASURE=0, each as the better Open
MPI setting's time / duct's (out of place). In each mpirun duct and the MPI
library ran side by side; a cell's ratio for one repetition is the smaller
of (MPI time / duct time) over the two settings' runs (default, FIFO).
Usage: table.py [out.txt]"""
import collections, os, re, statistics, sys

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'out.txt')
# (ranks, collective, bytes, measure) -> repetition -> setting -> (ratio, duct us)
runs = collections.defaultdict(lambda: collections.defaultdict(dict))
head = None
with open(path) as f:
    for line in f:
        if line.startswith('## '):
            m = re.match(r'## rep (\d+) np (\d+) (\w+) (\w+) measure=(\d)', line)
            head = (int(m[1]), int(m[2]), m[3], m[4], int(m[5]))
        elif head and line.split() and line.split()[0].isdigit() and len(line.split()) > 10:
            rep, ranks, coll, setting, meas = head
            w = line.split()
            runs[(ranks, coll, int(w[0]), meas)][rep][setting] = (float(w[-1]), float(w[5]))

def label(nbytes):
    units = [(1 << 20, 'MiB'), (1 << 10, 'KiB')]
    return next((f'{nbytes // k} {u}' for k, u in units if nbytes >= k and nbytes % k == 0), f'{nbytes} B')

def cell(per_rep):
    worst = [min(v[0] for v in per_rep[r].values()) for r in sorted(per_rep)]
    return worst, statistics.median(worst)

order = 'allgather alltoall bcast gather scatter'.split()
summary = {0: [], 1: []}
for ranks in (2, 4):
    print(f"\n{ranks} ranks: the better Open MPI setting's time / duct's (out of place), "
          "median of the repetitions, DUCT_MEASURE=1 / DUCT_MEASURE=0; **bold**: below 0.95\n")
    print('| size | ' + ' | '.join(order) + ' |\n| --- |' + ' --- |' * len(order))
    for nbytes in sorted({k[2] for k in runs if k[0] == ranks}):
        row = []
        for coll in order:
            parts = []
            for meas in (1, 0):
                key = (ranks, coll, nbytes, meas)
                if key not in runs:
                    parts.append('-')
                    continue
                _, med = cell(runs[key])
                summary[meas].append(med)
                parts.append(f'**{med:.2f}**' if med < 0.95 else f'{med:.2f}')
            row.append(' / '.join(parts))
        print(f'| {label(nbytes)} | ' + ' | '.join(row) + ' |')
for meas in (1, 0):
    v = summary[meas]
    if v:
        print(f'\nDUCT_MEASURE={meas}: {len(v)} cells, median {statistics.median(v):.2f}, '
              f'below 0.95: {sum(x < 0.95 for x in v)}, lowest {min(v):.2f}')
