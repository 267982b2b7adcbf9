// bench_compute.hpp without CUDA: no device kernel.
#include "bench_compute.hpp"

namespace duct::bench {
bool device_compute_start(double) { return false; }
void device_compute_wait() {}
void* bench_stream() { return nullptr; }
bool stream_sync(void*) { return false; }
bool capture_begin(void*) { return false; }
void* capture_end(void*) { return nullptr; }
bool graph_launch(void*, void*) { return false; }
void graph_destroy(void*) {}
}  // namespace duct::bench
