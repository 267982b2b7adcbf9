"""The torch.distributed backend "duct" against gloo on the same data.

Run under mpirun at any size >= 1: dist.init_process_group("duct") with
nothing set (rank, size and the rendezvous come from MPI), then every
collective of torch's Python front end through the default (duct) group,
compared with the same call through a gloo group of the same ranks on the
same tensors: exact for integers, bool, MIN and MAX, within a tolerance
for floating-point sums, products and averages (the summation order
differs). Also: async works (wait, is_completed, get_future), dtypes gloo
lacks (compared through gloo on a wider dtype), non-contiguous tensors,
sub-groups (two ranks; all but rank 0), send/recv/isend/irecv and recv from
any source, argument errors raised at the call, and DDP with backend "duct"
and no hook against DDP on gloo after 20 steps (find_unused_parameters and
join() with uneven inputs included). With --timeout: rank 0 skips an
all_reduce; every other rank's wait() must raise duct.TimeoutError (run
with DUCT_TIMEOUT set) naming the collective and the rank.
"""

import os
import sys

import torch
import torch.distributed as dist
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import duct
import duct.torch
from report import verdict

world = MPI.COMM_WORLD
torch.set_num_threads(1)
for v in ('MASTER_ADDR', 'MASTER_PORT', 'RANK', 'WORLD_SIZE'):
    assert v in os.environ, f'import duct.torch did not set {v}'
dist.init_process_group('duct')
me, n = dist.get_rank(), dist.get_world_size()
assert (me, n) == (world.Get_rank(), world.Get_size()), 'torch rank/size differ from MPI'
assert dist.get_backend() == 'duct', dist.get_backend()
gloo = dist.new_group(backend='gloo')
failures = []
R = dist.ReduceOp


def fail(what):
    failures.append(f'rank {me}: {what}')


def data(dtype, shape, salt=0, rank=None):
    """The same values on every run, different per rank: small integers (sums
    and products of up to 4 ranks stay exact), floats from a seeded generator."""
    r = me if rank is None else rank
    g = torch.Generator().manual_seed(1000 * salt + 17 * r + 3)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype) + \
            1j * torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)
    lo = 0 if dtype == torch.uint8 else -3
    return torch.randint(lo, 4, shape, generator=g).to(dtype)


def close(a, b, exact):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if exact or not (a.dtype.is_floating_point or a.dtype.is_complex):
        return torch.equal(a, b)
    tol = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(a.dtype, 1e-5)
    return torch.allclose(a.to(torch.complex128 if a.is_complex() else torch.float64),
                          b.to(torch.complex128 if b.is_complex() else torch.float64), rtol=tol, atol=tol)


# gloo's own dtypes; the others are compared through gloo on a wider dtype.
GLOO = {torch.float32, torch.float64, torch.float16, torch.int8, torch.uint8, torch.int32, torch.int64}


def wide(dtype):
    if dtype == torch.bool:
        return torch.uint8
    if dtype.is_complex:
        return dtype  # torch's front end reduces complex as pairs of reals
    return torch.float64 if dtype.is_floating_point else torch.int64


def ref_allreduce(x, op):
    """x reduced with op over the gloo group (AVG: a sum divided by n).
    Empty tensors are their own result (gloo 1.13 fails on them: SIGFPE)."""
    if x.numel() == 0:
        return x
    if x.dtype == torch.bool:  # duct: OR for SUM/MAX/BOR, AND for PRODUCT/MIN/BAND, XOR for BXOR
        y = x.to(torch.uint8)
        gop = {R.SUM: R.MAX, R.MAX: R.MAX, R.BOR: R.BOR, R.PRODUCT: R.MIN, R.MIN: R.MIN, R.BAND: R.BAND,
               R.BXOR: R.BXOR}[op]
        dist.all_reduce(y, op=gop, group=gloo)
        return y.bool()
    y = x.clone() if x.dtype in GLOO or x.dtype.is_complex else x.to(wide(x.dtype))
    if op == R.AVG:
        dist.all_reduce(y, op=R.SUM, group=gloo)
        y = y / n
    else:
        dist.all_reduce(y, op=op, group=gloo)
    return y.to(x.dtype)


INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
COMPLEX = [torch.complex64, torch.complex128]


def ops_for(dtype):
    if dtype == torch.bool:
        return [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR]
    if dtype.is_complex:
        return [R.SUM, R.AVG]
    if dtype.is_floating_point:
        return [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.AVG]
    return [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR]


