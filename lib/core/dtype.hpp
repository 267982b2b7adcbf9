// duct core: the datatypes and reduction ops duct handles natively.
//
// An MPI datatype handle is mapped to an element type (how the bytes are
// stored) and an MPI category (which ops are valid on it, MPI-4.0 §6.9.2).
// Anything not in the table (derived types, MPI_CHAR, complex, pair types,
// user ops) is served by the PMPI fallback in lib/capi, so MPI itself
// answers or raises the error.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "core/status.hpp"

namespace duct {

enum class Elem : std::uint8_t { i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, count_ };

// MPI-4.0 §6.9.2 groups of basic datatypes.
// MPI-4.0 §6.9.2's groups: C integer, Fortran integer (no logical ops),
// floating point, logical, byte.
enum class Category : std::uint8_t { c_integer, floating, logical, byte, f_integer };

enum class RedOp : std::uint8_t { sum, prod, min, max, land, lor, lxor, band, bor, bxor, count_ };

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
    case Elem::count_: break;
  }
  return 0;
}

const char* elem_name(Elem e) noexcept;
const char* op_name(RedOp op) noexcept;

// Look up a predefined datatype; false when duct has no native support.
bool lookup_dtype(MPI_Datatype t, DType* out) noexcept;
// Look up a predefined op; false for MPI_MINLOC, MPI_REPLACE, user ops, ...
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
