#!/usr/bin/env python3
"""after.txt -> markdown: Open MPI / duct per repetition, median, per np."""
import collections, statistics, sys, os
here = os.path.dirname(os.path.abspath(__file__))
rows = collections.defaultdict(list)
for line in open(os.path.join(here, 'after.txt')):
    f = line.split()
    if len(f) != 7: continue
    rep, np_, coll, size, duct, mpi, ratio = f
    rows[(int(np_), coll, int(size))].append(float(ratio))
def sz(b):
    for u, k in (('MiB', 1 << 20), ('KiB', 1 << 10)):
        if b % k == 0: return f'{b // k} {u}'
    return f'{b} B'
colls = ['allgather', 'alltoall', 'scatter', 'gather', 'bcast']
for np_ in (2, 4):
    print(f'\n{np_} ranks: Open MPI time / duct time, each repetition (median)\n')
    print('| size | ' + ' | '.join(colls) + ' |')
    print('| --- |' + ' --- |' * len(colls))
    sizes = sorted({s for (n, c, s) in rows if n == np_})
    for s in sizes:
        cells = []
        for c in colls:
            r = rows.get((np_, c, s))
            if not r: cells.append('-'); continue
            m = statistics.median(r)
            txt = '/'.join(f'{x:.2f}' for x in r) + f' ({m:.2f})'
            cells.append(f'**{txt}**' if m < 0.95 else txt)
        print(f'| {sz(s)} | ' + ' | '.join(cells) + ' |')
