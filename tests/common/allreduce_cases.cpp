// DUCT_Allreduce against the MPI library's own MPI_Allreduce on host copies,
// for every supported datatype and op, counts 0, 1, 7 and 1000003, in place
// and out of place, on MPI_COMM_WORLD and on a split communicator, on the
// suite's memory kind (host here, device in tests/gpu).
//
// Inputs are small integers (apps/bench_data.hpp), so every result is exact
// in every type whatever the reduction order: duct and MPI must agree bit for
// bit, and sampled elements are also checked against the formula, which
// depends on neither. Random real-valued floats are checked separately: all
// ranks must hold the same bits, run after run, and be close to MPI.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include <unistd.h>

#include "bench_data.hpp"
#include "duct/duct.h"
#include "testutil.hpp"

using namespace duct;
using namespace duct::test;

namespace {

struct TType {
  const char* name;
  MPI_Datatype (*get)();
  Elem elem;
  Category cat;
  bool large;  // run the large count too (the aliases of canonical types only run small counts)
};

#define T(name, expr, elem, cat, large) \
  TType { name, [] { return static_cast<MPI_Datatype>(expr); }, Elem::elem, Category::cat, large }
const TType kTypes[] = {
    T("MPI_INT8_T", MPI_INT8_T, i8, c_integer, true),
    T("MPI_UINT8_T", MPI_UINT8_T, u8, c_integer, true),
    T("MPI_INT16_T", MPI_INT16_T, i16, c_integer, true),
    T("MPI_UINT16_T", MPI_UINT16_T, u16, c_integer, true),
    T("MPI_INT32_T", MPI_INT32_T, i32, c_integer, true),
    T("MPI_UINT32_T", MPI_UINT32_T, u32, c_integer, true),
    T("MPI_INT64_T", MPI_INT64_T, i64, c_integer, true),
    T("MPI_UINT64_T", MPI_UINT64_T, u64, c_integer, true),
    T("MPI_FLOAT", MPI_FLOAT, f32, floating, true),
    T("MPI_DOUBLE", MPI_DOUBLE, f64, floating, true),
    T("DUCT_FLOAT16", DUCT_FLOAT16, f16, floating, true),
    T("DUCT_BFLOAT16", DUCT_BFLOAT16, bf16, floating, true),
    T("MPI_C_BOOL", MPI_C_BOOL, u8, logical, true),
    T("MPI_BYTE", MPI_BYTE, u8, byte, true),
    T("MPI_INT", MPI_INT, i32, c_integer, false),
    T("MPI_UNSIGNED", MPI_UNSIGNED, u32, c_integer, false),
    T("MPI_LONG", MPI_LONG, i64, c_integer, false),
    T("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, u64, c_integer, false),
    T("MPI_SHORT", MPI_SHORT, i16, c_integer, false),
    T("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, i8, c_integer, false),
    T("MPI_CHAR", MPI_CHAR, i8, c_integer, true),
    T("MPI_AINT", MPI_AINT, i64, c_integer, false),
    T("MPI_COUNT", MPI_COUNT, i64, c_integer, false),
    T("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, u8, c_integer, false),
};
#undef T


// The MPI library cannot reduce 16-bit floats: the reference reduces them
// with a user op in float, as an application would.
RedOp g_half_op;
Elem g_half_elem;
void half_user_op(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    bool f16 = g_half_elem == Elem::f16;
    float x = f16 ? half::f16_to_f32(a[i]) : half::bf16_to_f32(a[i]);
    float y = f16 ? half::f16_to_f32(b[i]) : half::bf16_to_f32(b[i]);
    float z = g_half_op == RedOp::sum ? x + y : g_half_op == RedOp::prod ? x * y
              : g_half_op == RedOp::min ? (x < y ? x : y) : (x > y ? x : y);
    b[i] = f16 ? half::f32_to_f16(z) : half::f32_to_bf16(z);
  }
}

std::string describe(const char* call, const TType& t, const TOp& o, std::size_t count, bool in_place, MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::ostringstream s;
  s << call << " " << t.name << " " << o.name << " count=" << count << (in_place ? " in-place" : " out-of-place")
    << " on " << n << " ranks (" << (suite_kind() == MemKind::device ? "device" : "host") << " memory)";
  return s.str();
}

// One case, checked on this rank.
void run_case(const TType& t, const TOp& o, std::size_t count, bool in_place, MPI_Comm comm) {
  int r = 0, n = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  const std::size_t esz = elem_size(t.elem);
  const std::size_t bytes = count * esz;
  const MPI_Datatype dt = t.get();
  std::string what = describe("DUCT_Allreduce", t, o, count, in_place, comm);
  INFO(what);

  std::vector<unsigned char> input(bytes);
  bench::fill_input(input.data(), count, t.elem, o.op, r);
  if (t.cat == Category::logical)
    for (auto& b : input) b = b != 0;  // a C bool holds 0 or 1

  // Reference: the MPI library on host copies.
  std::vector<unsigned char> ref(bytes);
  MPI_Op ref_op = o.mpi;
  if (t.elem == Elem::f16 || t.elem == Elem::bf16) {
    g_half_op = o.op;
    g_half_elem = t.elem;
    MPI_Op_create(half_user_op, 1, &ref_op);
  }
  {
    Pending p("MPI_Allreduce reference for " + what);
    MPI_Allreduce(input.data(), ref.data(), static_cast<int>(count), dt, ref_op, comm);
  }
  if (ref_op != o.mpi) MPI_Op_free(&ref_op);

  // duct on the suite's memory kind; the receive buffer sits between guard
  // bytes that must survive.
  const std::size_t guard = 64;
  Buf send(bytes, suite_kind());
  Buf recv(bytes + 2 * guard, suite_kind());
  send.upload(input.data());
  recv.fill(0xa5);
  void* rbuf = static_cast<char*>(recv.data()) + guard;
  if (in_place) {
    std::vector<unsigned char> staged(bytes + 2 * guard, 0xa5);
    std::copy(input.begin(), input.end(), staged.begin() + static_cast<std::ptrdiff_t>(guard));
    recv.upload(staged.data());
  }
  int rc;
  {
    Pending p(what);
    rc = DUCT_Allreduce(in_place ? MPI_IN_PLACE : send.data(), rbuf, static_cast<int>(count), dt, o.mpi, comm);
  }
  CHECK(rc == MPI_SUCCESS);

  std::vector<unsigned char> out = recv.download();
  std::size_t first;
  const std::size_t wrong = count_differing(
      count, [&](std::size_t i) { return std::memcmp(out.data() + guard + i * esz, ref.data() + i * esz, esz) == 0; },
      &first);
  INFO("first differing element " << first);
  CHECK(wrong == 0);
  CHECK(guards_intact(out, guard, bytes));
  if (!in_place) CHECK(send.download() == input);  // the send buffer is read only

  // Sampled check against the formula (independent of MPI and duct).
  if (t.cat != Category::logical && count > 0) {
    std::size_t step = count > 5000 ? 97 : 1, off_formula = 0;
    alignas(16) unsigned char want[64] = {};
    for (std::size_t i = 0; i < count; i += step) {
      bench::store(want, t.elem, bench::expected_value(n, i, o.op, t.elem));
      off_formula += std::memcmp(want, out.data() + guard + i * esz, esz) != 0;
    }
    CHECK(off_formula == 0);
  }
}

void run_matrix(MPI_Comm comm, bool large) {
  const std::size_t counts[] = {0, 1, 7, 1000003};
  for (const TType& t : kTypes) {
    for (const TOp& o : kRedOps) {
      if (!op_valid_for(o.op, t.cat)) continue;
      for (std::size_t count : counts) {
        if (count > 7 && !(large && t.large)) continue;
        for (bool in_place : {false, true}) run_case(t, o, count, in_place, comm);
      }
    }
  }
}

// The large counts take most of the time: DUCT_TEST_LARGE=0 skips them
// (quick local runs); the registered tests always run them.
bool large_enabled() {
  const char* s = std::getenv("DUCT_TEST_LARGE");
  return !s || std::strcmp(s, "0") != 0;
}

}  // namespace

TEST_CASE("allreduce equals MPI_Allreduce on MPI_COMM_WORLD for every type, op and count", "[allreduce]") {
  run_matrix(MPI_COMM_WORLD, large_enabled());
}

TEST_CASE("allreduce equals MPI_Allreduce on a split communicator in reversed rank order", "[allreduce]") {
  // Two sub-communicators (even and odd world ranks), ranks in reverse order:
  // rank numbering and node layout differ from MPI_COMM_WORLD.
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank() % 2, size() - rank(), &sub);
  run_matrix(sub, large_enabled());
  MPI_Comm_free(&sub);
}

TEST_CASE("allreduce on duplicated and freed communicators, interleaved", "[allreduce]") {
  // Contexts of several communicators live side by side and are freed with
  // their communicators; message tags of one never match another's.
  for (int round = 0; round < 20; ++round) {
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank(), &b);
    for (MPI_Comm c : {a, b, MPI_COMM_WORLD}) {
      std::vector<std::int64_t> in(1000, rank() + round), out(1000, -1);
      Buf s(in.size() * 8, suite_kind()), rcv(in.size() * 8, suite_kind());
      s.upload(in.data());
      int rc;
      {
        Pending p("DUCT_Allreduce on a fresh communicator, round " + std::to_string(round));
        rc = DUCT_Allreduce(s.data(), rcv.data(), 1000, MPI_INT64_T, MPI_SUM, c);
      }
      CHECK(rc == MPI_SUCCESS);
      auto h = rcv.download();
      std::memcpy(out.data(), h.data(), h.size());
      std::int64_t want = static_cast<std::int64_t>(size()) * (size() - 1) / 2 + static_cast<std::int64_t>(size()) * round;
      CHECK(std::count(out.begin(), out.end(), want) == 1000);
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
  }
}

TEST_CASE("real-valued float sums: identical bits on every rank and every run, close to MPI", "[allreduce]") {
  std::mt19937 rng(static_cast<unsigned>(1000 + rank()));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t count : {std::size_t{7}, std::size_t{1000003}}) {
    std::vector<double> x(count);
    for (double& v : x) v = u(rng);
    Buf s(count * 8, suite_kind()), r1(count * 8, suite_kind()), r2(count * 8, suite_kind());
    s.upload(x.data());
    {
      Pending p("DUCT_Allreduce of random doubles, count " + std::to_string(count));
      CHECK(DUCT_Allreduce(s.data(), r1.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
      CHECK(DUCT_Allreduce(s.data(), r2.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    }
    auto a = r1.download(), b = r2.download();
    CHECK(a == b);  // run to run
    // Every rank holds the same bits: compare a digest across ranks.
    unsigned long long h = 1469598103934665603ull;
    for (unsigned char c : a) h = (h ^ c) * 1099511628211ull;
    unsigned long long hmin = 0, hmax = 0;
    MPI_Allreduce(&h, &hmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(hmin == hmax);
    // Close to MPI's result (whose order differs): |d - m| <= n * eps * sum|x|.
    std::vector<double> ref(count), absx(count), abs_sum(count);
    MPI_Allreduce(x.data(), ref.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (std::size_t i = 0; i < count; ++i) absx[i] = std::fabs(x[i]);
    MPI_Allreduce(absx.data(), abs_sum.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    std::vector<double> d(count);
    std::memcpy(d.data(), a.data(), a.size());
    std::size_t off = 0;
    for (std::size_t i = 0; i < count; ++i)
      off += std::fabs(d[i] - ref[i]) > size() * 2.3e-16 * abs_sum[i] + 1e-300;
    CHECK(off == 0);
  }
}

TEST_CASE("thousands of back-to-back small allreduces each see exactly their own inputs", "[allreduce]") {
  // Consecutive small calls reuse shared-memory slots and message tags: a
  // slot overwritten too early or a message matched by the wrong call shows
  // up as a wrong sum. Ranks drift apart (rank 0 sometimes sleeps).
  const int iters = 3000;
  Buf s(3 * 8, suite_kind()), r(3 * 8, suite_kind());
  std::size_t wrong = 0;
  Pending p("back-to-back small DUCT_Allreduce calls");
  for (int it = 0; it < iters; ++it) {
    std::int64_t in[3] = {rank() + it, 2 * rank() - it, it * 7 + 1};
    s.upload(in);
    if (rank() == 0 && it % 500 == 0) usleep(2000);
    CHECK(DUCT_Allreduce(s.data(), r.data(), 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    std::vector<unsigned char> h = r.download();
    std::int64_t out[3];
    std::memcpy(out, h.data(), sizeof out);
    const std::int64_t n = size(), ranks = n * (n - 1) / 2;
    wrong += out[0] != ranks + n * it;
    wrong += out[1] != 2 * ranks - n * it;
    wrong += out[2] != n * (it * 7 + 1);
  }
  CHECK(wrong == 0);
}
