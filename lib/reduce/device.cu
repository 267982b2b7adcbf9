// Device reduction kernels: dst = a (op) b, element-wise, on one stream.
//
// One grid-stride kernel per (storage type, op). When all three pointers are
// 16-byte aligned the body moves 16 bytes per load and store (uint4), which
// is what a memory-bound kernel needs to approach the GPU's bandwidth; the
// tail and unaligned buffers use the scalar loop. Instantiations are limited
// by ops::canonical_elem (signed types share the unsigned kernels except for
// min/max): 64 kernels in all.
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

Launcher find(Elem e, RedOp op) {
  return ops::visit_elem(ops::canonical_elem(e, op), [op](auto t) -> Launcher {
    using S = typename decltype(t)::type;
    return ops::visit_op(op, [](auto o) -> Launcher {
      constexpr RedOp O = decltype(o)::value;
      // Signed integer kernels exist only for min/max (see canonical_elem).
      constexpr bool signed_int = std::is_integral_v<S> && std::is_signed_v<S>;
      if constexpr (ops::implemented<S, O>() && (!signed_int || O == RedOp::min || O == RedOp::max))
        return &launch<S, O>;
      else
        return nullptr;
    });
  });
}

}  // namespace

bool device_built() noexcept { return true; }

Status device(void* dst, const void* a, const void* b, size_t count, Elem e, RedOp op,
              void* stream) noexcept {
  if (count == 0) return Status::ok();
  Launcher l = (e < Elem::count_ && op < RedOp::count_) ? find(e, op) : nullptr;
  if (!l)
    return make_error(Errc::internal, "no device kernel for %s on %s", op_name(op), elem_name(e));
  cudaError_t err = l(dst, a, b, count, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess)
    return make_error(Errc::cuda, "launch of the %s %s reduction kernel (%zu elements) failed: %s",
                      elem_name(e), op_name(op), count, cudaGetErrorString(err));
  return Status::ok();
}

}  // namespace duct::reduce
