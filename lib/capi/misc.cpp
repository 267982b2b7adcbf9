// The small C entry points: datatypes, error classes, queries.
#include "capi/errors.hpp"
#include "core/dtype.hpp"
#include "duct/duct.h"
#include "memory/cuda.hpp"
#include "reduce/reduce.hpp"

extern "C" MPI_Datatype DUCT_Type_float16(void) { return duct::float16_type(); }
extern "C" MPI_Datatype DUCT_Type_bfloat16(void) { return duct::bfloat16_type(); }

extern "C" int DUCT_Error_class(DUCT_Errclass which) {
  return duct::capi::error_class(static_cast<duct::Errc>(which));
}

extern "C" int DUCT_Query_cuda_support(void) { return duct::memory::cuda::available() ? 1 : 0; }

extern "C" const char* DUCT_Version_string(void) {
  static const char* v = duct::reduce::device_built() ? "0.1.0 (cuda yes)" : "0.1.0 (cuda no)";
  return v;
}
