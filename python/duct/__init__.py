"""duct from Python: CUDA-aware collectives on mpi4py communicators.

    from mpi4py import MPI
    import duct
    duct.allreduce(grad)                              # in place, MPI.SUM, MPI.COMM_WORLD
    duct.allreduce(x, y, op=MPI.MAX, comm=sub)        # out of place, any communicator
    req = duct.iallreduce(grad); ...; req.wait()      # nonblocking

Every collective of libduct (include/duct/duct.h), blocking and nonblocking,
with MPI's semantics (MPI-4.0 chapter 6), on mpi4py communicators
(MPI.COMM_WORLD, splits, dups; intercommunicators go to the MPI library as in
C). Importing duct imports mpi4py, which initializes MPI (with
MPI_THREAD_MULTIPLE by default, which the DDP hook in duct.torch needs).

Buffers (see duct._buffers): NumPy arrays, PyTorch tensors (CPU and CUDA),
objects with __cuda_array_interface__ (CuPy) or __dlpack__, and buffer
objects, of any shape, C-contiguous (others raise ValueError: duct does not
copy behind your back). Memory kinds: host memory (pageable or pinned) or
CUDA device memory of the current device, mixed freely, as in C. Counts are
taken from the arrays, in elements of their dtype; displacements are in
elements. dtypes: bool, int8..int64, uint8..uint64, float16, bfloat16
(PyTorch), float32, float64, long double, complex64, complex128. Reductions
need the same dtype on both sides; movement needs the same bytes (MPI's type
signature rule).

In place: pass MPI.IN_PLACE where MPI allows it, or leave the receive
buffer out (recvbuf=None) in allreduce, reduce (at the root), where the
send buffer then also receives the result.

CUDA: for a CUDA tensor duct synchronizes the tensor's current stream
before the call, so queued work that writes it is done (inside `with
duct.on_stream(s):` calls are enqueued on stream s instead: stream order); for CuPy and DLPack
objects, synchronize yourself (as with any CUDA-aware MPI). When a call
returns (or a request completes), the result is in the receive buffer.

Errors: duct's error classes are exceptions, subclasses of duct.Error
(itself an mpi4py MPI.Exception), with duct's message naming the rank, the
call, the argument and the value. This needs the communicator's error
handler to return (MPI.ERRORS_RETURN, mpi4py's default); under
MPI.ERRORS_ARE_FATAL an error aborts the job, as in C. Arguments the binding
checks itself (an array too small for the counts, a non-contiguous array, an
unsupported dtype) raise ValueError or TypeError before anything moves.

Surviving a failed rank (DUCT_FT=1, launched with duct-run --ft): a
collective that finds a dead rank raises duct.PeerFailedError (or
TimeoutError) and revokes the communicator, so the other survivors' calls
raise duct.RevokedError; duct.shrink(comm) then returns an mpi4py
communicator of the survivors (duct.revoke, is_revoked, get_failed and
agree are the other calls of include/duct/duct.h's fault-tolerance
section).
"""

import ctypes
import threading

from mpi4py import MPI

from . import _lib
from . import _buffers
from ._buffers import buf as _buf, NONE as _NONE, IN_PLACE as _IN_PLACE

__version__ = _lib.fn['Version_string']().decode().split()[0]
__all__ = [
    'allreduce', 'reduce', 'bcast', 'allgather', 'allgatherv', 'gather', 'gatherv', 'scatter', 'scatterv',
    'alltoall', 'alltoallv', 'reduce_scatter', 'reduce_scatter_block', 'barrier',
    'iallreduce', 'ireduce', 'ibcast', 'iallgather', 'iallgatherv', 'igather', 'igatherv', 'iscatter',
    'iscatterv', 'ialltoall', 'ialltoallv', 'ireduce_scatter', 'ireduce_scatter_block', 'ibarrier',
    'Request', 'waitall', 'Error', 'cuda_support', 'library_path', 'IN_PLACE', 'on_stream',
    'revoke', 'is_revoked', 'get_failed', 'agree', 'shrink',
]

IN_PLACE = MPI.IN_PLACE
library_path = _lib.PATH
_fn = _lib.fn


def cuda_support():
    """True when this process can use a CUDA device with duct (driver, device, and duct built with CUDA)."""
    return bool(_fn['Query_cuda_support']())


