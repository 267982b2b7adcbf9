#include "core/dtype.hpp"

#include <atomic>
#include <mutex>
#include <type_traits>

namespace duct {

namespace {

template <class T>
constexpr Elem int_elem() {
  static_assert(std::is_integral_v<T>);
  constexpr bool s = std::is_signed_v<T>;
  switch (sizeof(T)) {
    case 1: return s ? Elem::i8 : Elem::u8;
    case 2: return s ? Elem::i16 : Elem::u16;
    case 4: return s ? Elem::i32 : Elem::u32;
    default: return s ? Elem::i64 : Elem::u64;
  }
}

struct TypeRow {
  MPI_Datatype type;
  DType dt;
};

// MPI-4.0 §6.9.2: "C integer" types, "Floating point", "Logical"
// (MPI_C_BOOL) and "Byte", whose layout is fixed by C; the types below
// (g_late) are checked against the MPI library first.
const TypeRow* type_table(size_t* n) {
  static const TypeRow rows[] = {
      {MPI_INT, {int_elem<int>(), Category::c_integer, "MPI_INT"}},
      {MPI_FLOAT, {Elem::f32, Category::floating, "MPI_FLOAT"}},
      {MPI_DOUBLE, {Elem::f64, Category::floating, "MPI_DOUBLE"}},
      {MPI_INT8_T, {Elem::i8, Category::c_integer, "MPI_INT8_T"}},
      {MPI_UINT8_T, {Elem::u8, Category::c_integer, "MPI_UINT8_T"}},
      {MPI_INT16_T, {Elem::i16, Category::c_integer, "MPI_INT16_T"}},
      {MPI_UINT16_T, {Elem::u16, Category::c_integer, "MPI_UINT16_T"}},
      {MPI_INT32_T, {Elem::i32, Category::c_integer, "MPI_INT32_T"}},
      {MPI_UINT32_T, {Elem::u32, Category::c_integer, "MPI_UINT32_T"}},
      {MPI_INT64_T, {Elem::i64, Category::c_integer, "MPI_INT64_T"}},
      {MPI_UINT64_T, {Elem::u64, Category::c_integer, "MPI_UINT64_T"}},
      {MPI_SIGNED_CHAR, {Elem::i8, Category::c_integer, "MPI_SIGNED_CHAR"}},
      {MPI_UNSIGNED_CHAR, {Elem::u8, Category::c_integer, "MPI_UNSIGNED_CHAR"}},
      {MPI_SHORT, {int_elem<short>(), Category::c_integer, "MPI_SHORT"}},
      {MPI_UNSIGNED_SHORT, {int_elem<unsigned short>(), Category::c_integer, "MPI_UNSIGNED_SHORT"}},
      {MPI_UNSIGNED, {int_elem<unsigned>(), Category::c_integer, "MPI_UNSIGNED"}},
      {MPI_LONG, {int_elem<long>(), Category::c_integer, "MPI_LONG"}},
      {MPI_UNSIGNED_LONG, {int_elem<unsigned long>(), Category::c_integer, "MPI_UNSIGNED_LONG"}},
      {MPI_LONG_LONG, {int_elem<long long>(), Category::c_integer, "MPI_LONG_LONG"}},
      {MPI_LONG_LONG_INT, {int_elem<long long>(), Category::c_integer, "MPI_LONG_LONG_INT"}},
      {MPI_UNSIGNED_LONG_LONG,
       {int_elem<unsigned long long>(), Category::c_integer, "MPI_UNSIGNED_LONG_LONG"}},
      // Not in MPI's reduction groups, but Open MPI and MPICH reduce them as
      // the integer of their size (the OSU benchmarks reduce MPI_CHAR).
      // MPI_OFFSET is left to the MPI library: Open MPI 4.1's MIN and MAX on
      // it disagree with a signed 64-bit comparison (tests/common/allreduce_cases.cpp).
      {MPI_CHAR, {int_elem<char>(), Category::c_integer, "MPI_CHAR"}},
      {MPI_AINT, {int_elem<MPI_Aint>(), Category::c_integer, "MPI_AINT"}},
      {MPI_COUNT, {int_elem<MPI_Count>(), Category::c_integer, "MPI_COUNT"}},
      {MPI_C_BOOL, {Elem::u8, Category::logical, "MPI_C_BOOL"}},
      {MPI_BYTE, {Elem::u8, Category::byte, "MPI_BYTE"}},
  };
  static_assert(sizeof(bool) == 1, "MPI_C_BOOL is mapped to one byte");
  *n = sizeof rows / sizeof rows[0];
  return rows;
}

struct OpRow {
  MPI_Op op;
  RedOp red;
};

std::mutex g_half_mutex;
MPI_Datatype g_f16 = MPI_DATATYPE_NULL;
MPI_Datatype g_bf16 = MPI_DATATYPE_NULL;

MPI_Datatype make_half(MPI_Datatype* slot, const char* name) {
  std::lock_guard<std::mutex> lock(g_half_mutex);
  if (*slot != MPI_DATATYPE_NULL) return *slot;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return MPI_DATATYPE_NULL;
  MPI_Datatype t;
  if (MPI_Type_contiguous(2, MPI_BYTE, &t) != MPI_SUCCESS) return MPI_DATATYPE_NULL;
  if (MPI_Type_commit(&t) != MPI_SUCCESS) return MPI_DATATYPE_NULL;
  (void)MPI_Type_set_name(t, name);  // cosmetic (names in MPI's own messages)
  *slot = t;
  return t;
}

// Types whose layout duct takes from the MPI library, once, after MPI_Init,
// on the first lookup that misses the table above:
//  - Fortran's types, mapped by the sizes MPI gives them (MPI_INTEGER is 8
//    bytes under -fdefault-integer-8, MPI_2REAL 16 under -fdefault-real-8);
//  - the C complex, long double and pair types, whose elements must have the
//    size, extent (padding included) and true extent of duct's element, so
//    that a count of them is a count of duct's elements.
// `elem` stays count_ where MPI's layout is not one duct has a kernel for
// (MPI reduces that type).
enum class Sized : std::uint8_t { fixed, integer, real, complex, logical, pair_real, pair_integer };
struct LateRow {
  MPI_Datatype type;
  Category cat;
  const char* name;
  Sized by;
  Elem elem;  // fixed: the element to check; otherwise chosen by size
};
LateRow g_late[] = {
    {MPI_C_FLOAT_COMPLEX, Category::complex, "MPI_C_FLOAT_COMPLEX", Sized::fixed, Elem::c32},
    {MPI_C_COMPLEX, Category::complex, "MPI_C_COMPLEX", Sized::fixed, Elem::c32},
    {MPI_C_DOUBLE_COMPLEX, Category::complex, "MPI_C_DOUBLE_COMPLEX", Sized::fixed, Elem::c64},
    {MPI_C_LONG_DOUBLE_COMPLEX, Category::complex, "MPI_C_LONG_DOUBLE_COMPLEX", Sized::fixed, Elem::cldbl},
    {MPI_LONG_DOUBLE, Category::floating, "MPI_LONG_DOUBLE", Sized::fixed, Elem::ldbl},
    {MPI_FLOAT_INT, Category::pair, "MPI_FLOAT_INT", Sized::fixed, Elem::f32_i32},
    {MPI_DOUBLE_INT, Category::pair, "MPI_DOUBLE_INT", Sized::fixed, Elem::f64_i32},
    {MPI_LONG_INT, Category::pair, "MPI_LONG_INT", Sized::fixed, Elem::long_i32},
    {MPI_2INT, Category::pair, "MPI_2INT", Sized::fixed, Elem::i32_i32},
    {MPI_SHORT_INT, Category::pair, "MPI_SHORT_INT", Sized::fixed, Elem::i16_i32},
    {MPI_LONG_DOUBLE_INT, Category::pair, "MPI_LONG_DOUBLE_INT", Sized::fixed, Elem::ldbl_i32},
#if defined(MPI_CXX_BOOL)
    {MPI_CXX_BOOL, Category::logical, "MPI_CXX_BOOL", Sized::fixed, Elem::u8},
#endif
#if !defined(DUCT_SIM)  // SimGrid's SMPI (3.32) names the C++ complex types without defining them
    {MPI_CXX_FLOAT_COMPLEX, Category::complex, "MPI_CXX_FLOAT_COMPLEX", Sized::fixed, Elem::c32},
    {MPI_CXX_DOUBLE_COMPLEX, Category::complex, "MPI_CXX_DOUBLE_COMPLEX", Sized::fixed, Elem::c64},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, Category::complex, "MPI_CXX_LONG_DOUBLE_COMPLEX", Sized::fixed, Elem::cldbl},
#endif
    {MPI_REAL, Category::floating, "MPI_REAL", Sized::real, Elem::count_},
    {MPI_DOUBLE_PRECISION, Category::floating, "MPI_DOUBLE_PRECISION", Sized::real, Elem::count_},
    {MPI_REAL4, Category::floating, "MPI_REAL4", Sized::real, Elem::count_},
    {MPI_REAL8, Category::floating, "MPI_REAL8", Sized::real, Elem::count_},
    {MPI_INTEGER, Category::f_integer, "MPI_INTEGER", Sized::integer, Elem::count_},
    {MPI_INTEGER1, Category::f_integer, "MPI_INTEGER1", Sized::integer, Elem::count_},
    {MPI_INTEGER2, Category::f_integer, "MPI_INTEGER2", Sized::integer, Elem::count_},
    {MPI_INTEGER4, Category::f_integer, "MPI_INTEGER4", Sized::integer, Elem::count_},
    {MPI_INTEGER8, Category::f_integer, "MPI_INTEGER8", Sized::integer, Elem::count_},
    {MPI_COMPLEX, Category::complex, "MPI_COMPLEX", Sized::complex, Elem::count_},
    {MPI_DOUBLE_COMPLEX, Category::complex, "MPI_DOUBLE_COMPLEX", Sized::complex, Elem::count_},
    {MPI_COMPLEX8, Category::complex, "MPI_COMPLEX8", Sized::complex, Elem::count_},
    {MPI_COMPLEX16, Category::complex, "MPI_COMPLEX16", Sized::complex, Elem::count_},
    {MPI_LOGICAL, Category::logical, "MPI_LOGICAL", Sized::logical, Elem::count_},
    {MPI_2REAL, Category::pair, "MPI_2REAL", Sized::pair_real, Elem::count_},
    {MPI_2DOUBLE_PRECISION, Category::pair, "MPI_2DOUBLE_PRECISION", Sized::pair_real, Elem::count_},
    {MPI_2INTEGER, Category::pair, "MPI_2INTEGER", Sized::pair_integer, Elem::count_},
};
std::once_flag g_late_once;
std::atomic<bool> g_late_sized{false};

Elem by_size(Sized by, int size) {
  switch (by) {
    case Sized::integer:
      return size == 1 ? Elem::i8 : size == 2 ? Elem::i16 : size == 4 ? Elem::i32 : size == 8 ? Elem::i64 : Elem::count_;
    case Sized::real: return size == 4 ? Elem::f32 : size == 8 ? Elem::f64 : Elem::count_;
    case Sized::complex: return size == 8 ? Elem::c32 : size == 16 ? Elem::c64 : Elem::count_;
    case Sized::logical:
      return size == 1 ? Elem::u8 : size == 2 ? Elem::u16 : size == 4 ? Elem::u32 : size == 8 ? Elem::u64 : Elem::count_;
    case Sized::pair_real: return size == 8 ? Elem::f32_f32 : size == 16 ? Elem::f64_f64 : Elem::count_;
    case Sized::pair_integer: return size == 8 ? Elem::i32_i32 : Elem::count_;
    case Sized::fixed: break;
  }
  return Elem::count_;
}

// The element of `r` if MPI lays it out as duct's element, else count_.
Elem resolve(const LateRow& r) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  if (r.type == MPI_DATATYPE_NULL || PMPI_Type_size(r.type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(r.type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(r.type, &tlb, &textent) != MPI_SUCCESS)
    return Elem::count_;
  const Elem e = r.by == Sized::fixed ? r.elem : by_size(r.by, size);
  // The true extent too: capi's type_info answers it from the table
  // (elem_true_extent) without asking MPI.
  if (e == Elem::count_ || lb != 0 || static_cast<size_t>(extent) != elem_size(e) ||
      static_cast<size_t>(size) != elem_data_size(e) || tlb != 0 || static_cast<size_t>(textent) != elem_true_extent(e))
    return Elem::count_;
  return e;
}

bool lookup_late(MPI_Datatype t, DType* out) noexcept {
  if (!g_late_sized.load(std::memory_order_acquire)) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) return false;
    std::call_once(g_late_once, [] {
      for (LateRow& r : g_late) r.elem = resolve(r);
      g_late_sized.store(true, std::memory_order_release);
    });
  }
  for (const LateRow& r : g_late) {
    if (r.type != t) continue;
    if (r.elem == Elem::count_) return false;
    *out = {r.elem, r.cat, r.name};
    return true;
  }
  return false;
}

}  // namespace

