#!/usr/bin/env python3
"""out.txt -> the one-node tables: the better of Open MPI's two settings
against duct (out of place), per repetition and median. In each mpirun duct
and the MPI library ran side by side; a cell's ratio for one repetition is
the smaller of (MPI time / duct time) over the two settings' runs.
Usage: table.py [out.txt]"""
import collections, os, re, statistics, sys

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'out.txt')
# (ranks, collective, bytes) -> repetition -> setting -> MPI time / duct time
runs = collections.defaultdict(lambda: collections.defaultdict(dict))
head = None
with open(path) as f:
    for line in f:
        if line.startswith('## '):
            m = re.match(r'## rep (\d+) np (\d+) (\w+) (\w+)', line)
            head = (int(m[1]), int(m[2]), m[3], m[4])
        elif head and line.split() and line.split()[0].isdigit() and len(line.split()) > 10:
            rep, ranks, coll, setting = head
            runs[(ranks, coll, int(line.split()[0]))][rep][setting] = float(line.split()[-1])

def label(nbytes):
    units = [(1 << 20, 'MiB'), (1 << 10, 'KiB')]
    return next((f'{nbytes // k} {u}' for k, u in units if nbytes >= k and nbytes % k == 0), f'{nbytes} B')

def cell(per_rep):
    worst = [min(per_rep[r].values()) for r in sorted(per_rep)]
    return worst, statistics.median(worst)

order = 'allreduce bcast reduce allgather reduce_scatter alltoall gather scatter'.split()
below, count = [], 0
for ranks in (2, 4):
    print(f"\n{ranks} ranks: the better Open MPI setting's time / duct's (out of place), "
          "per rep (median); **bold**: median below 0.95\n")
    print('| size | ' + ' | '.join(order) + ' |\n| --- |' + ' --- |' * len(order))
    for nbytes in sorted({k[2] for k in runs if k[0] == ranks and k[1] in order}):
        row = []
        for coll in order:
            if (ranks, coll, nbytes) not in runs:
                row.append('-')
                continue
            worst, med = cell(runs[(ranks, coll, nbytes)])
            count += 1
            text = '/'.join(f'{x:.2f}' for x in worst) + f' ({med:.2f})'
            if med < 0.95:
                below.append(f'{ranks} ranks {coll} {label(nbytes)} ({med:.2f})')
                text = f'**{text}**'
            row.append(text)
        print(f'| {label(nbytes)} | ' + ' | '.join(row) + ' |')
    barrier = [v for k, v in runs.items() if k[0] == ranks and k[1] == 'barrier']
    if barrier:
        print('\nBarrier: ' + '/'.join(f'{x:.2f}' for x in cell(barrier[0])[0]))
print(f'\n{count} cells; median below 0.95: ' + ('; '.join(below) or 'none'))
