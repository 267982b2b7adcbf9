"""The end of an MPI test script: every rank's failures gathered at rank 0,
printed with a one-line verdict, and the verdict shared, so every rank exits
with the same status."""


def verdict(comm, failures, what, show=30):
    """Print the failures of every rank of `comm` (at rank 0) and 'PASSED' or
    'FAILED' with `what`; return True on every rank when there were none."""
    bad = comm.gather(failures, root=0)
    if comm.Get_rank() == 0:
        bad = [f for fs in bad for f in fs]
        for f in bad[:show]:
            print('FAIL', f)
        print('FAILED' if bad else 'PASSED', f'{what} ({len(bad)} failures)', flush=True)
    return comm.bcast(not bad if comm.Get_rank() == 0 else None, root=0)