class on_stream:
    """Stream order: collectives this thread calls inside `with
    duct.on_stream(stream):` are enqueued on the CUDA stream (duct's
    DUCT_<coll>_stream_c forms, include/duct/duct_stream.h) instead of run:
    they see what was queued on the stream before them, and work queued
    after them sees their results (None is returned, for the nonblocking
    names too). Outside graph capture the call currently waits for the
    stream's earlier work and completes the collective before it returns
    (DUCT_STREAM_ENGINE=1: where the device engine serves it, it returns
    once enqueued; not yet run on a GPU). `stream`: a
    torch.cuda.Stream, or anything with `cuda_stream`, or an int handle (0:
    the legacy default stream). The arrays must stay alive, and must not be
    written by other streams, until the stream has passed the call. Errors
    found at the call raise; errors after it (DUCT_TIMEOUT, a failed peer)
    are printed on stderr and returned by every later stream-ordered call on
    the communicator. Needs a CUDA device (duct.cuda_support())."""

    def __init__(self, stream):
        self.handle = int(getattr(stream, 'cuda_stream', stream) or 0)

    def __enter__(self):
        _buffers.push_stream(self.handle)
        return self

    def __exit__(self, *exc):
        _buffers.pop_stream()
        return False


# ---- errors -----------------------------------------------------------------

class Error(MPI.Exception):
    """An error returned by duct. `error_code` is the MPI error code,
    `error_class` its MPI error class (MPI.Exception's Get_error_class()),
    `errclass` duct's class name (e.g. 'COUNT'), str(e) duct's message."""

    errclass = None

    def __init__(self, code):
        super().__init__(code)
        self.message = MPI.Get_error_string(code)

    def __str__(self):
        return self.message


# duct's classes, in the order of DUCT_Errclass (include/duct/duct.h), and
# the Python exception of each.
_ERRCLASSES = [
    ('ARG', 'ArgError', 'an argument that fits no narrower class'),
    ('BUFFER', 'InvalidBufferError', 'a NULL or unusable buffer'),
    ('COUNT', 'CountError', 'a negative count, or send and receive sizes that disagree'),
    ('TYPE', 'DatatypeError', 'an invalid datatype'),
    ('OP', 'OpError', 'MPI.OP_NULL'),
    ('COMM', 'CommError', 'MPI.COMM_NULL or an unusable communicator'),
    ('ROOT', 'RootError', 'a root outside 0..size-1'),
    ('IN_PLACE', 'InPlaceError', 'MPI.IN_PLACE where MPI forbids it'),
    ('OVERLAP', 'OverlapError', 'send and receive buffers that overlap'),
    ('OVERFLOW', 'CountOverflowError', 'counts whose bytes overflow'),
    ('OP_TYPE', 'OpTypeError', 'an op MPI does not define for the datatype'),
    ('UNCOMMITTED', 'UncommittedError', 'an uncommitted derived datatype'),
    ('UNMAPPED', 'UnmappedError', 'a pointer that is not memory of this process'),
    ('CONFIG', 'ConfigError', 'an invalid DUCT_* environment variable'),
    ('NOT_SUPPORTED', 'NotSupportedError', 'valid MPI that duct cannot serve'),
    ('CUDA', 'CudaError', 'a CUDA call failed'),
    ('UCX', 'UcxError', 'a UCX call failed'),
    ('MPI', 'MpiError', 'an MPI call made by duct failed'),
    ('HWLOC', 'HwlocError', 'an hwloc call failed'),
    ('NO_MEMORY', 'NoMemoryError', 'an allocation failed'),
    ('TRUNCATE', 'TruncateError', 'a message longer than expected arrived'),
    ('TIMEOUT', 'TimeoutError', 'no progress within DUCT_TIMEOUT'),
    ('MISMATCH', 'MismatchError', 'ranks called with different arguments'),
    ('PEER_FAILED', 'PeerFailedError', 'a peer process failed'),
    ('INTERNAL', 'InternalError', 'a bug in duct'),
    ('REVOKED', 'RevokedError', 'the communicator was revoked (DUCT_FT=1): shrink it'),
]
_BY_MPI_CLASS = {}
for _i, (_cls, _name, _doc) in enumerate(_ERRCLASSES, start=1):
    _exc = type(_name, (Error,), {'__doc__': f'DUCT_ERRCLASS_{_cls}: {_doc}.', 'errclass': _cls,
                                  '__module__': __name__})
    globals()[_name] = _exc
    __all__.append(_name)
    _BY_MPI_CLASS[_fn['Error_class'](_i)] = _exc


