"""The torch.distributed backend "duct" (registered by `import duct.torch`).

A torch.distributed.ProcessGroup written in Python (torch >= 1.13 lets a
backend be one), whose collectives are duct's nonblocking calls on an MPI
communicator: the default group runs on a duplicate of MPI.COMM_WORLD,
dist.new_group(ranks) on the MPI sub-communicator of those ranks. Every call
returns a Work whose wait(), is_completed() and get_future() behave as
torch documents; one thread per group waits for the calls in the order they
were started (duct's waits release the GIL) and completes their futures
with the list of output tensors (what DDP's reducer expects).

Tensors: CPU tensors, and CUDA tensors. Collectives on CUDA tensors are
stream-ordered (duct.on_stream, DUCT_<coll>_stream_c) on the tensor's
device's current stream, with torch's semantics: the call sees the work
queued on that stream before it, later work there sees its results, no
device-wide synchronization; wait() makes the caller's current stream wait
for it, and the future completes when the stream has passed it. (For now
the call itself waits on the host for that stream's earlier work and
completes the collective, unless DUCT_STREAM_ENGINE=1 lets the device
engine enqueue it: duct_stream.h.)
Errors after such a call (DUCT_TIMEOUT, a failed peer) are printed by duct
and returned by the next stream-ordered call. Non-contiguous tensors are copied into contiguous ones and
the results copied back when the call completes. Reductions: SUM, PRODUCT,
MIN, MAX, BAND, BOR, BXOR (duct's MPI ops), AVG (a sum, then a division,
for floating-point and complex dtypes); PREMUL_SUM is refused. send, recv
and recv from any source go to the MPI library (mpi4py's nonblocking
point-to-point), with torch's tag as the MPI tag.

Errors: arguments duct or this module refuse raise at the call (ValueError,
TypeError, RuntimeError, or duct's error classes); an error of a started
call (duct.TimeoutError under DUCT_TIMEOUT, duct.PeerFailedError, ...) is
raised by wait() and set on the future, its message naming the collective
and the rank.
"""

import queue
import threading
import weakref

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Work as _Work
from mpi4py import MPI

import duct

_R = dist.ReduceOp
_OPS = [(_R.SUM, MPI.SUM), (_R.PRODUCT, MPI.PROD), (_R.MIN, MPI.MIN), (_R.MAX, MPI.MAX),
        (_R.BAND, MPI.BAND), (_R.BOR, MPI.BOR), (_R.BXOR, MPI.BXOR)]


# bool tensors reduce as uint8 (0/1): the logical result of each op.
_BOOL_OPS = [(_R.SUM, MPI.MAX), (_R.MAX, MPI.MAX), (_R.BOR, MPI.MAX), (_R.PRODUCT, MPI.MIN), (_R.MIN, MPI.MIN),
             (_R.BAND, MPI.MIN), (_R.BXOR, MPI.BXOR)]


def _as_reducible(t):
    """The tensor duct reduces for t: bool as uint8 (same bytes)."""
    return t.view(torch.uint8) if t.dtype == torch.bool else t


def _mpi_op(op, dtype, call):
    """(MPI op, divide-after) for a torch ReduceOp on `dtype`. bool: SUM,
    MAX, BOR are a logical or, PRODUCT, MIN, BAND a logical and, BXOR an
    exclusive or (on the 0/1 bytes)."""
    if dtype == torch.bool:
        for t, m in _BOOL_OPS:
            if op == t:
                return m, False
    if op == _R.AVG:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise ValueError(f'{call}: ReduceOp.AVG needs a floating-point or complex tensor, got {dtype} '
                             '(as in torch\'s own backends)')
        return MPI.SUM, True
    for t, m in _OPS:
        if op == t:
            return m, False
    raise ValueError(f'{call}: the duct backend does not support {op} (PREMUL_SUM); SUM, PRODUCT, MIN, MAX, BAND, '
                     'BOR, BXOR and AVG are supported')


def _one(tensors, call):
    if isinstance(tensors, torch.Tensor):  # DDP passes a bare tensor where torch's C++ API takes a list
        return tensors
    if len(tensors) != 1:
        raise ValueError(f'{call}: the duct backend takes one tensor per call (one device per process), '
                         f'got {len(tensors)}')
    return tensors[0]


