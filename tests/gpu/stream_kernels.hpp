// Kernels for tests/gpu/test_stream.cpp (stream_kernels.cu): work before
// and after a stream-ordered collective, on the caller's stream.
#pragma once

#include <cstddef>

namespace duct::test::gpu {

// The test input: value(rank, i, salt).
inline float value(int rank, std::size_t i, int salt) {
  return static_cast<float>(salt * 7 + rank * 1000 + static_cast<int>(i % 97));
}
// After spinning `spin_us` microseconds on the GPU, p[i] = value(rank, i, salt):
// a collective that does not wait for the stream reads the old contents.
void fill_late(float* p, std::size_t n, int rank, int salt, unsigned spin_us, void* stream);
// p[i] = value(rank, i, *counter): the input of graph replay number *counter.
void fill_from_counter(float* p, std::size_t n, int rank, const int* counter, void* stream);
// history[*counter * n + i] = src[i], then ++*counter.
void record_and_bump(float* history, const float* src, std::size_t n, int* counter, void* stream);

}  // namespace duct::test::gpu