def _raise(code):
    raise _BY_MPI_CLASS.get(MPI.Get_error_class(code), Error)(code)


# ---- requests -------------------------------------------------------------------

_orphans = []            # requests dropped before completion: their buffers stay alive
_orphans_lock = threading.Lock()


class Request:
    """A started nonblocking collective. It keeps its buffers alive until it
    completes; a Request dropped before that is completed later (by duct's
    next call), so its buffers are never freed under a running collective.
    MPI's rules hold: do not write the send buffer or read the receive
    buffer before the request completes."""

    __slots__ = ('_h', '_keep', '__weakref__')

    def __init__(self, handle, keep):
        self._h = handle
        self._keep = keep

    @property
    def done(self):
        """True once wait() or test() has seen the collective complete."""
        return self._keep is None

    def wait(self):
        """Block until the collective completes (advancing duct's collectives
        meanwhile; the GIL is released). Raises duct's error if it failed."""
        if self._keep is None:
            return
        status = ctypes.create_string_buffer(_lib.STATUS_SIZE)
        rc = _fn['Wait'](ctypes.byref(self._h), status)
        self._keep = None
        if rc:
            _raise(rc)

    def test(self):
        """Advance duct's collectives once; True if this one has completed."""
        if self._keep is None:
            return True
        flag = ctypes.c_int(0)
        status = ctypes.create_string_buffer(_lib.STATUS_SIZE)
        rc = _fn['Test'](ctypes.byref(self._h), ctypes.byref(flag), status)
        if rc:
            self._keep = None
            _raise(rc)
        if flag.value:
            self._keep = None
        return bool(flag.value)

    def __del__(self):
        if self._keep is not None:
            with _orphans_lock:
                _orphans.append(Request(self._h, self._keep))


def waitall(requests):
    """Wait for every request in `requests`; raise the first error after all have completed."""
    first = None
    for r in requests:
        try:
            r.wait()
        except Error as e:
            first = first or e
    if first is not None:
        raise first


def _sweep_orphans():
    with _orphans_lock:
        pending = list(_orphans)
        _orphans.clear()
    left = [r for r in pending if not _quiet_test(r)]
    if left:
        with _orphans_lock:
            _orphans.extend(left)


def _quiet_test(r):
    try:
        return r.test()
    except Error:
        return True   # failed: nobody holds it to report to; its communicator reports the error again


# ---- calls ------------------------------------------------------------------------

def _comm(comm):
    if comm is None:
        return MPI.COMM_WORLD
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f'comm: expected an mpi4py communicator, got {type(comm).__name__}')
    return comm


def _op(op):
    if not isinstance(op, MPI.Op):
        raise TypeError(f'op: expected an mpi4py MPI.Op (MPI.SUM, MPI.MAX, ...), got {type(op).__name__}')
    return MPI._handleof(op)


def _counts(values, what, n):
    values = [int(v) for v in values]
    if len(values) != n:
        raise ValueError(f'{what}: {len(values)} entries for a communicator of {n} ranks')
    return values


def _layout(b, counts, displs, what, n):
    """C arrays of counts and displacements (default: packed in rank order),
    after checking that every block lies within the array `b`."""
    if counts is None:
        raise ValueError(f'{what}counts: needed (one count per rank)')
    counts = _counts(counts, what + 'counts', n)
    if displs is None:
        displs, at = [], 0
        for c in counts:
            displs.append(at)
            at += c
    else:
        displs = _counts(displs, what + ' displs', n)
    for i, (c, d) in enumerate(zip(counts, displs)):
        if c < 0 or d < 0 or (c > 0 and d + c > b.count):
            raise ValueError(f'{what}: block {i} (count {c} at displacement {d}) does not lie within the '
                             f'{b.count} elements of the array')
    return (_lib.Count * n)(*counts), (_lib.Aint * n)(*displs)


def _same_dtype(send, recv, call):
    if send.dtype is not None and recv.dtype is not None and send.dtype != recv.dtype:
        raise ValueError(f'{call}: sendbuf is {send.dtype} and recvbuf {recv.dtype}; a reduction needs one dtype')


def _blocks(b, n, what):
    if b.count % n:
        raise ValueError(f'{what}: {b.count} elements do not divide into {n} equal blocks (one per rank)')
    return b.count // n


