// The stream-ordered forms' cases, shared by tests/mpi (host buffers on an
// emulated stream) and tests/gpu (device buffers on a CUDA stream): every
// collective of duct_stream.h on float data, with the MPI library's
// collective as reference.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "duct/duct_stream.h"

namespace duct::test {

// The input element i of rank r (salt tells calls apart); tests/gpu's
// kernels compute the same on the device.
inline float stream_value(int r, std::size_t i, int salt) {
  return static_cast<float>(salt * 7 + r * 1000 + static_cast<int>(i % 97));
}

// One collective: the sizes (in floats) of this rank's send and receive
// buffers, the duct call (enqueued on the stream the list was made for) and
// the MPI reference on host buffers. send_n == 0: the input is in the
// receive buffer (in place, or the bcast buffer); receive buffers not
// written by the collective start at 0 on both sides.
struct StreamCase {
  std::string name;
  std::size_t send_n, recv_n;
  std::function<int(float* s, float* r)> duct;
  std::function<void(const float* s, float* r)> mpi;
};

// Every stream-ordered collective on `w` with blocks of about `c` floats
// (v-forms: rank j's block is c + j), rooted ones at various roots, on `st`.
std::vector<StreamCase> stream_cases(MPI_Comm w, std::size_t c, struct CUstream_st* st);

}  // namespace duct::test
