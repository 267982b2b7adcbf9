"""duct.on_stream: collectives enqueued on a stream (the DUCT_<coll>_stream_c
forms), from Python, on any machine.

With DUCT_STREAM_EMULATE=1 (duct's emulated stream on host buffers: it
reaches each call at once and the call returns when it is done) every
collective called inside `with duct.on_stream(0):`, blocking name or
nonblocking name, must give mpi4py's result on NumPy arrays and return None.
Without it, and without a CUDA device, every call inside must raise
duct.NotSupportedError saying that a CUDA device is needed, write nothing,
and leave the communicator working. Either way the context is undone on
exit (calls after it run as usual) and nests. Run under mpirun (any size).
"""

import os
import sys

import numpy as np
from mpi4py import MPI

import duct
from report import verdict

comm = MPI.COMM_WORLD
me, n = comm.Get_rank(), comm.Get_size()
emulated = os.environ.get('DUCT_STREAM_EMULATE', '0') not in ('0', '')
failures = []
if not emulated and duct.cuda_support():
    if me == 0:
        print('a CUDA device is usable: the no-device case does not apply (tests/gpu covers the stream forms): skipped')
    sys.exit(77)


def fail(what):
    failures.append(f'rank {me}: {what}')


def v(k, salt=0):
    return (np.arange(k, dtype=np.float64) + 10 * me + salt) % 7


c = 5
counts = [j + 1 for j in range(n)]
displs = [sum(counts[:j]) for j in range(n)]
cases = []  # (name, duct call, mpi4py call) on fresh arrays; each returns (duct result, reference)


def case(name):
    def add(f):
        cases.append((name, f))
        return f
    return add


@case('allreduce')
def _(on):
    x, y, ref = v(c), np.zeros(c), np.zeros(c)
    r = on(lambda: duct.allreduce(x, y))
    comm.Allreduce(x, ref)
    return r, y, ref


@case('iallreduce (nonblocking name)')
def _(on):
    x, y, ref = v(c), np.zeros(c), np.zeros(c)
    r = on(lambda: duct.iallreduce(x, y, op=MPI.MAX))
    comm.Allreduce(x, ref, op=MPI.MAX)
    return r, y, ref


@case('reduce (root n-1)')
def _(on):
    x, y, ref = v(c), np.zeros(c), np.zeros(c)
    r = on(lambda: duct.reduce(x, y, root=n - 1))
    comm.Reduce(x, ref, root=n - 1)
    return r, (y if me == n - 1 else ref), ref


@case('bcast (root n-1)')
def _(on):
    b = v(c, 3)
    ref = b.copy()
    r = on(lambda: duct.bcast(b, root=n - 1))
    comm.Bcast(ref, root=n - 1)
    return r, b, ref


@case('allgather')
def _(on):
    x, y, ref = v(c), np.zeros(n * c), np.zeros(n * c)
    r = on(lambda: duct.allgather(x, y))
    comm.Allgather(x, ref)
    return r, y, ref


@case('allgatherv')
def _(on):
    x, y, ref = v(counts[me]), np.zeros(sum(counts)), np.zeros(sum(counts))
    r = on(lambda: duct.allgatherv(x, y, counts, displs))
    comm.Allgatherv(x, [ref, counts, displs, MPI.DOUBLE])
    return r, y, ref


@case('gather (root 0)')
def _(on):
    x, y, ref = v(c), np.zeros(n * c), np.zeros(n * c)
    r = on(lambda: duct.gather(x, y if me == 0 else None, root=0))
    comm.Gather(x, ref, root=0)
    return r, (y if me == 0 else ref), ref


@case('scatter (root 0)')
def _(on):
    x, y, ref = v(n * c, 5), np.zeros(c), np.zeros(c)
    r = on(lambda: duct.scatter(x if me == 0 else None, y, root=0))
    comm.Scatter(x, ref, root=0)
    return r, y, ref


@case('alltoall')
def _(on):
    x, y, ref = v(n * c, 1), np.zeros(n * c), np.zeros(n * c)
    r = on(lambda: duct.alltoall(x, y))
    comm.Alltoall(x, ref)
    return r, y, ref


@case('alltoallv')
def _(on):
    sc = [me + j + 1 for j in range(n)]
    rc = [j + me + 1 for j in range(n)]
    x, y, ref = v(sum(sc), 2), np.zeros(sum(rc)), np.zeros(sum(rc))
    r = on(lambda: duct.alltoallv(x, y, sc, rc))
    sd = [sum(sc[:j]) for j in range(n)]
    rd = [sum(rc[:j]) for j in range(n)]
    comm.Alltoallv([x, sc, sd, MPI.DOUBLE], [ref, rc, rd, MPI.DOUBLE])
    return r, y, ref


@case('reduce_scatter_block')
def _(on):
    x, y, ref = v(n * c, 4), np.zeros(c), np.zeros(c)
    r = on(lambda: duct.reduce_scatter_block(x, y))
    comm.Reduce_scatter_block(x, ref)
    return r, y, ref


@case('reduce_scatter')
def _(on):
    x, y, ref = v(sum(counts), 6), np.zeros(counts[me]), np.zeros(counts[me])
    r = on(lambda: duct.reduce_scatter(x, y, counts))
    comm.Reduce_scatter(x, ref, counts)
    return r, y, ref


@case('barrier')
def _(on):
    r = on(lambda: duct.barrier())
    return r, np.zeros(1), np.zeros(1)


def on_stream(call):
    with duct.on_stream(0):
        with duct.on_stream(0):   # nested: still stream-ordered
            pass
        return call()


for name, f in cases:
    if emulated:
        r, got, want = f(on_stream)
        if r is not None:
            fail(f'{name}: returned {r!r} inside on_stream (expected None)')
        if not np.array_equal(got, want):
            fail(f'{name}: {got.tolist()} != mpi4py {want.tolist()}')
    else:
        try:
            f(on_stream)
            fail(f'{name}: no error without a CUDA device')
        except duct.NotSupportedError as e:
            if 'CUDA device' not in str(e):
                fail(f'{name}: the error does not say a CUDA device is needed: {e}')
        except Exception as e:  # noqa: BLE001
            fail(f'{name}: raised {type(e).__name__}, not duct.NotSupportedError: {e}')
    # after the context: calls run as usual
    x, y = v(3), np.zeros(3)
    duct.allreduce(x, y)
    ref = np.zeros(3)
    comm.Allreduce(x, ref)
    if not np.array_equal(y, ref):
        fail(f'after {name}: a plain allreduce gave {y.tolist()}')

mode = 'emulated stream' if emulated else 'no CUDA device: NotSupportedError'
ok = verdict(comm, failures, f'on_stream, {len(cases)} collectives, {mode}, {n} ranks', show=20)
sys.exit(0 if ok else 1)
