// tests/mpi: the suite on host memory, under mpirun at several sizes.
#include "testutil.hpp"

int main(int argc, char** argv) { return duct::test::mpi_main(argc, argv, duct::memory::MemKind::host); }
