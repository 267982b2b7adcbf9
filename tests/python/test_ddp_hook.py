"""duct.torch's DDP hooks against PyTorch's own (gloo), 20 training steps
with several gradient buckets: allreduce_hook against DDP's built-in
averaging, fp16/bf16_compress_hook against PyTorch's fp16/bf16 hooks. At 2
ranks the parameters must be bit-identical (a + b is one rounding either
way); at more ranks the summation order differs, so they must agree to a
tolerance, and be bit-identical on every rank. CUDA tensors too when a GPU
is usable. Run under mpirun (any size >= 1).
"""

import sys

import torch
import torch.distributed as dist
import torch.distributed.algorithms.ddp_comm_hooks.default_hooks as torch_hooks
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import duct
import duct.torch

world = MPI.COMM_WORLD
me, n = world.Get_rank(), world.Get_size()
torch.set_num_threads(1)
duct.torch.init_process_group()
failures = []


def model(device):
    torch.manual_seed(1)
    # 1.1 MB of parameters: more than DDP's first bucket (1 MB) holds
    return torch.nn.Sequential(torch.nn.Linear(32, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 10)).to(device)


def train(device, register):
    m = DDP(model(device), device_ids=None, bucket_cap_mb=0.25)  # several buckets per step
    register(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator().manual_seed(100 + me)
    for _ in range(20):
        x = torch.randn(16, 32, generator=gen).to(device)
        y = torch.randint(0, 10, (16,), generator=gen).to(device)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    return torch.cat([p.detach().flatten().cpu() for p in m.parameters()])


def same_on_every_rank(what, flat):
    ref = world.bcast(flat.numpy(), root=0)
    if not torch.equal(flat, torch.from_numpy(ref)):
        failures.append(f'rank {me}: {what}: parameters differ from rank 0\'s')


class Counting(duct.torch.DuctState):
    """A DuctState that counts the buckets its hook handled."""
    buckets = 0

    def submit(self, *args, **kw):
        self.buckets += 1
        return super().submit(*args, **kw)


def case(device, name, duct_hook, torch_hook, rtol, exact=True):
    state = Counting()
    got = train(device, lambda m: m.register_comm_hook(state, duct_hook))
    want = train(device, (lambda m: m.register_comm_hook(None, torch_hook)) if torch_hook else (lambda m: None))
    state.close()
    what = f'{name} ({device}, {n} ranks)'
    if state.buckets <= 20:
        failures.append(f'rank {me}: {what}: the hook handled {state.buckets} buckets in 20 steps (expected more)')
    same_on_every_rank(what, got)
    if exact and n <= 2:
        if not torch.equal(got, want):
            d = (got - want).abs().max().item()
            failures.append(f'rank {me}: {what}: parameters differ from PyTorch\'s hook (max |diff| {d:g})')
    elif not torch.allclose(got, want, rtol=rtol, atol=rtol * 0.1):
        d = (got - want).abs().max().item()
        failures.append(f'rank {me}: {what}: parameters differ from PyTorch\'s hook by {d:g} (rtol {rtol})')
    if me == 0:
        print(f'{what}: {state.buckets} buckets through duct; max |duct - torch| = '
              f'{(got - want).abs().max().item():g}', flush=True)


devices = ['cpu']
if torch.cuda.is_available() and duct.cuda_support():
    torch.cuda.set_device(me % torch.cuda.device_count())
    devices.append('cuda')
elif me == 0:
    print('no usable GPU: the CUDA tensor cases were skipped', flush=True)
for device in devices:
    case(device, 'allreduce_hook', duct.torch.allreduce_hook, None, 1e-5)
    case(device, 'fp16_compress_hook', duct.torch.fp16_compress_hook, torch_hooks.fp16_compress_hook, 1e-2)
    # PyTorch's bf16 hook needs NCCL (CUDA): elsewhere duct's is compared
    # with full-precision averaging, to bfloat16's precision.
    if device == 'cuda' and dist.is_nccl_available():
        case(device, 'bf16_compress_hook', duct.torch.bf16_compress_hook, torch_hooks.bf16_compress_hook, 5e-2)
    else:
        case(device, 'bf16_compress_hook vs fp32', duct.torch.bf16_compress_hook, None, 5e-2, exact=False)

total = world.allreduce(len(failures))
for f in failures:
    print('FAIL', f, flush=True)
dist.destroy_process_group()
sys.exit(1 if total else 0)
