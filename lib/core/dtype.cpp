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

// MPI-4.0 §6.9.2: "C integer" types, "Floating point" (C types only; long
// double and Fortran types go through the fallback), "Logical" (MPI_C_BOOL)
// and "Byte".
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

// Fortran's predefined types, mapped by the sizes the MPI library gives them
// (MPI_INTEGER is 8 bytes under -fdefault-integer-8): sized once, after
// MPI_Init, on the first lookup that misses the other tables. `elem` stays
// count_ for a size duct has no kernel for (MPI reduces that type).
struct FortranRow {
  MPI_Datatype type;
  bool real;
  const char* name;
  Elem elem = Elem::count_;
};
FortranRow g_fortran[] = {
    {MPI_REAL, true, "MPI_REAL"},         {MPI_DOUBLE_PRECISION, true, "MPI_DOUBLE_PRECISION"},
    {MPI_REAL4, true, "MPI_REAL4"},       {MPI_REAL8, true, "MPI_REAL8"},
    {MPI_INTEGER, false, "MPI_INTEGER"},  {MPI_INTEGER1, false, "MPI_INTEGER1"},
    {MPI_INTEGER2, false, "MPI_INTEGER2"}, {MPI_INTEGER4, false, "MPI_INTEGER4"},
    {MPI_INTEGER8, false, "MPI_INTEGER8"},
};
std::once_flag g_fortran_once;
std::atomic<bool> g_fortran_sized{false};

Elem fortran_elem(bool real, int size) {
  switch (size) {
    case 1: return real ? Elem::count_ : Elem::i8;
    case 2: return real ? Elem::count_ : Elem::i16;
    case 4: return real ? Elem::f32 : Elem::i32;
    case 8: return real ? Elem::f64 : Elem::i64;
    default: return Elem::count_;
  }
}

bool lookup_fortran(MPI_Datatype t, DType* out) noexcept {
  if (!g_fortran_sized.load(std::memory_order_acquire)) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) return false;
    std::call_once(g_fortran_once, [] {
      for (FortranRow& r : g_fortran) {
        int size = 0;
        if (r.type != MPI_DATATYPE_NULL && PMPI_Type_size(r.type, &size) == MPI_SUCCESS)
          r.elem = fortran_elem(r.real, size);
      }
      g_fortran_sized.store(true, std::memory_order_release);
    });
  }
  for (const FortranRow& r : g_fortran) {
    if (r.type != t) continue;
    if (r.elem == Elem::count_) return false;
    *out = {r.elem, r.real ? Category::floating : Category::f_integer, r.name};
    return true;
  }
  return false;
}

}  // namespace

const char* elem_name(Elem e) noexcept {
  static const char* names[] = {"int8",   "uint8",  "int16",   "uint16", "int32",  "uint32",
                                "int64",  "uint64", "float16", "bfloat16", "float32", "float64"};
  auto i = static_cast<size_t>(e);
  return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

const char* op_name(RedOp op) noexcept {
  static const char* names[] = {"sum", "prod", "min", "max", "land",
                                "lor", "lxor", "band", "bor", "bxor"};
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
  return lookup_fortran(t, out);
}

bool lookup_op(MPI_Op op, RedOp* out) noexcept {
  static const OpRow rows[] = {
      {MPI_SUM, RedOp::sum},   {MPI_PROD, RedOp::prod}, {MPI_MIN, RedOp::min},
      {MPI_MAX, RedOp::max},   {MPI_LAND, RedOp::land}, {MPI_LOR, RedOp::lor},
      {MPI_LXOR, RedOp::lxor}, {MPI_BAND, RedOp::band}, {MPI_BOR, RedOp::bor},
      {MPI_BXOR, RedOp::bxor},
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