# ---- all_reduce: every dtype and op, several counts, sync and async ----------------
checked = 0
for dtype in [torch.bool] + INTS + FLOATS + COMPLEX:
    for op in ops_for(dtype):
        for count in (0, 1, 7, 1000):
            x = data(dtype, (count,), salt=count)
            want = ref_allreduce(x.clone(), op)
            got = x.clone()
            if count == 7:  # async: wait(), is_completed(), get_future()
                work = dist.all_reduce(got, op=op, async_op=True)
                fut = work.get_future()
                work.wait()
                if not work.is_completed():
                    fail(f'all_reduce {dtype} {op}: is_completed() False after wait()')
                value = fut.wait()
                # [the tensor] (complex: torch's front end passes its real view)
                if not (isinstance(value, list) and len(value) == 1 and value[0].data_ptr() == got.data_ptr()):
                    fail(f'all_reduce {dtype}: the future\'s value is not [tensor]: {value!r}')
            else:
                dist.all_reduce(got, op=op)
            checked += 1
            if not close(got, want, op in (R.MIN, R.MAX)):
                fail(f'all_reduce {dtype} {op} count {count}: {got[:6].tolist()} != gloo {want[:6].tolist()}')
if me == 0:
    print(f'all_reduce: {checked} cases (dtype x op x count) against gloo')

# ---- broadcast, reduce (every root) --------------------------------------------------
for root in range(n):
    for dtype in (torch.float32, torch.int64, torch.bfloat16, torch.bool):
        x = data(dtype, (1001,), salt=root)
        want = x.clone() if dtype in GLOO else x.to(wide(dtype))
        dist.broadcast(want, src=root, group=gloo)
        got = x.clone()
        dist.broadcast(got, src=root)
        if not close(got, want.to(dtype), True):
            fail(f'broadcast {dtype} root {root}')
    for op in (R.SUM, R.MAX):
        x = data(torch.float64, (333,), salt=5)
        want = ref_allreduce(x.clone(), op)
        got = x.clone()
        dist.reduce(got, dst=root, op=op)
        if me == root and not close(got, want, op == R.MAX):
            fail(f'reduce {op} root {root}')
        if me != root and not torch.equal(got, x):
            fail(f'reduce {op} root {root}: the non-root tensor changed')
if me == 0:
    print('broadcast, reduce: every root')


# ---- gathers, scatters, reduce-scatters, all-to-all ---------------------------------
def everyone(dtype, shape, salt):
    """Every rank's data(dtype, shape, salt), gathered through gloo (the
    reference for the movement collectives)."""
    x = data(dtype, shape, salt)
    if x.numel() == 0:  # gloo 1.13 fails on empty tensors (SIGFPE)
        return [x.clone() for _ in range(n)]
    y = x if dtype in GLOO else x.to(wide(dtype))
    out = [torch.empty_like(y) for _ in range(n)]
    dist.all_gather(out, y, group=gloo)
    return [o.to(dtype) for o in out]


for dtype in (torch.float32, torch.int16, torch.bfloat16, torch.complex64):
    for count in (0, 1, 37):
        allx = everyone(dtype, (count,), 7)
        x = data(dtype, (count,), 7)
        out = [torch.full((count,), 99).to(dtype) for _ in range(n)]
        dist.all_gather(out, x)
        if not all(torch.equal(a, b) for a, b in zip(out, allx)):
            fail(f'all_gather {dtype} count {count}')
        flat = torch.empty(n * count, dtype=dtype)
        dist.all_gather_into_tensor(flat, x)
        if not torch.equal(flat, torch.cat(allx)):
            fail(f'all_gather_into_tensor {dtype} count {count}')
        for root in range(n):
            glist = [torch.zeros(count, dtype=dtype) for _ in range(n)] if me == root else None
            dist.gather(x, glist, dst=root)
            if me == root and not all(torch.equal(a, b) for a, b in zip(glist, allx)):
                fail(f'gather {dtype} count {count} root {root}')
            # scatter: the root sends piece j of its data to rank j
            pieces = [data(dtype, (count,), 40 + j, rank=root) for j in range(n)]
            got = torch.full((count,), 7).to(dtype)
            dist.scatter(got, pieces if me == root else None, src=root)
            if not torch.equal(got, pieces[me]):
                fail(f'scatter {dtype} count {count} root {root}')
if me == 0:
    print('all_gather (list, into_tensor), gather, scatter: 4 dtypes, counts 0/1/37, every root')

