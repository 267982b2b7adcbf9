// Catch2 main for the unit tests (no MPI, no GPU needed).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
