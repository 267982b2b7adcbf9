// Kernels for tests/gpu/test_stream.cpp (stream_kernels.cu): work before
// and after a stream-ordered collective, on the caller's stream.
#pragma once

#include <cstddef>

namespace duct::test::gpu {

// The test input is duct::test::stream_value(rank, i, salt) (tests/common/stream_cases.hpp).
// After spinning `spin_us` microseconds on the GPU, p[i] = stream_value(rank, i, salt):
// a collective that does not wait for the stream reads the old contents.
void fill_late(float* p, std::size_t n, int rank, int salt, unsigned spin_us, void* stream);
// p[i] = stream_value(rank, i, *counter): the input of graph replay number *counter.
void fill_from_counter(float* p, std::size_t n, int rank, const int* counter, void* stream);
// history[*counter * n + i] = src[i], then ++*counter.
void record_and_bump(float* history, const float* src, std::size_t n, int* counter, void* stream);

}  // namespace duct::test::gpu
