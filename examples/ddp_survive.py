"""Data-parallel training that loses a node and finishes: the network and data
of ddp_digits.py, DDP on the torch.distributed backend "duct" under
DUCT_FT=1; at a random step every rank of one node kills itself (SIGKILL),
the survivors' step fails (duct.PeerFailedError / duct.RevokedError raised
by DDP's backward), they rebuild the process group on themselves
(duct.torch.shrink_process_group), make DDP again and redo the step with the
global batch split over fewer ranks. A failure is reported per rank, as in
MPI's fault-tolerance chapter: the step that failed on one survivor may have
completed on another (its allreduce's result arrived before the failure was
found), so the survivors first agree to go on from the one that is furthest,
with its parameters and optimizer state (resync).

    duct-run --ft -np 4 python3 examples/ddp_survive.py [--epochs N] [--kill-step S] [--check]

(PYTHONPATH=build/python from a build tree; Debian's /usr/bin/python3.)
The victims are the ranks of the last node (MPI_COMM_TYPE_SHARED), or, on a
single node, the upper half of the ranks (as if they were a second node).
Rank 0 of the survivors prints the step that failed, how long the recovery
took (from the failed step's error to the new DDP model), the loss of every
epoch and the held-out accuracy; --check exits 1 unless the accuracy is at
least 90% (ddp_digits.py's target) and the survivors' parameters are
bit-identical.
"""

import argparse
import os
import signal
import sys
import time

import torch
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import duct
import duct.torch
from ddp_digits import GLOBAL_BATCH, accuracy, batches, data, network


def victims(world):
    """The ranks that die: those of the last node, or on one node the upper half."""
    node = world.Split_type(MPI.COMM_TYPE_SHARED)
    leader = node.allreduce(world.Get_rank(), MPI.MIN)   # a node is named by its lowest rank
    node.Free()
    leaders = world.allgather(leader)
    size = world.Get_size()
    if len(set(leaders)) > 1:
        return [r for r, lead in enumerate(leaders) if lead == max(leaders)]
    return list(range(size - size // 2, size))


def resync(net, opt, step):
    """After a shrink: the survivors go on from the one furthest ahead (the
    highest step; its parameters and optimizer state to every survivor).
    True when this rank's failed step had completed there (skip it)."""
    survivors = duct.torch.world()
    steps = survivors.allgather(step)
    root = steps.index(max(steps))
    mine = (net.state_dict(), opt.state_dict()) if survivors.Get_rank() == root else None
    params, optim = survivors.bcast(mine, root=root)
    net.load_state_dict(params)
    opt.load_state_dict(optim)
    if len(set(steps)) > 1 and survivors.Get_rank() == 0:
        print(f'the survivors failed at steps {steps}: going on from step {steps[root] + 1}', flush=True)
    return step < steps[root]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--kill-step', type=int, default=-1, help='the step at which the node dies (default: random)')
    parser.add_argument('--check', action='store_true', help='exit 1 unless accuracy >= 90%% and parameters agree')
    args = parser.parse_args()
    if os.environ.get('DUCT_FT') != '1':
        sys.exit('ddp_survive: run it with DUCT_FT=1 (duct-run --ft)')
    world = MPI.COMM_WORLD
    torch.set_num_threads(1)
    steps_per_epoch = len(batches(0))
    total_steps = args.epochs * steps_per_epoch
    doomed = victims(world)
    kill_step = args.kill_step
    if kill_step < 0:
        kill_step = world.bcast(int.from_bytes(os.urandom(2), 'little') % (total_steps // 2) + 2, root=0)
    if world.Get_size() - len(doomed) < 1 or GLOBAL_BATCH % (world.Get_size() - len(doomed)):
        sys.exit(f'ddp_survive: {world.Get_size() - len(doomed)} survivors do not divide the global batch')
    train_set, test_set = data()
    x, y = train_set

    torch.distributed.init_process_group('duct')
    net = network()
    model = DDP(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)
    rank, size = torch.distributed.get_rank(), torch.distributed.get_world_size()
    me = world.Get_rank()
    failed_at, recovery = None, None
    losses = []
    step = 0
    for epoch in range(args.epochs):
        total = 0.0
        for batch in batches(epoch):
            if step == kill_step and me in doomed:
                os.kill(os.getpid(), signal.SIGKILL)
            done_elsewhere = False
            while True:
                share = GLOBAL_BATCH // size
                mine = batch[rank * share:(rank + 1) * share]
                try:
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(model(x[mine]), y[mine])
                    loss.backward()
                    break
                except (duct.Error, RuntimeError) as e:
                    t0 = time.perf_counter()
                    failed_at = (step, type(e).__name__, str(e).splitlines()[0][:160])
                    duct.torch.shrink_process_group()
                    rank, size = torch.distributed.get_rank(), torch.distributed.get_world_size()
                    done_elsewhere = resync(net, opt, step)
                    model = DDP(net)
                    recovery = time.perf_counter() - t0
                    if done_elsewhere:
                        break
            if not done_elsewhere:
                opt.step()
                total += loss.item()
            step += 1
        losses.append(total / steps_per_epoch)

    survivors = duct.torch.world()
    acc = accuracy(net, *test_set)
    flat = torch.cat([p.detach().flatten() for p in net.parameters()])
    identical = survivors.allreduce(int(torch.equal(flat, torch.from_numpy(survivors.bcast(flat.numpy(), root=0)))),
                                    MPI.MIN)
    ok = True
    if rank == 0:
        print(f'{world.Get_size()} ranks, ranks {doomed} killed at step {kill_step} of {total_steps}; '
              f'{size} survivors finished')
        if failed_at:
            print(f'step {failed_at[0]} failed on rank 0 of the survivors with {failed_at[1]}: {failed_at[2]}')
            print(f'recovery (shrink, new process group, resync, new DDP): {recovery:.3f} s')
        else:
            print('no failure seen')
        for e, loss in enumerate(losses):
            print(f'epoch {e + 1:3d}  loss {loss:.6f}')
        print(f'held-out accuracy: {acc:.4f} ({len(test_set[1])} images)')
        print(f'identical parameters on every survivor: {"yes" if identical else "NO"}')
        if args.check:
            ok = bool(identical) and acc >= 0.90 and failed_at is not None and size == world.Get_size() - len(doomed)
            print('check:', 'passed' if ok else 'FAILED')
    ok = survivors.bcast(ok, root=0)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
