// duct: a thin C++20 layer over the C API (duct.h).
//
// Spans instead of pointer + count, element types mapped to MPI datatypes by
// traits (a type duct cannot reduce does not compile), and errors returned
// as MPI error codes exactly as from the C functions: no exceptions, no
// hidden collectives. The communicator is the caller's; nothing here owns or
// copies it.
//
//   std::vector<float> grad(n);                     // or device memory
//   int rc = duct::allreduce(std::span(grad), MPI_SUM, MPI_COMM_WORLD);   // in place
//   int rc = duct::allreduce(std::span<const float>(in), std::span(out), MPI_SUM, comm);
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "duct/duct.h"

namespace duct {

// IEEE binary16 and bfloat16 elements: two bytes each, reduced in float.
struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};

// The MPI datatype of an element type. Only types duct reduces natively are
// defined; others fail to compile (static_assert in datatype_of). Plain
// `char` is not an integer to MPI (MPI_CHAR cannot be reduced): use
// std::int8_t or std::uint8_t.
template <class T, class = void>
struct mpi_type;

template <class T>
struct mpi_type<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>> {
  static MPI_Datatype get() noexcept {
    constexpr bool s = std::is_signed_v<T>;
    if constexpr (sizeof(T) == 1) return s ? MPI_INT8_T : MPI_UINT8_T;
    else if constexpr (sizeof(T) == 2) return s ? MPI_INT16_T : MPI_UINT16_T;
    else if constexpr (sizeof(T) == 4) return s ? MPI_INT32_T : MPI_UINT32_T;
    else return s ? MPI_INT64_T : MPI_UINT64_T;
  }
};

#define DUCT_MPI_TYPE(T, expr)                          \
  template <>                                           \
  struct mpi_type<T> {                                  \
    static MPI_Datatype get() noexcept { return expr; } \
  }
DUCT_MPI_TYPE(float, MPI_FLOAT);
DUCT_MPI_TYPE(double, MPI_DOUBLE);
DUCT_MPI_TYPE(bool, MPI_C_BOOL);
DUCT_MPI_TYPE(float16, DUCT_FLOAT16);
DUCT_MPI_TYPE(bfloat16, DUCT_BFLOAT16);
#undef DUCT_MPI_TYPE

template <class T, class = void>
struct has_mpi_type : std::false_type {};
template <class T>
struct has_mpi_type<T, std::void_t<decltype(mpi_type<T>::get())>> : std::true_type {};

// The MPI datatype of T (after MPI_Init).
template <class T>
MPI_Datatype datatype_of() noexcept {
  using U = std::remove_cv_t<T>;
  static_assert(has_mpi_type<U>::value,
                "duct: no MPI datatype for this element type (use an integer type, float, double, bool, "
                "duct::float16 or duct::bfloat16)");
  return mpi_type<U>::get();
}

// Allreduce of `send` into `recv` (same length on every rank; the spans must
// not overlap). Elements, not bytes. Host or device memory. Returns an MPI
// error code, like DUCT_Allreduce_c; spans of different lengths give a
// DUCT_ERRCLASS_COUNT error naming both lengths, through the communicator's
// error handler (DUCT_Report_count_mismatch), and communicate nothing.
template <class T>
int allreduce(std::span<const T> send, std::span<T> recv, MPI_Op op, MPI_Comm comm) noexcept {
  if (send.size() != recv.size())
    return DUCT_Report_count_mismatch("duct::allreduce", static_cast<MPI_Count>(send.size()),
                                      static_cast<MPI_Count>(recv.size()), comm);
  return DUCT_Allreduce_c(send.data(), recv.data(), static_cast<MPI_Count>(recv.size()), datatype_of<T>(), op, comm);
}

// In-place allreduce of `data` (MPI_IN_PLACE).
template <class T>
int allreduce(std::span<T> data, MPI_Op op, MPI_Comm comm) noexcept {
  return DUCT_Allreduce_c(MPI_IN_PLACE, data.data(), static_cast<MPI_Count>(data.size()), datatype_of<T>(), op, comm);
}

// Nonblocking in-place allreduce of `data` (DUCT_Iallreduce_c): returns at
// once; complete *request with MPI_Wait or DUCT_Wait before touching data.
template <class T>
int iallreduce(std::span<T> data, MPI_Op op, MPI_Comm comm, MPI_Request* request) noexcept {
  return DUCT_Iallreduce_c(MPI_IN_PLACE, data.data(), static_cast<MPI_Count>(data.size()), datatype_of<T>(), op, comm,
                           request);
}

}  // namespace duct
