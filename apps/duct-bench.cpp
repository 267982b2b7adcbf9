// duct-bench: collective bandwidth, duct side by side with the MPI library.
//
// Columns follow nccl-tests (size, count, type, redop, root, time, algbw,
// busbw, #wrong for out-of-place and in-place), followed by the same
// measurement of the path a user would otherwise take on the same buffers:
// the MPI library's own collective on host buffers, or copy-to-host + MPI +
// copy-back on device buffers. "speedup" is that time over duct's
// out-of-place time. Times are the mean per iteration of the slowest rank.
//
// Sizes follow nccl-tests: the largest buffer of one rank (allreduce,
// bcast, reduce: the vector; allgather, gather: the gathered result;
// reduce_scatter, scatter: the input; alltoall: all blocks). busbw factors:
// allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall, gather, scatter
// (n-1)/n; bcast, reduce 1.
//
//   mpirun -np 4 duct-bench -C allreduce -b 8 -e 64M -f 2 -n 20 -w 5 -c 1 -d auto -t float -o sum
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_compute.hpp"
#include "bench_data.hpp"
#include "core/comm.hpp"
#include "core/config.hpp"
#include "core/sim.hpp"
#include "duct/duct.h"
#include "duct/duct_stream.h"
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
  int iters = 20;        // 0: as many as fit in about 0.1 s per timed block
  int warmup = 5;
  int rounds = 1;        // -R: timed blocks per size, duct and MPI alternating; medians are printed
  int check = 1;
  int root = 0;
  std::string device = "auto";
  std::string type = "float";
  std::string op = "sum";
  std::string coll = "allreduce";
  std::string algo;
  int mpi = 1;
  int duct = 1;          // -D: time duct's out-of-place call
  int in_place = 1;      // -I: time duct's in-place call where the collective has one
  int nonblocking = 0;   // -N: DUCT_I* + MPI_Wait (and MPI_I* for the MPI column)
  int stream = 0;        // -S: DUCT_*_stream on one CUDA stream (1), -G: replays of a captured graph (2)
  double overlap = -1;   // -O: compute time in us (0: as long as the blocking collective); <0: off
  double poll_us = 0;    // -T: call MPI_Test every this many us of compute (0: never)
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
MPI_Datatype t_char() { return MPI_CHAR; }
MPI_Datatype t_c32() { return MPI_C_FLOAT_COMPLEX; }
MPI_Datatype t_c64() { return MPI_C_DOUBLE_COMPLEX; }
MPI_Datatype t_ldbl() { return MPI_LONG_DOUBLE; }
MPI_Datatype t_float_int() { return MPI_FLOAT_INT; }
MPI_Datatype t_double_int() { return MPI_DOUBLE_INT; }
MPI_Datatype t_long_int() { return MPI_LONG_INT; }
MPI_Datatype t_2int() { return MPI_2INT; }
MPI_Datatype t_short_int() { return MPI_SHORT_INT; }

const TypeRow kTypes[] = {
    {"int8", Elem::i8, t_i8},       {"uint8", Elem::u8, t_u8},       {"int16", Elem::i16, t_i16},
    {"uint16", Elem::u16, t_u16},   {"int32", Elem::i32, t_i32},     {"uint32", Elem::u32, t_u32},
    {"int64", Elem::i64, t_i64},    {"uint64", Elem::u64, t_u64},    {"float", Elem::f32, t_f32},
    {"double", Elem::f64, t_f64},   {"half", Elem::f16, t_f16},      {"float16", Elem::f16, t_f16},
    {"bfloat16", Elem::bf16, t_bf16},
    {"char", std::is_signed_v<char> ? Elem::i8 : Elem::u8, t_char},
    {"complex", Elem::c32, t_c32},  {"dcomplex", Elem::c64, t_c64},   {"longdouble", Elem::ldbl, t_ldbl},
    {"float_int", Elem::f32_i32, t_float_int},  {"double_int", Elem::f64_i32, t_double_int},
    {"long_int", Elem::long_i32, t_long_int},   {"2int", Elem::i32_i32, t_2int},
    {"short_int", Elem::i16_i32, t_short_int},
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
      "  -C <coll>     allreduce bcast reduce allgather reduce_scatter alltoall gather scatter barrier (default allreduce)\n"
      "  -A <algo>     force an algorithm (duct-info -a lists them)\n"
      "  -b <bytes>    smallest size (default 8; k/M/G suffixes)\n"
      "  -e <bytes>    largest size (default 64M)\n"
      "  -f <factor>   size multiplier between rows (default 2)\n"
      "  -n <iters>    timed iterations per size (default 20; 0: as many as fit in about 0.1 s, from the warm-up)\n"
      "  -w <iters>    warm-up iterations (default 5); calls that take little time then go on in batches of 4\n"
      "                until a batch is no slower than the one before (at most 0.05 s), whatever -w is\n"
      "  -c <0|1>      check results (default 1): #wrong counts elements that differ from the exact answer;\n"
      "                under duct-sim, -c 0 also puts the buffers in SMPI's shared memory (times only)\n"
      "  -d <kind>     buffers: cuda, host or auto (cuda when a device is usable; default auto)\n"
      "  -t <type>     int8 uint8 int16 uint16 int32 uint32 int64 uint64 float double half bfloat16 char complex\n"
      "                dcomplex longdouble float_int double_int long_int 2int short_int (default float)\n"
      "  -o <op>       sum prod min max land lor lxor band bor bxor minloc maxloc (default sum)\n"
      "  -r <root>     root of bcast, reduce, gather, scatter (default 0)\n"
      "  -m <0|1>      also time the MPI library on the same buffers (default 1)\n"
      "  -D <0|1>      time duct (default 1; 0: the MPI library alone, e.g. each of duct-sim's selectors)\n"
      "  -I <0|1>      also time duct in place where the collective has an in-place form (default 1)\n"
      "  -R <rounds>   time each size in <rounds> blocks, duct out-of-place, duct in-place and MPI taking turns,\n"
      "                and print the median block of each (default 1)\n"
      "  -N            nonblocking: time DUCT_I<coll> + MPI_Wait (and MPI_I<coll> + MPI_Wait on host buffers)\n"
      "  -S            stream-ordered: time DUCT_<coll>_stream calls enqueued back to back on one CUDA stream\n"
      "                (the stream is synchronized after each timed block; needs a CUDA device)\n"
      "  -G            like -S, but each call is the replay of a CUDA graph that captured one DUCT_<coll>_stream\n"
      "  -O <us>       overlap mode: a computation of <us> microseconds (0: as long as the blocking collective;\n"
      "                a host loop, or a GPU kernel with device buffers) runs while a nonblocking collective is in\n"
      "                flight; prints the communication time left exposed, beside the blocking call's time\n"
      "                (with -S: the GPU kernel on its stream, then DUCT_<coll>_stream on duct-bench's stream,\n"
      "                both streams synchronized after; as a framework overlaps its backward pass and its buckets)\n"
      "  -T <us>       overlap mode: the computation calls MPI_Test every <us> microseconds (default 0: never)\n");
}

