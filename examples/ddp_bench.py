"""DDP step time on the torch.distributed backend "duct", and with duct's
communication hook, beside DDP on gloo (or --backend), in one run.

    mpirun -np 4 python3 examples/ddp_bench.py [--device cpu|cuda] [--steps 10] [--setups gloo,duct,hook]

Set-ups (--setups): "gloo" DDP on a --backend group with PyTorch's default
averaging; "duct" DDP on the default group, backend "duct", no hook (what
`init_process_group("duct")` gives a script); "hook" DDP on the --backend
group with duct's allreduce_hook.

A multi-layer perceptron with about 25 M parameters (--width, --layers),
synthetic data, DDP buckets of --bucket-mb MB (PyTorch's default, 25). The
two set-ups train side by side, alternating step by step (same machine
state for both). For each it prints the median over the timed steps of:
  step      forward + backward + optimizer step, ms
  backward  backward pass with gradient communication, ms
  compute   backward pass without communication (DDP's no_sync()), ms
  waited    backward - compute: how long the backward pass waited for
            the gradients' allreduce, ms
With --device cuda every rank uses GPU (local rank % device count).
"""

import argparse
import contextlib
import statistics
import time

import torch
import torch.distributed as dist
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import duct.torch


def network(width, layers, device):
    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    mods.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*mods).to(device)


def sync(device):
    if device == 'cuda':
        torch.cuda.synchronize()


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    p.add_argument('--backend', default='gloo', help='the other process group (gloo, nccl)')
    p.add_argument('--setups', default='gloo,duct,hook', help='which set-ups to time, in order (gloo, duct, hook)')
    p.add_argument('--width', type=int, default=2048)
    p.add_argument('--layers', type=int, default=6)
    p.add_argument('--batch', type=int, default=32, help='samples per rank per step')
    p.add_argument('--bucket-mb', type=float, default=25.0)
    p.add_argument('--steps', type=int, default=10)
    p.add_argument('--warmup', type=int, default=2)
    p.add_argument('--threads', type=int, default=1, help='torch CPU threads per rank')
    args = p.parse_args()

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    torch.set_num_threads(args.threads)
    device = args.device
    if device == 'cuda':
        local = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
        torch.cuda.set_device(local % torch.cuda.device_count())
    dist.init_process_group('duct')                 # rank, size, rendezvous: from MPI
    other = dist.new_group(backend=args.backend)     # the same ranks on the other backend

    setups = {}
    names = args.setups.split(',')
    for name in names:
        if name not in ('gloo', 'duct', 'hook'):
            p.error(f'--setups: unknown set-up {name!r}')
        m = DDP(network(args.width, args.layers, device), bucket_cap_mb=args.bucket_mb,
                process_group=None if name == 'duct' else other)
        if name == 'hook':
            m.register_comm_hook(duct.torch.DuctState(), duct.torch.allreduce_hook)
        setups[name] = (m, torch.optim.SGD(m.parameters(), lr=1e-4, momentum=0.9))
    nparams = sum(p.numel() for p in setups[names[0]][0].parameters())
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.width, generator=gen).to(device)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)

    times = {name: {'step': [], 'backward': [], 'compute': []} for name in setups}
    for step in range(args.warmup + args.steps):
        for name, (m, opt) in setups.items():
            for comm_on in (True, False):
                opt.zero_grad(set_to_none=False)
                comm.Barrier()
                sync(device)
                t0 = time.perf_counter()
                with contextlib.nullcontext() if comm_on else m.no_sync():
                    loss = torch.nn.functional.cross_entropy(m(x), y)
                    sync(device)
                    t1 = time.perf_counter()
                    loss.backward()
                    sync(device)
                    t2 = time.perf_counter()
                if comm_on:
                    opt.step()
                    sync(device)
                    t3 = time.perf_counter()
                if step >= args.warmup:
                    if comm_on:
                        times[name]['step'].append(t3 - t0)
                        times[name]['backward'].append(t2 - t1)
                    else:
                        times[name]['compute'].append(t2 - t1)

    # The slowest rank's median sets the pace.
    if rank == 0:
        print(f'{size} ranks, {device}, {nparams / 1e6:.1f} M parameters ({nparams * 4 / 2**20:.0f} MiB of fp32 '
              f'gradients), buckets of {args.bucket_mb:g} MB, batch {args.batch} per rank, '
              f'{args.steps} timed steps, median of each rank, slowest rank shown')
        print(f'{"set-up":<26} {"step ms":>9} {"backward ms":>12} {"compute ms":>11} {"waited ms":>10}')
    for name in setups:
        med = {k: statistics.median(v) * 1e3 for k, v in times[name].items()}
        med = {k: comm.allreduce(v, MPI.MAX) for k, v in med.items()}
        label = {'gloo': f'DDP on {args.backend}', 'duct': f'DDP on duct {duct.__version__}',
                 'hook': f'{args.backend} + duct hook'}[name]
        if rank == 0:
            print(f'{label:<26} {med["step"]:9.1f} {med["backward"]:12.1f} {med["compute"]:11.1f} '
                  f'{max(med["backward"] - med["compute"], 0.0):10.1f}', flush=True)


if __name__ == '__main__':
    main()
