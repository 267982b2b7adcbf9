"""PyTorch data-parallel training through duct: DDP communication hooks.

    import duct.torch
    duct.torch.init_process_group()        # the process group DDP needs, from the MPI job
    model = DistributedDataParallel(model)
    model.register_comm_hook(duct.torch.DuctState(), duct.torch.allreduce_hook)

DDP calls a hook for each gradient bucket as soon as the bucket is ready,
during the backward pass. duct's hooks start a nonblocking allreduce
(duct.iallreduce) of the bucket there and return a torch.futures.Future; one
thread per DuctState waits on the allreduces in order (with the GIL
released) and completes the futures, so the buckets are reduced while the
backward pass computes the earlier layers. DDP waits for the futures at the
end of the backward pass. Buckets may be CPU or CUDA tensors.

The hooks need MPI_THREAD_MULTIPLE (mpi4py's default thread level): the
allreduces are started by autograd's thread and completed by the hook's.
"""

import atexit
import os
import queue
import socket
import threading

import torch
import torch.distributed as dist
from mpi4py import MPI

import duct


def init_process_group(backend='gloo', comm=None, master_addr=None, timeout=None):
    """Initialize torch.distributed for an MPI job (mpirun, srun): rank and
    world size from `comm` (default MPI.COMM_WORLD), and a TCP rendezvous
    at rank 0's host on a free port, sent to the other ranks with MPI (no
    MASTER_ADDR/MASTER_PORT needed; when both are set they are used).
    DDP needs a process group for its start-up broadcast; with duct's hook
    it carries no gradients. master_addr: the address the other ranks reach
    rank 0 at (default: rank 0's host name, as it resolves there). Collective
    over `comm`."""
    comm = comm or MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if os.environ.get('MASTER_ADDR') and os.environ.get('MASTER_PORT'):
        url = 'env://'
    else:
        url = None
        if rank == 0:
            with socket.socket() as s:
                s.bind(('', 0))
                port = s.getsockname()[1]
            host = master_addr or ('127.0.0.1' if size == 1 else socket.gethostname())
            url = f'tcp://{host}:{port}'
        url = comm.bcast(url, root=0)
    kwargs = {} if timeout is None else {'timeout': timeout}
    dist.init_process_group(backend, init_method=url, rank=rank, world_size=size, **kwargs)


class DuctState:
    """The state of duct's DDP hooks (the `state` of register_comm_hook).

    comm: the ranks that train together (an mpi4py intracommunicator,
    default MPI.COMM_WORLD); the state works on a duplicate of it, so the
    hooks' collectives never interleave with the program's own. Making a
    DuctState is collective over comm. close() stops its thread (also done
    at exit)."""

    def __init__(self, comm=None):
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise RuntimeError('duct.torch needs MPI_THREAD_MULTIPLE (mpi4py.rc.thread_level = "multiple", '
                               "mpi4py's default, before importing mpi4py.MPI)")
        self.comm = (comm or MPI.COMM_WORLD).Dup()
        self.size = self.comm.Get_size()
        self._todo = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._complete_in_order, name='duct-ddp-hook', daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def close(self):
        """Wait for the allreduces started and stop the thread."""
        if self._thread is not None:
            self._todo.put(None)
            self._thread.join()
            self._thread = None

    def submit(self, request, result, finish=None):
        """A Future that the state's thread completes with finish() (default:
        `result`) once `request` (a duct.Request) has completed."""
        fut = torch.futures.Future(devices=[result.device]) if result.is_cuda else torch.futures.Future()
        self._todo.put((request, fut, finish or (lambda: result)))
        return fut

    def _complete_in_order(self):
        while True:
            job = self._todo.get()
            if job is None:
                return
            request, fut, finish = job
            try:
                request.wait()
                fut.set_result(finish())
            except BaseException as e:  # noqa: BLE001 -- handed to the waiting backward pass
                fut.set_exception(e)


def allreduce_hook(state, bucket):
    """DDP's default gradient averaging, through duct: the bucket is divided
    by the number of ranks and summed with duct.iallreduce (as PyTorch's own
    allreduce_hook and the built-in reducer do). bucket: torch.distributed
    GradBucket (CPU or CUDA, any float dtype duct reduces)."""
    grads = bucket.buffer()
    grads.div_(state.size)
    return state.submit(duct.iallreduce(grads, comm=state.comm), grads)


def _compress_hook(state, bucket, dtype):
    grads = bucket.buffer()
    compressed = grads.to(dtype).div_(state.size)
    request = duct.iallreduce(compressed, comm=state.comm)

    def decompress():
        grads.copy_(compressed)
        return grads
    return state.submit(request, grads, decompress)


def fp16_compress_hook(state, bucket):
    """allreduce_hook on gradients cast to float16 (half the bytes), cast
    back when done: PyTorch's fp16_compress_hook, through duct."""
    return _compress_hook(state, bucket, torch.float16)


def bfloat16_compress_hook(state, bucket):
    """allreduce_hook on gradients cast to bfloat16: PyTorch's
    bf16_compress_hook, through duct, without NCCL. (Also reachable as
    bf16_compress_hook; its function name differs because DDP refuses any
    hook function named bf16_compress_hook unless NCCL is there.)"""
    return _compress_hook(state, bucket, torch.bfloat16)


bf16_compress_hook = bfloat16_compress_hook
