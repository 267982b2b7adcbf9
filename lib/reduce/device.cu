// Device reduction kernels: dst = a (op) b, element-wise, on one stream.
//
// One grid-stride kernel per (storage type, op). When all three pointers are
// 16-byte aligned the body moves 16 bytes per load and store (uint4), which
// is what a memory-bound kernel needs to approach the GPU's bandwidth; the
// tail and unaligned buffers use the scalar loop. Instantiations are limited
// by ops::lower (signed types share the unsigned kernels except for min/max;
// complex sums are real sums): 80 per kernel family (64 for the real and
// integer types, 2 complex products, 14 MINLOC/MAXLOC pair kernels).
#include <cuda_runtime.h>

#include <cstdint>

#include "reduce/ops.hpp"
#include "reduce/reduce.hpp"

namespace duct::reduce {

namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 8192;

template <class S, RedOp Op>
__device__ __forceinline__ S one(S x, S y) {
  using C = ops::Compute<S>;
  return C::store(ops::apply<Op>(C::load(x), C::load(y)));
}

template <class S, RedOp Op>
__global__ void reduce_kernel(S* dst, const S* a, const S* b, size_t n, bool vec) {
  size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t done = 0;
  if (vec) {
    constexpr size_t V = sizeof(uint4) / sizeof(S);
    size_t nv = n / V;
    for (size_t i = tid; i < nv; i += stride) {
      uint4 va = reinterpret_cast<const uint4*>(a)[i];
      uint4 vb = reinterpret_cast<const uint4*>(b)[i];
      uint4 vd;
      const S* pa = reinterpret_cast<const S*>(&va);
      const S* pb = reinterpret_cast<const S*>(&vb);
      S* pd = reinterpret_cast<S*>(&vd);
#pragma unroll
      for (size_t k = 0; k < V; ++k) pd[k] = one<S, Op>(pa[k], pb[k]);
      reinterpret_cast<uint4*>(dst)[i] = vd;
    }
    done = nv * V;
  }
  for (size_t i = done + tid; i < n; i += stride) dst[i] = one<S, Op>(a[i], b[i]);
}

template <class S, RedOp Op>
cudaError_t launch(void* dst, const void* a, const void* b, size_t n, cudaStream_t stream) {
  auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
  bool vec = aligned(dst) && aligned(a) && aligned(b);
  size_t work = vec ? n / (sizeof(uint4) / sizeof(S)) + 1 : n;
  size_t blocks = (work + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  reduce_kernel<S, Op><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<S*>(dst), static_cast<const S*>(a), static_cast<const S*>(b), n, vec);
  return cudaGetLastError();
}

using Launcher = cudaError_t (*)(void*, const void*, const void*, size_t, cudaStream_t);

// The kernel of `Pick` for (element, op), or nullptr where duct has none.
// Signed integer kernels exist only for min/max (see canonical_elem).
// `e` is lowered (ops::lower); long double has no kernel (nvcc has none).
template <class Pick>
typename Pick::Fn find_kernel(Elem e, RedOp op) {
  using Fn = typename Pick::Fn;
  return ops::visit_elem(e, [op](auto t) -> Fn {
    using S = typename decltype(t)::type;
    return ops::visit_op(op, [](auto o) -> Fn {
      constexpr RedOp O = decltype(o)::value;
      constexpr bool signed_int = std::is_integral_v<S> && std::is_signed_v<S>;
      if constexpr (ops::implemented<S, O>() && !ops::host_only_storage<S>() &&
                    (!signed_int || O == RedOp::min || O == RedOp::max))
        return Pick::template get<S, O>();
      else
        return nullptr;
    });
  });
}

struct PickPairwise {
  using Fn = Launcher;
  template <class S, RedOp O>
  static Fn get() { return &launch<S, O>; }
};

// ---- the device engine's kernels ---------------------------------------------
//
// multi_kernel: each thread loads element i (16 bytes at a time when every
// pointer is aligned) from every source first, so the loads of all ranks are
// in flight together, then folds them left to right and stores the result
// to every destination. One pass over pN bytes read and pN written is the
// least an allreduce of p ranks can move (the memory-bound kernel of NCCL's
// one-shot/two-shot "LD...ST" symmetric kernels). Guarded unrolled loops
// keep the pointer arrays in parameter space (no local-memory copy).

constexpr int kEngineThreads = 512;

int sm_count() {
  static int n = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return 108;
    }
    return v;
  }();
  return n;
}