for dtype, op in ((torch.float64, R.SUM), (torch.int32, R.MAX), (torch.float32, R.AVG), (torch.int64, R.PRODUCT)):
    count = 5
    x = data(dtype, (n * count,), 9)
    full = ref_allreduce(x.clone(), op)
    got = torch.empty(count, dtype=dtype)
    dist.reduce_scatter_tensor(got, x, op=op)
    if not close(got, full[me * count:(me + 1) * count], op == R.MAX):
        fail(f'reduce_scatter_tensor {dtype} {op}')
    # the list form with blocks of different sizes: block j has j+1 elements
    sizes = [j + 1 for j in range(n)]
    xs = list(data(dtype, (sum(sizes),), 11).split(sizes))
    fullv = ref_allreduce(torch.cat(xs), op)
    got = torch.empty(sizes[me], dtype=dtype)
    dist.reduce_scatter(got, xs, op=op)
    if not close(got, fullv[sum(sizes[:me]):sum(sizes[:me + 1])], op == R.MAX):
        fail(f'reduce_scatter (list, uneven) {dtype} {op}')
if me == 0:
    print('reduce_scatter (list, uneven) and reduce_scatter_tensor: SUM, MAX, AVG, PRODUCT')

for dtype in (torch.float32, torch.int8):
    # even: 3 rows of 2 per peer
    x = data(dtype, (3 * n, 2), 13)
    allx = everyone(dtype, (3 * n, 2), 13)
    got = torch.empty(3 * n, 2, dtype=dtype)
    dist.all_to_all_single(got, x)
    want = torch.cat([allx[j][3 * me:3 * me + 3] for j in range(n)])
    if not torch.equal(got, want):
        fail(f'all_to_all_single even {dtype}')
    # uneven: rank i sends i + j + 1 rows to rank j
    ins = [me + j + 1 for j in range(n)]
    outs = [j + me + 1 for j in range(n)]
    x = data(dtype, (sum(ins), 3), 14)
    allx = [data(dtype, (sum(i + j + 1 for j in range(n)), 3), 14, rank=i) for i in range(n)]
    got = torch.empty(sum(outs), 3, dtype=dtype)
    dist.all_to_all_single(got, x, output_split_sizes=outs, input_split_sizes=ins)
    want = torch.cat([allx[i][sum(i + j + 1 for j in range(me)):][:i + me + 1] for i in range(n)])
    if not torch.equal(got, want):
        fail(f'all_to_all_single uneven {dtype}')
    # the list form
    xs = [data(dtype, (j + 2,), 15 + j) for j in range(n)]
    outs_l = [torch.empty(me + 2, dtype=dtype) for _ in range(n)]
    dist.all_to_all(outs_l, xs)
    for i in range(n):
        if not torch.equal(outs_l[i], data(dtype, (me + 2,), 15 + me, rank=i)):
            fail(f'all_to_all (list) {dtype}: block from rank {i}')
dist.barrier()
if me == 0:
    print('all_to_all_single (even, uneven), all_to_all (list), barrier')

# ---- non-contiguous tensors --------------------------------------------------------------
base = data(torch.float64, (6, 8), 21)
nc = base.t()  # 8 x 6, not contiguous
want = ref_allreduce(nc.contiguous(), R.SUM)
dist.all_reduce(nc)
if not close(nc.contiguous(), want, False) or not close(base.t().contiguous(), want, False):
    fail('all_reduce on a transposed tensor')
strided = data(torch.int32, (40,), 22)[::3]
want = strided.clone()
dist.broadcast(want, src=n - 1, group=gloo)
dist.broadcast(strided, src=n - 1)
if not torch.equal(strided, want):
    fail('broadcast on a strided view')
out = [torch.zeros(8, 2, dtype=torch.float32)[:, 0] for _ in range(n)]
x = data(torch.float32, (8, 2), 23)[:, 1]
dist.all_gather(out, x)
allx = [data(torch.float32, (8, 2), 23, rank=i)[:, 1] for i in range(n)]
if not all(torch.equal(a, b) for a, b in zip(out, allx)):
    fail('all_gather into strided views')
if me == 0:
    print('non-contiguous tensors: all_reduce, broadcast, all_gather')

