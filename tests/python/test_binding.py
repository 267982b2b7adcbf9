"""duct's Python binding against mpi4py's own collectives (the MPI library's,
on copies of the same data), for NumPy arrays and PyTorch CPU tensors:
every collective, blocking and nonblocking (several outstanding, on two
communicators, completed in reverse order), in place and out of place,
counts 0/1/7/1000, on MPI.COMM_WORLD, a reversed split and (3+ ranks) a
two-group split; then the error classes. Run under mpirun at any size.
Exits 77 when NumPy is missing; the torch cases are skipped (with a line
saying so) when PyTorch is.
"""

import os
import sys

try:
    import numpy as np
    from mpi4py import MPI
except ImportError as e:
    print(f'skipped: {e}')
    sys.exit(77)
try:
    import torch
except ImportError:
    torch = None

import duct

world = MPI.COMM_WORLD
me = world.Get_rank()
failures = []
checks = 0

DTYPES = ['float32', 'float64', 'int32', 'int64', 'uint8', 'int16', 'float16', 'bfloat16', 'complex128']
COUNTS = [0, 1, 7, 1000]
OPS = {'sum': MPI.SUM, 'max': MPI.MAX, 'min': MPI.MIN, 'prod': MPI.PROD}


def check(what, got, want):
    global checks
    checks += 1
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or not np.array_equal(got, want):
        bad = np.flatnonzero(got.ravel() != want.ravel()) if got.shape == want.shape else []
        where = f' first at element {bad[0]}: {got.ravel()[bad[0]]} != {want.ravel()[bad[0]]}' if len(bad) else ''
        failures.append(f'rank {me}: {what}: {got.shape} vs {want.shape}{where}')


def ref_dtype(dtype):
    # mpi4py reduces float16/bfloat16 nowhere: the reference runs on float32
    # copies of integer-valued data, where every result is exact.
    return np.float32 if dtype in ('float16', 'bfloat16') else np.dtype(dtype)


def values(n, dtype, comm, salt, op='sum'):
    """Integer-valued data of `n` elements, different on every rank, small
    enough that sums and products over 4 ranks are exact in every dtype."""
    r = comm.Get_rank()
    base = (np.arange(n) * 7 + r * 3 + salt) % (2 if op == 'prod' else 4) + (1 if op == 'prod' else 0)
    return base.astype(ref_dtype(dtype))


def make(kind, ref):
    """An array of `kind` holding the reference data `ref` (a new copy)."""
    dtype = make.dtype
    if kind == 'numpy':
        return ref.astype(np.float16) if dtype == 'float16' else ref.copy()
    t = torch.from_numpy(ref.copy())
    return t.to(getattr(torch, dtype)) if dtype in ('float16', 'bfloat16') else t


def host(x):
    """A NumPy copy of an array of any kind, in the reference dtype."""
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        return x.numpy().copy()
    return x.astype(np.float32) if x.dtype == np.float16 else x.copy()


def empty(kind, n, dtype):
    return make(kind, np.zeros(n, dtype=ref_dtype(dtype)))


