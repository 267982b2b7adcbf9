// The host loop of bench_compute.hpp.
#include <mpi.h>

#include <cmath>

#include "bench_compute.hpp"

namespace duct::bench {

namespace {
double g_iters_per_us = 0;
volatile double g_sink = 0;

// Dependent floating-point work on a value in a register: no memory
// traffic, so it neither helps nor hinders the collective's copies except
// by taking the core.
double spin(long iters, double x) {
  for (long i = 0; i < iters; ++i) x = x * 0.9999999 + 1e-7;
  return x;
}
}  // namespace

void calibrate_host_compute() {
  long iters = 1 << 16;
  for (;;) {
    double t0 = MPI_Wtime();
    g_sink = spin(iters, g_sink);
    double t = MPI_Wtime() - t0;
    if (t > 0.02) {
      g_iters_per_us = static_cast<double>(iters) / (t * 1e6);
      break;
    }
    iters *= 2;
  }
  // Every rank uses the slowest rank's rate: equal work everywhere.
  MPI_Allreduce(MPI_IN_PLACE, &g_iters_per_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
}

void host_compute(double us, const std::function<void()>& poll, double poll_us) {
  const long total = static_cast<long>(us * g_iters_per_us);
  const long slice = poll && poll_us > 0 ? std::max(1L, static_cast<long>(poll_us * g_iters_per_us)) : total;
  double x = g_sink;
  for (long done = 0; done < total; done += slice) {
    x = spin(std::min(slice, total - done), x);
    if (poll && poll_us > 0) poll();
  }
  g_sink = x;
}

}  // namespace duct::bench
