// duct-bench: collective bandwidth, duct side by side with the MPI library.
//
// Columns follow nccl-tests (size, count, type, redop, time, algbw, busbw,
// #wrong for out-of-place and in-place), followed by the same measurement of
// the path a user would otherwise take on the same buffers: the MPI
// library's own collective on host buffers, or copy-to-host + MPI + copy-back
// on device buffers. "speedup" is that time over duct's out-of-place time.
// Times are the mean per iteration of the slowest rank.
//
//   mpirun -np 4 duct-bench -b 8 -e 64M -f 2 -n 20 -w 5 -c 1 -d auto -t float -o sum
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_data.hpp"
#include "core/config.hpp"
#include "duct/duct.h"
#include "memory/cuda.hpp"
#include "select/select.hpp"

namespace {

using duct::Elem;
using duct::RedOp;
namespace bench = duct::bench;
namespace cuda = duct::memory::cuda;

struct Options {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 64u << 20;
  double factor = 2;
  int iters = 20;
  int warmup = 5;
  int check = 1;
  std::string device = "auto";
  std::string type = "float";
  std::string op = "sum";
  std::string coll = "allreduce";
  std::string algo;
  int mpi = 1;
};

struct TypeRow {
  const char* name;
  Elem elem;
  MPI_Datatype (*mpi)();
};

MPI_Datatype t_i8() { return MPI_INT8_T; }
MPI_Datatype t_u8() { return MPI_UINT8_T; }
MPI_Datatype t_i16() { return MPI_INT16_T; }
MPI_Datatype t_u16() { return MPI_UINT16_T; }
MPI_Datatype t_i32() { return MPI_INT32_T; }
MPI_Datatype t_u32() { return MPI_UINT32_T; }
MPI_Datatype t_i64() { return MPI_INT64_T; }
MPI_Datatype t_u64() { return MPI_UINT64_T; }
MPI_Datatype t_f32() { return MPI_FLOAT; }
MPI_Datatype t_f64() { return MPI_DOUBLE; }
MPI_Datatype t_f16() { return DUCT_FLOAT16; }
MPI_Datatype t_bf16() { return DUCT_BFLOAT16; }

const TypeRow kTypes[] = {
    {"int8", Elem::i8, t_i8},       {"uint8", Elem::u8, t_u8},       {"int16", Elem::i16, t_i16},
    {"uint16", Elem::u16, t_u16},   {"int32", Elem::i32, t_i32},     {"uint32", Elem::u32, t_u32},
    {"int64", Elem::i64, t_i64},    {"uint64", Elem::u64, t_u64},    {"float", Elem::f32, t_f32},
    {"double", Elem::f64, t_f64},   {"half", Elem::f16, t_f16},      {"float16", Elem::f16, t_f16},
    {"bfloat16", Elem::bf16, t_bf16},
};

struct OpRow {
  const char* name;
  RedOp op;
  MPI_Op mpi;
};

// 16-bit float reductions for MPI, as a user would write them (MPI cannot
// reduce DUCT_FLOAT16 or DUCT_BFLOAT16 itself).
RedOp g_user_op;
Elem g_user_elem;
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  bool f16 = g_user_elem == Elem::f16;
  for (int i = 0; i < *len; ++i) {
    float x = f16 ? duct::half::f16_to_f32(a[i]) : duct::half::bf16_to_f32(a[i]);
    float y = f16 ? duct::half::f16_to_f32(b[i]) : duct::half::bf16_to_f32(b[i]);
    float z = g_user_op == RedOp::sum ? x + y : g_user_op == RedOp::prod ? x * y : g_user_op == RedOp::min ? std::min(x, y) : std::max(x, y);
    b[i] = f16 ? duct::half::f32_to_f16(z) : duct::half::f32_to_bf16(z);
  }
}