bool parse(int argc, char** argv, Options* o, std::string* err) {
  int c;
#ifdef DUCT_SIM
  // Simulated ranks share libc's getopt state (one process): SMPI's keeps one per rank.
  while ((c = smpi_getopt(argc, argv, "b:e:f:n:w:c:d:t:o:C:A:m:D:I:r:R:NSGO:T:h")) != -1) {
#else
  while ((c = getopt(argc, argv, "b:e:f:n:w:c:d:t:o:C:A:m:D:I:r:R:NSGO:T:h")) != -1) {
#endif
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
      case 'D': o->duct = std::atoi(optarg); break;
      case 'I': o->in_place = std::atoi(optarg); break;
      case 'r': o->root = std::atoi(optarg); break;
      case 'R': o->rounds = std::atoi(optarg); break;
      case 'N': o->nonblocking = 1; break;
      case 'S': o->stream = 1; break;
      case 'G': o->stream = 2; break;
      case 'O': o->overlap = std::atof(optarg); break;
      case 'T': o->poll_us = std::atof(optarg); break;
      case 'h': usage(); std::exit(0);
      default: return (*err = "unknown option"), false;
    }
  }
  if (o->factor <= 1 && o->max_bytes > o->min_bytes) return (*err = "-f must be > 1"), false;
  if (o->iters < 0) return (*err = "-n must be >= 0"), false;
  if (o->rounds < 1) return (*err = "-R must be >= 1"), false;
  if (!o->duct && !o->mpi) return (*err = "-D 0 needs the MPI library's column (-m 1)"), false;
  if (!o->duct && (o->overlap >= 0 || o->stream)) return (*err = "-D 0 does not go with -O, -S or -G"), false;
  if (o->iters == 0 && o->overlap >= 0) return (*err = "-n 0 is not available in overlap mode"), false;
  if (o->stream && o->nonblocking) return (*err = "-S/-G do not go with -N"), false;
  if (o->stream == 2 && o->overlap >= 0) return (*err = "-G does not go with -O (-S -O does)"), false;
  return true;
}

// A buffer of either kind, filled and read from the host.
struct Buf {
  void* p = nullptr;
  bool device = false;
  std::size_t bytes = 0;
  Buf(const Buf&) = delete;
  Buf() = default;
  ~Buf() {
    if (device) cuda::free_device(p);
#ifdef DUCT_SIM
    else if (shared) SMPI_SHARED_FREE(p);
#endif
    else std::free(p);
  }
  bool shared = false;  // SMPI shared memory (simulation build, -c 0)
  bool alloc(std::size_t n, bool dev, bool lean = false) {
    bytes = n;
    device = dev;
    if (dev) return cuda::alloc_device(n ? n : 1, &p).is_ok();
    const std::size_t rounded = (std::max<std::size_t>(n, 64) + 63) / 64 * 64;
#ifdef DUCT_SIM
    shared = lean;
    p = lean ? SMPI_SHARED_MALLOC(rounded) : std::aligned_alloc(64, rounded);
#else
    (void)lean;
    p = std::aligned_alloc(64, rounded);
#endif
    return p != nullptr;
  }
  void upload(const void* h, std::size_t n) {
    if (device) (void)cuda::copy(p, h, n);
    else std::memcpy(p, h, n);
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

// What a collective looks like to the bench, per size.
struct Shape {
  std::size_t send_elems = 0, recv_elems = 0;  // buffer sizes of this rank
  std::size_t block = 0;                       // elements per rank's share (allgather, alltoall, ...)
  double bus = 1;                              // busbw factor
  bool reduces = false, rooted = false, in_place = true;
};

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
                       {"bxor", RedOp::bxor, MPI_BXOR}, {"minloc", RedOp::minloc, MPI_MINLOC},
                       {"maxloc", RedOp::maxloc, MPI_MAXLOC}};
  const OpRow* op = nullptr;
  for (const OpRow& r : ops)
    if (o.op == r.name) op = &r;
  if (!op) fail("unknown op '" + o.op + "'");

