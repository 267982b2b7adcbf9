// duct capi: MPI error classes, codes and the error handler.
//
// duct registers one MPI error class per Errc (MPI_Add_error_class) on first
// need. Each distinct message gets its own error code in that class
// (MPI_Add_error_code + MPI_Add_error_string), so MPI_Error_string(code)
// gives the full message ("DUCT_Allreduce on rank 2: count = -1 is
// negative") and MPI_Error_class(code) gives duct's class.
#pragma once

#include <mpi.h>

#include "core/status.hpp"

namespace duct::capi {

// The MPI class number of `e` (registering duct's classes on first use);
// MPI_ERR_UNKNOWN when MPI is not usable.
int error_class(Errc e) noexcept;

// Report `st` for `call` on `comm`: build the code, invoke the error handler
// of `comm` (of MPI_COMM_WORLD for MPI_COMM_NULL; MPI_COMM_SELF with MPI-4),
// and return the code.
int raise(MPI_Comm comm, const char* call, const Status& st) noexcept;
// The code raise() would return, without invoking a handler (errors a
// nonblocking collective reports through MPI_Wait).
int error_code(MPI_Comm comm, const char* call, const Status& st) noexcept;

}  // namespace duct::capi