# ---- sub-groups -----------------------------------------------------------------------------
for ranks in (sorted({0, n - 1}), list(range(1, n)) if n > 2 else [0]):
    g = dist.new_group(ranks)            # duct (the default backend)
    gg = dist.new_group(ranks, backend='gloo')
    if me in ranks:
        x = data(torch.float32, (100,), 30)
        want = x.clone()
        dist.all_reduce(want, group=gg)
        got = x.clone()
        dist.all_reduce(got, group=g)
        if not close(got, want, False):
            fail(f'all_reduce on new_group({ranks})')
        b = data(torch.int64, (9,), 31)
        bw = b.clone()
        dist.broadcast(bw, src=ranks[-1], group=gg)
        dist.broadcast(b, src=ranks[-1], group=g)
        if not torch.equal(b, bw):
            fail(f'broadcast on new_group({ranks}) from global rank {ranks[-1]}')
if me == 0:
    print('sub-groups: all_reduce and broadcast on new_group([0, n-1]) and new_group(1..n-1)')

# ---- point to point ----------------------------------------------------------------------------
if n > 1:
    right, left = (me + 1) % n, (me - 1) % n
    x = data(torch.float32, (50,), 40)
    got = torch.empty(50)
    reqs = [dist.isend(x, right, tag=5), dist.irecv(got, left, tag=5)]
    for r in reqs:
        r.wait()
    if not torch.equal(got, data(torch.float32, (50,), 40, rank=left)):
        fail('isend/irecv ring')
    if me == 0:
        got = torch.empty(3, dtype=torch.int64)
        sources = sorted(dist.recv(got, tag=6) for _ in range(n - 1))
        if sources != list(range(1, n)):
            fail(f'recv from any source: sources {sources}')
    else:
        dist.send(torch.full((3,), me, dtype=torch.int64), 0, tag=6)
    if me == 0:
        print('send/recv, isend/irecv, recv from any source')

# ---- argument errors at the call ----------------------------------------------------------------
try:
    dist.all_reduce(torch.ones(3, dtype=torch.int32), op=R.AVG)
    fail('all_reduce AVG on int32 did not raise')
except ValueError as e:
    if 'AVG' not in str(e):
        fail(f'all_reduce AVG on int32: {e}')
try:
    dist.all_gather_into_tensor(torch.empty(n * 3 + 1), torch.ones(3))
    fail('all_gather_into_tensor with a wrong output size did not raise')
except ValueError as e:
    if 'all_gather_into_tensor' not in str(e):
        fail(f'all_gather_into_tensor wrong size: {e}')
dist.barrier()
if me == 0:
    print('argument errors raise at the call')


# ---- DDP on the duct backend, no hook, against DDP on gloo ------------------------------------
class Net(torch.nn.Module):
    def __init__(self, unused):
        super().__init__()
        self.a = torch.nn.Linear(16, 64)
        self.b = torch.nn.Linear(64, 8)
        if unused:
            self.unused = torch.nn.Linear(8, 8)   # never used: find_unused_parameters must cope

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def train(group, find_unused, steps_of_rank):
    torch.manual_seed(7)
    m = DDP(Net(find_unused), process_group=group, find_unused_parameters=find_unused, bucket_cap_mb=0.01)
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator().manual_seed(500 + me)
    with m.join():
        for _ in range(steps_of_rank):
            x = torch.randn(8, 16, generator=gen)
            y = torch.randint(0, 8, (8,), generator=gen)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
    return torch.cat([p.detach().flatten() for p in m.parameters()])


for find_unused, steps in ((False, 20), (True, 20), (True, 20 + me)):  # the last: uneven inputs, join()
    d = train(None, find_unused, steps)
    g = train(gloo, find_unused, steps)
    if not torch.allclose(d, g, rtol=1e-5, atol=1e-6):
        fail(f'DDP on duct vs gloo (find_unused_parameters={find_unused}, steps {steps}): '
             f'max difference {(d - g).abs().max().item():.3g}')
if me == 0:
    print('DDP (backend "duct", no hook) = DDP on gloo after 20 steps; find_unused_parameters; join() with uneven inputs')

# ---- a rank that skips a call: the others' wait() raises duct.TimeoutError ----------------------
if '--timeout' in sys.argv and n > 1:
    if me != 0:
        w = dist.all_reduce(torch.ones(4), async_op=True)
        try:
            w.wait()
            fail('a skipped all_reduce completed')
        except duct.TimeoutError as e:
            if 'allreduce' not in str(e) or f'rank {me}' not in str(e):
                fail(f'the timeout does not name the collective and the rank: {e}')
            elif me == 1:
                print(f'timeout: {str(e)[:160]}')
        except Exception as e:  # noqa: BLE001
            fail(f'a skipped all_reduce raised {type(e).__name__}, not duct.TimeoutError: {e}')

ok = verdict(world, failures, f'{n} ranks')
dist.destroy_process_group()
sys.exit(0 if ok else 1)