def run_case(kind, dtype, n, comm, tag, nb):
    """Every collective once; nb: start them all nonblocking, then complete
    in reverse order. Returns nothing; records failures."""
    make.dtype = dtype
    size, rank = comm.Get_size(), comm.Get_rank()
    root = size - 1
    pending, later = [], []

    def call(fn, *args, **kw):
        if nb:
            pending.append(getattr(duct, 'i' + fn)(*args, **kw))
        else:
            getattr(duct, fn)(*args, **kw)

    label = f'{kind} {dtype} n={n} {tag}{" nonblocking" if nb else ""}'
    reducible = dtype not in ('complex128',) or True
    ops = ['sum', 'max'] if dtype != 'complex128' else ['sum', 'prod']
    for opname in ops:
        op = OPS[opname]
        src = values(n, dtype, comm, 1, opname)
        want = np.zeros_like(src)
        comm.Allreduce(src, want, op)
        out = empty(kind, n, dtype)
        call('allreduce', make(kind, src), out, op=op, comm=comm)
        inplace = make(kind, src)
        call('allreduce', inplace, op=op, comm=comm)
        later += [(f'allreduce {opname} {label}', out, want), (f'allreduce in place {opname} {label}', inplace, want)]

        want_r = np.zeros_like(src)
        comm.Reduce(src, want_r, op, root=root)
        out_r = empty(kind, n, dtype)
        call('reduce', make(kind, src), out_r if rank == root else None, op=op, root=root, comm=comm)
        if rank == root:
            later.append((f'reduce {opname} {label}', out_r, want_r))
        inplace_r = make(kind, src)
        call('reduce', inplace_r if rank == root else make(kind, src), op=op, root=root, comm=comm)
        if rank == root:
            later.append((f'reduce in place {opname} {label}', inplace_r, want_r))

    # reduce_scatter_block / reduce_scatter
    src = values(n * size, dtype, comm, 2)
    want = np.zeros(n, dtype=src.dtype)
    comm.Reduce_scatter_block(src, want, MPI.SUM)
    out = empty(kind, n, dtype)
    call('reduce_scatter_block', make(kind, src), out, comm=comm)
    later.append((f'reduce_scatter_block {label}', out, want))
    inplace = make(kind, src)
    call('reduce_scatter_block', MPI.IN_PLACE, inplace, comm=comm)
    later.append((f'reduce_scatter_block in place {label}', (inplace, slice(0, n)), want))

    counts = [(n + i) % 5 * (n // 4 + 1) for i in range(size)]
    src = values(sum(counts), dtype, comm, 3)
    want = np.zeros(counts[rank], dtype=src.dtype)
    comm.Reduce_scatter(src, want, counts, MPI.SUM)
    out = empty(kind, counts[rank], dtype)
    call('reduce_scatter', make(kind, src), out, counts, comm=comm)
    later.append((f'reduce_scatter {label}', out, want))

    # bcast
    src = values(n, dtype, comm, 4)
    want = src.copy()
    comm.Bcast(want, root=root)
    b = make(kind, src)
    call('bcast', b, root=root, comm=comm)
    later.append((f'bcast {label}', b, want))

    # allgather / gather / scatter / alltoall
    src = values(n, dtype, comm, 5)
    want = np.zeros(n * size, dtype=src.dtype)
    comm.Allgather(src, want)
    out = empty(kind, n * size, dtype)
    call('allgather', make(kind, src), out, comm=comm)
    later.append((f'allgather {label}', out, want))
    inplace = np.zeros(n * size, dtype=src.dtype)
    inplace[rank * n:(rank + 1) * n] = src
    inplace = make(kind, inplace)
    call('allgather', MPI.IN_PLACE, inplace, comm=comm)
    later.append((f'allgather in place {label}', inplace, want))

    want_g = np.zeros(n * size, dtype=src.dtype)
    comm.Gather(src, want_g, root=root)
    out = empty(kind, n * size, dtype)
    call('gather', make(kind, src), out if rank == root else None, root=root, comm=comm)
    if rank == root:
        later.append((f'gather {label}', out, want_g))

    src_s = values(n * size, dtype, comm, 6)
    want = np.zeros(n, dtype=src_s.dtype)
    comm.Scatter(src_s, want, root=root)
    out = empty(kind, n, dtype)
    call('scatter', make(kind, src_s) if rank == root else None, out, root=root, comm=comm)
    later.append((f'scatter {label}', out, want))

    want = np.zeros(n * size, dtype=src_s.dtype)
    comm.Alltoall(src_s, want)
    out = empty(kind, n * size, dtype)
    call('alltoall', make(kind, src_s), out, comm=comm)
    later.append((f'alltoall {label}', out, want))
    inplace = make(kind, src_s)
    call('alltoall', MPI.IN_PLACE, inplace, comm=comm)
    later.append((f'alltoall in place {label}', inplace, want))

    # v-forms: rank i sends (i + n) % 3 * n // 2 elements; displacements in reverse rank order with gaps
    vc = [(i + n) % 3 * n // 2 for i in range(size)]
    vd, at = [0] * size, 0
    for i in reversed(range(size)):
        vd[i] = at
        at += vc[i] + 1
    total = at
    mine = values(vc[rank], dtype, comm, 7)
    want = np.zeros(total, dtype=mine.dtype)
    comm.Allgatherv(mine, [want, vc, vd, MPI._typedict[want.dtype.char]])
    out = empty(kind, total, dtype)
    call('allgatherv', make(kind, mine), out, vc, vd, comm=comm)
    later.append((f'allgatherv {label}', out, want))

    want = np.zeros(total, dtype=mine.dtype)
    comm.Gatherv(mine, [want, vc, vd, MPI._typedict[want.dtype.char]], root=root)
    out = empty(kind, total, dtype)
    call('gatherv', make(kind, mine), out if rank == root else None, vc if rank == root else None,
         vd if rank == root else None, root=root, comm=comm)
    if rank == root:
        later.append((f'gatherv {label}', out, want))

    src_v = values(total, dtype, comm, 8)
    want = np.zeros(vc[rank], dtype=src_v.dtype)
    comm.Scatterv([src_v, vc, vd, MPI._typedict[src_v.dtype.char]], want, root=root)
    out = empty(kind, vc[rank], dtype)
    call('scatterv', make(kind, src_v) if rank == root else None, out, vc, vd, root=root, comm=comm)
    later.append((f'scatterv {label}', out, want))

    # alltoallv: rank r sends (r + j + n) % 3 elements to j, packed
    sc = [(rank + j + n) % 3 for j in range(size)]
    rc = [(j + rank + n) % 3 for j in range(size)]
    sendv = values(sum(sc), dtype, comm, 9)
    want = np.zeros(sum(rc), dtype=sendv.dtype)
    t = MPI._typedict[want.dtype.char]
    comm.Alltoallv([sendv, sc, None, t], [want, rc, None, t])
    out = empty(kind, sum(rc), dtype)
    call('alltoallv', make(kind, sendv), out, sc, rc, comm=comm)
    later.append((f'alltoallv {label}', out, want))

    call('barrier', comm=comm)

    if nb:
        duct.waitall(reversed(pending))
        for r in pending:
            if not r.done:
                failures.append(f'rank {me}: {label}: a request is not done after waitall')
    for what, got, want in later:
        sl = slice(None)
        if isinstance(got, tuple):
            got, sl = got
        check(what, host(got)[sl], want)


def run_all(kinds):
    comms = [(world, 'world'), (world.Split(0, world.Get_size() - 1 - me), 'reversed')]
    if world.Get_size() >= 3:
        comms.append((world.Split(me % 2, me), 'two groups'))
    for kind in kinds:
        for dtype in DTYPES:
            if kind == 'numpy' and dtype == 'bfloat16':
                continue
            for n in COUNTS:
                for comm, tag in comms:
                    for nb in (False, True):
                        run_case(kind, dtype, n, comm, tag, nb)
    # Nonblocking on two communicators at once, started in different orders
    # on even and odd ranks' communicators, completed with test() polling.
    a, b = comms[0][0], comms[1][0]
    x, y = np.full(33, me, dtype=np.float64), np.full(5, me + 1, dtype=np.int64)
    rx, ry = duct.iallreduce(x, comm=a), duct.iallreduce(y, op=MPI.MAX, comm=b)
    while not (rx.test() & ry.test()):
        pass
    n = world.Get_size()
    check('two communicators, test() polling (a)', x, np.full(33, n * (n - 1) / 2))
    check('two communicators, test() polling (b)', y, np.full(5, n))
    # A dropped request: its buffers stay alive; the next call completes it.
    z = np.ones(100000)
    duct.iallreduce(z)
    duct.barrier()
    check('dropped request completes', z, np.full(100000, float(n)))
    for comm, tag in comms[1:]:
        comm.Free()


def expect(exc, fn, *args, **kw):
    global checks
    checks += 1
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    except Exception as e:  # noqa: BLE001
        failures.append(f'rank {me}: {fn.__name__}{args!r}: raised {type(e).__name__} ({e}), not {exc.__name__}')
        return None
    failures.append(f'rank {me}: {fn.__name__}: raised nothing, expected {exc.__name__}')
    return None


def run_errors():
    n = world.Get_size()
    x = np.ones(8, dtype=np.float32)
    e = expect(duct.RootError, duct.bcast, x, root=n)
    if e is not None and (f'root = {n}' not in str(e) or 'rank' not in str(e)):
        failures.append(f'rank {me}: RootError message lacks the root and rank: {e}')
    if e is not None and e.Get_error_class() != duct._fn['Error_class'](7):
        failures.append(f'rank {me}: RootError class {e.Get_error_class()}')
    expect(duct.OpTypeError, duct.allreduce, x, op=MPI.BAND)
    expect(duct.OpError, duct.allreduce, x, op=MPI.OP_NULL)
    expect(duct.CommError, duct.allreduce, x, comm=MPI.COMM_NULL)
    expect(duct.OverlapError, duct.allreduce, x[:6], x[2:8])
    expect(duct.CountError, duct.allgather, np.ones(3), np.ones(2 * n))
    expect(duct.Error, duct.bcast, x, root=-1)
    expect(ValueError, duct.allreduce, np.ones((4, 4))[:, 1])
    expect(ValueError, duct.allreduce, np.ones(4), np.ones(5))
    expect(ValueError, duct.allreduce, np.ones(4, dtype=np.float32), np.ones(4))
    if n > 1:
        expect(ValueError, duct.allgather, np.ones(1), np.ones(n * 2 + 1))
    expect(ValueError, duct.allgatherv, np.ones(1), np.ones(n), [1] * n, [n] * n)
    ro = np.ones(4)
    ro.flags.writeable = False
    expect(ValueError, duct.allreduce, np.ones(4), ro)
    expect(ValueError, duct.allreduce, np.array(['a', 'b']))
    expect(TypeError, duct.allreduce, x, op='sum')
    expect(TypeError, duct.allreduce, x, comm=3)
    expect(TypeError, duct.allreduce, object())
    if torch is not None:
        expect(ValueError, duct.allreduce, torch.ones(4, 4).t())
    # The interpreter and the communicator still work after refused calls.
    y = np.ones(3)
    duct.allreduce(y)
    check('allreduce after refused calls', y, np.full(3, float(n)))
    if os.environ.get('DUCT_CHECK') == '1' and n > 1:
        # Different counts on different ranks: every rank gets MismatchError.
        expect(duct.MismatchError, duct.allreduce, np.ones(4 + (me == 0)))


run_all(['numpy'] + (['torch'] if torch is not None else []))
if torch is None:
    print('PyTorch is not installed: the torch tensor cases were skipped', flush=True)
run_errors()

total = world.allreduce(len(failures))
for f in failures[:20]:
    print('FAIL', f, flush=True)
if me == 0:
    print(f'{world.Get_size()} ranks: {checks} checks on rank 0, {total} failures over all ranks', flush=True)
sys.exit(1 if total else 0)
