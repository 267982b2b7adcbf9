#include <cuda_runtime.h>

#include "stream_kernels.hpp"

namespace duct::test::gpu {
namespace {

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// duct::test::stream_value, on the device.
__device__ float dvalue(int rank, size_t i, int salt) {
  return static_cast<float>(salt * 7 + rank * 1000 + static_cast<int>(i % 97));
}

__global__ void fill_late_k(float* p, size_t n, int rank, int salt, unsigned spin_us) {
  if (spin_us) {
    const unsigned long long until = now_ns() + 1000ull * spin_us;
    while (now_ns() < until) {
    }
  }
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = dvalue(rank, i, salt);
}

__global__ void fill_counter_k(float* p, size_t n, int rank, const int* counter) {
  const int salt = *counter;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = dvalue(rank, i, salt);
}

__global__ void record_k(float* history, const float* src, size_t n, const int* counter) {
  float* row = history + static_cast<size_t>(*counter) * n;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    row[i] = src[i];
}

__global__ void bump_k(int* counter) { ++*counter; }

unsigned blocks(size_t n) {
  size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

}  // namespace

void fill_late(float* p, std::size_t n, int rank, int salt, unsigned spin_us, void* stream) {
  fill_late_k<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(p, n, rank, salt, spin_us);
}

void fill_from_counter(float* p, std::size_t n, int rank, const int* counter, void* stream) {
  fill_counter_k<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(p, n, rank, counter);
}

void record_and_bump(float* history, const float* src, std::size_t n, int* counter, void* stream) {
  record_k<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(history, src, n, counter);
  bump_k<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(counter);
}

}  // namespace duct::test::gpu