  const std::string coll = o.coll == "reduce_scatter_block" ? "reduce_scatter" : o.coll;
  const char* known[] = {"allreduce", "bcast", "reduce", "allgather", "reduce_scatter", "alltoall", "gather", "scatter", "barrier"};
  if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return coll == k; }) == std::end(known))
    fail("unknown collective '" + o.coll + "'");
  if (o.root < 0 || o.root >= n) fail("-r: root out of range");
  if (!o.algo.empty()) {
    duct::select::Coll c;
    std::string sel = coll == "reduce_scatter" ? "reduce_scatter_block" : coll;
    if (!duct::select::parse_coll(sel, &c) || duct::select::find_algo(c, o.algo) < 0)
      fail("no " + sel + " algorithm '" + o.algo + "' (duct-info -a lists them)");
    std::string rule = sel + ":0-inf:" + o.algo;
    if (DUCT_Tune(rule.c_str()) != MPI_SUCCESS) fail("DUCT_Tune(" + rule + ") failed");
  }
  bool dev = o.device == "cuda" || (o.device == "auto" && DUCT_Query_cuda_support());
  // Lean buffers: under the simulation with -c 0, every rank's buffers are
  // one physical block (SMPI_SHARED_MALLOC), so 512 ranks x 256 MiB fit in
  // a small machine; the times hold, the contents do not.
#ifdef DUCT_SIM
  const bool lean = !o.check && !dev;
#else
  const bool lean = false;
#endif
  if (o.overlap >= 0 && !dev) bench::calibrate_host_compute();
  if (o.device == "cuda" && !DUCT_Query_cuda_support())
    fail("-d cuda: no usable CUDA device (" + cuda::unavailable_reason() + "); use -d host");
  if (o.device != "cuda" && o.device != "host" && o.device != "auto") fail("-d must be cuda, host or auto");
  void* sstream = nullptr;
  if (o.stream) {
    if (!DUCT_Query_cuda_support()) fail("-S/-G: no usable CUDA device (" + cuda::unavailable_reason() + ")");
    if (!(sstream = bench::bench_stream())) fail("-S/-G: cannot create a CUDA stream");
  }

  MPI_Datatype dt = type->mpi();
  MPI_Op mpi_op = op->mpi;
  const bool half = type->elem == Elem::f16 || type->elem == Elem::bf16;
  const bool reduces = coll == "allreduce" || coll == "reduce" || coll == "reduce_scatter";
  if (half && reduces) {
    if (op->op != RedOp::sum && op->op != RedOp::prod && op->op != RedOp::min && op->op != RedOp::max)
      fail("16-bit float types take sum, prod, min or max");
    g_user_op = op->op;
    g_user_elem = type->elem;
    MPI_Op_create(half_op, 1, &mpi_op);
  }
  const std::size_t esz = duct::elem_size(type->elem);
  const int root = o.root;
  // Data movement moves the values a sum would reduce: any pattern will do.
  const RedOp data_op = reduces ? op->op : RedOp::sum;

  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int hlen = 0;
  MPI_Get_processor_name(host, &hlen);
  MPI_Comm node;
#ifdef DUCT_SIM
  // A simulated host is one rank: the node is duct's (duct::node_name).
  MPI_Comm_split(MPI_COMM_WORLD,
                 static_cast<int>(std::hash<std::string>{}(duct::node_name(host, static_cast<std::size_t>(hlen))) &
                                  0x7fffffff),
                 rank, &node);