unsigned engine_blocks(size_t work_items, unsigned per_sm, unsigned max_blocks) {
  size_t blocks = (work_items + kEngineThreads - 1) / kEngineThreads;
  size_t cap = static_cast<size_t>(sm_count()) * per_sm;
  if (max_blocks > 0 && max_blocks < cap) cap = max_blocks;
  if (blocks > cap) blocks = cap;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

template <class S, RedOp Op>
__device__ __forceinline__ uint4 fold16(uint4 a, uint4 b) {
  constexpr int V = sizeof(uint4) / sizeof(S);
  uint4 r;
  const S* pa = reinterpret_cast<const S*>(&a);
  const S* pb = reinterpret_cast<const S*>(&b);
  S* pr = reinterpret_cast<S*>(&r);
#pragma unroll
  for (int k = 0; k < V; ++k) pr[k] = one<S, Op>(pa[k], pb[k]);
  return r;
}

template <class S, RedOp Op>
__device__ __forceinline__ void multi_body(const MultiReduce& m, bool vec, size_t tid, size_t stride) {
  size_t done = 0;
  if (vec) {
    constexpr size_t V = sizeof(uint4) / sizeof(S);
    const size_t nv = m.count / V;
    for (size_t i = tid; i < nv; i += stride) {
      uint4 v[kMaxPeers];
#pragma unroll
      for (int q = 0; q < kMaxPeers; ++q)
        if (q < m.nsrc) v[q] = reinterpret_cast<const uint4*>(m.src[q])[i];
      uint4 acc = v[0];
#pragma unroll
      for (int q = 1; q < kMaxPeers; ++q)
        if (q < m.nsrc) acc = fold16<S, Op>(acc, v[q]);
#pragma unroll
      for (int d = 0; d < kMaxPeers; ++d)
        if (d < m.ndst) reinterpret_cast<uint4*>(m.dst[d])[i] = acc;
    }
    done = nv * V;
  }
  for (size_t i = done + tid; i < m.count; i += stride) {
    S acc = static_cast<const S*>(m.src[0])[i];
#pragma unroll
    for (int q = 1; q < kMaxPeers; ++q)
      if (q < m.nsrc) acc = one<S, Op>(acc, static_cast<const S*>(m.src[q])[i]);
#pragma unroll
    for (int d = 0; d < kMaxPeers; ++d)
      if (d < m.ndst) static_cast<S*>(m.dst[d])[i] = acc;
  }
}

template <class S, RedOp Op>
__global__ void __launch_bounds__(kEngineThreads) multi_kernel(const MultiReduce m, bool vec) {
  if (m.skip && *reinterpret_cast<const volatile std::uint64_t*>(m.skip)) return;
  multi_body<S, Op>(m, vec, blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x,
                    static_cast<size_t>(gridDim.x) * blockDim.x);
}

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Reduce::Barrier's protocol at counter `at` (kArrive or kDepart), by every
// thread of one block. false: it failed (now or before): do nothing more.
__device__ bool barrier_body(const Barrier& b, int at) {
  __shared__ std::uint64_t epoch;
  __shared__ int stop;
  volatile std::uint64_t* skip = b.skip;
  __threadfence_system();  // every thread's earlier writes are visible before the counter says so
  __syncthreads();
  if (threadIdx.x == 0) {
    stop = *skip != 0;
    if (!stop) {
      volatile std::uint64_t* mine = b.word[b.me] + at;
      epoch = *mine + 1;
      *mine = epoch;
      __threadfence_system();
    }
  }
  __syncthreads();
  if (stop) return false;
  const std::uint64_t start = global_ns();
  for (int q = threadIdx.x; q < b.n; q += blockDim.x) {
    if (q == b.me) continue;
    const volatile std::uint64_t* w = b.word[q] + at;
    unsigned polls = 0;
    while (*w < epoch) {
      if ((++polls & 63u) == 0) {
        if (*skip) break;
        if (b.timeout_ns && global_ns() - start > b.timeout_ns) {
          *reinterpret_cast<volatile std::uint64_t*>(b.failed) = static_cast<std::uint64_t>(q) + 1;
          *skip = 1;
          __threadfence_system();
          break;
        }
      }
    }
  }
  __syncthreads();
  return *skip == 0;
}

__global__ void barrier_kernel(const Barrier b, int which) {
  if ((which & 1) && !barrier_body(b, kArrive)) return;
  if (which & 2) (void)barrier_body(b, kDepart);
}

template <class S, RedOp Op>
__global__ void __launch_bounds__(kEngineThreads) fenced_multi_kernel(const MultiReduce m, const Barrier b, bool vec) {
  if (!barrier_body(b, kArrive)) return;
  multi_body<S, Op>(m, vec, threadIdx.x, blockDim.x);
  (void)barrier_body(b, kDepart);
}

template <class S, RedOp Op>
cudaError_t launch_fenced(const MultiReduce& m, const Barrier& b, cudaStream_t stream) {
  bool vec = true;
  for (int q = 0; q < m.nsrc; ++q) vec = vec && (reinterpret_cast<uintptr_t>(m.src[q]) & 15u) == 0;
  for (int d = 0; d < m.ndst; ++d) vec = vec && (reinterpret_cast<uintptr_t>(m.dst[d]) & 15u) == 0;
  fenced_multi_kernel<S, Op><<<1, kEngineThreads, 0, stream>>>(m, b, vec);
  return cudaGetLastError();
}

struct PickFenced {
  using Fn = cudaError_t (*)(const MultiReduce&, const Barrier&, cudaStream_t);
  template <class S, RedOp O>
  static Fn get() { return &launch_fenced<S, O>; }
};

template <class S, RedOp Op>
cudaError_t launch_multi(const MultiReduce& m, cudaStream_t stream) {
  bool vec = true;
  for (int q = 0; q < m.nsrc; ++q) vec = vec && (reinterpret_cast<uintptr_t>(m.src[q]) & 15u) == 0;
  for (int d = 0; d < m.ndst; ++d) vec = vec && (reinterpret_cast<uintptr_t>(m.dst[d]) & 15u) == 0;
  const size_t work = vec ? m.count / (sizeof(uint4) / sizeof(S)) + 1 : m.count;
  multi_kernel<S, Op><<<engine_blocks(work, 4, m.max_blocks), kEngineThreads, 0, stream>>>(m, vec);
  return cudaGetLastError();
}

struct PickMulti {
  using Fn = cudaError_t (*)(const MultiReduce&, cudaStream_t);
  template <class S, RedOp O>
  static Fn get() { return &launch_multi<S, O>; }
};

// One block row (blockIdx.y) per copy; 16-byte moves where both ends are
// aligned, 4-byte or single-byte moves otherwise.
__global__ void __launch_bounds__(kEngineThreads) copy_kernel(const CopyList l) {
  const int e = blockIdx.y;
  if (l.skip && *reinterpret_cast<const volatile std::uint64_t*>(l.skip)) return;
  const char* s = static_cast<const char*>(l.src[e]);
  char* d = static_cast<char*>(l.dst[e]);
  const size_t n = l.bytes[e];
  const size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const uintptr_t mis = reinterpret_cast<uintptr_t>(s) | reinterpret_cast<uintptr_t>(d);
  size_t done = 0;
  if ((mis & 15u) == 0) {
    const size_t nv = n / 16;
    for (size_t i = tid; i < nv; i += stride) reinterpret_cast<uint4*>(d)[i] = reinterpret_cast<const uint4*>(s)[i];
    done = nv * 16;
  } else if ((mis & 3u) == 0) {
    const size_t nv = n / 4;
    for (size_t i = tid; i < nv; i += stride)
      reinterpret_cast<uint32_t*>(d)[i] = reinterpret_cast<const uint32_t*>(s)[i];
    done = nv * 4;
  }
  for (size_t i = done + tid; i < n; i += stride) d[i] = s[i];
}

}  // namespace