def _run(name, args, keep, nonblocking):
    if _orphans:
        _sweep_orphans()
    stream = _buffers.current_stream()
    if stream is not None:  # duct.on_stream: enqueued on the stream, blocking or not
        rc = _fn[_lib.stream_name(name)](*args, ctypes.c_void_p(stream))
        if rc:
            _raise(rc)
        return None
    if not nonblocking:
        rc = _fn[name](*args)
        if rc:
            _raise(rc)
        return None
    h = _lib.Request()
    rc = _fn['I' + name[0].lower() + name[1:]](*args, ctypes.byref(h))
    if rc:
        _raise(rc)
    return Request(h, keep)


def _reduce_bufs(call, sendbuf, recvbuf, in_place_allowed=True):
    if recvbuf is None and in_place_allowed and sendbuf is not MPI.IN_PLACE:
        return _IN_PLACE, _buf(sendbuf, call + ' sendbuf', writable=True)   # in place in sendbuf
    send = _buf(sendbuf, call + ' sendbuf')
    recv = _buf(recvbuf, call + ' recvbuf', writable=True)
    _same_dtype(send, recv, call)
    return send, recv


def _allreduce(sendbuf, recvbuf, op, comm, nb):
    comm = _comm(comm)
    send, recv = _reduce_bufs('allreduce', sendbuf, recvbuf)
    if recv is _NONE or recv is _IN_PLACE:
        raise ValueError('allreduce: recvbuf is needed (or pass the array as sendbuf alone, for in place)')
    if send is not _IN_PLACE and send.count != recv.count:
        raise ValueError(f'allreduce: sendbuf has {send.count} elements, recvbuf {recv.count}')
    return _run('Allreduce_c', (send.ptr, recv.ptr, recv.count, recv.datatype, _op(op), MPI._handleof(comm)),
                (send, recv), nb)


def _reduce(sendbuf, recvbuf, op, root, comm, nb):
    comm = _comm(comm)
    is_root = comm.Get_rank() == root and not comm.Is_inter()
    if is_root:
        send, recv = _reduce_bufs('reduce', sendbuf, recvbuf)
        count = recv.count
        if send is not _IN_PLACE and send.count != recv.count:
            raise ValueError(f'reduce: sendbuf has {send.count} elements, recvbuf {recv.count}')
    else:
        send, recv = _buf(sendbuf, 'reduce sendbuf'), _NONE
        count = send.count
    dtype = (recv if send is _IN_PLACE else send).datatype
    return _run('Reduce_c', (send.ptr, recv.ptr, count, dtype, _op(op), int(root), MPI._handleof(comm)),
                (send, recv), nb)


def _bcast(buffer, root, comm, nb):
    comm = _comm(comm)
    b = _buf(buffer, 'bcast buffer', writable=True)
    return _run('Bcast_c', (b.ptr, b.count, b.datatype, int(root), MPI._handleof(comm)), (b,), nb)


def _allgather(sendbuf, recvbuf, comm, nb):
    comm = _comm(comm)
    send, recv = _buf(sendbuf, 'allgather sendbuf'), _buf(recvbuf, 'allgather recvbuf', writable=True)
    rc = _blocks(recv, comm.Get_size(), 'allgather recvbuf')
    s = recv if send is _IN_PLACE else send
    return _run('Allgather_c', (send.ptr, s.count if s is send else 0, s.datatype, recv.ptr, rc, recv.datatype,
                                MPI._handleof(comm)), (send, recv), nb)


def _allgatherv(sendbuf, recvbuf, recvcounts, displs, comm, nb):
    comm = _comm(comm)
    send, recv = _buf(sendbuf, 'allgatherv sendbuf'), _buf(recvbuf, 'allgatherv recvbuf', writable=True)
    c, d = _layout(recv, recvcounts, displs, 'allgatherv recv', comm.Get_size())
    s = recv if send is _IN_PLACE else send
    return _run('Allgatherv_c', (send.ptr, s.count if s is send else 0, s.datatype, recv.ptr, c, d, recv.datatype,
                                 MPI._handleof(comm)), (send, recv, c, d), nb)


def _gather(sendbuf, recvbuf, root, comm, nb):
    comm = _comm(comm)
    send = _buf(sendbuf, 'gather sendbuf')
    if comm.Get_rank() == root:
        recv = _buf(recvbuf, 'gather recvbuf', writable=True)
        rc = _blocks(recv, comm.Get_size(), 'gather recvbuf')
    else:
        recv, rc = _NONE, 0
    s = recv if send is _IN_PLACE else send
    rt = recv.datatype if recv.dtype else s.datatype
    return _run('Gather_c', (send.ptr, s.count if s is send else 0, s.datatype, recv.ptr, rc, rt, int(root),
                             MPI._handleof(comm)), (send, recv), nb)


