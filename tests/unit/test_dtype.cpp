// Datatype and op tables against MPI-4.0 §6.9.2 (no MPI_Init needed: the
// predefined handles are link-time constants).
#include <catch2/catch.hpp>

#include <type_traits>

#include "core/dtype.hpp"

using namespace duct;

TEST_CASE("predefined datatypes map to the right element and category", "[dtype]") {
  struct Row {
    MPI_Datatype t;
    Elem e;
    Category c;
  };
  const Row rows[] = {
      {MPI_INT8_T, Elem::i8, Category::c_integer},     {MPI_UINT64_T, Elem::u64, Category::c_integer},
      {MPI_INT, Elem::i32, Category::c_integer},       {MPI_UNSIGNED, Elem::u32, Category::c_integer},
      {MPI_LONG, sizeof(long) == 8 ? Elem::i64 : Elem::i32, Category::c_integer},
      {MPI_SHORT, Elem::i16, Category::c_integer},     {MPI_SIGNED_CHAR, Elem::i8, Category::c_integer},
      {MPI_UNSIGNED_CHAR, Elem::u8, Category::c_integer}, {MPI_FLOAT, Elem::f32, Category::floating},
      {MPI_DOUBLE, Elem::f64, Category::floating},     {MPI_C_BOOL, Elem::u8, Category::logical},
      {MPI_BYTE, Elem::u8, Category::byte},
      // Open MPI and MPICH reduce these as integers of their size.
      {MPI_CHAR, std::is_signed_v<char> ? Elem::i8 : Elem::u8, Category::c_integer},
      {MPI_AINT, Elem::i64, Category::c_integer},      {MPI_COUNT, Elem::i64, Category::c_integer},
  };
  for (const Row& r : rows) {
    DType d;
    REQUIRE(lookup_dtype(r.t, &d));
    INFO(d.name);
    CHECK(d.elem == r.e);
    CHECK(d.cat == r.c);
  }
  DType d;
  // Not reducible natively: served by the MPI library (or refused by it).
  CHECK_FALSE(lookup_dtype(MPI_WCHAR, &d));  // Open MPI refuses every op on it
  // Complex, long double and pair types are checked against the MPI
  // library's layout first, which needs MPI_Init: tests/common/datatype_cases.cpp.
  CHECK_FALSE(lookup_dtype(MPI_DATATYPE_NULL, &d));
}

TEST_CASE("ops are valid exactly where MPI defines them", "[dtype]") {
  using C = Category;
  // MPI-4.0 §6.9.2: MIN, MAX: C integer, floating point; SUM, PROD: the same
  // (and complex); LAND, LOR, LXOR: C integer, logical; BAND, BOR, BXOR: C
  // integer, byte.
  for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max}) {
    CHECK(op_valid_for(op, C::c_integer));
    CHECK(op_valid_for(op, C::f_integer));
    CHECK(op_valid_for(op, C::floating));
    CHECK_FALSE(op_valid_for(op, C::logical));
    CHECK_FALSE(op_valid_for(op, C::byte));
  }
  for (RedOp op : {RedOp::land, RedOp::lor, RedOp::lxor}) {
    CHECK(op_valid_for(op, C::c_integer));
    CHECK(op_valid_for(op, C::logical));
    CHECK_FALSE(op_valid_for(op, C::f_integer));  // Fortran integers: no logical ops
    CHECK_FALSE(op_valid_for(op, C::floating));
    CHECK_FALSE(op_valid_for(op, C::byte));
  }
  for (RedOp op : {RedOp::band, RedOp::bor, RedOp::bxor}) {
    CHECK(op_valid_for(op, C::c_integer));
    CHECK(op_valid_for(op, C::byte));
    CHECK(op_valid_for(op, C::f_integer));
    CHECK_FALSE(op_valid_for(op, C::floating));
    CHECK_FALSE(op_valid_for(op, C::logical));
  }
  // Complex: SUM and PROD; pairs: MINLOC and MAXLOC only (§6.9.4).
  for (RedOp op : {RedOp::sum, RedOp::prod}) CHECK(op_valid_for(op, C::complex));
  for (RedOp op : {RedOp::min, RedOp::max, RedOp::land, RedOp::band, RedOp::minloc}) CHECK_FALSE(op_valid_for(op, C::complex));
  for (RedOp op : {RedOp::minloc, RedOp::maxloc}) {
    CHECK(op_valid_for(op, C::pair));
    for (C c : {C::c_integer, C::f_integer, C::floating, C::logical, C::byte, C::complex}) CHECK_FALSE(op_valid_for(op, c));
  }
  for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max, RedOp::land, RedOp::bor}) CHECK_FALSE(op_valid_for(op, C::pair));
  RedOp r;
  CHECK(lookup_op(MPI_BXOR, &r));
  CHECK(r == RedOp::bxor);
  CHECK(lookup_op(MPI_MINLOC, &r));
  CHECK(r == RedOp::minloc);
  CHECK_FALSE(lookup_op(MPI_REPLACE, &r));
  CHECK_FALSE(lookup_op(MPI_OP_NULL, &r));
}
