"""Data-parallel training through duct: a small network on scikit-learn's
digits (8x8 images, bundled with scikit-learn: no download), one shard of
every batch per rank, gradients averaged through duct: DDP on the
torch.distributed backend "duct" (default), or, with --hook, DDP on gloo
with duct's communication hook.

    mpirun -np 4 python3 examples/ddp_digits.py [--epochs N] [--check] [--hook]

(PYTHONPATH=build/python from a build tree; Debian's /usr/bin/python3 has
python3-torch, python3-mpi4py and python3-sklearn.) Each epoch prints the
loss over the whole training set and the held-out accuracy. --check also
trains the same network in one process on the whole batches (rank 0, no
communication) and verifies that: every rank ends with bit-identical
parameters; the loss of every epoch matches the one-process run within
floating-point tolerance; held-out accuracy is at least 90%. Exits 1 if not.
"""

import argparse
import sys

import torch
from mpi4py import MPI
from sklearn.datasets import load_digits
from torch.nn.parallel import DistributedDataParallel as DDP

import duct.torch

GLOBAL_BATCH = 240   # divisible by 1, 2, 3, 4, 5, 6, 8 ranks
TRAIN = 1440         # of the 1797 images; the other 357 are held out


def network():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def data():
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    return (x[:TRAIN], y[:TRAIN]), (x[TRAIN:], y[TRAIN:])


def batches(epoch):
    """The global batches of one epoch: the same on every rank."""
    order = torch.randperm(TRAIN, generator=torch.Generator().manual_seed(1000 + epoch))
    return [order[i:i + GLOBAL_BATCH] for i in range(0, TRAIN, GLOBAL_BATCH)]


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def train(model, train_set, epochs, rank, size, comm=None):
    """Mini-batch SGD; each rank takes its 1/size of every global batch.
    Returns the training loss of every epoch (mean over the whole batch)."""
    x, y = train_set
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    share = GLOBAL_BATCH // size
    losses = []
    for epoch in range(epochs):
        total = 0.0
        for batch in batches(epoch):
            mine = batch[rank * share:(rank + 1) * share]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[mine]), y[mine])
            loss.backward()
            opt.step()
            total += loss.item()
        steps = len(batches(epoch))
        losses.append(comm.allreduce(total) / size / steps if comm else total / steps)
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--check', action='store_true', help='compare with a one-process run; exit 1 on a mismatch')
    parser.add_argument('--hook', action='store_true', help="DDP on gloo with duct's hook, not on the duct backend")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if GLOBAL_BATCH % size:
        sys.exit(f'ddp_digits: {size} ranks do not divide the global batch of {GLOBAL_BATCH}')
    torch.set_num_threads(1)
    train_set, test_set = data()

    if not args.hook:
        # The two lines a DDP script changes for duct: `import duct.torch`
        # (above), and the backend's name.
        torch.distributed.init_process_group('duct')
        model = DDP(network())
    else:
        duct.torch.init_process_group()   # gloo, from the MPI job
        model = DDP(network())
        model.register_comm_hook(duct.torch.DuctState(), duct.torch.allreduce_hook)

    losses = train(model, train_set, args.epochs, rank, size, comm)
    acc = accuracy(model, *test_set)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    identical = comm.allreduce(int(torch.equal(flat, torch.from_numpy(comm.bcast(flat.numpy(), root=0)))), MPI.MIN)

    ok = True
    if rank == 0:
        ref = train(network(), train_set, args.epochs, 0, 1) if args.check else None
        print(f'{size} ranks, {args.epochs} epochs, global batch {GLOBAL_BATCH} ({GLOBAL_BATCH // size} per rank), '
              f'gradients through duct {duct.__version__} ({"hook on gloo" if args.hook else "backend duct"})')
        print('epoch  loss (duct, {} ranks)'.format(size) + ('  loss (1 process)  rel. diff' if ref else ''))
        worst = 0.0
        for e, loss in enumerate(losses):
            line = f'{e + 1:5d}  {loss:.6f}'
            if ref:
                rel = abs(loss - ref[e]) / abs(ref[e])
                worst = max(worst, rel)
                line += f'             {ref[e]:.6f}           {rel:.1e}'
            print(line)
        print(f'held-out accuracy: {acc:.4f} ({len(test_set[1])} images)')
        print(f'identical parameters on every rank: {"yes" if identical else "NO"}')
        if args.check:
            print(f'largest relative loss difference from one process: {worst:.1e} (allowed 1e-4)')
            ok = identical and acc >= 0.90 and worst <= 1e-4
            print('check:', 'passed' if ok else 'FAILED')
    ok = comm.bcast(ok, root=0)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
