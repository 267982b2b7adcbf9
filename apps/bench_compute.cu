// The GPU kernel of bench_compute.hpp: one thread block spins on the
// global timer for the requested time (the GPU's own clock: the duration
// does not depend on the SM clock rate).
#include <cuda_runtime.h>

#include <cstdint>

#include "bench_compute.hpp"

namespace duct::bench {

namespace {
cudaStream_t g_stream = nullptr;

__global__ void spin_kernel(std::uint64_t ns) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
}  // namespace

bool device_compute_start(double us) {
  if (!g_stream && cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) return false;
  spin_kernel<<<1, 32, 0, g_stream>>>(static_cast<std::uint64_t>(us * 1000.0));
  return cudaGetLastError() == cudaSuccess;
}

void device_compute_wait() {
  if (g_stream) cudaStreamSynchronize(g_stream);
}

void* bench_stream() {
  static cudaStream_t s = nullptr;
  if (!s && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  return s;
}

bool stream_sync(void* stream) { return cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) == cudaSuccess; }

bool capture_begin(void* stream) {
  return cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal) == cudaSuccess;
}

void* capture_end(void* stream) {
  cudaGraph_t g = nullptr;
  if (cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &g) != cudaSuccess || !g) return nullptr;
  cudaGraphExec_t e = nullptr;
  const bool ok = cudaGraphInstantiate(&e, g, 0) == cudaSuccess;
  cudaGraphDestroy(g);  // the executable graph keeps what it needs (duct's part too)
  return ok ? e : nullptr;
}

bool graph_launch(void* exec, void* stream) {
  return cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), static_cast<cudaStream_t>(stream)) == cudaSuccess;
}

void graph_destroy(void* exec) {
  if (exec) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
}

}  // namespace duct::bench