def _root_layout(comm, root, obj, counts, displs, what, writable):
    """The root-only array of gatherv/scatterv and its layout (none elsewhere)."""
    if comm.Get_rank() != root:
        return _NONE, None, None
    b = _buf(obj, what + 'buf', writable)
    c, d = _layout(b, counts, displs, what, comm.Get_size())
    return b, c, d


def _gatherv(sendbuf, recvbuf, recvcounts, displs, root, comm, nb):
    comm = _comm(comm)
    send = _buf(sendbuf, 'gatherv sendbuf')
    recv, c, d = _root_layout(comm, root, recvbuf, recvcounts, displs, 'gatherv recv', True)
    s = recv if send is _IN_PLACE else send
    rt = recv.datatype if recv.dtype else s.datatype
    return _run('Gatherv_c', (send.ptr, s.count if s is send else 0, s.datatype, recv.ptr, c, d, rt, int(root),
                              MPI._handleof(comm)), (send, recv, c, d), nb)


def _scatter(sendbuf, recvbuf, root, comm, nb):
    comm = _comm(comm)
    recv = _buf(recvbuf, 'scatter recvbuf', writable=True)
    if comm.Get_rank() == root:
        send = _buf(sendbuf, 'scatter sendbuf')
        sc = _blocks(send, comm.Get_size(), 'scatter sendbuf')
    else:
        send, sc = _NONE, 0
    r = send if recv is _IN_PLACE else recv
    st = send.datatype if send.dtype else r.datatype
    return _run('Scatter_c', (send.ptr, sc, st, recv.ptr, r.count if r is recv else 0, r.datatype, int(root),
                              MPI._handleof(comm)), (send, recv), nb)


def _scatterv(sendbuf, recvbuf, sendcounts, displs, root, comm, nb):
    comm = _comm(comm)
    recv = _buf(recvbuf, 'scatterv recvbuf', writable=True)
    send, c, d = _root_layout(comm, root, sendbuf, sendcounts, displs, 'scatterv send', False)
    r = send if recv is _IN_PLACE else recv
    st = send.datatype if send.dtype else r.datatype
    return _run('Scatterv_c', (send.ptr, c, d, st, recv.ptr, r.count if r is recv else 0, r.datatype, int(root),
                               MPI._handleof(comm)), (send, recv, c, d), nb)


def _alltoall(sendbuf, recvbuf, comm, nb):
    comm = _comm(comm)
    n = comm.Get_size()
    send, recv = _buf(sendbuf, 'alltoall sendbuf'), _buf(recvbuf, 'alltoall recvbuf', writable=True)
    rc = _blocks(recv, n, 'alltoall recvbuf')
    s = recv if send is _IN_PLACE else send
    sc = _blocks(s, n, 'alltoall sendbuf') if s is send else 0
    return _run('Alltoall_c', (send.ptr, sc, s.datatype, recv.ptr, rc, recv.datatype, MPI._handleof(comm)),
                (send, recv), nb)


def _alltoallv(sendbuf, recvbuf, sendcounts, recvcounts, sdispls, rdispls, comm, nb):
    comm = _comm(comm)
    n = comm.Get_size()
    send, recv = _buf(sendbuf, 'alltoallv sendbuf'), _buf(recvbuf, 'alltoallv recvbuf', writable=True)
    rc, rd = _layout(recv, recvcounts, rdispls, 'alltoallv recv', n)
    if send is _IN_PLACE:
        sc, sd, st = None, None, recv.datatype
    else:
        sc, sd = _layout(send, sendcounts, sdispls, 'alltoallv send', n)
        st = send.datatype
    return _run('Alltoallv_c', (send.ptr, sc, sd, st, recv.ptr, rc, rd, recv.datatype, MPI._handleof(comm)),
                (send, recv, sc, sd, rc, rd), nb)


