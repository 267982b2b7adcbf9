// bench_compute.hpp without CUDA: no device kernel.
#include "bench_compute.hpp"

namespace duct::bench {
bool device_compute_start(double) { return false; }
void device_compute_wait() {}
}  // namespace duct::bench
