"""An mpi4py script that knows nothing of duct: allreduce and bcast on
buffers (array module, no numpy needed) and on Python objects. Prints one
line per check and PASS/FAIL; run with and without libduct-mpi preloaded."""
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
ok_all = True


def check(what, ok):
    global ok_all
    ok_all = ok_all and ok
    if rank == 0:
        print(f"{what:40s} {'ok' if ok else 'WRONG'}", flush=True)


x = array("d", [rank + i for i in range(1000)])
y = array("d", [0.0] * 1000)
comm.Allreduce(x, y, op=MPI.SUM)
check("Allreduce doubles", all(y[i] == size * i + size * (size - 1) / 2 for i in range(1000)))

z = array("i", [rank] * 64)
comm.Allreduce(MPI.IN_PLACE, z, op=MPI.MAX)
check("Allreduce ints in place", all(v == size - 1 for v in z))

b = array("b", b"duct" * 16 if rank == 0 else b"\0" * 64)
comm.Bcast(b, root=0)
check("Bcast bytes", b.tobytes() == b"duct" * 16)

obj = comm.bcast({"from": 0, "list": [1, 2, 3]} if rank == 0 else None, root=0)
check("bcast a Python object", obj == {"from": 0, "list": [1, 2, 3]})

total = comm.allreduce(rank, op=MPI.SUM)
check("allreduce a Python int", total == size * (size - 1) // 2)

g = comm.allgather(rank * 2)
check("allgather Python objects", g == [2 * r for r in range(size)])

ok = comm.allreduce(1 if ok_all else 0, op=MPI.MIN)
if rank == 0:
    print("PASS" if ok == 1 else "FAIL", flush=True)
raise SystemExit(0 if ok == 1 else 1)