def _reduce_scatter_block(sendbuf, recvbuf, op, comm, nb):
    comm = _comm(comm)
    n = comm.Get_size()
    send, recv = _reduce_bufs('reduce_scatter_block', sendbuf, recvbuf, in_place_allowed=False)
    if send is _IN_PLACE:
        count = _blocks(recv, n, 'reduce_scatter_block recvbuf (in place)')
    else:
        count = recv.count
        if send.count != n * count:
            raise ValueError(f'reduce_scatter_block: sendbuf has {send.count} elements; {n} ranks x {count} '
                             'elements of recvbuf are needed')
    return _run('Reduce_scatter_block_c', (send.ptr, recv.ptr, count, recv.datatype, _op(op), MPI._handleof(comm)),
                (send, recv), nb)


def _reduce_scatter(sendbuf, recvbuf, recvcounts, op, comm, nb):
    comm = _comm(comm)
    n = comm.Get_size()
    send, recv = _reduce_bufs('reduce_scatter', sendbuf, recvbuf, in_place_allowed=False)
    counts = _counts(recvcounts, 'reduce_scatter recvcounts', n)
    total = sum(counts)
    if any(c < 0 for c in counts):
        raise ValueError(f'reduce_scatter: negative recvcounts {counts}')
    if send is _IN_PLACE:
        if recv.count < total:
            raise ValueError(f'reduce_scatter: recvbuf (in place) has {recv.count} elements, recvcounts sum to {total}')
    elif send.count < total or recv.count < counts[comm.Get_rank()]:
        raise ValueError(f'reduce_scatter: sendbuf has {send.count} elements (recvcounts sum to {total}), '
                         f'recvbuf {recv.count} (this rank receives {counts[comm.Get_rank()]})')
    c = (_lib.Count * n)(*counts)
    return _run('Reduce_scatter_c', (send.ptr, recv.ptr, c, recv.datatype, _op(op), MPI._handleof(comm)),
                (send, recv, c), nb)


def _barrier(comm, nb):
    return _run('Barrier', (MPI._handleof(_comm(comm)),), (), nb)


# ---- the collectives --------------------------------------------------------------
#
# Each has MPI's semantics (MPI-4.0 chapter 6; the C function named in its
# docstring says more: include/duct/duct.h). Arguments: arrays as described
# at the top of this module; comm an mpi4py intracommunicator (default
# MPI.COMM_WORLD); op an mpi4py MPI.Op (default MPI.SUM); root a rank of
# comm. Counts and displacements are in elements of the array's dtype.
# Raises duct.Error subclasses (duct's checks, and failures while running),
# ValueError/TypeError for what the binding checks itself.

def allreduce(sendbuf, recvbuf=None, op=MPI.SUM, comm=None):
    """Combine `sendbuf` of every rank with `op` into `recvbuf` on every rank
    (DUCT_Allreduce). recvbuf: same dtype and element count as sendbuf; left
    out (or sendbuf=MPI.IN_PLACE), the result replaces sendbuf's (recvbuf's)
    contents. Recursive doubling for small arrays, ring reduce-scatter +
    allgather for large ones; every rank gets the same bits."""
    return _allreduce(sendbuf, recvbuf, op, comm, False)


def reduce(sendbuf, recvbuf=None, op=MPI.SUM, root=0, comm=None):
    """Combine `sendbuf` of every rank with `op` into `recvbuf` at `root`
    (DUCT_Reduce). recvbuf matters at the root only (same dtype and count as
    sendbuf); left out at the root (or sendbuf=MPI.IN_PLACE there), the
    result replaces the root's sendbuf."""
    return _reduce(sendbuf, recvbuf, op, root, comm, False)


def bcast(buffer, root=0, comm=None):
    """Copy `buffer` of `root` into `buffer` of every rank (DUCT_Bcast); the
    same number of bytes on every rank."""
    return _bcast(buffer, root, comm, False)


def allgather(sendbuf, recvbuf, comm=None):
    """Every rank's `sendbuf` (n elements), in rank order, into every rank's
    `recvbuf` (size * n elements) (DUCT_Allgather). sendbuf=MPI.IN_PLACE:
    this rank's block is already in place in recvbuf."""
    return _allgather(sendbuf, recvbuf, comm, False)


def allgatherv(sendbuf, recvbuf, recvcounts, displs=None, comm=None):
    """Allgather with `recvcounts[i]` elements from rank i placed at element
    `displs[i]` of `recvbuf` (default: packed in rank order)
    (DUCT_Allgatherv). sendbuf=MPI.IN_PLACE allowed."""
    return _allgatherv(sendbuf, recvbuf, recvcounts, displs, comm, False)


