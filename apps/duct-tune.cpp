// duct-tune: measure which algorithm serves each collective best on the
// machine and communicator shape it runs on, and write selection rules.
//
//   mpirun -np 16 duct-tune -o /opt/duct/etc/duct/tune.rules    (thorough)
//   mpirun -np 2 duct-tune --quick -o tune.rules                 (about 20 s here)
//
// For every collective and every size of a grid, every algorithm that can
// serve the communicator (select::AlgoDesc::can_serve on its shape) is
// forced in turn (DUCT_Tune) and timed, in rounds that alternate the
// algorithms and the MPI library's own collective (the reference) and, round
// by round, every size of the grid and every collective, so a machine whose
// speed drifts favours none of them and the rounds of one size spread over
// the whole run; the median round of each counts. A size keeps the
// built-in rules' algorithm unless another was faster by the margin (-m,
// or twice the noise measured there if larger: the built-in choice runs a
// second time per round, and its two medians differ by the machine's
// noise) and in all but a seventh of the rounds (each round's two blocks
// side by side), and then again, by half the margin and in all but a
// seventh of the rounds, in a second, separate measurement of the two side
// by side (the confirmation, twice the rounds). Host inputs are rewritten
// before every call (touch(); --cached: not). Where the node's ranks share
// CPUs, the rounds run them pinned in turn three ways, and a challenger must
// win in each (Placements). Times are the slowest
// rank's (MPI_Allreduce MAX), so every rank reaches the same rules.
//
// The rules go to a file in DUCT_TUNE's format, one rule line per
// collective, qualified by the shape measured (/node or /nodes, n=<ranks>),
// with a comment per size: what was measured and the margin. duct reads it
// from DUCT_TUNE_FILE or from the installed default (duct-info -a prints
// both); its rules go before the built-in ones, so shapes it does not name
// keep the built-in rules. Runs at other shapes add their section to an
// existing file (the section of the same shape is replaced): run it once
// per shape a site's jobs use (ranks per node, nodes).
//
// Host buffers always; device buffers too when every rank has a CUDA device
// (-d auto), as rules qualified /cuda (they assume every rank of a call
// passes the same kind of memory, as DUCT_TUNE's /cuda rules do).
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/context.hpp"
#include "core/config.hpp"
#include "duct/duct.h"
#include "memory/cuda.hpp"
#include "select/ranges.hpp"
#include "select/select.hpp"