class _Staged:
    """A tensor duct can use: the tensor itself when contiguous, else a
    contiguous copy (copied in now when `read`, copied back at completion
    when `write`)."""

    __slots__ = ('orig', 't', 'write')

    def __init__(self, t, read=True, write=False):
        self.orig, self.write = t, write
        if t.is_contiguous():
            self.t = t
        else:
            self.t = t.contiguous() if read else torch.empty_like(t, memory_format=torch.contiguous_format)

    def finish(self):
        if self.write and self.t is not self.orig:
            self.orig.copy_(self.t)


class DuctWork(_Work):
    """The Work of one call of the duct backend. wait() blocks until the call
    has completed and its results are in the output tensors, and raises the
    call's error; is_completed() and get_future() as torch documents (the
    future's value is the list of output tensors)."""

    def __init__(self, outcome, call, rank):
        super().__init__()
        self._outcome = outcome
        self._future = outcome.future
        self._call = call
        self._rank = rank
        self._source = -1
        self._event = None   # the CUDA event after a stream-ordered call

    def wait(self, timeout=None):
        if self._event is not None:
            # A stream-ordered call (CUDA tensors): as torch's NCCL works, the
            # current stream waits for it; the host does not.
            torch.cuda.current_stream().wait_event(self._event)
            return True
        self._future.wait()
        if self._outcome.error is not None:
            raise _annotate(self._outcome.error, self._call, self._rank) from None
        return True

    def is_completed(self):
        return self._future.done()

    def is_success(self):
        if not self._future.done():
            raise RuntimeError(f'{self._call}: is_success() before the call completed')
        return self._outcome.error is None

    def exception(self):
        return self._outcome.error

    def get_future(self):
        return self._outcome.visible

    def result(self):
        """The output tensors (after wait()), as torch's own works give them."""
        self.wait()
        return self._future.value()

    def _source_rank(self):
        return self._source

    def source_rank(self):
        return self._source


class _Outcome:
    """The future of a started call, in two faces. `future` completes with
    the call's value, or with None when it failed (`error` then holds the
    exception). `visible` (what get_future() and DDP's comm hooks hand out)
    completes with the same value, or fails with an error that C++ sees:
    DDP's reducer reads futures in C++, where an exception given to
    torch.futures.Future.set_exception() is only a value (the reducer then
    crashed on it, torch 1.13); a then() callback that raises fails its
    future in C++ too, so the reducer's wait raises and backward() with it."""

    def __init__(self, device=None):
        self.future = torch.futures.Future(devices=[device]) if device is not None else torch.futures.Future()
        self.error = None
        self.visible = self.future.then(self._value)

    def _value(self, fut):
        if self.error is not None:
            raise self.error
        return fut.value()

    def fail(self, e):
        self.error = e
        self.future.set_result(None)


def _annotate(e, call, rank):
    """The error of a started call, its message prefixed with the collective
    and the rank; the exception keeps its class (duct.TimeoutError, ...)."""
    prefix = f'{call} (duct backend, rank {rank}): '
    if isinstance(e, duct.Error):
        if not e.message.startswith(prefix):
            e.message = prefix + e.message
    elif e.args and isinstance(e.args[0], str) and not e.args[0].startswith(prefix):
        e.args = (prefix + e.args[0],) + e.args[1:]
    return e


class _Completer:
    """One thread per group: waits for started calls in order and completes
    their futures. Waiting releases the GIL (duct.Request.wait and mpi4py's
    Wait both do)."""

    def __init__(self, name):
        self._todo = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, wait, outcome, finish):
        self._todo.put((wait, outcome, finish))

    def close(self):
        if self._thread is not None:
            self._todo.put(None)
            self._thread.join()
            self._thread = None

    def _run(self):
        while True:
            job = self._todo.get()
            if job is None:
                return
            wait, outcome, finish = job
            try:
                wait()
                value = finish()
            except BaseException as e:  # noqa: BLE001 -- handed to whoever waits on the work
                outcome.fail(e)
            else:
                outcome.future.set_result(value)


_groups = weakref.WeakSet()


def _close_all():
    for g in list(_groups):
        try:
            g.close()
        except Exception:  # noqa: BLE001 -- at exit, nothing left to report to
            pass