def gather(sendbuf, recvbuf=None, root=0, comm=None):
    """Every rank's `sendbuf` (n elements), in rank order, into `recvbuf`
    (size * n elements) at `root` (DUCT_Gather). recvbuf matters at the root
    only; sendbuf=MPI.IN_PLACE at the root: its block is already in place."""
    return _gather(sendbuf, recvbuf, root, comm, False)


def gatherv(sendbuf, recvbuf=None, recvcounts=None, displs=None, root=0, comm=None):
    """Gather with `recvcounts[i]` elements from rank i at element
    `displs[i]` of the root's `recvbuf` (default: packed in rank order)
    (DUCT_Gatherv). recvbuf, recvcounts and displs matter at the root only."""
    return _gatherv(sendbuf, recvbuf, recvcounts, displs, root, comm, False)


def scatter(sendbuf, recvbuf, root=0, comm=None):
    """Block i of the root's `sendbuf` (size * n elements) into `recvbuf`
    (n elements) of rank i (DUCT_Scatter). sendbuf matters at the root only;
    recvbuf=MPI.IN_PLACE at the root: its block stays in sendbuf."""
    return _scatter(sendbuf, recvbuf, root, comm, False)


def scatterv(sendbuf, recvbuf, sendcounts=None, displs=None, root=0, comm=None):
    """Scatter with `sendcounts[i]` elements at element `displs[i]` of the
    root's `sendbuf` for rank i (default: packed in rank order)
    (DUCT_Scatterv). sendbuf, sendcounts and displs matter at the root only."""
    return _scatterv(sendbuf, recvbuf, sendcounts, displs, root, comm, False)


def alltoall(sendbuf, recvbuf, comm=None):
    """Block j of every rank's `sendbuf` (size * n elements) to rank j, into
    block i of its `recvbuf` for sender i (DUCT_Alltoall).
    sendbuf=MPI.IN_PLACE: the data is taken from recvbuf and replaced."""
    return _alltoall(sendbuf, recvbuf, comm, False)


def alltoallv(sendbuf, recvbuf, sendcounts, recvcounts, sdispls=None, rdispls=None, comm=None):
    """Alltoall with per-peer counts and element displacements (default:
    packed in rank order) (DUCT_Alltoallv). sendbuf=MPI.IN_PLACE: the data
    is taken from recvbuf per recvcounts/rdispls (sendcounts ignored)."""
    return _alltoallv(sendbuf, recvbuf, sendcounts, recvcounts, sdispls, rdispls, comm, False)


def reduce_scatter_block(sendbuf, recvbuf, op=MPI.SUM, comm=None):
    """Reduce `sendbuf` (size * n elements) over all ranks with `op`; rank i
    gets block i in `recvbuf` (n elements) (DUCT_Reduce_scatter_block).
    sendbuf=MPI.IN_PLACE: the input is recvbuf (size * n elements), the
    result lands in its first n."""
    return _reduce_scatter_block(sendbuf, recvbuf, op, comm, False)


def reduce_scatter(sendbuf, recvbuf, recvcounts, op=MPI.SUM, comm=None):
    """Reduce `sendbuf` (sum(recvcounts) elements) over all ranks with `op`;
    rank i gets the recvcounts[i] elements of block i in `recvbuf`
    (DUCT_Reduce_scatter). sendbuf=MPI.IN_PLACE: the input is recvbuf."""
    return _reduce_scatter(sendbuf, recvbuf, recvcounts, op, comm, False)


def barrier(comm=None):
    """Return once every rank of `comm` has called it (DUCT_Barrier)."""
    return _barrier(comm, False)


# Nonblocking forms (MPI-3 nonblocking collectives, MPI-4.0 §6.12): the same
# arguments, started at once, returning a Request. Any number may be
# outstanding on a communicator; start them in the same order on every rank.

def iallreduce(sendbuf, recvbuf=None, op=MPI.SUM, comm=None):
    """Nonblocking allreduce(); returns a Request."""
    return _allreduce(sendbuf, recvbuf, op, comm, True)


def ireduce(sendbuf, recvbuf=None, op=MPI.SUM, root=0, comm=None):
    """Nonblocking reduce(); returns a Request."""
    return _reduce(sendbuf, recvbuf, op, root, comm, True)


def ibcast(buffer, root=0, comm=None):
    """Nonblocking bcast(); returns a Request."""
    return _bcast(buffer, root, comm, True)


def iallgather(sendbuf, recvbuf, comm=None):
    """Nonblocking allgather(); returns a Request."""
    return _allgather(sendbuf, recvbuf, comm, True)