namespace {

using namespace duct;
using select::Coll;
namespace cuda = memory::cuda;

struct Options {
  bool quick = false;
  std::string out = "duct-tune.rules";
  bool replace = false;            // overwrite the file instead of replacing this shape's section
  std::size_t min_bytes = 8, max_bytes = 0;
  double factor = 0;
  int rounds = 0;
  double block_ms = 0;             // target time of one timed block
  double margin = 0.05;            // a challenger must beat the built-in choice by this fraction
  std::string device = "auto";
  std::vector<Coll> colls;
  std::string verify;              // --verify FILE: time its rules against the built-in ones
  bool cached = false;             // --cached: do not rewrite the input before each call
  int placements = -1;             // --placements N (-1: 3 when the job leaves the ranks' cores open, else 1)
};

const Coll kDefaultColls[] = {Coll::allreduce, Coll::bcast, Coll::reduce, Coll::allgather,
                              Coll::reduce_scatter_block, Coll::alltoall, Coll::gather, Coll::scatter,
                              Coll::barrier, Coll::allgatherv, Coll::reduce_scatter};

int g_rank = 0, g_size = 1;

[[noreturn]] void fail(const std::string& msg) {
  if (g_rank == 0) std::fprintf(stderr, "duct-tune: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

void usage() {
  if (g_rank != 0) return;
  std::printf(
      "usage: mpirun -np N duct-tune [options]\n"
      "  --quick        8 B to 1 MiB by factors of 8, 5 rounds of 4 ms blocks (a minute or two)\n"
      "                 (default: 8 B to 64 MiB by factors of 4, 7 rounds of 20 ms blocks)\n"
      "  -o FILE        rules file to write (default duct-tune.rules); an existing one keeps the\n"
      "                 sections of other shapes, this shape's is replaced\n"
      "  --replace      overwrite FILE instead\n"
      "  --verify FILE  time FILE's rules against the built-in rules, side by side, at every size of\n"
      "                 the grid (no file is written)\n"
      "  -C c1,c2       collectives (default: all with a choice of algorithms)\n"
      "  -b SIZE -e SIZE -f F   size grid (selection sizes in bytes, see duct-info -a)\n"
      "  -R N           rounds per size; -B MS: target ms per timed block\n"
      "  -m PCT         least margin a challenger must win by (default 5; twice the measured noise if larger)\n"
      "  -d host|cuda|auto      buffers to tune for (auto: device too when every rank has a GPU)\n"
      "  --cached       host buffers: time calls on an input left as the last call found it, in the\n"
      "                 caches of every rank that read it (by default each rank rewrites its input\n"
      "                 before every call, as an application produces new data)\n"
      "  --placements N pin the node's ranks to its cores N ways in turn, round by round, and keep a\n"
      "                 challenger only if it wins in every one (default: 3 where the job does not give\n"
      "                 each rank a core of its own, where the operating system places them anew in\n"
      "                 every job; else 1: as launched)\n");
}

std::size_t parse_size_arg(const char* s) {
  std::size_t v = 0;
  if (!config::parse_size(s, &v)) fail(std::string("'") + s + "' is not a size");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  std::size_t b = 0, e = 0;
  double f = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--quick") o.quick = true;
    else if (a == "--cached") o.cached = true;
    else if (a == "--placements") o.placements = std::atoi(next());
    else if (a == "--replace") o.replace = true;
    else if (a == "-o") o.out = next();
    else if (a == "--verify") o.verify = next();
    else if (a == "-b") b = parse_size_arg(next());
    else if (a == "-e") e = parse_size_arg(next());
    else if (a == "-f") f = std::atof(next());
    else if (a == "-R") o.rounds = std::atoi(next());
    else if (a == "-B") o.block_ms = std::atof(next());
    else if (a == "-m") o.margin = std::atof(next()) / 100.0;
    else if (a == "-d") o.device = next();
    else if (a == "-C") {
      std::stringstream ss(next());
      std::string name;
      while (std::getline(ss, name, ',')) {
        Coll c;
        if (!select::parse_coll(name, &c)) fail("unknown collective '" + name + "'");
        o.colls.push_back(c);
      }
    } else if (a == "-h" || a == "--help") {
      usage();
      MPI_Finalize();
      std::exit(0);
    } else {
      usage();
      fail("unknown option " + a);
    }
  }
  o.min_bytes = b ? b : 8;
  o.max_bytes = e ? e : (o.quick ? 1u << 20 : 64u << 20);
  o.factor = f > 1 ? f : (o.quick ? 8 : 4);
  if (o.rounds <= 0) o.rounds = o.quick ? 5 : 7;
  if (o.block_ms <= 0) o.block_ms = o.quick ? 4 : 20;
  if (o.colls.empty()) o.colls.assign(std::begin(kDefaultColls), std::end(kDefaultColls));
  if (o.device != "host" && o.device != "cuda" && o.device != "auto") fail("-d takes host, cuda or auto");
  return o;
}

// ---- placements ---------------------------------------------------------------

// Where the job gives each rank of a node cores of its own (mpirun's
// --bind-to core with no more ranks than cores, srun --cpu-bind), every job
// of that shape runs its ranks where this one does. Where it does not
// (unbound ranks, more ranks than cores), the operating system places them,
// differently from job to job, and which algorithm wins can depend on it:
// 4 ranks on the build VM's 2 cores, pinned three ways (ranks 0,1 | 2,3;
// 0,2 | 1,3; 0,3 | 1,2), the binomial scatter of 4 KiB beat shm by
// 1.45-1.49x in the first and lost by 0.60-0.67x in the third, run after run
// (docs/benchmarks/2026-11-26-duct-tune-placements.md). A rule measured in
// one placement is then a guess for the next job. So duct-tune pins the
// node's ranks in turn to P placements, one per round (round r: placement
// r % P), and a challenger must win in each of them.
//
// A placement spreads the node's ranks evenly over the CPUs their masks
// allow together (local rank i on CPU j), as different groupings of the
// ranks that share a CPU: the round-robin one, the blocked one, then
// shuffles, skipping any that only renames the CPUs of one before.
struct Placements {
  std::vector<int> cpus;                 // the CPUs of the node's ranks (the union of their masks)
  std::vector<std::vector<int>> ways;    // ways[j][local rank]: index into cpus
  cpu_set_t original{};
  int local = 0;
  std::string why;                       // why this many
  int global = 1;                        // placements counted in every rank's rounds (the most of any node)
  bool active() const { return ways.size() > 1; }
  // Pin this rank for round r (and give the others time to move).
  // (Every rank takes the barrier when any node pins, its own or not.)
  void enter(int round) const {
    if (global <= 1) return;
    if (active()) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[static_cast<std::size_t>(ways[static_cast<std::size_t>(round) % ways.size()][static_cast<std::size_t>(local)])], &one);
      (void)sched_setaffinity(0, sizeof one, &one);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void leave() const {
    if (active()) (void)sched_setaffinity(0, sizeof original, &original);
  }
  // The placement of round r, as every rank counts them: the same on
  // every node, so that every rank judges the rounds alike (a node with
  // fewer placements than another repeats its own).
  int of(int round) const { return round % global; }
  int count() const { return global; }
};

// Relabel the CPUs of a placement by first appearance ([1,0,1,0] and
// [0,1,0,1] group the ranks the same way).
std::vector<int> canonical(const std::vector<int>& w) {
  std::vector<int> label(w.size() + 1, -1), out;
  int next = 0;
  for (int x : w) {
    if (label[static_cast<std::size_t>(x)] < 0) label[static_cast<std::size_t>(x)] = next++;
    out.push_back(label[static_cast<std::size_t>(x)]);
  }
  return out;
}

Placements g_pl;  // this run's (main sets it)

Placements plan_placements(const Options& o) {
  Placements pl;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int lsize = 1;
  MPI_Comm_rank(node, &pl.local);
  MPI_Comm_size(node, &lsize);
  CPU_ZERO(&pl.original);
  if (sched_getaffinity(0, sizeof pl.original, &pl.original) != 0) CPU_ZERO(&pl.original);
  // Every rank's mask, as bytes, on every rank of the node.
  std::vector<unsigned char> mine(sizeof(cpu_set_t)), all(sizeof(cpu_set_t) * static_cast<std::size_t>(lsize));
  std::memcpy(mine.data(), &pl.original, sizeof(cpu_set_t));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                MPI_BYTE, node);
  MPI_Comm_free(&node);
  const auto mask = [&](int r) { return reinterpret_cast<const cpu_set_t*>(all.data() + sizeof(cpu_set_t) * static_cast<std::size_t>(r)); };
  bool disjoint = true;
  for (int a = 0; a < lsize; ++a)
    for (int b = a + 1; b < lsize; ++b) {
      cpu_set_t both;
      CPU_AND(&both, mask(a), mask(b));
      if (CPU_COUNT(&both) > 0) disjoint = false;
    }
  for (int c = 0; c < CPU_SETSIZE; ++c)
    for (int r = 0; r < lsize; ++r)
      if (CPU_ISSET(c, mask(r))) {
        pl.cpus.push_back(c);
        break;
      }
  int want = o.placements >= 0 ? o.placements : (disjoint ? 1 : 3);
  const int ncpu = static_cast<int>(pl.cpus.size());
  if (lsize < 2 || ncpu < 2) want = 1;
  pl.why = o.placements >= 0 ? "--placements" : disjoint ? "each rank has CPUs of its own" : "the ranks share CPUs";
  if (want <= 1) return pl;  // (agree() still counts every node's)
  std::vector<std::vector<int>> seen;
  auto add = [&](std::vector<int> w) {
    const std::vector<int> key = canonical(w);
    for (const auto& k : seen)
      if (k == key) return;
    seen.push_back(key);
    pl.ways.push_back(std::move(w));
  };
  std::vector<int> rr, blocked;
  for (int i = 0; i < lsize; ++i) {
    rr.push_back(i % ncpu);
    blocked.push_back(static_cast<int>(static_cast<long>(i) * ncpu / lsize));
  }
  add(rr);
  add(blocked);
  std::mt19937 gen(27);  // the same on every rank
  for (int tries = 0; tries < 64 && static_cast<int>(pl.ways.size()) < want; ++tries) {
    std::vector<int> w = rr;
    std::shuffle(w.begin(), w.end(), gen);
    add(w);
  }
  if (static_cast<int>(pl.ways.size()) > want) pl.ways.resize(static_cast<std::size_t>(want));
  if (pl.ways.size() < 2) pl.ways.clear();
  if (!pl.active() && o.placements < 0 && !disjoint)
    pl.why = "the ranks' CPU masks overlap, with a CPU for each rank";
  return pl;
}

// Every rank counts the rounds' placements alike (its decisions must be
// every other rank's): the most placements of any node.
Placements agree(Placements pl) {
  int mine = pl.active() ? static_cast<int>(pl.ways.size()) : 1;
  MPI_Allreduce(&mine, &pl.global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return pl;
}

// ---- buffers and calls ------------------------------------------------------

struct Buffers {
  void* send = nullptr;
  void* recv = nullptr;
  bool device = false;
  std::size_t bytes = 0;
  void make(std::size_t n, bool dev) {
    device = dev;
    bytes = n;
    if (dev) {
      if (!cuda::alloc_device(n, &send) || !cuda::alloc_device(n, &recv)) fail("cudaMalloc failed");
    } else {
      send = std::calloc(1, n);
      recv = std::calloc(1, n);
      if (!send || !recv) fail("out of memory");
      // Non-zero floats, so reductions do real arithmetic.
      for (std::size_t i = 0; i < n / sizeof(float); ++i) static_cast<float*>(send)[i] = 1.0f + (i % 7);
    }
  }
  // At least n bytes (grown as the sizes of a grid grow).
  void fit(std::size_t n, bool dev) {
    if (n <= bytes && (send || n == 0)) return;
    release();
    make(n, dev);
  }
  void release() {
    if (device) {
      cuda::free_device(send);
      cuda::free_device(recv);
    } else {
      std::free(send);
      std::free(recv);
    }
    send = recv = nullptr;
    bytes = 0;
  }
};

// One size of one collective: element counts and the bytes selection sees.
struct Shape {
  int count = 0;             // elements: the vector, or one rank's block
  std::size_t query = 0;     // select::Query::bytes
  std::vector<int> counts, displs;  // v-variants: equal blocks
};

bool blocked(Coll c) {
  return c == Coll::allgather || c == Coll::alltoall || c == Coll::gather || c == Coll::scatter ||
         c == Coll::reduce_scatter_block || c == Coll::allgatherv || c == Coll::reduce_scatter;
}

Shape shape_of(Coll c, std::size_t bytes) {
  Shape s;
  const std::size_t n = static_cast<std::size_t>(g_size);
  if (c == Coll::barrier) return s;
  if (blocked(c)) {
    s.count = static_cast<int>(std::max<std::size_t>(1, bytes / sizeof(float) / n));
    s.query = static_cast<std::size_t>(s.count) * sizeof(float) * n;
    s.counts.assign(n, s.count);
    for (std::size_t r = 0; r < n; ++r) s.displs.push_back(static_cast<int>(r) * s.count);
  } else {
    s.count = static_cast<int>(std::max<std::size_t>(1, bytes / sizeof(float)));
    s.query = static_cast<std::size_t>(s.count) * sizeof(float);
  }
  return s;
}

// The largest buffer one rank needs for `s`.
std::size_t buffer_bytes(Coll c, const Shape& s) {
  const std::size_t e = static_cast<std::size_t>(s.count) * sizeof(float);
  return blocked(c) ? e * static_cast<std::size_t>(g_size) : std::max<std::size_t>(e, sizeof(float));
}

int call(Coll c, bool mpi, const Shape& s, Buffers& b) {
  MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Datatype F = MPI_FLOAT;
  const int k = s.count;
  switch (c) {
    case Coll::allreduce:
      return mpi ? MPI_Allreduce(b.send, b.recv, k, F, MPI_SUM, w) : DUCT_Allreduce(b.send, b.recv, k, F, MPI_SUM, w);
    case Coll::bcast: return mpi ? MPI_Bcast(b.recv, k, F, 0, w) : DUCT_Bcast(b.recv, k, F, 0, w);
    case Coll::reduce:
      return mpi ? MPI_Reduce(b.send, b.recv, k, F, MPI_SUM, 0, w) : DUCT_Reduce(b.send, b.recv, k, F, MPI_SUM, 0, w);
    case Coll::allgather:
      return mpi ? MPI_Allgather(b.send, k, F, b.recv, k, F, w) : DUCT_Allgather(b.send, k, F, b.recv, k, F, w);
    case Coll::allgatherv:
      return mpi ? MPI_Allgatherv(b.send, k, F, b.recv, s.counts.data(), s.displs.data(), F, w)
                 : DUCT_Allgatherv(b.send, k, F, b.recv, s.counts.data(), s.displs.data(), F, w);
    case Coll::reduce_scatter_block:
      return mpi ? MPI_Reduce_scatter_block(b.send, b.recv, k, F, MPI_SUM, w)
                 : DUCT_Reduce_scatter_block(b.send, b.recv, k, F, MPI_SUM, w);
    case Coll::reduce_scatter:
      return mpi ? MPI_Reduce_scatter(b.send, b.recv, s.counts.data(), F, MPI_SUM, w)
                 : DUCT_Reduce_scatter(b.send, b.recv, s.counts.data(), F, MPI_SUM, w);
    case Coll::alltoall:
      return mpi ? MPI_Alltoall(b.send, k, F, b.recv, k, F, w) : DUCT_Alltoall(b.send, k, F, b.recv, k, F, w);
    case Coll::gather:
      return mpi ? MPI_Gather(b.send, k, F, b.recv, k, F, 0, w) : DUCT_Gather(b.send, k, F, b.recv, k, F, 0, w);
    case Coll::scatter:
      return mpi ? MPI_Scatter(b.send, k, F, b.recv, k, F, 0, w) : DUCT_Scatter(b.send, k, F, b.recv, k, F, 0, w);
    case Coll::barrier: return mpi ? MPI_Barrier(w) : DUCT_Barrier(w);
    default: return MPI_ERR_OTHER;
  }
}

// The sizes to measure c at (selection bytes before rounding to elements).
std::vector<std::size_t> size_grid(const Options& o, Coll c) {
  std::vector<std::size_t> grid;
  if (c == Coll::barrier) return {0};
  for (double b = static_cast<double>(o.min_bytes); b <= static_cast<double>(o.max_bytes) * 1.0001; b *= o.factor)
    grid.push_back(static_cast<std::size_t>(b));
  return grid;
}

// ---- timing -----------------------------------------------------------------

double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

double slowest(double mine) {
  double all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

// The median of `t` (INFINITY when empty).
double median_of(std::vector<double> t) {
  if (t.empty()) return INFINITY;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A contestant: an algorithm forced by DUCT_Tune, a set of rules (--verify),
// or the MPI library (algo -1, no rules).
struct Contestant {
  int algo = -1;
  std::vector<double> times;  // us per call, one per round
  std::string rules;          // DUCT_Tune rules to time instead of one algorithm
  double median() const { return median_of(times); }
  const char* name() const { return algo < 0 ? "MPI" : select::algorithms()[static_cast<size_t>(algo)].name; }
  // The times of the rounds that ran in placement j.
  std::vector<double> in_placement(const Placements& pl, int j) const {
    std::vector<double> t;
    for (std::size_t r = 0; r < times.size(); ++r)
      if (pl.of(static_cast<int>(r)) == j) t.push_back(times[r]);
    return t;
  }
};

void tune_rules(const std::string& rules) {
  if (DUCT_Tune(rules.c_str()) != MPI_SUCCESS) fail("DUCT_Tune(" + rules + ") failed");
}

void force(Coll c, int algo) {
  tune_rules(std::string(select::coll_name(c)) + ":0-inf:" + select::algorithms()[static_cast<size_t>(algo)].name);
}

// Host buffers, unless --cached: before every call each rank stores to
// every cache line of its input (the same values), as an application writes
// new data between collectives. Without it a benchmark's input never
// changes, and an algorithm whose reader copies straight from another
// rank's buffer (a message through the kernel's cross-memory attach) finds
// that buffer in its own cache from the previous call, an advantage no
// application sees, while one that copies through shared memory moves
// every line from core to core in every call. On 2 ranks here the ring
// allreduce beat shared memory at 512 KiB-2 MiB by 1.7x on rewritten
// inputs in three verifications, where with cached inputs shm led (512 KiB:
// 73 against 87 us; docs/benchmarks/2026-11-24-shm-phases.md). The stores cost every
// contestant the same.
bool g_fresh = true;

void touch(Coll c, const Shape& s, Buffers& b) {
  if (!g_fresh || b.device || c == Coll::barrier) return;
  void* in = b.send;
  std::size_t bytes = buffer_bytes(c, s);
  if (c == Coll::bcast) {
    if (g_rank != 0) return;
    in = b.recv;
  } else if (c == Coll::scatter) {
    if (g_rank != 0) return;
  } else if (c == Coll::allgather || c == Coll::allgatherv || c == Coll::gather) {
    bytes = static_cast<std::size_t>(s.count) * sizeof(float);
  }
  auto* f = static_cast<volatile float*>(in);
  for (std::size_t i = 0; i < bytes / sizeof(float); i += 64 / sizeof(float)) f[i] = f[i];
}

// Time `iters` calls as one block (us per call, slowest rank).
double block(Coll c, const Contestant& who, const Shape& s, Buffers& b, int iters) {
  const bool mpi = who.algo < 0 && who.rules.empty();
  if (!who.rules.empty()) tune_rules(who.rules);
  else if (!mpi) force(c, who.algo);
  if (call(c, mpi, s, b) != MPI_SUCCESS) fail(std::string(select::coll_name(c)) + " failed");
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_us();
  for (int i = 0; i < iters; ++i) {
    touch(c, s, b);
    if (call(c, mpi, s, b) != MPI_SUCCESS) fail(std::string(select::coll_name(c)) + " failed");
  }
  return slowest((now_us() - t0) / iters);
}

// Calls per block so that one takes about `ms` (the same on every rank).
int calibrate(Coll c, const Contestant& who, const Shape& s, Buffers& b, double ms) {
  int iters = 1;
  while (true) {
    const double per = block(c, who, s, b, iters);
    const double total = per * iters;
    if (total >= ms * 1e3 / 4 || iters >= 1 << 20) return std::max(1, static_cast<int>(ms * 1e3 / std::max(per, 1e-3)));
    iters = static_cast<int>(std::min<double>(1 << 20, iters * std::max(2.0, ms * 1e3 / 4 / std::max(total, 1e-3))));
  }
}

// ---- one collective -----------------------------------------------------------

struct SizeResult {
  std::size_t query = 0;
  int builtin = -1, chosen = -1;
  double t_builtin = 0, t_chosen = 0, t_mpi = INFINITY;
  double noise = 0;  // the built-in choice against its twin: |ratio - 1|
  double need = 0;   // the margin a challenger had to win by here
  std::vector<Contestant> all;
  std::string note;  // the confirmation, or why the built-in choice stayed
};

struct CollResult {
  Coll coll;
  bool device;
  std::vector<SizeResult> sizes;
  std::vector<std::string> skipped;  // algorithms that cannot serve this shape, with why
};

// Whether the algorithm that served the last call of `c` is `algo`
// (forcing one that cannot serve falls back).
bool ran(coll::Context* ctx, Coll c, int algo) {
  const auto& last = ctx->last_choice[static_cast<int>(c)];
  return last.algo == algo;
}

// Paired rounds a challenger won: round r of `x` against round r of `base`
// (the two ran one after the other, in the same state of the machine).
int rounds_won(const Contestant& x, const Contestant& base) {
  int won = 0;
  for (std::size_t r = 0; r < x.times.size() && r < base.times.size(); ++r) won += x.times[r] < base.times[r];
  return won;
}

// A challenger must win all but a seventh of the paired rounds, besides
// winning by the margin at the median: on this build VM the cost of moving
// cache lines between cores changes about threefold with the host's
// placement of its cores, for seconds to minutes
// (docs/benchmarks/2026-11-24-shm-phases.md), and that moves the shared-
// memory algorithms three to six times where messages move less than two;
// a winner of one such phase that loses in the other is no better choice
// than the built-in rules' one.
bool consistent(int won, int rounds) { return won * 7 >= rounds * 6; }

// Whether x beat base in every placement: the median of its rounds there
// below base's median of the same rounds.
bool wins_everywhere(const Contestant& x, const Contestant& base, const Placements& pl, int* lost_in) {
  for (int j = 0; j < pl.count(); ++j) {
    const std::vector<double> a = x.in_placement(pl, j);  // (paired rounds: base ran as many)
    if (a.empty()) continue;
    if (!(median_of(a) < median_of(base.in_placement(pl, j)))) {
      *lost_in = j;
      return false;
    }
  }
  return true;
}

// One collective being tuned: its sizes, their candidates and times.
// Every collective is prepared first; then the rounds run outermost over
// every collective and every size, so the rounds of each spread over the
// whole run.
struct CollTune {
  CollResult res;
  std::vector<Shape> shapes;
  std::vector<int> iters;
  std::vector<Contestant> twins;                          // the built-in choice, timed twice per round
  std::vector<std::pair<Contestant, Contestant>> duel;  // challenger, built-in
  std::vector<std::size_t> duels;
};

CollTune prepare_coll(const Options& o, coll::Context* ctx, Coll c, bool device, const select::Table& builtin,
                      Buffers& buf) {
  CollTune t;
  t.res = CollResult{c, device, {}, {}};
  CollResult& res = t.res;
  // Every size first: its shape, the candidates that run, calls per block.
  for (std::size_t bytes : size_grid(o, c)) {
    const Shape s = shape_of(c, bytes);
    if (!t.shapes.empty() && t.shapes.back().query == s.query) continue;  // rounded to the same size
    buf.fit(buffer_bytes(c, s), device);
    const select::Query q = coll::query_of(*ctx, c, s.query, device);
    SizeResult r;
    r.query = s.query;
    r.builtin = builtin.choose(q);
    for (std::size_t i = 0; i < select::algorithms().size(); ++i) {
      const select::AlgoDesc& a = select::algorithms()[i];
      if (a.coll != c) continue;
      std::string why;
      if (!a.can_serve(q, &why)) {
        if (res.sizes.empty()) res.skipped.push_back(std::string(a.name) + ": " + why);
        continue;
      }
      Contestant who{static_cast<int>(i), {}};
      // Forcing it must make it run (the engine, for one, declines calls
      // whose buffers do not all qualify).
      force(c, who.algo);
      if (call(c, false, s, buf) != MPI_SUCCESS) fail(std::string(select::coll_name(c)) + " failed");
      int ok = ran(ctx, c, who.algo) ? 1 : 0, all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (all_ok) r.all.push_back(who);
    }
    if (!device) r.all.push_back(Contestant{-1, {}});  // the MPI library (host buffers only: it is not CUDA-aware)
    const Contestant* base = nullptr;
    for (const Contestant& x : r.all)
      if (x.algo == r.builtin) base = &x;
    if (!base) fail(strprintf("%s at %zu bytes: the built-in choice %s did not run", select::coll_name(c), s.query,
                              r.builtin >= 0 ? select::algorithms()[static_cast<size_t>(r.builtin)].name : "?"));
    t.iters.push_back(calibrate(c, *base, s, buf, o.block_ms));
    t.shapes.push_back(s);
    t.twins.push_back(Contestant{r.builtin, {}});
    res.sizes.push_back(std::move(r));
  }
  (void)DUCT_Tune("");
  return t;
}

// One round of every size and candidate. The built-in choice runs twice
// (its twin last): how far the two medians differ is this machine's noise
// at that size, and a challenger must win by twice that (or the margin, if
// larger).
// The order of the blocks turns by one each round: on this VM a block
// runs faster or slower by up to a third depending on the one before it
// (at 2-8 MiB, the same algorithm timed twice in a row differed by 0.69-0.79x
// in three runs), so every contestant takes every place in turn.
void round_coll(CollTune& t, Buffers& buf, int round) {
  const Coll c = t.res.coll;
  for (std::size_t z = 0; z < t.shapes.size(); ++z) {
    std::vector<Contestant*> order;
    for (Contestant& x : t.res.sizes[z].all) order.push_back(&x);
    order.push_back(&t.twins[z]);
    std::rotate(order.begin(), order.begin() + round % static_cast<int>(order.size()), order.end());
    for (Contestant* x : order) x->times.push_back(block(c, *x, t.shapes[z], buf, t.iters[z]));
  }
  (void)DUCT_Tune("");
}

// Challengers that beat the built-in choice by the margin, in all but a
// seventh of the rounds; they go on to the confirmation.
void pick_coll(const Options& o, CollTune& t) {
  for (std::size_t z = 0; z < t.shapes.size(); ++z) {
    SizeResult& r = t.res.sizes[z];
    const Contestant* base = nullptr;
    const Contestant* best = nullptr;
    for (const Contestant& x : r.all) {
      if (x.algo == r.builtin) base = &x;
      if (x.algo >= 0 && (!best || x.median() < best->median())) best = &x;
      if (x.algo < 0) r.t_mpi = x.median();
    }
    r.chosen = r.builtin;
    r.t_chosen = r.t_builtin = base->median();
    r.noise = std::fabs(base->median() / t.twins[z].median() - 1);
    r.need = std::min(0.5, std::max(o.margin, 2 * r.noise));
    if (best == base) continue;
    const int won = rounds_won(*best, *base);
    int lost = -1;
    if (!(best->median() < r.t_builtin * (1 - r.need))) {
      r.note = strprintf("%s within the %.0f%% margin: built-in kept", best->name(), r.need * 100);
    } else if (!consistent(won, o.rounds)) {
      r.note = strprintf("%s won %d of %d rounds: built-in kept", best->name(), won, o.rounds);
    } else if (!wins_everywhere(*best, *base, g_pl, &lost)) {
      r.note = strprintf("%s lost in placement %d of %d: built-in kept", best->name(), lost + 1, g_pl.count());
    } else {
      t.duel.resize(t.shapes.size());
      t.duel[z] = {Contestant{best->algo, {}}, Contestant{r.builtin, {}}};
      t.duels.push_back(z);
    }
  }
}

// One round of the confirmation: each challenger beside the built-in
// choice, the two taking turns at going first.
void duel_round(CollTune& t, Buffers& buf, int round) {
  const Coll c = t.res.coll;
  for (std::size_t z : t.duels) {
    Contestant* one = &t.duel[z].first;
    Contestant* two = &t.duel[z].second;
    if (round % 2) std::swap(one, two);
    one->times.push_back(block(c, *one, t.shapes[z], buf, t.iters[z]));
    two->times.push_back(block(c, *two, t.shapes[z], buf, t.iters[z]));
  }
  (void)DUCT_Tune("");
}

// The confirmation's verdict: still faster by half the margin, and in all
// but a seventh of its rounds.
void settle_coll(CollTune& t) {
  for (std::size_t z : t.duels) {
    SizeResult& r = t.res.sizes[z];
    const Contestant& a = t.duel[z].first;
    const Contestant& b = t.duel[z].second;
    const int won = rounds_won(a, b), of = static_cast<int>(a.times.size());
    int lost = -1;
    if (a.median() < b.median() * (1 - r.need / 2) && consistent(won, of) && wins_everywhere(a, b, g_pl, &lost)) {
      r.chosen = a.algo;
      r.t_chosen = a.median();
      r.t_builtin = b.median();
      r.note = strprintf("confirmed: %.3g against %.3g us, %d of %d rounds", a.median(), b.median(), won, of);
    } else {
      r.note = strprintf("%s not confirmed (%.3g against %.3g us, %d of %d rounds%s): built-in kept", a.name(),
                         a.median(), b.median(), won, of,
                         lost >= 0 ? strprintf(", lost in placement %d", lost + 1).c_str() : "");
    }
  }
}

std::string fmt_size(std::size_t b) { return b == SIZE_MAX ? "inf" : config::format_size(b); }

// ---- --verify -----------------------------------------------------------------

// The rule groups of `text` (DUCT_TUNE format, '#' comments, one group per
// line) that belong to collective c, joined with ';'.
std::string rules_of(const std::string& text, Coll c) {
  std::string out;
  for (const std::string& g : select::rule_groups(text, c)) out += (out.empty() ? "" : ";") + g;
  return out;
}

// The worst ratios of a verification: where the file's rules choose
// another algorithm than the built-in ones, and where they choose the same
// (the two sides then run the same code: the machine's noise).
struct Worst {
  double differ = INFINITY, same = INFINITY;
  int rows_differ = 0, rows_same = 0;
};

// Tuned (the file's rules of c, then the built-in ones) against built-in
// rules, alternating, at every size of the grid (ratio: built-in time /
// tuned time; below 1: the file is slower).
void verify_coll(const Options& o, coll::Context* ctx, Coll c, const std::string& file_text, Worst* w) {
  const std::string builtin = rules_of(select::default_rules(), c);
  const std::string filed = rules_of(file_text, c);
  if (filed.empty()) return;
  const std::string tuned = filed + ";" + builtin;
  select::Table tb, tt;
  if (!select::Table::make(builtin, &tb) || !select::Table::make(tuned, &tt))
    fail(std::string("--verify: the rules of ") + select::coll_name(c) + " do not parse");
  Buffers buf;
  std::vector<Shape> shapes;
  std::vector<int> iters;
  for (std::size_t bytes : size_grid(o, c)) {
    const Shape s = shape_of(c, bytes);
    if (!shapes.empty() && shapes.back().query == s.query) continue;
    buf.fit(buffer_bytes(c, s), false);
    // Calls per block from the built-in rules' time.
    iters.push_back(calibrate(c, Contestant{-1, {}, builtin}, s, buf, o.block_ms));
    shapes.push_back(s);
  }
  // Rounds outermost, as when tuning; the two sides take turns at going
  // first (round_coll says why).
  std::vector<Contestant> a(shapes.size(), Contestant{-1, {}, builtin}), b(shapes.size(), Contestant{-1, {}, tuned});
  for (int round = 0; round < o.rounds; ++round) {
    g_pl.enter(round);
    for (std::size_t z = 0; z < shapes.size(); ++z) {
      Contestant* one = &a[z];
      Contestant* two = &b[z];
      if (round % 2) std::swap(one, two);
      one->times.push_back(block(c, *one, shapes[z], buf, iters[z]));
      two->times.push_back(block(c, *two, shapes[z], buf, iters[z]));
    }
  }
  g_pl.leave();
  for (std::size_t z = 0; z < shapes.size(); ++z) {
    const select::Query q = coll::query_of(*ctx, c, shapes[z].query, false);
    const int ab = tb.choose(q), at = tt.choose(q);
    const double ratio = a[z].median() / b[z].median();
    if (ab != at) {
      w->differ = std::min(w->differ, ratio);
      ++w->rows_differ;
    } else {
      w->same = std::min(w->same, ratio);
      ++w->rows_same;
    }
    if (g_rank == 0)
      std::printf("%-20s %9s %-20s %12.3f %-20s %12.3f %8.2f%s\n", select::coll_name(c),
                  fmt_size(shapes[z].query).c_str(), select::algorithms()[static_cast<size_t>(ab)].name,
                  a[z].median(), select::algorithms()[static_cast<size_t>(at)].name, b[z].median(), ratio,
                  ab != at ? "  *" : "");
    if (g_rank == 0 && ab != at && g_pl.count() > 1) {
      std::printf("%-20s %9s per placement:", "", "");
      for (int j = 0; j < g_pl.count(); ++j) {
        const std::vector<double> x = a[z].in_placement(g_pl, j);
        if (!x.empty()) std::printf(" %.2f", median_of(x) / median_of(b[z].in_placement(g_pl, j)));
      }
      std::printf("\n");
    }
  }
  buf.release();
  tune_rules("");
}

// ---- rules ------------------------------------------------------------------

bool has_engine(Coll c) { return select::find_algo(c, "engine") >= 0; }

// The rule line speaks only for the sizes where a challenger won
// (select::won_ranges says how far each reaches); the built-in rules decide
// everywhere else. A barrier has no size (0-inf). No size changed: no rule
// line.
std::string rule_text(const CollResult& cr, const std::string& quals, bool one_node, const Options& o) {
  std::string out;
  const char* cname = select::coll_name(cr.coll);
  for (const SizeResult& r : cr.sizes) {
    std::string others;
    for (const Contestant& x : r.all)
      if (x.algo != r.chosen && x.algo >= 0) others += strprintf(" %s %.3g", x.name(), x.median());
    out += strprintf("#   %9s: %s %.3g us%s; built-in %s %.3g us (noise %.0f%%);%s%s%s\n", fmt_size(r.query).c_str(),
                     select::algorithms()[static_cast<size_t>(r.chosen)].name, r.t_chosen,
                     std::isfinite(r.t_mpi) ? strprintf(" (MPI %.3g us)", r.t_mpi).c_str() : "",
                     select::algorithms()[static_cast<size_t>(r.builtin)].name, r.t_builtin, r.noise * 100,
                     others.c_str(),
                     r.note.empty() ? "" : "; ", r.note.c_str());
  }
  for (const std::string& s : cr.skipped) out += "#   cannot serve this shape: " + s + "\n";
  std::vector<select::TunedSize> measured;
  for (const SizeResult& r : cr.sizes) measured.push_back({r.query, r.chosen, r.builtin});
  std::string ranges;
  for (const select::TunedRange& g : select::won_ranges(measured, cr.coll != Coll::barrier, o.min_bytes <= 8))
    ranges += strprintf("%s%s-%s:%s", ranges.empty() ? "" : ",", fmt_size(g.lo).c_str(), fmt_size(g.hi).c_str(),
                        select::algorithms()[static_cast<size_t>(g.algo)].name);
  if (ranges.empty()) return out + "#   no rule: no challenger beat the built-in choice at a size measured\n";
  // Host rules leave device calls on one node to the device engine first
  // (it agrees with the other ranks whether every buffer qualifies).
  std::string line = std::string(cname) + quals + (cr.device ? "/cuda" : "") + ":";
  if (!cr.device && one_node && has_engine(cr.coll)) line += "0-inf:engine,";
  return out + line + ranges + "\n";
}

// Replace the section of `key` in `old` (sections start at "# duct-tune
// shape: <key>" lines and run to the next one), or append it.
std::string merge(const std::string& old, const std::string& key, const std::string& section,
                  const std::string& header) {
  const std::string mark = "# duct-tune shape: ";
  std::vector<std::pair<std::string, std::string>> parts;  // key ("" = preamble), text
  parts.push_back({"", ""});
  std::istringstream in(old);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(mark, 0) == 0) parts.push_back({line.substr(mark.size()), ""});
    parts.back().second += line + "\n";
  }
  std::string out = parts[0].second.empty() ? header : parts[0].second;
  bool placed = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].first == key) {
      out += section;
      placed = true;
    } else {
      out += parts[i].second;
    }
  }
  if (!placed) out += section;
  return out;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const Options o = parse(argc, argv);
  g_fresh = !o.cached;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (g_size < 2) fail("run it on the ranks of the shape to tune (mpirun -np N with N >= 2)");

  // duct's context of MPI_COMM_WORLD, as a first collective sets it up.
  coll::Runtime* rt = nullptr;
  coll::Context* ctx = nullptr;
  Status st = coll::Runtime::get(&rt);
  if (st) st = rt->context(MPI_COMM_WORLD, &ctx);
  if (!st) fail("duct cannot serve this job: " + st.message());
  select::Table builtin;
  if (!select::Table::make("", &builtin)) fail("the built-in rules do not parse");
  g_pl = agree(plan_placements(o));
  std::string placed = "as launched (" + g_pl.why + ")";
  if (g_pl.count() > 1 && !g_pl.active()) {
    placed += strprintf(" on rank 0's node; other nodes' ranks pinned %d ways, one per round", g_pl.count());
  } else if (g_pl.active()) {
    placed = strprintf("%d placements of each node's ranks on its CPUs (%s), one per round:", g_pl.count(), g_pl.why.c_str());
    for (const auto& w : g_pl.ways) {
      placed += " [";
      for (std::size_t i = 0; i < w.size(); ++i) placed += strprintf("%s%d", i ? " " : "", g_pl.cpus[static_cast<std::size_t>(w[i])]);
      placed += "]";
    }
  }

  int cuda_here = DUCT_Query_cuda_support(), cuda_all = 0;
  MPI_Allreduce(&cuda_here, &cuda_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (o.device == "cuda" && !cuda_all) fail("-d cuda: not every rank has a usable CUDA device");
  std::vector<bool> kinds{false};
  if (o.device == "cuda" || (o.device == "auto" && cuda_all)) kinds.push_back(true);

  if (!o.verify.empty()) {
    std::string text;
    {
      std::ifstream in(o.verify);
      if (!in) fail("--verify: cannot read " + o.verify);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (g_rank == 0) {
      std::printf("# duct-tune --verify %s: %d ranks, host buffers, built-in rules and the file's (before the "
                  "built-in) alternating, %d rounds of %g ms blocks, %s; ratio = built-in / file (below 1: the file is "
                  "slower)\n# ranks: %s\n", o.verify.c_str(), g_size, o.rounds, o.block_ms, g_fresh ? "input rewritten before each call" : "input cached",
                  placed.c_str());
      std::printf("%-20s %9s %-20s %12s %-20s %12s %8s\n", "collective", "size", "built-in", "us", "file", "us",
                  "ratio");
    }
    Worst w;
    for (Coll c : o.colls) verify_coll(o, ctx, c, text, &w);
    if (g_rank == 0)
      std::printf("# %d sizes where the file chooses differently (*): worst ratio %.2f; %d sizes where both choose "
                  "the same algorithm (the noise of this machine): worst ratio %.2f\n",
                  w.rows_differ, w.rows_differ ? w.differ : 1.0, w.rows_same, w.rows_same ? w.same : 1.0);
    MPI_Finalize();
    return 0;
  }

  const int nodes = ctx->topo.num_nodes, ppn = ctx->topo.ranks_per_node;
  const bool one_node = nodes == 1;
  const std::string quals = strprintf("/%s/n=%d-%d", one_node ? "node" : "nodes", g_size, g_size);
  const std::string key = strprintf("%s n=%d", one_node ? "node" : "nodes", g_size) +
                          (one_node ? "" : strprintf(" (%d nodes, %s ranks per node)", nodes,
                                                     ppn ? std::to_string(ppn).c_str() : "different"));
  if (g_rank == 0) {
    std::printf("# duct-tune: %d ranks on %d node(s), %s buffers, %zu B to %s by x%g, %d rounds of %g ms blocks, %s\n",
                g_size, nodes, kinds.size() > 1 ? "host and device" : "host", o.min_bytes,
                fmt_size(o.max_bytes).c_str(), o.factor, o.rounds, o.block_ms,
                g_fresh ? "host input rewritten before each call" : "host input cached (--cached)");
    std::printf("# ranks: %s\n", placed.c_str());
    std::printf("%-20s %5s %9s %-20s %10s %-20s %10s %10s\n", "collective", "mem", "size", "built-in", "us", "tuned",
                "us", "MPI us");
    std::fflush(stdout);
  }
  const double t_start = now_us();
  std::string section = "# duct-tune shape: " + key + "\n";
  section += strprintf("# measured %s on %d rank(s) of %d node(s); sizes %zu B to %s by x%g, %d rounds of %g ms "
                       "blocks, margin %.0f%%, %s; times: median round, slowest rank, us per call\n",
                       today().c_str(), g_size, nodes, o.min_bytes, fmt_size(o.max_bytes).c_str(), o.factor,
                       o.rounds, o.block_ms, o.margin * 100,
                       g_fresh ? "host input rewritten before each call" : "host input cached");
  section += "# ranks: " + placed + (g_pl.count() > 1 ? "; a challenger had to win in each" : "") + "\n";
  int changed = 0, measured = 0;
  for (bool dev : kinds) {
    // Rounds outermost over every collective (CollTune): the seven rounds
    // of one size spread over the whole run, a minute or more apart.
    Buffers buf;
    std::vector<CollTune> tunes;
    for (Coll c : o.colls) tunes.push_back(prepare_coll(o, ctx, c, dev, builtin, buf));
    for (int round = 0; round < o.rounds; ++round) {
      g_pl.enter(round);
      for (CollTune& t : tunes) round_coll(t, buf, round);
    }
    for (CollTune& t : tunes) pick_coll(o, t);
    for (int round = 0; round < 2 * o.rounds; ++round) {
      g_pl.enter(round);
      for (CollTune& t : tunes) duel_round(t, buf, round);
    }
    g_pl.leave();
    for (CollTune& t : tunes) settle_coll(t);
    buf.release();
    for (CollTune& t : tunes) {
      const CollResult& cr = t.res;
      const Coll c = cr.coll;
      for (const SizeResult& r : cr.sizes) {
        ++measured;
        changed += r.chosen != r.builtin;
        if (g_rank == 0)
          std::printf("%-20s %5s %9s %-20s %10.3f %-20s %10.3f %10s\n", select::coll_name(c), dev ? "cuda" : "host",
                      fmt_size(r.query).c_str(), select::algorithms()[static_cast<size_t>(r.builtin)].name,
                      r.t_builtin, select::algorithms()[static_cast<size_t>(r.chosen)].name, r.t_chosen,
                      std::isfinite(r.t_mpi) ? strprintf("%.3f", r.t_mpi).c_str() : "-");
      }
      if (g_rank == 0) std::fflush(stdout);
      section += strprintf("# %s, %s buffers:\n", select::coll_name(c), dev ? "device" : "host");
      section += rule_text(cr, quals, one_node, o);
    }
  }
  if (g_rank == 0) {
    std::string old;
    if (!o.replace) {
      std::ifstream in(o.out);
      if (in) old.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string header = strprintf(
        "# duct selection rules, written by duct-tune (%s).\n"
        "# duct reads them from DUCT_TUNE_FILE or from %s; they go before the\n"
        "# built-in rules (duct-info -a shows the table in force). One section per communicator shape;\n"
        "# run duct-tune again on another shape to add one. /cuda rules assume every rank of a call\n"
        "# passes the same kind of memory.\n",
        DUCT_Version_string(), config::default_rules_file());
    std::string text = merge(old, key, section, header);
    std::ofstream out(o.out, std::ios::trunc);
    out << text;
    if (!out) fail("cannot write " + o.out);
    std::printf("# %d of %d sizes changed from the built-in choice; rules for '%s' written to %s in %.0f s\n", changed,
                measured, key.c_str(), o.out.c_str(), (now_us() - t_start) / 1e6);
  }
  MPI_Finalize();
  return 0;
}
