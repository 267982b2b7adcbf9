#!/usr/bin/env python3
"""out.txt -> the one-node tables: Open MPI / duct (out of place) per repetition, median."""
import collections, os, re, statistics
here = os.path.dirname(os.path.abspath(__file__))
ratio = collections.defaultdict(dict)  # (np, coll, size) -> {rep: ratio}
rep = np_ = coll = None
for line in open(os.path.join(here, 'out.txt')):
    m = re.match(r'## rep (\d+) np (\d+) (\w+)', line)
    if m:
        rep, np_, coll = int(m[1]), int(m[2]), m[3]
        continue
    f = line.split()
    if len(f) > 10 and f[0].isdigit():
        ratio[(np_, coll, int(f[0]))][rep] = float(f[-1])
def sz(b):
    for u, k in (('MiB', 1 << 20), ('KiB', 1 << 10)):
        if b >= k and b % k == 0: return f'{b // k} {u}'
    return f'{b} B'
colls = ['allreduce', 'bcast', 'reduce', 'allgather', 'reduce_scatter', 'alltoall', 'gather', 'scatter']
low = []
for n in (2, 4):
    print(f'\n{n} ranks: Open MPI\'s time / duct\'s (out of place), reps 1/2/3 (median); **bold**: median below 0.95\n')
    print('| size | ' + ' | '.join(colls) + ' |')
    print('| --- |' + ' --- |' * len(colls))
    sizes = sorted({s for (q, c, s) in ratio if q == n and c in colls})
    for s in sizes:
        cells = []
        for c in colls:
            r = ratio.get((n, c, s))
            if not r: cells.append('-'); continue
            v = [r[k] for k in sorted(r)]
            m = statistics.median(v)
            t = '/'.join(f'{x:.2f}' for x in v) + f' ({m:.2f})'
            if m < 0.95: low.append((n, c, sz(s), m)); t = f'**{t}**'
            cells.append(t)
        print(f'| {sz(s)} | ' + ' | '.join(cells) + ' |')
    b = ratio.get((n, 'barrier', 0)) or next((v for (q, c, s), v in ratio.items() if q == n and c == 'barrier'), None)
    if b: print(f'\nBarrier: ' + '/'.join(f'{b[k]:.2f}' for k in sorted(b)))
print('\nMedian below 0.95: ' + ('; '.join(f'{n} ranks {c} {s} ({m:.2f})' for n, c, s, m in low) or 'none'))