bool device_built() noexcept { return true; }

namespace {
// The launcher of `Pick` for m0's type and op, and m0 with its count as
// that kernel counts (ops::lower).
template <class Pick>
Status pick_multi(const MultiReduce& m0, Elem e, RedOp op, typename Pick::Fn* fn, MultiReduce* m) {
  if (m0.nsrc < 1 || m0.nsrc > kMaxPeers || m0.ndst > kMaxPeers)
    return make_error(Errc::internal, "engine reduction of %d sources into %d destinations", m0.nsrc, m0.ndst);
  const ops::Lowered low = ops::lower(e, op, m0.count);
  *fn = (e < Elem::count_ && op < RedOp::count_) ? find_kernel<Pick>(low.e, op) : nullptr;
  if (!*fn) return make_error(Errc::internal, "no device kernel for %s on %s", op_name(op), elem_name(e));
  *m = m0;
  m->count = low.count;
  return Status::ok();
}
}  // namespace

Status device_multi(const MultiReduce& m0, Elem e, RedOp op, void* stream) noexcept {
  if (m0.count == 0 || m0.ndst == 0) return Status::ok();
  PickMulti::Fn l = nullptr;
  MultiReduce m;
  DUCT_TRY(pick_multi<PickMulti>(m0, e, op, &l, &m));
  cudaError_t err = l(m, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess)
    return make_error(Errc::cuda, "launch of the engine's %s %s reduction of %d ranks (%zu elements) failed: %s",
                      elem_name(e), op_name(op), m.nsrc, m.count, cudaGetErrorString(err));
  return Status::ok();
}