void usage() {
  std::printf(
      "usage: duct-bench [options]\n"
      "  -b <bytes>    smallest size (default 8; k/M/G suffixes)\n"
      "  -e <bytes>    largest size (default 64M)\n"
      "  -f <factor>   size multiplier between rows (default 2)\n"
      "  -n <iters>    timed iterations per size (default 20)\n"
      "  -w <iters>    warm-up iterations (default 5)\n"
      "  -c <0|1>      check results (default 1): #wrong counts elements that differ from the exact answer\n"
      "  -d <kind>     buffers: cuda, host or auto (cuda when a device is usable; default auto)\n"
      "  -t <type>     int8 uint8 int16 uint16 int32 uint32 int64 uint64 float double half bfloat16 (default float)\n"
      "  -o <op>       sum prod min max land lor lxor band bor bxor (default sum)\n"
      "  -C <coll>     collective (default allreduce)\n"
      "  -A <algo>     force an algorithm (duct-info -a lists them)\n"
      "  -m <0|1>      also time the MPI library on the same buffers (default 1)\n");
}

bool parse(int argc, char** argv, Options* o, std::string* err) {
  int c;
  while ((c = getopt(argc, argv, "b:e:f:n:w:c:d:t:o:C:A:m:h")) != -1) {
    switch (c) {
      case 'b':
      case 'e': {
        std::size_t v;
        if (!duct::config::parse_size(optarg, &v)) return (*err = std::string("bad size: ") + optarg), false;
        (c == 'b' ? o->min_bytes : o->max_bytes) = v;
        break;
      }
      case 'f': o->factor = std::atof(optarg); break;
      case 'n': o->iters = std::atoi(optarg); break;
      case 'w': o->warmup = std::atoi(optarg); break;
      case 'c': o->check = std::atoi(optarg); break;
      case 'd': o->device = optarg; break;
      case 't': o->type = optarg; break;
      case 'o': o->op = optarg; break;
      case 'C': o->coll = optarg; break;
      case 'A': o->algo = optarg; break;
      case 'm': o->mpi = std::atoi(optarg); break;
      case 'h': usage(); std::exit(0);
      default: return (*err = "unknown option"), false;
    }
  }
  if (o->factor <= 1 && o->max_bytes > o->min_bytes) return (*err = "-f must be > 1"), false;
  if (o->iters < 1) return (*err = "-n must be >= 1"), false;
  return true;
}

// A buffer of either kind, with host-side fill and check.
struct Buf {
  void* p = nullptr;
  bool device = false;
  std::size_t bytes = 0;
  ~Buf() {
    if (device) cuda::free_device(p);
    else std::free(p);
  }
  bool alloc(std::size_t n, bool dev) {
    bytes = n;
    device = dev;
    if (dev) return cuda::alloc_device(n ? n : 1, &p).is_ok();
    p = std::aligned_alloc(64, (std::max<std::size_t>(n, 64) + 63) / 64 * 64);
    return p != nullptr;
  }
  void upload(const std::vector<char>& h) {
    if (device) (void)cuda::copy(p, h.data(), bytes);
    else std::memcpy(p, h.data(), bytes);
  }
  std::vector<char> download() const {
    std::vector<char> h(bytes);
    if (device) (void)cuda::copy(h.data(), p, bytes);
    else std::memcpy(h.data(), p, bytes);
    return h;
  }
};

