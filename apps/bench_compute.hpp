// duct-bench's stand-in for the application's computation in overlap mode:
// a host loop of a given duration, or a GPU kernel of a given duration on a
// stream of its own. Both are calibrated in time, not iterations, so that
// "compute for 5 ms" means the same on every machine; the host loop is
// calibrated once (iterations per microsecond of a fixed arithmetic loop)
// and then runs by iteration count, so time taken from it by duct's
// progress shows up as a longer loop, as it would in an application.
#pragma once

#include <functional>

namespace duct::bench {

// Calibrate the host loop (a few ms; call once, on every rank).
void calibrate_host_compute();
// Run the host loop for `us` microseconds of its own work. With `poll`
// and `poll_us` > 0, poll() is called every `poll_us` microseconds of work
// (an application calling MPI_Test now and then).
void host_compute(double us, const std::function<void()>& poll, double poll_us);

// Start a kernel that runs `us` microseconds on the current device, on a
// stream of its own; false when there is no CUDA (built without, or no
// device). device_compute_wait() waits for it.
bool device_compute_start(double us);
void device_compute_wait();

// -S / -G: a stream of duct-bench's own (null without CUDA), its
// synchronization, and CUDA graphs captured on it: capture_begin, then the
// calls to capture, then capture_end gives an executable graph (null on
// failure) that graph_launch replays on the stream.
void* bench_stream();
bool stream_sync(void* stream);
bool capture_begin(void* stream);
void* capture_end(void* stream);
bool graph_launch(void* exec, void* stream);
void graph_destroy(void* exec);

}  // namespace duct::bench