Status device_copies(const CopyList& l, void* stream) noexcept {
  if (l.n < 0 || l.n > kMaxCopies) return make_error(Errc::internal, "engine copy list of %d entries", l.n);
  size_t most = 0;
  for (int i = 0; i < l.n; ++i) most = l.bytes[i] > most ? l.bytes[i] : most;
  if (most == 0) return Status::ok();
  unsigned x = engine_blocks((most + 15) / 16, 8, l.max_blocks);
  unsigned y = static_cast<unsigned>(l.n);
  // Keep the whole grid near 8 blocks per SM (or within max_blocks): more
  // rows, fewer blocks per row.
  unsigned cap = static_cast<unsigned>(sm_count()) * 8u;
  if (l.max_blocks > 0 && l.max_blocks < cap) cap = l.max_blocks;
  if (x * y > cap) x = cap / y > 0 ? cap / y : 1;
  copy_kernel<<<dim3(x, y), kEngineThreads, 0, static_cast<cudaStream_t>(stream)>>>(l);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return make_error(Errc::cuda, "launch of the engine's copy kernel (%d copies) failed: %s", l.n,
                      cudaGetErrorString(err));
  return Status::ok();
}

Status device_barrier(const Barrier& b, int which, void* stream) noexcept {
  if (b.n < 1 || b.n > kMaxPeers || b.me < 0 || b.me >= b.n || !b.failed || !b.skip || which < 1 || which > 3)
    return make_error(Errc::internal, "device barrier of %d ranks (rank %d)", b.n, b.me);
  barrier_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(b, which);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return make_error(Errc::cuda, "launch of the engine's device barrier failed: %s", cudaGetErrorString(err));
  return Status::ok();
}

Status device_multi_fenced(const MultiReduce& m0, const Barrier& b, Elem e, RedOp op, void* stream) noexcept {
  if (b.n < 1 || b.n > kMaxPeers || !b.failed || !b.skip)
    return make_error(Errc::internal, "device barrier of %d ranks (rank %d)", b.n, b.me);
  PickFenced::Fn l = nullptr;
  MultiReduce m;
  DUCT_TRY(pick_multi<PickFenced>(m0, e, op, &l, &m));
  cudaError_t err = l(m, b, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess)
    return make_error(Errc::cuda, "launch of the engine's fenced %s %s reduction of %d ranks (%zu elements) failed: %s",
                      elem_name(e), op_name(op), m.nsrc, m.count, cudaGetErrorString(err));
  return Status::ok();
}

Status device(void* dst, const void* a, const void* b, size_t count, Elem e, RedOp op,
              void* stream) noexcept {
  if (count == 0) return Status::ok();
  const ops::Lowered low = ops::lower(e, op, count);
  Launcher l = (e < Elem::count_ && op < RedOp::count_) ? find_kernel<PickPairwise>(low.e, op) : nullptr;
  if (!l)
    return make_error(Errc::internal, "no device kernel for %s on %s", op_name(op), elem_name(e));
  cudaError_t err = l(dst, a, b, low.count, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess)
    return make_error(Errc::cuda, "launch of the %s %s reduction kernel (%zu elements) failed: %s",
                      elem_name(e), op_name(op), count, cudaGetErrorString(err));
  return Status::ok();
}

}  // namespace duct::reduce
