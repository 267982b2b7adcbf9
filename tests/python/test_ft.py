"""duct's fault-tolerance calls from Python without a failure (DUCT_FT=1):
agree's AND against mpi4py's allreduce(BAND), a revocation by one rank seen
by every other rank's next collective and by is_revoked(), get_failed()
empty, shrink() to a communicator of every rank whose allreduce matches
mpi4py's; and with fault tolerance off, NotSupportedError. Prints PASS per
rank; exits 1 on a failed check."""
import os
import sys

import numpy as np
from mpi4py import MPI

import duct

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


if os.environ.get('DUCT_FT') != '1':
    try:
        duct.agree(1)
        check(False, 'agree without DUCT_FT did not raise')
    except duct.NotSupportedError as e:
        check('DUCT_FT=1' in str(e), f'the refusal does not name DUCT_FT=1: {e}')
else:
    comm = world.Dup()
    x = np.arange(1000, dtype=np.float64) + rank
    duct.allreduce(x, comm=comm)   # duct's context on comm
    for flags in ([0b1111] * size, [0b1111 ^ (1 << (r % 4)) for r in range(size)], [r + 1 for r in range(size)]):
        got = duct.agree(flags[rank], comm=comm)
        check(got == world.allreduce(flags[rank], MPI.BAND), f'agree({flags}) gave {got}')
    check(duct.get_failed(comm) == [], 'get_failed() not empty without a failure')
    check(not duct.is_revoked(comm), 'revoked before anyone revoked it')
    world.Barrier()   # every rank looked before rank 0 revokes
    if rank == 0:
        duct.revoke(comm)
    world.Barrier()   # the revocation was sent before rank 0 arrived here
    try:
        y = np.ones(1000)
        duct.allreduce(y, comm=comm)
        check(False, 'an allreduce on a revoked communicator completed')
    except duct.RevokedError as e:
        check('revoked' in str(e), f'the error does not say revoked: {e}')
    check(duct.is_revoked(comm), 'is_revoked() false after the revocation')
    new = duct.shrink(comm)
    check(new.Get_size() == size and new.Get_rank() == rank, f'shrink gave rank {new.Get_rank()} of {new.Get_size()}')
    z = np.arange(4096, dtype=np.float64) * (rank + 1)
    ref = np.empty_like(z)
    new.Allreduce(z, ref, MPI.SUM)
    duct.allreduce(z, comm=new)
    check(np.array_equal(z, ref), 'the allreduce on the shrunk communicator differs from mpi4py')
    new.Free()
    comm.Free()

print(f'rank {rank}: {"PASS" if not bad else "FAIL: " + "; ".join(bad)}', flush=True)
sys.exit(1 if bad else 0)
