// tests/gpu: the same suite on CUDA device memory. Exits 77 (skipped) when
// any rank has no usable CUDA device.
#include "testutil.hpp"

int main(int argc, char** argv) { return duct::test::mpi_main(argc, argv, duct::memory::MemKind::device); }