class ProcessGroupDuct(dist.ProcessGroup):
    """torch.distributed's process group on an MPI communicator, through
    duct. Made by torch (dist.init_process_group("duct"), dist.new_group(...,
    backend="duct")) through the creator that `import duct.torch` registers;
    `comm` is this group's own communicator (a duplicate or a
    sub-communicator), freed by close()."""

    def __init__(self, comm, rank, size):
        super().__init__(rank, size)
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise RuntimeError('the duct backend needs MPI_THREAD_MULTIPLE (mpi4py.rc.thread_level = "multiple", '
                               "mpi4py's default, before importing mpi4py.MPI)")
        self.comm = comm
        self._rank, self._size = rank, size
        self._done = _Completer(f'duct-pg-{comm.Get_name()}')
        self._lock = threading.Lock()  # calls start in one order on every rank's thread
        _groups.add(self)

    def getBackendName(self):
        return 'duct'

    def name(self):
        return 'duct'

    def close(self):
        """Wait for the calls started, stop the thread and free the communicator."""
        self._done.close()
        if self.comm != MPI.COMM_NULL and not MPI.Is_finalized():
            self.comm.Free()
        self.comm = MPI.COMM_NULL

    # ---- plumbing ----------------------------------------------------------------

    def _work(self, call, start, outputs, staged=(), after=None, dev=None):
        """Start a call (start() returns a duct.Request, an mpi4py Request, or
        None when stream-ordered) and return its Work; at completion the
        staged copies go back, then after() runs, and the future gets
        `outputs`. `dev`: the tensor every rank passes (input or output)
        that decides the mode: a CUDA tensor makes the call stream-ordered
        on its device's current stream (torch's semantics: it sees the work
        queued there before it, and work queued after it sees its results);
        the copies back and after() are then queued on that stream too, and
        the future completes when an event recorded after them has passed."""
        first = outputs[0] if outputs else None
        while isinstance(first, list):  # list forms: [[tensor, ...]]
            first = first[0] if first else None
        outcome = _Outcome(first.device if first is not None and first.is_cuda else None)
        work = DuctWork(outcome, call, self._rank)

        def finish():
            for s in staged:
                s.finish()
            if after is not None:
                after()
            return outputs

        if dev is not None and dev.is_cuda:
            stream = torch.cuda.current_stream(dev.device)
            with self._lock, duct.on_stream(stream):
                start()
            with torch.cuda.device(dev.device), torch.cuda.stream(stream):
                finish()                   # torch ops, queued on the same stream
            event = torch.cuda.Event()
            event.record(stream)
            work._event = event
            keep = (staged, start, after)  # staging buffers and flat copies, alive until the stream passes

            def done(keep=keep):
                return outputs
            self._done.submit(event.synchronize, outcome, done)
            return work

        with self._lock:
            req = start()

        def wait():
            if isinstance(req, MPI.Request):
                status = MPI.Status()
                req.Wait(status)
                work._source = status.Get_source()
            elif req is not None:
                req.wait()

        self._done.submit(wait, outcome, finish)
        return work

    def _check_root(self, root, call):
        if not 0 <= root < self._size:
            raise ValueError(f'{call}: root {root} is not a rank of this group (0..{self._size - 1})')

    # ---- collectives -----------------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        opts = opts or dist.AllreduceOptions()
        t = _one(tensors, 'allreduce')
        op, avg = _mpi_op(opts.reduceOp, t.dtype, 'allreduce')
        s = _Staged(t, read=True, write=True)
        after = (lambda: s.orig.div_(self._size)) if avg else None
        tensors = [t]
        return self._work('allreduce', lambda: duct.iallreduce(_as_reducible(s.t), op=op, comm=self.comm), tensors,
                          [s], after, dev=t)

    def allreduce_coalesced(self, tensors, opts=None):
        works = [self.allreduce([t], opts) for t in tensors]
        return self._after_all('allreduce_coalesced', works, tensors)

    def _after_all(self, call, works, outputs):
        outcome = _Outcome()
        work = DuctWork(outcome, call, self._rank)

        def wait():
            for w in works:
                w.wait()
        self._done.submit(wait, outcome, lambda: outputs)
        return work

    def broadcast(self, tensors, opts=None):
        opts = opts or dist.BroadcastOptions()
        t = _one(tensors, 'broadcast')
        self._check_root(opts.rootRank, 'broadcast')
        s = _Staged(t, read=self._rank == opts.rootRank, write=True)
        return self._work('broadcast', lambda: duct.ibcast(s.t, root=opts.rootRank, comm=self.comm), [t], [s], dev=t)

    def reduce(self, tensors, opts=None):
        opts = opts or dist.ReduceOptions()
        t = _one(tensors, 'reduce')
        self._check_root(opts.rootRank, 'reduce')
        op, avg = _mpi_op(opts.reduceOp, t.dtype, 'reduce')
        root = self._rank == opts.rootRank
        # torch's reduce leaves the result in the root's tensor (in place there).
        s = _Staged(t, read=True, write=root)
        after = (lambda: s.orig.div_(self._size)) if avg and root else None
        return self._work('reduce', lambda: duct.ireduce(_as_reducible(s.t), op=op, root=opts.rootRank,
                                                          comm=self.comm), [t], [s], after, dev=t)

    def _allgather_base(self, output, input, opts=None):
        if output.numel() != input.numel() * self._size:
            raise ValueError(f'all_gather_into_tensor: the output has {output.numel()} elements, expected '
                             f'{self._size} x {input.numel()}')
        if output.dtype != input.dtype:
            raise ValueError(f'all_gather_into_tensor: input is {input.dtype}, output {output.dtype}')
        si, so = _Staged(input), _Staged(output, read=False, write=True)
        return self._work('all_gather_into_tensor', lambda: duct.iallgather(si.t, so.t.view(-1), comm=self.comm),
                          [output], [so], dev=input)

    def allgather(self, output_tensors, input_tensors, opts=None):
        inp = _one(input_tensors, 'all_gather')
        outs = _one(output_tensors, 'all_gather')
        if len(outs) != self._size:
            raise ValueError(f'all_gather: tensor_list has {len(outs)} tensors for a group of {self._size} ranks')
        for i, o in enumerate(outs):
            if o.numel() != inp.numel() or o.dtype != inp.dtype:
                raise ValueError(f'all_gather: tensor_list[{i}] is {o.dtype}, {o.numel()} elements; the input is '
                                 f'{inp.dtype}, {inp.numel()} elements')
        si = _Staged(inp)
        flat = torch.empty((self._size * inp.numel(),), dtype=inp.dtype, device=inp.device)

        def after():
            for i, o in enumerate(outs):
                o.copy_(flat[i * inp.numel():(i + 1) * inp.numel()].view_as(o))
        return self._work('all_gather', lambda: duct.iallgather(si.t, flat, comm=self.comm), [outs], (), after,
                          dev=inp)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        works = [self.allgather([o], [i]) for o, i in zip(output_lists, input_list)]
        return self._after_all('allgather_coalesced', works, output_lists)

    def _reduce_scatter_base(self, output, input, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        if input.numel() != output.numel() * self._size:
            raise ValueError(f'reduce_scatter_tensor: the input has {input.numel()} elements, expected '
                             f'{self._size} x {output.numel()}')
        if output.dtype != input.dtype:
            raise ValueError(f'reduce_scatter_tensor: input is {input.dtype}, output {output.dtype}')
        op, avg = _mpi_op(opts.reduceOp, output.dtype, 'reduce_scatter_tensor')
        si, so = _Staged(input), _Staged(output, read=False, write=True)
        after = (lambda: output.div_(self._size)) if avg else None
        return self._work('reduce_scatter_tensor',
                          lambda: duct.ireduce_scatter_block(_as_reducible(si.t.view(-1)), _as_reducible(so.t), op=op,
                                                             comm=self.comm),
                          [output], [so], after, dev=output)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        out = _one(output_tensors, 'reduce_scatter')
        ins = _one(input_tensors, 'reduce_scatter')
        if len(ins) != self._size:
            raise ValueError(f'reduce_scatter: input_list has {len(ins)} tensors for a group of {self._size} ranks')
        for i, x in enumerate(ins):
            if x.dtype != out.dtype:
                raise ValueError(f'reduce_scatter: input_list[{i}] is {x.dtype}, the output {out.dtype}')
        if ins[self._rank].numel() != out.numel():
            raise ValueError(f'reduce_scatter: input_list[{self._rank}] has {ins[self._rank].numel()} elements, '
                             f'the output {out.numel()}')
        op, avg = _mpi_op(opts.reduceOp, out.dtype, 'reduce_scatter')
        flat = torch.cat([x.reshape(-1) for x in ins])
        counts = [x.numel() for x in ins]
        so = _Staged(out, read=False, write=True)
        after = (lambda: out.div_(self._size)) if avg else None
        return self._work('reduce_scatter',
                          lambda: duct.ireduce_scatter(_as_reducible(flat), _as_reducible(so.t), counts, op=op,
                                                       comm=self.comm),
                          [out], [so], after, dev=out)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        n = self._size
        if output.dtype != input.dtype:
            raise ValueError(f'all_to_all_single: input is {input.dtype}, output {output.dtype}')
        row_in = input[0].numel() if input.dim() > 0 and input.shape[0] else 1
        row_out = output[0].numel() if output.dim() > 0 and output.shape[0] else 1
        si, so = _Staged(input), _Staged(output, read=False, write=True)
        if not output_split_sizes and not input_split_sizes:
            if input.numel() % n or output.numel() % n:
                raise ValueError(f'all_to_all_single: {input.numel()} input and {output.numel()} output elements do '
                                 f'not split evenly over {n} ranks (give split sizes)')
            start = lambda: duct.ialltoall(si.t.view(-1), so.t.view(-1), comm=self.comm)  # noqa: E731
        else:
            ins = list(input_split_sizes) or [input.shape[0] // n] * n
            outs = list(output_split_sizes) or [output.shape[0] // n] * n
            if len(ins) != n or len(outs) != n:
                raise ValueError(f'all_to_all_single: split sizes of {len(ins)} and {len(outs)} entries for a group '
                                 f'of {n} ranks')
            if sum(ins) != (input.shape[0] if input.dim() else 1) or sum(outs) != (output.shape[0] if output.dim() else 1):
                raise ValueError(f'all_to_all_single: split sizes {ins} / {outs} do not add up to the first '
                                 f'dimensions {tuple(input.shape)} / {tuple(output.shape)}')
            sc, rc = [k * row_in for k in ins], [k * row_out for k in outs]
            start = lambda: duct.ialltoallv(si.t.view(-1), so.t.view(-1), sc, rc, comm=self.comm)  # noqa: E731
        return self._work('all_to_all_single', start, [output], [so], dev=input)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        n = self._size
        if len(output_tensors) != n or len(input_tensors) != n:
            raise ValueError(f'all_to_all: {len(input_tensors)} input and {len(output_tensors)} output tensors for a '
                             f'group of {n} ranks')
        dtype = input_tensors[0].dtype
        for x in list(input_tensors) + list(output_tensors):
            if x.dtype != dtype:
                raise ValueError(f'all_to_all: tensors of {dtype} and {x.dtype} in one call')
        flat_in = torch.cat([x.reshape(-1) for x in input_tensors])
        flat_out = torch.empty((sum(x.numel() for x in output_tensors),), dtype=dtype, device=flat_in.device)
        sc, rc = [x.numel() for x in input_tensors], [x.numel() for x in output_tensors]

        def after():
            at = 0
            for o in output_tensors:
                o.copy_(flat_out[at:at + o.numel()].view_as(o))
                at += o.numel()
        return self._work('all_to_all', lambda: duct.ialltoallv(flat_in, flat_out, sc, rc, comm=self.comm),
                          list(output_tensors), (), after, dev=flat_in)

    def gather(self, output_tensors, input_tensors, opts=None):
        opts = opts or dist.GatherOptions()
        inp = _one(input_tensors, 'gather')
        self._check_root(opts.rootRank, 'gather')
        si = _Staged(inp)
        if self._rank != opts.rootRank:
            return self._work('gather', lambda: duct.igather(si.t, None, root=opts.rootRank, comm=self.comm), [],
                              dev=inp)
        outs = _one(output_tensors, 'gather')
        if len(outs) != self._size:
            raise ValueError(f'gather: gather_list has {len(outs)} tensors for a group of {self._size} ranks')
        flat = torch.empty((self._size * inp.numel(),), dtype=inp.dtype, device=inp.device)

        def after():
            for i, o in enumerate(outs):
                o.copy_(flat[i * inp.numel():(i + 1) * inp.numel()].view_as(o))
        return self._work('gather', lambda: duct.igather(si.t, flat, root=opts.rootRank, comm=self.comm), [outs],
                          (), after, dev=inp)

    def scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts or dist.ScatterOptions()
        out = _one(output_tensors, 'scatter')
        self._check_root(opts.rootRank, 'scatter')
        so = _Staged(out, read=False, write=True)
        if self._rank != opts.rootRank:
            return self._work('scatter', lambda: duct.iscatter(None, so.t, root=opts.rootRank, comm=self.comm),
                              [out], [so], dev=out)
        ins = _one(input_tensors, 'scatter')
        if len(ins) != self._size:
            raise ValueError(f'scatter: scatter_list has {len(ins)} tensors for a group of {self._size} ranks')
        flat = torch.cat([x.reshape(-1) for x in ins])
        return self._work('scatter', lambda: duct.iscatter(flat, so.t, root=opts.rootRank, comm=self.comm), [out],
                          [so], dev=out)

    def barrier(self, opts=None):
        return self._work('barrier', lambda: duct.ibarrier(comm=self.comm), [])

    # ---- point to point (the MPI library) ------------------------------------------

    # CUDA tensors go through host memory: the MPI library may not be
    # CUDA-aware (Debian's is not).
    def send(self, tensors, dst, tag=0):
        t = _one(tensors, 'send')
        self._peer(dst, 'send')
        s = t.contiguous().cpu() if t.is_cuda or not t.is_contiguous() else t
        return self._work('send', lambda: self.comm.Isend(_mpi4py_buffer(s), dest=dst, tag=tag), [t])

    def recv(self, tensors, src, tag=0):
        t = _one(tensors, 'recv')
        self._peer(src, 'recv')
        return self._recv(t, src, tag)

    def recv_anysource(self, tensors, tag=0):
        return self._recv(_one(tensors, 'recv'), MPI.ANY_SOURCE, tag)

    def _recv(self, t, src, tag):
        host = t if not t.is_cuda and t.is_contiguous() else torch.empty(t.shape, dtype=t.dtype)
        after = (lambda: t.copy_(host)) if host is not t else None
        return self._work('recv', lambda: self.comm.Irecv(_mpi4py_buffer(host), source=src, tag=tag), [t], (), after)

    def _peer(self, peer, call):
        if not 0 <= peer < self._size:
            raise ValueError(f'{call}: peer {peer} is not a rank of this group (0..{self._size - 1})')


def _mpi4py_buffer(t):
    """An mpi4py buffer specification for a contiguous CPU tensor: its bytes
    (a ctypes array over its memory, which has the buffer protocol) as
    MPI.BYTE."""
    import ctypes
    nbytes = t.numel() * t.element_size()
    return [(ctypes.c_char * nbytes).from_address(t.data_ptr()) if nbytes else bytearray(0), nbytes, MPI.BYTE]


# The MPI communicator of the default group's ranks: MPI.COMM_WORLD, or
# after duct.torch.shrink_process_group() the survivors' communicator.
_base = MPI.COMM_WORLD


def create(opts, pg_options=None):
    """The creator torch calls for backend "duct" (extended API: the group's
    ranks in the default group, which runs on MPI.COMM_WORLD, or on the
    survivors' communicator after duct.torch.shrink_process_group())."""
    world = _base
    ranks = list(opts.global_ranks_in_group) if opts.global_ranks_in_group else list(range(world.Get_size()))
    if opts.group_size != len(ranks):
        raise RuntimeError(f'duct backend: a group of {opts.group_size} ranks with {len(ranks)} ranks listed')
    if len(ranks) == world.Get_size() and ranks == sorted(ranks):
        if opts.group_rank != world.Get_rank():
            raise RuntimeError(f'duct backend: torch rank {opts.group_rank} is MPI rank {world.Get_rank()}; the '
                               'default group must number the ranks as MPI.COMM_WORLD (or the survivors\' '
                               'communicator) does (leave rank and '
                               'world_size to duct: they come from MPI)')
        comm = world.Dup()
    else:
        group = world.Get_group().Incl(ranks)
        comm = world.Create_group(group, tag=4242)
        group.Free()
        if comm == MPI.COMM_NULL or comm.Get_rank() != opts.group_rank:
            raise RuntimeError(f'duct backend: this process (MPI rank {world.Get_rank()}) is not rank '
                               f'{opts.group_rank} of the MPI group of ranks {ranks}')
    comm.Set_name(f'duct-pg-{opts.group_id}')
    return ProcessGroupDuct(comm, opts.group_rank, opts.group_size)
