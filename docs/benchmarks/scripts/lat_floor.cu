// lat_floor: what the GPU operations of a small device collective cost on
// this machine, rank by rank, with and without MPS (run under mpirun -np 2).
// Each row: microseconds per iteration, median of 5 repetitions of N
// iterations. Rank 1 either idles in MPI_Barrier ("alone") or does the same
// thing at the same time ("both").
//   nvcc -O2 -arch=sm_90 lat_floor.cu $(pkg-config --cflags --libs ompi-c) -lcuda -o lat_floor
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

__global__ void empty_kernel() {}
__global__ void add8(const float* a, const float* b, float* c, float* d) {
  if (threadIdx.x < 2) { float v = a[threadIdx.x] + b[threadIdx.x]; c[threadIdx.x] = v; d[threadIdx.x] = v; }
}

static double time_us(int n, const std::function<void()>& f) {
  std::vector<double> reps;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    reps.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n);
  }
  std::sort(reps.begin(), reps.end());
  return reps[2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  cudaSetDevice(0);
  int mps = 0;
  cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, 0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ev;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  float* buf;
  cudaMalloc(&buf, 4096);
  cudaMemset(buf, 0, 4096);
  const int N = 2000;
  auto spin = [&] { while (cudaEventQuery(ev) == cudaErrorNotReady) {} };
  struct Case { const char* name; std::function<void()> f; };
  std::vector<Case> cases = {
      {"empty kernel + event record + query spin", [&] { empty_kernel<<<1, 32, 0, s>>>(); cudaEventRecord(ev, s); spin(); }},
      {"empty kernel + cudaStreamSynchronize", [&] { empty_kernel<<<1, 32, 0, s>>>(); cudaStreamSynchronize(s); }},
      {"8 B add kernel (2 outputs) + event spin", [&] { add8<<<1, 32, 0, s>>>(buf, buf + 64, buf + 128, buf + 192); cudaEventRecord(ev, s); spin(); }},
      {"cudaMemcpyAsync D2D 8 B + event spin", [&] { cudaMemcpyAsync(buf + 256, buf, 8, cudaMemcpyDeviceToDevice, s); cudaEventRecord(ev, s); spin(); }},
      {"event create + destroy", [&] { cudaEvent_t e; cudaEventCreateWithFlags(&e, cudaEventDisableTiming); cudaEventDestroy(e); }},
      {"event record + query (idle stream)", [&] { cudaEventRecord(ev, s); spin(); }},
      {"cuPointerGetAttributes (7 attributes)", [&] {
         unsigned int memtype = 0, managed = 0, ipc = 0; int ord = -1; unsigned long long id = 0; CUdeviceptr st = 0; size_t sz = 0;
         CUpointer_attribute at[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                     CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                     CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
         void* d[] = {&memtype, &managed, &ord, &id, &st, &sz, &ipc};
         cuPointerGetAttributes(7, at, d, reinterpret_cast<CUdeviceptr>(buf)); }},
      {"cudaGetDevice", [&] { int dv; cudaGetDevice(&dv); }},
  };
  if (rank == 0) std::printf("# lat_floor: MPS %s; us per iteration (median of 5 x %d)\n", mps ? "active" : "not active", N);
  for (const char* mode : {"alone", "both"}) {
    for (Case& c : cases) {
      MPI_Barrier(MPI_COMM_WORLD);
      double us = 0;
      const bool work = rank == 0 || mode[0] == 'b';
      if (work) us = time_us(N, c.f);
      MPI_Barrier(MPI_COMM_WORLD);
      double other = 0;
      MPI_Reduce(&us, &other, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (rank == 0) std::printf("%-6s %-45s rank0 %8.2f us   slowest rank %8.2f us\n", mode, c.name, us, other);
    }
  }
  MPI_Finalize();
  return 0;
}