def iallgatherv(sendbuf, recvbuf, recvcounts, displs=None, comm=None):
    """Nonblocking allgatherv(); returns a Request."""
    return _allgatherv(sendbuf, recvbuf, recvcounts, displs, comm, True)


def igather(sendbuf, recvbuf=None, root=0, comm=None):
    """Nonblocking gather(); returns a Request."""
    return _gather(sendbuf, recvbuf, root, comm, True)


def igatherv(sendbuf, recvbuf=None, recvcounts=None, displs=None, root=0, comm=None):
    """Nonblocking gatherv(); returns a Request."""
    return _gatherv(sendbuf, recvbuf, recvcounts, displs, root, comm, True)


def iscatter(sendbuf, recvbuf, root=0, comm=None):
    """Nonblocking scatter(); returns a Request."""
    return _scatter(sendbuf, recvbuf, root, comm, True)


def iscatterv(sendbuf, recvbuf, sendcounts=None, displs=None, root=0, comm=None):
    """Nonblocking scatterv(); returns a Request."""
    return _scatterv(sendbuf, recvbuf, sendcounts, displs, root, comm, True)


def ialltoall(sendbuf, recvbuf, comm=None):
    """Nonblocking alltoall(); returns a Request."""
    return _alltoall(sendbuf, recvbuf, comm, True)


def ialltoallv(sendbuf, recvbuf, sendcounts, recvcounts, sdispls=None, rdispls=None, comm=None):
    """Nonblocking alltoallv(); returns a Request."""
    return _alltoallv(sendbuf, recvbuf, sendcounts, recvcounts, sdispls, rdispls, comm, True)


def ireduce_scatter_block(sendbuf, recvbuf, op=MPI.SUM, comm=None):
    """Nonblocking reduce_scatter_block(); returns a Request."""
    return _reduce_scatter_block(sendbuf, recvbuf, op, comm, True)


def ireduce_scatter(sendbuf, recvbuf, recvcounts, op=MPI.SUM, comm=None):
    """Nonblocking reduce_scatter(); returns a Request."""
    return _reduce_scatter(sendbuf, recvbuf, recvcounts, op, comm, True)


def ibarrier(comm=None):
    """Nonblocking barrier(); returns a Request."""
    return _barrier(comm, True)


# ---- fault tolerance (DUCT_FT=1; include/duct/duct.h) ----------------------------

def _call(name, *args):
    rc = _fn[name](*args)
    if rc:
        _raise(rc)


def revoke(comm=None):
    """Revoke `comm` for every rank (DUCT_Comm_revoke): every pending and
    later duct call on it, on every survivor, raises duct.RevokedError."""
    _call('Comm_revoke', MPI._handleof(_comm(comm)))


def is_revoked(comm=None):
    """Whether `comm` is revoked as far as this rank knows (DUCT_Comm_is_revoked)."""
    flag = ctypes.c_int(0)
    _call('Comm_is_revoked', MPI._handleof(_comm(comm)), ctypes.byref(flag))
    return bool(flag.value)


def get_failed(comm=None):
    """The ranks of `comm` this process knows to have failed, in rank order
    (DUCT_Comm_get_failed; after agree() the agreed set on every survivor)."""
    comm = _comm(comm)
    group = MPI.Group()
    _call('Comm_get_failed', MPI._handleof(comm), MPI._addressof(group))
    if group == MPI.GROUP_EMPTY:
        return []
    whole = comm.Get_group()
    try:
        return sorted(MPI.Group.Translate_ranks(group, list(range(group.Get_size())), whole))
    finally:
        whole.Free()
        group.Free()


def agree(flag, comm=None):
    """Fault-tolerant agreement over the survivors of `comm`
    (DUCT_Comm_agree): the bitwise AND of every survivor's `flag` (an int),
    the same on every survivor. Collective over the survivors."""
    v = ctypes.c_int(int(flag))
    _call('Comm_agree', MPI._handleof(_comm(comm)), ctypes.byref(v))
    return v.value


def shrink(comm=None):
    """A new mpi4py communicator of the survivors of `comm`, in rank order,
    with duct set up on it (DUCT_Comm_shrink). Collective over the
    survivors; `comm` stays revoked (free it)."""
    comm = _comm(comm)
    new = MPI.Intracomm()
    _call('Comm_shrink', MPI._handleof(comm), MPI._addressof(new))
    return new
