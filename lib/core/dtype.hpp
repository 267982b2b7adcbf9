// duct core: the datatypes and reduction ops duct handles natively.
//
// An MPI datatype handle is mapped to an element type (how the bytes are
// stored) and an MPI category (which ops are valid on it, MPI-4.0 §6.9.2).
// Anything not in the table (derived types, MPI_WCHAR, MPI_OFFSET, user
// ops, MPI_REPLACE) is served by the PMPI fallback in lib/capi, so MPI
// itself answers or raises the error.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "core/status.hpp"

namespace duct {

// How one element is stored. Complex elements are (real, imaginary) pairs;
// the MINLOC/MAXLOC pair elements are the C structs of MPI-4.0 §6.9.4
// (struct { double v; int k; } for MPI_DOUBLE_INT, padding included).
// Long double elements (ldbl, cldbl, ldbl_i32) are reduced on the host only.
enum class Elem : std::uint8_t {
  i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64,
  c32, c64,    // float complex, double complex
  ldbl, cldbl,  // long double, long double complex (host only)
  f32_i32, f64_i32, long_i32, i32_i32, i16_i32, ldbl_i32,  // MPI_FLOAT_INT .. MPI_LONG_DOUBLE_INT
  f32_f32, f64_f64,                                       // Fortran MPI_2REAL, MPI_2DOUBLE_PRECISION
  count_
};

// MPI-4.0 §6.9.2's groups: C integer, Fortran integer (no logical ops),
// floating point, logical, byte, complex; and the pair types of MINLOC and
// MAXLOC (§6.9.4).
enum class Category : std::uint8_t { c_integer, floating, logical, byte, f_integer, complex, pair };

enum class RedOp : std::uint8_t { sum, prod, min, max, land, lor, lxor, band, bor, bxor, minloc, maxloc, count_ };

// The storage of complex and pair elements.
template <class T>
struct Cx {
  T re, im;
};
template <class V, class K>
struct Loc {
  V v;  // the value compared
  K k;  // its index ("location"); ties go to the smaller index
};

struct DType {
  Elem elem;
  Category cat;
  const char* name;  // the MPI name the user passed, e.g. "MPI_INT"
};

constexpr size_t elem_size(Elem e) noexcept {
  switch (e) {
    case Elem::i8: case Elem::u8: return 1;
    case Elem::i16: case Elem::u16: case Elem::f16: case Elem::bf16: return 2;
    case Elem::i32: case Elem::u32: case Elem::f32: return 4;
    case Elem::i64: case Elem::u64: case Elem::f64: return 8;
    case Elem::c32: return sizeof(Cx<float>);
    case Elem::c64: return sizeof(Cx<double>);
    case Elem::ldbl: return sizeof(long double);
    case Elem::cldbl: return sizeof(Cx<long double>);
    case Elem::f32_i32: return sizeof(Loc<float, int>);
    case Elem::f64_i32: return sizeof(Loc<double, int>);
    case Elem::long_i32: return sizeof(Loc<long, int>);
    case Elem::i32_i32: return sizeof(Loc<int, int>);
    case Elem::i16_i32: return sizeof(Loc<short, int>);
    case Elem::ldbl_i32: return sizeof(Loc<long double, int>);
    case Elem::f32_f32: return sizeof(Loc<float, float>);
    case Elem::f64_f64: return sizeof(Loc<double, double>);
    case Elem::count_: break;
  }
  return 0;
}

// Bytes of data in one element (MPI_Type_size): less than elem_size for the
// pair types with padding (MPI_DOUBLE_INT: 12 of 16).
constexpr size_t elem_data_size(Elem e) noexcept {
  switch (e) {
    case Elem::f64_i32: return sizeof(double) + sizeof(int);
    case Elem::long_i32: return sizeof(long) + sizeof(int);
    case Elem::i16_i32: return sizeof(short) + sizeof(int);
    case Elem::ldbl_i32: return sizeof(long double) + sizeof(int);
    default: return elem_size(e);
  }
}

// Bytes from an element's start to the end of its data (its true extent):
// less than elem_size where the pair types end in padding (MPI_DOUBLE_INT:
// 12 of 16; MPI_SHORT_INT's padding is inside, before its int: 8 of 8).
// A buffer of `count` elements may end there, so the last element's padding
// is not the caller's memory (MPI-4.0 §5.1: a buffer is the bytes its
// datatype's type map touches).
constexpr size_t elem_true_extent(Elem e) noexcept {
  using DoubleInt = Loc<double, int>;
  using LongInt = Loc<long, int>;
  using LongDoubleInt = Loc<long double, int>;
  switch (e) {
    case Elem::f64_i32: return offsetof(DoubleInt, k) + sizeof(int);
    case Elem::long_i32: return offsetof(LongInt, k) + sizeof(int);
    case Elem::ldbl_i32: return offsetof(LongDoubleInt, k) + sizeof(int);
    default: return elem_size(e);
  }
}

constexpr bool tail_padded(Elem e) noexcept { return elem_true_extent(e) < elem_size(e); }

// Elements no device kernel reduces (nvcc has no long double): duct
// reduces them on host copies of device buffers.
constexpr bool host_only(Elem e) noexcept { return e == Elem::ldbl || e == Elem::cldbl || e == Elem::ldbl_i32; }

const char* elem_name(Elem e) noexcept;
const char* op_name(RedOp op) noexcept;

// Look up a predefined datatype; false when duct has no native support.
bool lookup_dtype(MPI_Datatype t, DType* out) noexcept;
// Look up a predefined op; false for MPI_REPLACE, MPI_NO_OP, user ops, ...
bool lookup_op(MPI_Op op, RedOp* out) noexcept;

// Whether MPI defines `op` on datatypes of category `cat` (MPI-4.0 §6.9.2).
bool op_valid_for(RedOp op, Category cat) noexcept;

// The exported half-precision types (committed MPI datatypes of 2 bytes).
// Created on first use; MPI must be initialized.
MPI_Datatype float16_type();
MPI_Datatype bfloat16_type();
// Free them (at MPI_Finalize).
void free_half_types() noexcept;

}  // namespace duct