double max_over_ranks(double v) {
  double m = v;
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

long long sum_over_ranks(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  Options o;
  std::string err;
  auto fail = [&](const std::string& msg) {
    if (rank == 0) std::fprintf(stderr, "duct-bench: %s\n", msg.c_str());
    MPI_Finalize();
    std::exit(2);
  };
  if (!parse(argc, argv, &o, &err)) {
    if (rank == 0) usage();
    fail(err);
  }
  const TypeRow* type = nullptr;
  for (const TypeRow& t : kTypes)
    if (o.type == t.name) type = &t;
  if (!type) fail("unknown type '" + o.type + "'");
  const OpRow ops[] = {{"sum", RedOp::sum, MPI_SUM},    {"prod", RedOp::prod, MPI_PROD}, {"min", RedOp::min, MPI_MIN},
                       {"max", RedOp::max, MPI_MAX},    {"land", RedOp::land, MPI_LAND}, {"lor", RedOp::lor, MPI_LOR},
                       {"lxor", RedOp::lxor, MPI_LXOR}, {"band", RedOp::band, MPI_BAND}, {"bor", RedOp::bor, MPI_BOR},
                       {"bxor", RedOp::bxor, MPI_BXOR}};
  const OpRow* op = nullptr;
  for (const OpRow& r : ops)
    if (o.op == r.name) op = &r;
  if (!op) fail("unknown op '" + o.op + "'");
  if (o.coll != "allreduce") fail("unknown collective '" + o.coll + "' (this build has: allreduce)");
  if (!o.algo.empty()) {
    if (duct::select::find_algo(duct::select::Coll::allreduce, o.algo) < 0)
      fail("no " + o.coll + " algorithm '" + o.algo + "' (duct-info -a lists them)");
    // Every rank parses the same arguments, so every rank forces the same algorithm.
    std::string tune = o.coll + ":0-inf:" + o.algo;
    setenv("DUCT_TUNE", tune.c_str(), 1);
  }
  bool dev = o.device == "cuda" || (o.device == "auto" && DUCT_Query_cuda_support());
  if (o.device == "cuda" && !DUCT_Query_cuda_support())
    fail("-d cuda: no usable CUDA device (" + cuda::unavailable_reason() + "); use -d host");
  if (o.device != "cuda" && o.device != "host" && o.device != "auto") fail("-d must be cuda, host or auto");

  MPI_Datatype dt = type->mpi();
  MPI_Op mpi_op = op->mpi;
  bool half = type->elem == Elem::f16 || type->elem == Elem::bf16;
  if (half) {
    if (op->op != RedOp::sum && op->op != RedOp::prod && op->op != RedOp::min && op->op != RedOp::max)
      fail("16-bit float types take sum, prod, min or max");
    g_user_op = op->op;
    g_user_elem = type->elem;
    MPI_Op_create(half_op, 1, &mpi_op);
  }
  const std::size_t esz = duct::elem_size(type->elem);

  // Where the ranks are.
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int hlen = 0;
  MPI_Get_processor_name(host, &hlen);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  int leader = local_rank == 0, nodes = 0;
  MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  if (rank == 0) {
    std::printf("# duct-bench %s: %s, %d ranks on %d node(s), %s buffers, %s %s, %d iterations (+%d warm-up), "
                "check %s\n",
                DUCT_Version_string(), o.coll.c_str(), n, nodes, dev ? "cuda device" : "host", type->name,
                op->name, o.iters, o.warmup, o.check ? "on" : "off");
    if (!dev) std::printf("# host buffers: %s\n", DUCT_Query_cuda_support() ? "(-d host requested)" : cuda::unavailable_reason().c_str());
    std::printf("# selection: %s\n", o.algo.empty() ? duct::select::default_rules() : ("forced " + o.algo).c_str());
    const char* mpi_label = dev ? "MPI staged (D2H+MPI_Allreduce+H2D)" : "MPI_Allreduce";
    std::printf("#\n# %49s %-31s %-31s %s\n", "", "duct out-of-place", "duct in-place", mpi_label);
    std::printf("# %12s %12s %8s %6s %9s %7s %7s %6s %9s %7s %7s %6s %9s %7s %7s %6s %8s\n", "size", "count", "type",
                "redop", "time(us)", "algbw", "busbw", "#wrong", "time(us)", "algbw", "busbw", "#wrong", "time(us)",
                "algbw", "busbw", "#wrong", "speedup");
    std::printf("# %12s %12s %8s %6s %9s %7s %7s %6s %9s %7s %7s %6s %9s %7s %7s %6s %8s\n", "(B)", "(elements)", "",
                "", "", "(GB/s)", "(GB/s)", "", "", "(GB/s)", "(GB/s)", "", "", "(GB/s)", "(GB/s)", "", "(x)");
  }

  const double bus_factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  long long total_wrong = 0;
  int rc_bad = 0;
  for (double sz = static_cast<double>(o.min_bytes); sz <= static_cast<double>(o.max_bytes) * 1.0000001;
       sz = (o.factor > 1 ? sz * o.factor : static_cast<double>(o.max_bytes) * 2)) {
    std::size_t count = static_cast<std::size_t>(sz) / esz;
    std::size_t bytes = count * esz;
    Buf send, recv;
    if (!send.alloc(bytes, dev) || !recv.alloc(bytes, dev)) fail("cannot allocate " + std::to_string(bytes) + " bytes");
    std::vector<char> input(bytes);
    bench::fill_input(input.data(), count, type->elem, op->op, rank);
    send.upload(input);

    // One call checked, then the timed loop, for each variant.
    auto measure = [&](auto&& call, bool in_place, long long* wrong) -> double {
      if (in_place) recv.upload(input);
      if (call() != MPI_SUCCESS) rc_bad = 1;
      *wrong = -1;
      if (o.check) {
        std::vector<char> out = recv.download();
        *wrong = sum_over_ranks(static_cast<long long>(bench::count_wrong(out.data(), count, type->elem, op->op, n)));
      }
      for (int i = 0; i < o.warmup; ++i) call();
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < o.iters; ++i) call();
      double t = (MPI_Wtime() - t0) / o.iters;
      return max_over_ranks(t);
    };
    auto duct_oop = [&] { return DUCT_Allreduce(send.p, recv.p, static_cast<int>(count), dt, op->mpi, MPI_COMM_WORLD); };
    auto duct_ip = [&] { return DUCT_Allreduce(MPI_IN_PLACE, recv.p, static_cast<int>(count), dt, op->mpi, MPI_COMM_WORLD); };
    std::vector<char> hs, hr;
    auto mpi_call = [&] {
      if (!dev) return MPI_Allreduce(send.p, recv.p, static_cast<int>(count), dt, mpi_op, MPI_COMM_WORLD);
      hs.resize(bytes);
      hr.resize(bytes);
      (void)cuda::copy(hs.data(), send.p, bytes);
      int rc = MPI_Allreduce(hs.data(), hr.data(), static_cast<int>(count), dt, mpi_op, MPI_COMM_WORLD);
      (void)cuda::copy(recv.p, hr.data(), bytes);
      return rc;
    };
    long long w_oop = 0, w_ip = 0, w_mpi = -1;
    double t_oop = measure(duct_oop, false, &w_oop);
    double t_ip = measure(duct_ip, true, &w_ip);
    double t_mpi = o.mpi ? measure(mpi_call, false, &w_mpi) : 0;
    total_wrong += std::max(0LL, w_oop) + std::max(0LL, w_ip);

    if (rank == 0) {
      auto cols = [&](double t, long long w) {
        double algbw = t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0;
        std::printf(" %9.2f %7.3f %7.3f %6s", t * 1e6, algbw, algbw * bus_factor,
                    w < 0 ? "N/A" : std::to_string(w).c_str());
      };
      std::printf("  %12zu %12zu %8s %6s", bytes, count, type->name, op->name);
      cols(t_oop, w_oop);
      cols(t_ip, w_ip);
      if (o.mpi) {
        cols(t_mpi, w_mpi);
        std::printf(" %8.2f\n", t_oop > 0 ? t_mpi / t_oop : 0);
      } else {
        std::printf(" %9s %7s %7s %6s %8s\n", "-", "-", "-", "-", "-");
      }
      std::fflush(stdout);
    }
    if (static_cast<double>(o.max_bytes) <= static_cast<double>(o.min_bytes)) break;
  }
  if (rank == 0) {
    std::printf("# busbw = algbw * 2(n-1)/n; out of bounds values: %lld wrong elements in duct's results\n", total_wrong);
    if (rc_bad) std::printf("# some calls returned an error\n");
  }
  if (half) MPI_Op_free(&mpi_op);
  MPI_Finalize();
  return (total_wrong > 0 || rc_bad) ? 1 : 0;
}