const char* elem_name(Elem e) noexcept {
  static const char* names[] = {"int8",         "uint8",         "int16",        "uint16",      "int32",
                                "uint32",       "int64",         "uint64",       "float16",     "bfloat16",
                                "float32",      "float64",       "complex64",    "complex128",  "long double",
                                "long double complex", "(float, int)", "(double, int)", "(long, int)", "(int, int)",
                                "(short, int)", "(long double, int)", "(float, float)", "(double, double)"};
  static_assert(sizeof names / sizeof names[0] == static_cast<size_t>(Elem::count_));
  auto i = static_cast<size_t>(e);
  return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

const char* op_name(RedOp op) noexcept {
  static const char* names[] = {"sum", "prod", "min",  "max", "land",   "lor",
                                "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
  static_assert(sizeof names / sizeof names[0] == static_cast<size_t>(RedOp::count_));
  auto i = static_cast<size_t>(op);
  return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

bool lookup_dtype(MPI_Datatype t, DType* out) noexcept {
  if (t == MPI_DATATYPE_NULL) return false;
  size_t n;
  const TypeRow* rows = type_table(&n);
  for (size_t i = 0; i < n; ++i) {
    if (rows[i].type == t) {
      *out = rows[i].dt;
      return true;
    }
  }
  if (t == g_f16) {
    *out = {Elem::f16, Category::floating, "DUCT_FLOAT16"};
    return true;
  }
  if (t == g_bf16) {
    *out = {Elem::bf16, Category::floating, "DUCT_BFLOAT16"};
    return true;
  }
  return lookup_late(t, out);
}

bool lookup_op(MPI_Op op, RedOp* out) noexcept {
  static const OpRow rows[] = {
      {MPI_SUM, RedOp::sum},   {MPI_PROD, RedOp::prod}, {MPI_MIN, RedOp::min},
      {MPI_MAX, RedOp::max},   {MPI_LAND, RedOp::land}, {MPI_LOR, RedOp::lor},
      {MPI_LXOR, RedOp::lxor}, {MPI_BAND, RedOp::band}, {MPI_BOR, RedOp::bor},
      {MPI_BXOR, RedOp::bxor}, {MPI_MINLOC, RedOp::minloc}, {MPI_MAXLOC, RedOp::maxloc},
  };
  for (const OpRow& r : rows) {
    if (r.op == op) {
      *out = r.red;
      return true;
    }
  }
  return false;
}

bool op_valid_for(RedOp op, Category cat) noexcept {
  switch (op) {
    case RedOp::sum:
    case RedOp::prod:
      return cat == Category::c_integer || cat == Category::f_integer || cat == Category::floating ||
             cat == Category::complex;
    case RedOp::min:
    case RedOp::max:
      return cat == Category::c_integer || cat == Category::f_integer || cat == Category::floating;
    case RedOp::land:
    case RedOp::lor:
    case RedOp::lxor:
      return cat == Category::c_integer || cat == Category::logical;
    case RedOp::band:
    case RedOp::bor:
    case RedOp::bxor:
      return cat == Category::c_integer || cat == Category::f_integer || cat == Category::byte;
    case RedOp::minloc:
    case RedOp::maxloc:
      return cat == Category::pair;  // MPI-4.0 §6.9.4
    case RedOp::count_:
      break;
  }
  return false;
}

MPI_Datatype float16_type() { return g_f16 != MPI_DATATYPE_NULL ? g_f16 : make_half(&g_f16, "DUCT_FLOAT16"); }
MPI_Datatype bfloat16_type() { return g_bf16 != MPI_DATATYPE_NULL ? g_bf16 : make_half(&g_bf16, "DUCT_BFLOAT16"); }

void free_half_types() noexcept {
  std::lock_guard<std::mutex> lock(g_half_mutex);
  if (g_f16 != MPI_DATATYPE_NULL) MPI_Type_free(&g_f16);
  if (g_bf16 != MPI_DATATYPE_NULL) MPI_Type_free(&g_bf16);
  g_f16 = g_bf16 = MPI_DATATYPE_NULL;
}

}  // namespace duct
