"""PyTorch through duct: the torch.distributed backend "duct", and DDP
communication hooks.

    import duct.torch                       # registers the backend "duct"
    dist.init_process_group("duct")         # under mpirun or srun: nothing else to set
    model = DistributedDataParallel(model)  # every torch.distributed collective goes through duct

The backend (duct/_torch_backend.py, ProcessGroupDuct) runs the default
group on a duplicate of MPI.COMM_WORLD and dist.new_group(ranks) on the MPI
sub-communicator of those ranks; groups of other backends (gloo) work
beside it. Rank and world size come from MPI. When MASTER_ADDR and
MASTER_PORT are unset, importing duct.torch sets them (rank 0's host and a
free port there, sent to every rank with MPI) together with RANK and
WORLD_SIZE, so torch's default env:// rendezvous works: the import is then
collective over MPI.COMM_WORLD (import it on every rank). Set the four
variables yourself to keep them.

The hooks, for a DDP whose process group is another backend's:

    duct.torch.init_process_group()        # gloo, from the MPI job
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
import socket

import torch
import torch.distributed as dist
from mpi4py import MPI

import duct
from ._torch_backend import _Completer, _Outcome


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
    if os.environ.get('MASTER_ADDR') and os.environ.get('MASTER_PORT') and not _ENV_FROM_MPI:
        url = 'env://'   # the user's own rendezvous
    else:
        url = 'tcp://%s:%s' % _tcp_rendezvous(comm, master_addr)
    kwargs = {} if timeout is None else {'timeout': timeout}
    dist.init_process_group(backend, init_method=url, rank=rank, world_size=size, **kwargs)


def world():
    """The MPI communicator (mpi4py) of the default process group's ranks:
    MPI.COMM_WORLD, or the survivors' after shrink_process_group()."""
    from . import _torch_backend
    return _torch_backend._base


def shrink_process_group(timeout=None):
    """Go on after ranks failed: the default process group (backend "duct")
    is rebuilt on the survivors and returned.

    Under DUCT_FT=1 (launched with duct-run --ft), a collective of the
    default group that finds a dead rank fails (duct.PeerFailedError or
    duct.TimeoutError from work.wait(), which DDP raises from backward())
    and revokes the group's communicator, so that every other survivor's
    calls fail too (duct.RevokedError) instead of hanging. Every survivor
    then calls this (collective over the survivors): duct.shrink() makes the
    survivors' communicator, the old group is destroyed, and a new default
    group of the survivors is made on it, in rank order (new ranks and
    world size: dist.get_rank(), dist.get_world_size()), with a new TCP
    rendezvous at its rank 0. Make the DDP model again on it (DDP
    broadcasts rank 0's parameters) and re-shard the data. Process groups
    made with dist.new_group() on the old group are gone too."""
    from . import _torch_backend
    pg = dist.distributed_c10d._get_default_group()
    if not isinstance(pg, _torch_backend.ProcessGroupDuct):
        raise RuntimeError('shrink_process_group: the default process group is not duct\'s '
                           '(dist.init_process_group("duct"))')
    survivors = duct.shrink(pg.comm)
    dist.destroy_process_group()
    pg.close()
    _torch_backend._base = survivors
    url = 'tcp://%s:%s' % _tcp_rendezvous(survivors)
    kwargs = {} if timeout is None else {'timeout': timeout}
    dist.init_process_group('duct', init_method=url, rank=survivors.Get_rank(), world_size=survivors.Get_size(),
                            **kwargs)
    return dist.distributed_c10d._get_default_group()


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
        self._done = _Completer('duct-ddp-hook')
        atexit.register(self.close)

    def close(self):
        """Wait for the allreduces started and stop the thread."""
        self._done.close()

    def submit(self, request, result, finish=None):
        """A Future that the state's thread completes with finish() (default:
        `result`) once `request` (a duct.Request) has completed."""
        outcome = _Outcome(result.device if result.is_cuda else None)
        self._done.submit(request.wait, outcome, finish or (lambda: result))
        return outcome.visible


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


# ---- the backend -------------------------------------------------------------

def _ipv4_addresses():
    """This host's IPv4 addresses other than loopback, in interface order."""
    import fcntl
    import struct
    out = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack('256s', name[:15].encode()))  # SIOCGIFADDR
            except OSError:
                continue
            addr = socket.inet_ntoa(packed[20:24])
            if not addr.startswith('127.'):
                out.append(addr)
    return out


def _resolves(host):
    try:
        socket.getaddrinfo(host, None)
        return True
    except OSError:
        return False


def _tcp_rendezvous(comm, master_addr=None):
    """(host, port) of a TCP rendezvous at `comm`'s rank 0: a free port there,
    sent to every rank with MPI (collective over comm). host: master_addr, or
    rank 0's host name (127.0.0.1 for one rank) where this rank resolves it,
    else rank 0's first IPv4 address that is not loopback (nodes whose
    names do not resolve on each other, as network namespaces)."""
    offer = None
    if comm.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(('', 0))
            port = s.getsockname()[1]
        host = master_addr or ('127.0.0.1' if comm.Get_size() == 1 else socket.gethostname())
        offer = (host, str(port), [] if master_addr else _ipv4_addresses())
    host, port, addrs = comm.bcast(offer, root=0)
    if not _resolves(host) and addrs:
        host = addrs[0]
    return host, port


_ENV_FROM_MPI = False   # whether the import set MASTER_ADDR/MASTER_PORT (then not the user's)


def _rendezvous_from_mpi():
    """RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the MPI job, where
    MASTER_ADDR/MASTER_PORT are unset (collective over MPI.COMM_WORLD then)."""
    global _ENV_FROM_MPI
    world = MPI.COMM_WORLD
    if not (os.environ.get('MASTER_ADDR') and os.environ.get('MASTER_PORT')):
        os.environ['MASTER_ADDR'], os.environ['MASTER_PORT'] = _tcp_rendezvous(world)
        os.environ.setdefault('RANK', str(world.Get_rank()))
        os.environ.setdefault('WORLD_SIZE', str(world.Get_size()))
        _ENV_FROM_MPI = True


def _register():
    from . import _torch_backend
    if 'DUCT' not in dist.Backend._plugins:
        dist.Backend.register_backend('duct', _torch_backend.create, extended_api=True)
    atexit.register(_torch_backend._close_all)


_register()
_rendezvous_from_mpi()
from ._torch_backend import ProcessGroupDuct, DuctWork  # noqa: E402,F401  (for isinstance checks)
