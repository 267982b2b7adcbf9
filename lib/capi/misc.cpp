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

extern "C" int DUCT_Report_count_mismatch(const char* call, MPI_Count sendcount, MPI_Count recvcount, MPI_Comm comm) {
  if (sendcount == recvcount) return MPI_SUCCESS;
  return duct::capi::raise(comm, call != nullptr ? call : "duct",
                           duct::make_error(duct::Errc::count, "send has %lld elements but recv has %lld (they must be equal)",
                                            static_cast<long long>(sendcount), static_cast<long long>(recvcount)));
}

extern "C" int DUCT_Query_cuda_support(void) { return duct::memory::cuda::available() ? 1 : 0; }

#define DUCT_STR2(x) #x
#define DUCT_STR(x) DUCT_STR2(x)
#define DUCT_VERSION_TEXT DUCT_STR(DUCT_VERSION_MAJOR) "." DUCT_STR(DUCT_VERSION_MINOR) "." DUCT_STR(DUCT_VERSION_PATCH)

extern "C" const char* DUCT_Version_string(void) {
  static const char* v =
      duct::reduce::device_built() ? DUCT_VERSION_TEXT " (cuda yes)" : DUCT_VERSION_TEXT " (cuda no)";
  return v;
}

extern "C" int DUCT_Get_version(int* major, int* minor, int* patch) {
  if (major) *major = DUCT_VERSION_MAJOR;
  if (minor) *minor = DUCT_VERSION_MINOR;
  if (patch) *patch = DUCT_VERSION_PATCH;
  return MPI_SUCCESS;
}