#else
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
#endif
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  int leader = local_rank == 0, nodes = 0;
  MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  const char* mpi_name[] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Allgather", "MPI_Reduce_scatter_block",
                            "MPI_Alltoall", "MPI_Gather", "MPI_Scatter", "MPI_Barrier"};
  const std::size_t ci = static_cast<std::size_t>(std::find_if(std::begin(known), std::end(known), [&](const char* k) { return coll == k; }) - std::begin(known));
  if (rank == 0) {
    std::printf("# duct-bench %s: %s, %d ranks on %d node(s), %s buffers, %s %s, %s iterations (+%d warm-up)%s, "
                "check %s\n",
                DUCT_Version_string(), coll.c_str(), n, nodes, dev ? "cuda device" : "host", type->name,
                reduces ? op->name : "-", o.iters ? std::to_string(o.iters).c_str() : "about 0.1 s of", o.warmup,
                o.rounds > 1 ? (" x " + std::to_string(o.rounds) + " alternating rounds, medians").c_str() : "",
                o.check ? "on" : "off");
    {  // when, where and how: duct-plot labels its pictures with this line
      char host[256] = "?", when[32] = "?";
      (void)gethostname(host, sizeof host - 1);
      const std::time_t now = std::time(nullptr);
      std::tm utc{};
      if (gmtime_r(&now, &utc)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%MZ", &utc);
      std::string cmd;
      for (int i = 0; i < argc; ++i) {
        if (i) cmd += ' ';
        cmd += argv[i];
      }
      std::printf("# run: %s on %s: %s\n", when, host, cmd.c_str());
    }
    if (dev) {
      int d = -1;
      if (duct::memory::cuda::current_device(&d).ok())
        std::printf("# device: cuda:%d %s\n", d, duct::memory::cuda::device_name(d).c_str());
    }
    if (!dev) std::printf("# host buffers: %s\n", DUCT_Query_cuda_support() ? "(-d host requested)" : cuda::unavailable_reason().c_str());
    std::printf("# selection: %s\n", o.algo.empty() ? "the rules in force (duct-info -a)" : ("forced " + o.algo).c_str());
    if (o.stream == 1)
      std::printf("# duct columns: DUCT_%s_stream calls back to back on one CUDA stream, synchronized after each block\n",
                  coll.c_str());
    if (o.stream == 2)
      std::printf("# duct columns: replays of a CUDA graph that captured one DUCT_%s_stream, synchronized after each "
                  "block\n", coll.c_str());
    if (o.overlap >= 0) {
      std::printf("# overlap mode: compute %s (%s), %s; exposed = overlapped - compute alone, %% of blocking\n",
                  o.overlap > 0 ? (std::to_string(o.overlap) + " us").c_str() : "as long as the blocking collective",
                  dev ? (o.stream ? "GPU kernel on its own stream, collective stream-ordered on another" : "GPU kernel on its own stream") : "host loop", o.poll_us > 0 ? ("MPI_Test every " + std::to_string(o.poll_us) + " us of compute").c_str() : "no test calls during compute");
      std::printf("# %12s %12s %10s %10s %10s %10s %10s %6s %10s %10s %10s %10s\n", "size(B)", "count", "block(us)",
                  "compute", "overlapped", "exposed", "exposed", "#wrong", "MPI block", "MPI ovl", "exposed", "exposed");
    }
    std::string mpi_label = dev ? std::string("MPI staged (D2H+") + mpi_name[ci] + "+H2D)" : mpi_name[ci];
    if (o.overlap < 0) {
    std::printf("#\n# %56s %-31s %-31s %s\n", "", "duct out-of-place", "duct in-place", mpi_label.c_str());
    std::printf("# %12s %12s %8s %6s %5s %9s %7s %7s %6s %9s %7s %7s %6s %9s %7s %7s %6s %8s\n", "size", "count", "type",
                "redop", "root", "time(us)", "algbw", "busbw", "#wrong", "time(us)", "algbw", "busbw", "#wrong", "time(us)",
                "algbw", "busbw", "#wrong", "speedup");
    std::printf("# %12s %12s %8s %6s %5s %9s %7s %7s %6s %9s %7s %7s %6s %9s %7s %7s %6s %8s\n", "(B)", "(elements)", "",
                "", "", "", "(GB/s)", "(GB/s)", "", "", "(GB/s)", "(GB/s)", "", "", "(GB/s)", "(GB/s)", "", "(x)");
  }
  }

  const double frac = n > 1 ? static_cast<double>(n - 1) / n : 1.0;
  long long total_wrong = 0;
  int rc_bad = 0;
  for (double sz = static_cast<double>(o.min_bytes); sz <= static_cast<double>(o.max_bytes) * 1.0000001;
       sz = (o.factor > 1 ? sz * o.factor : static_cast<double>(o.max_bytes) * 2)) {
    const std::size_t count = coll == "barrier" ? 0 : static_cast<std::size_t>(sz) / esz;
    const std::size_t un = static_cast<std::size_t>(n);
    Shape s;
    const std::size_t block = count / un;
    // A size below one element per rank gives the per-rank collectives
    // nothing to move (and a meaningless ratio): skipped, unless asked for
    // exactly (-b 0).
    const bool per_rank = coll != "allreduce" && coll != "bcast" && coll != "reduce" && coll != "barrier";
    if (per_rank && count > 0 && block == 0) continue;
    if (coll == "allreduce") s = {count, count, 0, 2 * frac, true, false, true};
    else if (coll == "bcast") s = {count, count, 0, 1, false, true, false};
    else if (coll == "reduce") s = {count, count, 0, 1, true, true, true};
    else if (coll == "allgather") s = {block, block * un, block, frac, false, false, true};
    else if (coll == "reduce_scatter") s = {block * un, block * un, block, frac, true, false, true};
    else if (coll == "alltoall") s = {block * un, block * un, block, frac, false, false, true};
    else if (coll == "gather") s = {block, block * un, block, frac, false, true, true};
    else if (coll == "scatter") s = {block * un, block, block, frac, false, true, true};
    else s = {0, 0, 0, 1, false, false, false};
    // Captured calls are the device engine's, which has no in-place alltoall.
    if (o.stream == 2 && coll == "alltoall") s.in_place = false;
    const std::size_t bytes = std::max(s.send_elems, s.recv_elems) * esz;  // nccl-tests' "size"
    const int icount = static_cast<int>(coll == "allreduce" || coll == "bcast" || coll == "reduce" ? count : block);

    Buf send, recv;
    if (!send.alloc(s.send_elems * esz, dev, lean) || !recv.alloc(s.recv_elems * esz, dev, lean))
      fail("cannot allocate " + std::to_string(bytes) + " bytes");
    // Inputs: element i of rank r's send buffer is input_value(r, i).
    // Lean (simulation, -c 0): no host copies of inputs, expected results
    // or poison; the buffers hold whatever the ranks leave in them.
    std::vector<char> input(lean ? 0 : s.send_elems * esz);
    bench::fill_input(input.data(), input.size() / esz, type->elem, data_op, rank);
    send.upload(input.data(), input.size());

    // The exact expected receive buffer of this rank (empty: nothing to check).
    std::vector<char> expect(lean ? 0 : s.recv_elems * esz);
    auto put = [&](std::size_t at, std::int64_t v) { bench::store(expect.data() + at * esz, type->elem, v); };
    bool check_here = true;
    if (lean) {
      check_here = false;
    } else if (coll == "allreduce" || (coll == "reduce" && rank == root)) {
      const bench::ExpectedValues expected(n, data_op, type->elem);
      for (std::size_t i = 0; i < count; ++i) put(i, expected(i));
    } else if (coll == "reduce") {
      check_here = false;
    } else if (coll == "bcast") {
      for (std::size_t i = 0; i < count; ++i) put(i, bench::input_value(root, i, data_op));
    } else if (coll == "allgather" || (coll == "gather" && rank == root)) {
      for (std::size_t q = 0; q < un; ++q)
        for (std::size_t j = 0; j < block; ++j) put(q * block + j, bench::input_value(static_cast<int>(q), j, data_op));
    } else if (coll == "gather") {
      check_here = false;
    } else if (coll == "reduce_scatter") {
      const bench::ExpectedValues expected(n, data_op, type->elem);
      for (std::size_t j = 0; j < block; ++j) put(j, expected(static_cast<std::size_t>(rank) * block + j));
      expect.resize(block * esz);
    } else if (coll == "alltoall") {
      for (std::size_t q = 0; q < un; ++q)
        for (std::size_t j = 0; j < block; ++j)
          put(q * block + j, bench::input_value(static_cast<int>(q), static_cast<std::size_t>(rank) * block + j, data_op));
    } else if (coll == "scatter") {
      for (std::size_t j = 0; j < block; ++j)
        put(j, bench::input_value(root, static_cast<std::size_t>(rank) * block + j, data_op));
    } else {
      check_here = false;
    }
    // Bcast, scatter: what non-roots receive must not be there before.
    std::vector<char> poison(lean ? 0 : s.recv_elems * esz, 0x5a);

    // Fill recv for an in-place call: the input where MPI_IN_PLACE expects it.
    auto prepare_in_place = [&]() {
      if (lean) return;
      std::vector<char> r(s.recv_elems * esz, 0x5a);
      if (coll == "allreduce" || coll == "reduce_scatter" || coll == "alltoall" || (coll == "reduce" && rank == root))
        std::memcpy(r.data(), input.data(), input.size());
      else if (coll == "allgather" || (coll == "gather" && rank == root))
        std::memcpy(r.data() + static_cast<std::size_t>(rank) * block * esz, input.data(), input.size());
      recv.upload(r.data(), r.size());
    };

    // Blocking, with `req` the nonblocking form (started only), or with -S/-G
    // the stream-ordered form on duct-bench's stream (returns at once).
    auto duct_start = [&](bool ip, MPI_Request* req) -> int {
      const void* sb = ip ? MPI_IN_PLACE : send.p;
      const MPI_Comm w = MPI_COMM_WORLD;
      const void* rsb = ip && rank != root ? send.p : sb;
      const void* gsb = ip && rank == root ? MPI_IN_PLACE : send.p;
      void* srb = ip && rank == root ? MPI_IN_PLACE : recv.p;
      void* bb = rank == root ? send.p : recv.p;
      if (o.stream) {
        auto* st = static_cast<struct CUstream_st*>(sstream);
        if (coll == "allreduce") return DUCT_Allreduce_stream(sb, recv.p, icount, dt, op->mpi, w, st);
        if (coll == "reduce") return DUCT_Reduce_stream(rsb, recv.p, icount, dt, op->mpi, root, w, st);
        if (coll == "bcast") return DUCT_Bcast_stream(bb, icount, dt, root, w, st);
        if (coll == "allgather") return DUCT_Allgather_stream(sb, icount, dt, recv.p, icount, dt, w, st);
        if (coll == "reduce_scatter") return DUCT_Reduce_scatter_block_stream(sb, recv.p, icount, dt, op->mpi, w, st);
        if (coll == "alltoall") return DUCT_Alltoall_stream(sb, icount, dt, recv.p, icount, dt, w, st);
        if (coll == "gather") return DUCT_Gather_stream(gsb, icount, dt, recv.p, icount, dt, root, w, st);
        if (coll == "scatter") return DUCT_Scatter_stream(send.p, icount, dt, srb, icount, dt, root, w, st);
        return DUCT_Barrier_stream(w, st);
      }
      if (req) {
        if (coll == "allreduce") return DUCT_Iallreduce(sb, recv.p, icount, dt, op->mpi, w, req);
        if (coll == "reduce") return DUCT_Ireduce(rsb, recv.p, icount, dt, op->mpi, root, w, req);
        if (coll == "bcast") return DUCT_Ibcast(bb, icount, dt, root, w, req);
        if (coll == "allgather") return DUCT_Iallgather(sb, icount, dt, recv.p, icount, dt, w, req);
        if (coll == "reduce_scatter") return DUCT_Ireduce_scatter_block(sb, recv.p, icount, dt, op->mpi, w, req);
        if (coll == "alltoall") return DUCT_Ialltoall(sb, icount, dt, recv.p, icount, dt, w, req);
        if (coll == "gather") return DUCT_Igather(gsb, icount, dt, recv.p, icount, dt, root, w, req);
        if (coll == "scatter") return DUCT_Iscatter(send.p, icount, dt, srb, icount, dt, root, w, req);
        return DUCT_Ibarrier(w, req);
      }
      if (coll == "allreduce") return DUCT_Allreduce(sb, recv.p, icount, dt, op->mpi, w);
      if (coll == "reduce") return DUCT_Reduce(rsb, recv.p, icount, dt, op->mpi, root, w);
      if (coll == "bcast") return DUCT_Bcast(bb, icount, dt, root, w);
      if (coll == "allgather") return DUCT_Allgather(sb, icount, dt, recv.p, icount, dt, w);
      if (coll == "reduce_scatter") return DUCT_Reduce_scatter_block(sb, recv.p, icount, dt, op->mpi, w);
      if (coll == "alltoall") return DUCT_Alltoall(sb, icount, dt, recv.p, icount, dt, w);
      if (coll == "gather") return DUCT_Gather(gsb, icount, dt, recv.p, icount, dt, root, w);
      if (coll == "scatter") return DUCT_Scatter(send.p, icount, dt, srb, icount, dt, root, w);
      return DUCT_Barrier(w);
    };
    // -G: one graph per variant (out-of-place, in-place) of this size,
    // captured on first use; each call is a replay.
    void* graphs[2] = {nullptr, nullptr};
    auto duct_replay = [&](bool ip) -> int {
      void*& g = graphs[ip ? 1 : 0];
      if (!g) {
        if (!bench::capture_begin(sstream)) return MPI_ERR_OTHER;
        const int rc = duct_start(ip, nullptr);
        g = bench::capture_end(sstream);
        if (rc != MPI_SUCCESS) return rc;
        if (!g) return MPI_ERR_OTHER;
      }
      return bench::graph_launch(g, sstream) ? MPI_SUCCESS : MPI_ERR_OTHER;
    };
    // What finishes a batch of calls before it is timed or checked.
    auto settle = [&] {
      if (o.stream) (void)bench::stream_sync(sstream);
    };
    // -N: start, then MPI_Wait (which progresses duct through Open MPI's loop).
    // -S enqueues (duct_start), -G replays.
    auto duct_call = [&](bool ip) -> int {
      if (o.stream == 2) return duct_replay(ip);
      if (!o.nonblocking) return duct_start(ip, nullptr);
      MPI_Request q = MPI_REQUEST_NULL;
      int rc = duct_start(ip, &q);
      if (rc != MPI_SUCCESS) return rc;
      return MPI_Wait(&q, MPI_STATUS_IGNORE);
    };
    // The MPI library's nonblocking form on host buffers (overlap mode, -N).
    auto mpi_start = [&](MPI_Request* q) -> int {
      const MPI_Comm w = MPI_COMM_WORLD;
      if (coll == "allreduce") return MPI_Iallreduce(send.p, recv.p, icount, dt, mpi_op, w, q);
      if (coll == "reduce") return MPI_Ireduce(send.p, recv.p, icount, dt, mpi_op, root, w, q);
      if (coll == "bcast") return MPI_Ibcast(rank == root ? send.p : recv.p, icount, dt, root, w, q);
      if (coll == "allgather") return MPI_Iallgather(send.p, icount, dt, recv.p, icount, dt, w, q);
      if (coll == "reduce_scatter") return MPI_Ireduce_scatter_block(send.p, recv.p, icount, dt, mpi_op, w, q);
      if (coll == "alltoall") return MPI_Ialltoall(send.p, icount, dt, recv.p, icount, dt, w, q);
      if (coll == "gather") return MPI_Igather(send.p, icount, dt, recv.p, icount, dt, root, w, q);
      if (coll == "scatter") return MPI_Iscatter(send.p, icount, dt, recv.p, icount, dt, root, w, q);
      return MPI_Ibarrier(w, q);
    };
    std::vector<char> hs, hr;
    auto mpi_call = [&]() -> int {
      if (o.nonblocking && !dev) {
        MPI_Request q = MPI_REQUEST_NULL;
        int rc = mpi_start(&q);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&q, MPI_STATUS_IGNORE);
      }
      const void* sb = send.p;
      void* rb = recv.p;
      if (dev) {  // the host-staged path a user would otherwise write
        hs.resize(send.bytes);
        hr.resize(recv.bytes);
        (void)cuda::copy(hs.data(), send.p, send.bytes);
        sb = hs.data();
        rb = hr.data();
      }
      int rc;
      if (coll == "allreduce") rc = MPI_Allreduce(sb, rb, icount, dt, mpi_op, MPI_COMM_WORLD);
      else if (coll == "reduce") rc = MPI_Reduce(sb, rb, icount, dt, mpi_op, root, MPI_COMM_WORLD);
      else if (coll == "bcast") {
        // The root sends from its send buffer, as duct's call does.
        rc = MPI_Bcast(rank == root ? const_cast<void*>(sb) : rb, icount, dt, root, MPI_COMM_WORLD);
      } else if (coll == "allgather") rc = MPI_Allgather(sb, icount, dt, rb, icount, dt, MPI_COMM_WORLD);
      else if (coll == "reduce_scatter") rc = MPI_Reduce_scatter_block(sb, rb, icount, dt, mpi_op, MPI_COMM_WORLD);
      else if (coll == "alltoall") rc = MPI_Alltoall(sb, icount, dt, rb, icount, dt, MPI_COMM_WORLD);
      else if (coll == "gather") rc = MPI_Gather(sb, icount, dt, rb, icount, dt, root, MPI_COMM_WORLD);
      else if (coll == "scatter") rc = MPI_Scatter(sb, icount, dt, rb, icount, dt, root, MPI_COMM_WORLD);
      else rc = MPI_Barrier(MPI_COMM_WORLD);
      if (dev && !(coll == "bcast" && rank == root)) (void)cuda::copy(recv.p, hr.data(), recv.bytes);
      return rc;
    };
    // bcast reads the root's data from `send` (duct) or copies it into recv (MPI); the root's
    // own "result" is its input.
    auto wrong_now = [&](bool in_place) -> long long {
      if (!check_here || !o.check) return 0;
      if (in_place && coll == "scatter" && rank == root) return 0;  // the root's block stays in its send buffer
      std::vector<char> got = coll == "bcast" && rank == root ? send.download() : recv.download();
      got.resize(expect.size());
      long long w = 0;
      for (std::size_t i = 0; i + esz <= expect.size(); i += esz) w += !bench::same(type->elem, got.data() + i, expect.data() + i);
      return w;
    };
    // The first call of each kind is checked against the exact answer.
    auto first_call = [&](const std::function<int()>& call, bool reset_in_place) -> long long {
      if (reset_in_place) prepare_in_place();
      else recv.upload(poison.data(), poison.size());
      if (call() != MPI_SUCCESS) rc_bad = 1;
      settle();
      return o.check ? sum_over_ranks(wrong_now(reset_in_place)) : -1;
    };
    auto timed_block = [&](const std::function<int()>& call, int iters) -> double {
      MPI_Barrier(MPI_COMM_WORLD);
#ifdef DUCT_SIM
      // Simulated ranks leave MPI_Barrier at different instants (SMPI's
      // ompi barrier: 3 us apart at 128 ranks, 13 at 256, 17 at 1024, none
      // at 512; docs/benchmarks/2026-11-29-sim-trees.md), and with -n 1 the
      // slowest rank's time would carry that skew. Every rank starts at one
      // simulated instant instead: 1 ms after the latest exit, each waiting
      // there as simulated computation (sim::compute).
      {
        const double out = MPI_Wtime();
        double latest = out;
        MPI_Allreduce(&out, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        duct::sim::compute(latest + 1e-3 - MPI_Wtime());
      }
#endif
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i) call();
      settle();
      return max_over_ranks((MPI_Wtime() - t0) / iters);
    };
    // Warm-up; returns the iterations of one timed block (-n, or with -n 0
    // as many as fit in about 0.1 s at the slowest rank's warm-up pace).
    // After the -w iterations, calls that take little time go on in
    // batches of 4 until a batch is no slower than 1.2x the one before
    // (at most 0.05 s): the first calls of a process pay one-time costs
    // (pages of code and of the shared-memory slots touched first, a
    // peer's first wait) that -w 1 left in the first row (8 B allreduce at
    // 2 ranks: 5.1 us against 0.24 us in place, issue 48). The decision uses
    // the slowest rank's time, so every rank runs the same calls.
    auto warm_up = [&](const std::function<int()>& call) -> int {
#ifdef DUCT_SIM
      // Simulated time has no first-touch costs (pages, caches, a peer's
      // first wait): one call (the context's setup and each algorithm's
      // first use) leaves the rows in steady state, and every call costs
      // real time in proportion to its messages.
      const int w = std::max(o.warmup, 1);
      for (int i = 0; i < w; ++i) call();
      settle();
      if (o.iters > 0) return o.iters;
      return 3;
#else
      const int w = o.iters == 0 ? std::max(o.warmup, 2) : o.warmup;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < w; ++i) call();
      settle();
      double per = w > 0 ? max_over_ranks((MPI_Wtime() - t0) / w) : -1;
      constexpr int kBatch = 4;
      constexpr double kBudget = 0.05;
      if (per < 0 || per * 2 * kBatch < kBudget) {
        double prev = -1, spent = 0;
        for (int b = 0; b < 16 && spent < kBudget; ++b) {
          const double t = timed_block(call, kBatch);
          spent += t * kBatch;
          per = t;
          if (prev > 0 && t <= 1.2 * prev) break;
          prev = t;
        }
      }
      if (o.iters > 0) return o.iters;
      return static_cast<int>(std::clamp(0.1 / std::max(per, 1e-9), 3.0, 200000.0));
#endif
    };
    auto median = [](std::vector<double> v) {
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    if (o.overlap >= 0) {
      // Overlap: blocking time, compute alone, then compute while a
      // nonblocking collective is in flight (started before, completed
      // after). exposed = overlapped - compute, as a share of blocking.
      auto timed = [&](const std::function<void()>& body) {
        for (int i = 0; i < o.warmup; ++i) body();
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < o.iters; ++i) body();
        return max_over_ranks((MPI_Wtime() - t0) / o.iters);
      };
      recv.upload(poison.data(), poison.size());
      if (duct_start(false, nullptr) != MPI_SUCCESS) rc_bad = 1;
      settle();
      long long w = o.check ? sum_over_ranks(wrong_now(false)) : -1;
      // With -S, "blocking" is the stream-ordered call and its stream's synchronization.
      const double t_block = timed([&] {
        duct_start(false, nullptr);
        settle();
      });
      const double us = o.overlap > 0 ? o.overlap : t_block * 1e6;
      auto compute = [&](MPI_Request* q, bool duct) {
        if (dev) {
          (void)bench::device_compute_start(us);
          return;
        }
        std::function<void()> poll;
        if (q && o.poll_us > 0)
          poll = [&, q] {
            int flag = 0;
            if (*q != MPI_REQUEST_NULL) (void)(duct ? DUCT_Test(q, &flag, MPI_STATUS_IGNORE) : MPI_Test(q, &flag, MPI_STATUS_IGNORE));
          };
        bench::host_compute(us, poll, o.poll_us);
      };
      auto compute_wait = [&] {
        if (dev) bench::device_compute_wait();
      };
      const double t_comp = timed([&] {
        compute(nullptr, true);
        compute_wait();
      });
      recv.upload(poison.data(), poison.size());
      const double t_ovl = o.stream ? timed([&] {
        compute(nullptr, true);
        if (duct_start(false, nullptr) != MPI_SUCCESS) rc_bad = 1;
        settle();
        compute_wait();
      }) : timed([&] {
        MPI_Request q = MPI_REQUEST_NULL;
        if (duct_start(false, &q) != MPI_SUCCESS) rc_bad = 1;
        compute(&q, true);
        if (DUCT_Wait(&q, MPI_STATUS_IGNORE) != MPI_SUCCESS) rc_bad = 1;
        compute_wait();
      });
      long long w2 = o.check ? sum_over_ranks(wrong_now(false)) : -1;
      total_wrong += std::max(0LL, w) + std::max(0LL, w2);
      double m_block = 0, m_ovl = 0;
      const bool with_mpi = o.mpi && !dev;
      if (with_mpi) {
        m_block = timed([&] {
          MPI_Request q;
          mpi_start(&q);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
        });
        m_ovl = timed([&] {
          MPI_Request q = MPI_REQUEST_NULL;
          mpi_start(&q);
          compute(&q, false);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
        });
      }
      if (rank == 0) {
        auto pct = [](double ovl, double comp, double blk) { return blk > 0 ? 100.0 * std::max(0.0, ovl - comp) / blk : 0; };
        std::printf("  %12zu %12d %10.1f %10.1f %10.1f %10.1f %9.1f%% %6s", bytes, icount, t_block * 1e6, t_comp * 1e6,
                    t_ovl * 1e6, std::max(0.0, t_ovl - t_comp) * 1e6, pct(t_ovl, t_comp, t_block),
                    w < 0 ? "N/A" : std::to_string(w + std::max(0LL, w2)).c_str());
        if (with_mpi)
          std::printf(" %10.1f %10.1f %10.1f %9.1f%%\n", m_block * 1e6, m_ovl * 1e6, std::max(0.0, m_ovl - t_comp) * 1e6,
                      pct(m_ovl, t_comp, m_block));
        else
          std::printf("\n");
        std::fflush(stdout);
      }
      if (coll == "barrier" || static_cast<double>(o.max_bytes) <= static_cast<double>(o.min_bytes)) break;
      continue;
    }
    // Checked first calls, warm-ups, then -R rounds of timed blocks with
    // duct out-of-place, duct in-place and MPI taking turns.
    const std::function<int()> oop_call = [&] { return duct_call(false); };
    const std::function<int()> ip_call = [&] { return duct_call(true); };
    const bool time_ip = s.in_place && o.duct && o.in_place;
    const long long w_oop = o.duct ? first_call(oop_call, false) : -1;
    const int it_oop = o.duct ? warm_up(oop_call) : 0;
    const long long w_ip = time_ip ? first_call(ip_call, true) : -1;
    const int it_ip = time_ip ? warm_up(ip_call) : 0;
    const long long w_mpi = o.mpi ? first_call(mpi_call, false) : -1;
    const int it_mpi = o.mpi ? warm_up(mpi_call) : 0;
    std::vector<double> r_oop, r_ip, r_mpi;
    for (int r = 0; r < o.rounds; ++r) {
      if (o.duct) r_oop.push_back(timed_block(oop_call, it_oop));
      if (time_ip) r_ip.push_back(timed_block(ip_call, it_ip));
      if (o.mpi) r_mpi.push_back(timed_block(mpi_call, it_mpi));
    }
    const double t_oop = median(r_oop), t_ip = median(r_ip), t_mpi = median(r_mpi);
    total_wrong += std::max(0LL, w_oop) + std::max(0LL, w_ip);
    if (sstream) (void)bench::stream_sync(sstream);
    for (void*& g : graphs) bench::graph_destroy(std::exchange(g, nullptr));

    if (rank == 0) {
      auto cols = [&](double t, long long w, bool have) {
        if (!have) {
          std::printf(" %9s %7s %7s %6s", "-", "-", "-", "-");
          return;
        }
        double algbw = t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0;
        std::printf(" %9.3f %7.3f %7.3f %6s", t * 1e6, algbw, algbw * s.bus, w < 0 ? "N/A" : std::to_string(w).c_str());
      };
      std::printf("  %12zu %12zu %8s %6s %5s", bytes, coll == "barrier" ? std::size_t{0} : static_cast<std::size_t>(icount),
                  type->name, reduces ? op->name : "-", s.rooted ? std::to_string(root).c_str() : "-");
      cols(t_oop, w_oop, o.duct != 0);
      cols(t_ip, w_ip, time_ip);
      cols(t_mpi, w_mpi, o.mpi != 0);
      if (o.mpi && o.duct) std::printf(" %8.2f\n", t_oop > 0 ? t_mpi / t_oop : 0);
      else std::printf(" %8s\n", "-");
      std::fflush(stdout);
    }
    if (coll == "barrier" || static_cast<double>(o.max_bytes) <= static_cast<double>(o.min_bytes)) break;
  }
  if (rank == 0) {
    const char* factor = coll == "allreduce" ? "2(n-1)/n" : (coll == "bcast" || coll == "reduce") ? "1" : "(n-1)/n";
    if (o.check) std::printf("# busbw = algbw x %s; %lld wrong elements in duct's results\n", factor, total_wrong);
    else std::printf("# busbw = algbw x %s; results not checked (-c 0)%s\n", factor, lean ? ", buffers in SMPI's shared memory" : "");
    if (rc_bad) std::printf("# some calls returned an error\n");
  }
  if (mpi_op != op->mpi) MPI_Op_free(&mpi_op);
  MPI_Finalize();
  return (total_wrong > 0 || rc_bad) ? 1 : 0;
}
