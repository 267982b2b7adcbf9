#include "core/config.hpp"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "core/hash.hpp"
#include "core/log.hpp"

extern char** environ;

namespace duct::config {

namespace {

// The table. Keep rows alphabetical within their group; docs/env.md is
// generated from it (`duct-info -c --markdown`) and checked by a test.
constexpr Var kTable[] = {
    {"DUCT_LOG", Kind::choice, "warn", "error|warn|info|debug|trace", false,
     "log level; messages go to stderr, prefixed with host and MPI_COMM_WORLD rank"},
    {"DUCT_LOG_SUBSYS", Kind::subsys_list, "all", nullptr, false,
     "comma list of subsystems to log: init,config,memory,reduce,channel,coll,select,capi or all"},
    {"DUCT_CHANNEL", Kind::choice, "auto", "auto|ucx|ipc|mpi", true,
     "channel for rank pairs: auto (on one node cuda_ipc where both ranks have a CUDA device, "
     "else cma; across nodes ucx), ucx (always ucx), ipc (cuda_ipc protocol on every same-node pair, even without "
     "a GPU; for testing), mpi (every pair over the MPI library's point-to-point calls on a duplicate of the "
     "communicator, no UCX: for an MPI whose fabric UCX does not serve, and for simulation)"},
    {"DUCT_TUNE", Kind::string, "", nullptr, true,
     "algorithm selection override, e.g. 'allreduce:0-64k:recursive_doubling,64k-inf:ring'; "
     "empty uses the built-in table (duct-info -a prints it)"},
    {"DUCT_TUNE_FILE", Kind::string, "", nullptr, false,
     "selection rules file (duct-tune writes one; DUCT_TUNE's format, one rule per line, # comments): its "
     "rules are tried before the built-in ones, and DUCT_TUNE replaces both for the collectives it names; "
     "empty: the installed default (duct-info -a prints its path) where it exists; none: no file. Every rank "
     "must read the same rules (the paths may differ, the contents are compared)"},
    {"DUCT_PIPELINE_CHUNK", Kind::size, "1M", nullptr, true,
     "bytes per chunk when device memory is staged through pinned host bounce buffers"},
    {"DUCT_PIPELINE_DEPTH", Kind::integer, "4", nullptr, false,
     "bounce buffers (chunks in flight) per staged transfer"},
    {"DUCT_EAGER_LIMIT", Kind::size, "8K", nullptr, true,
     "largest message the cuda_ipc channel sends inline with its header instead of by IPC"},
    {"DUCT_RING_SEGMENT", Kind::size, "256K", nullptr, true,
     "bytes per pipelined segment of a ring step"},
    {"DUCT_RAIL_SEGMENT_MIN", Kind::size, "16K", nullptr, true,
     "smallest message of the split-rail bcast and reduce over a rail on more than two nodes (their segments: about "
     "2 x nodes, at least this per rank of a node): lower pipelines mid-size messages over slow links (1 Gbit/s: 8K "
     "from 64 KiB on), higher suits fabrics where a message costs more than its bytes"},
    {"DUCT_TREE_RADIX", Kind::integer, "4", nullptr, true,
     "radix k of the bcast and reduce trees on a communicator of several nodes (every level of the node-aware "
     "forms, and the flat binomial ones): 2 is the binomial tree, k > 2 the k-nomial tree, ceil(log_k n) levels of "
     "up to k - 1 messages from each sender (a reduce receives a level's children at once); 4 as MVAPICH2's and "
     "UCC's default; on one node always 2"},
    {"DUCT_NODE_TREE_RADIX", Kind::integer, "0", nullptr, true,
     "radix k of the node leaders' tree of the node-aware gather and scatter (each leader sends or receives its "
     "subtree's blocks in one message): 0 chooses (ceil(sqrt(nodes)), two levels, on 64 nodes or more, up to 1 "
     "MiB in all for the scatter; else flat), 1 is flat (every leader and the root directly, as MVAPICH2's "
     "two-level forms), k >= 2 that radix at every size"},
    {"DUCT_YIELD", Kind::choice, "auto", "auto|spin|yield", false,
     "waiting ranks: spin, yield the core after a few idle polls, or auto (yield when a machine "
     "has more ranks than cores; ranks of one kernel count together, even under different host names)"},
    {"DUCT_TIMEOUT", Kind::seconds, "0", nullptr, false,
     "seconds a collective may go without progress before it returns a timeout error naming what it "
     "waits for (0: wait forever); the communicator is unusable afterwards"},
    {"DUCT_CHECK", Kind::boolean, "0", nullptr, true,
     "before each collective, ranks compare the call (collective, counts, datatype, op, root) in one "
     "exchange and return a mismatch error naming the ranks that differ, instead of hanging"},
    {"DUCT_MEASURE", Kind::boolean, "1", nullptr, true,
     "on one node with at least as many cores as ranks: where the built-in rules give the allgather, alltoall, bcast, gather or scatter of 16 "
     "KiB-8 MiB to the shared-memory rounds (shm) or the single copy (cma) (host buffers, or the device "
     "engine's fallback), the first 6 blocking calls of each size alternate the two, timed, and the faster "
     "(the slowest rank's best call) serves every later call of that size (DUCT_LOG=info prints both times; "
     "nonblocking calls meanwhile take the rules' choice); 0: the rules' choice always. DUCT_TUNE and a rules "
     "file are obeyed as written"},
    {"DUCT_NET_DEVICES", Kind::string, "", nullptr, false,
     "the node's rails, a comma list of network devices as UCX names them (eth0,eth1 or mlx5_0:1,mlx5_1:1): "
     "local rank l's UCX worker uses device l mod K, so rail peers meet on one fabric and every NIC "
     "carries its share (split-rail collectives); ucx: UCX's default (a UCX_NET_DEVICES list whole for every "
     "rank); empty or auto: the user's UCX_NET_DEVICES list spread the same way over the listed devices the node "
     "has (one device or all: as UCX reads it), else automatic (the NIC nearest the rank's GPU by hwloc's PCI tree, NICs a switch's GPUs share split "
     "among them; without a GPU the NICs near its CPU binding, else local rank mod the NICs; a node with one "
     "NIC keeps UCX's default; duct-info prints each rank's choice and why)"},
    {"DUCT_PEER_FAILURE", Kind::boolean, "1", nullptr, true,
     "UCX endpoints detect failed peer processes (UCP_ERR_HANDLING_MODE_PEER with keepalive), so a "
     "rank that dies makes the others return an error; 0 keeps UCX's fastest transports but a dead "
     "peer is then only caught by DUCT_TIMEOUT"},
    {"DUCT_FT", Kind::boolean, "0", nullptr, true,
     "fault tolerance: every communicator gets a control communicator (one MPI_Comm_idup) on which "
     "DUCT_Comm_revoke, DUCT_Comm_agree and DUCT_Comm_shrink work; a collective that finds a failed or "
     "silent rank revokes the communicator for every survivor; waits look for revocations and, every "
     "10 ms, for dead processes on the same machine. Launch with duct-run --ft (Open MPI: mpirun "
     "--enable-recovery) so that the survivors are not killed"},
    {"DUCT_FT_TIMEOUT", Kind::seconds, "10", nullptr, true,
     "DUCT_FT=1: seconds of silence after which a rank on another node is taken as failed, in "
     "collectives when DUCT_TIMEOUT is 0, and in DUCT_Comm_agree/DUCT_Comm_shrink (a rank waiting for "
     "the agreement's coordinator gives it twice as long; a node whose links are down is found so); "
     "ranks of the same node are never taken as silent, and processes on this machine's kernel are "
     "also checked by pid"},
    {"DUCT_ENGINE", Kind::boolean, "1", nullptr, true,
     "device engine for single-node communicators whose ranks reach each other by CUDA IPC: device "
     "collectives in one kernel over the peers' mapped buffers; 0 uses the channel algorithms"},
    {"DUCT_SIM_REDUCE_BW", Kind::size, "10G", nullptr, false,
     "the simulation build (-Dsim=true) only: bytes per simulated second of a host reduction, charged as "
     "simulated computation for the bytes it reads and writes (3 x the vector); 10G is about one core of the "
     "2026 build machine on float sums (duct-sim's rails platform sets 2800G, a GPU's memory); 0: not charged "
     "(SMPI's own collectives' reductions are not). The real build ignores it"},
    {"DUCT_SIM_SHARED_SCRATCH", Kind::size, "0", nullptr, false,
     "the simulation build (-Dsim=true) only, for timing runs: host scratch buffers of this many bytes or "
     "more go in SMPI's shared memory (SMPI_SHARED_MALLOC: one physical block behind every rank's), so "
     "hundreds of ranks at hundreds of MiB fit in a small machine; the ranks then overwrite each other's "
     "scratch, so results are wrong while times hold (no schedule depends on the values); pair it with "
     "duct-bench -c 0. 0: off. The real build ignores it"},
    {"DUCT_ENGINE_BLOCKS", Kind::integer, "0", nullptr, false,
     "the most CUDA thread blocks one device-engine kernel launches (0: its own choice, up to 4 blocks of 512 "
     "threads per SM for reductions and 8 for copies): fewer leave SMs free for the application's kernels "
     "running beside a collective, at some cost in bandwidth (as NCCL_MAX_CTAS bounds NCCL's); ranks may "
     "differ"},
    {"DUCT_ENGINE_MEMOPS", Kind::boolean, "1", nullptr, false,
     "the device engine learns that its kernel finished from a word the GPU writes into the node's "
     "shared memory (a stream memory operation; the other ranks read it too), not by polling a CUDA "
     "event; 0 polls the event (for comparison, or where registering the shared memory fails)"},
    {"DUCT_STREAM_EMULATE", Kind::boolean, "0", nullptr, false,
     "testing without a GPU: the stream-ordered forms (DUCT_*_stream) run on host buffers with an "
     "emulated stream that reaches each call at once and waits on the host for it to finish (duct's "
     "stream thread, stream sides and completion words as on a GPU; no CUDA call, no graphs)"},
    {"DUCT_STREAM_ASYNC", Kind::boolean, "0", nullptr, false,
     "eager (not captured) stream-ordered calls: 0 completes each in the call, after the GPU has reached "
     "it on its stream (the host waits for the stream's earlier work); 1 returns at once and duct's stream "
     "thread runs the collective when the GPU gets there, the stream waiting on a completion word "
     "(cuStreamWaitValue64). 1 hung on an H200 (2026-11-26: tests/gpu's stream-ordered cases at 1, 2 and 4 "
     "ranks never finished), so it is for investigation only. With 1, calls captured into a CUDA graph take that "
     "protocol too; with 0 they are the device engine's (device barriers, no host step at replay) or refused "
     "(DUCT_ERRCLASS_NOT_SUPPORTED) where there is no engine"},
    {"DUCT_STREAM_ENGINE", Kind::boolean, "0", nullptr, false,
     "eager stream-ordered calls that the device engine serves (device buffers, one node): 1 enqueues the "
     "engine's kernel on the caller's stream, after every rank's earlier work there (interprocess events), "
     "and returns without waiting for the GPU; the host only exchanges the call with the node's ranks. Other "
     "algorithms still wait for the stream. Passed tests/gpu's stream cases at 2 and 4 ranks on an H200 under MPS "
     "(2026-11-27); off by default while its 8-byte call is slower than the eager one (15-17 against 12 us)"},
    {"DUCT_INTERPOSE", Kind::boolean, "1", nullptr, true,
     "with libduct-mpi loaded (LD_PRELOAD): 1 serves the program's MPI collectives with duct, 0 passes "
     "every call to the MPI library unchanged"},
    {"DUCT_IPC_CACHE_SIZE", Kind::integer, "256", nullptr, false,
     "peer allocations kept open by the cuda_ipc channel and the device engine (least recently used "
     "ones are closed)"},
    {"DUCT_IPC_CACHE_BYTES", Kind::size, "1G", nullptr, false,
     "bytes of peer allocations kept mapped beyond those of the last 64 uses: a mapping keeps the "
     "peer's memory allocated after the peer frees it, so least recently used ones are closed above this"},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Status bad_value(const Var& v, const char* value, const std::string& expected) {
  return make_error(Errc::config, "environment variable %s has invalid value '%s' (expected %s)",
                    v.name, value, expected.c_str());
}

int choice_index(const Var& v, const char* value) {
  std::string_view all(v.choices);
  int idx = 0;
  while (true) {
    size_t bar = all.find('|');
    if (all.substr(0, bar) == value) return idx;
    if (bar == std::string_view::npos) return -1;
    all.remove_prefix(bar + 1);
    ++idx;
  }
}

Status parse_subsys_list(const char* text, unsigned* mask) {
  unsigned m = 0;
  std::string_view rest(text);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string name(trim(rest.substr(0, comma)));
    if (!name.empty()) {
      log::Subsys s;
      if (!log::parse_subsys(name.c_str(), &s))
        return make_error(Errc::config, "unknown log subsystem '%s'", name.c_str());
      m |= static_cast<unsigned>(s);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  *mask = m ? m : static_cast<unsigned>(log::Subsys::all);
  return Status::ok();
}

// Store one row's text value into the matching field of `c`.
Status apply(const Var& v, const char* value, Config* c) {
  std::string_view name(v.name);
  auto choice = [&](auto* field) -> Status {
    int i = choice_index(v, value);
    if (i < 0) return bad_value(v, value, std::string("one of ") + v.choices);
    *field = static_cast<std::remove_pointer_t<decltype(field)>>(i);
    return Status::ok();
  };
  if (name == "DUCT_LOG") {
    int lvl = choice_index(v, value);
    if (lvl < 0) return bad_value(v, value, std::string("one of ") + v.choices);
    c->log_level = lvl;
    return Status::ok();
  }
  if (name == "DUCT_LOG_SUBSYS") {
    Status st = parse_subsys_list(value, &c->log_subsys);
    return st ? st : bad_value(v, value, "a comma list of subsystem names");
  }
  if (name == "DUCT_CHANNEL") {
#ifdef DUCT_SIM
    // The simulation build has the mpi channel only (no UCX, no CUDA IPC).
    const std::string s(value);
    if (s == "auto" || s == "mpi") {
      c->channel = ChannelMode::mpi;
      return Status::ok();
    }
    return bad_value(v, value, "auto or mpi (the simulation build has the mpi channel only)");
#else
    return choice(&c->channel);
#endif
  }
  if (name == "DUCT_YIELD") return choice(&c->yield);
  if (name == "DUCT_TUNE") {
    c->tune = value;
    return Status::ok();
  }
  if (name == "DUCT_TUNE_FILE") {
    c->tune_file = value;
    return Status::ok();
  }
  if (name == "DUCT_NET_DEVICES") {
    c->net_devices = value;
    return Status::ok();
  }
  auto size_field = [&](size_t* field, size_t min) -> Status {
    size_t s;
    if (!parse_size(value, &s) || s < min)
      return bad_value(v, value, "a byte count of at least " + format_size(min) + " like 64K or 1M");
    *field = s;
    return Status::ok();
  };
  if (name == "DUCT_PIPELINE_CHUNK") return size_field(&c->pipeline_chunk, 4096);
  if (name == "DUCT_EAGER_LIMIT") return size_field(&c->eager_limit, 0);
  if (name == "DUCT_RING_SEGMENT") return size_field(&c->ring_segment, 4096);
  if (name == "DUCT_RAIL_SEGMENT_MIN") return size_field(&c->rail_segment_min, 1024);
  if (name == "DUCT_SIM_REDUCE_BW") return size_field(&c->sim_reduce_bw, 0);
  if (name == "DUCT_SIM_SHARED_SCRATCH") return size_field(&c->sim_shared_scratch, 0);
  if (name == "DUCT_IPC_CACHE_BYTES") return size_field(&c->ipc_cache_bytes, 0);
  if (name == "DUCT_FT_TIMEOUT") {
    double t;
    if (!parse_seconds(value, &t) || t <= 0) return bad_value(v, value, "a number of seconds above 0");
    c->ft_timeout = t;
    return Status::ok();
  }
  if (name == "DUCT_TIMEOUT") {
    double t;
    if (!parse_seconds(value, &t)) return bad_value(v, value, "a number of seconds (0: off)");
    c->timeout = t;
    return Status::ok();
  }
  auto bool_field = [&](bool* field) -> Status {
    if (!parse_bool(value, field)) return bad_value(v, value, "1 or 0 (yes/no, on/off)");
    return Status::ok();
  };
  if (name == "DUCT_CHECK") return bool_field(&c->check);
  if (name == "DUCT_MEASURE") return bool_field(&c->measure);
  if (name == "DUCT_FT") return bool_field(&c->ft);
  if (name == "DUCT_PEER_FAILURE") return bool_field(&c->peer_failure);
  if (name == "DUCT_INTERPOSE") return bool_field(&c->interpose);
  if (name == "DUCT_ENGINE") return bool_field(&c->engine);
  if (name == "DUCT_ENGINE_MEMOPS") return bool_field(&c->engine_memops);
  if (name == "DUCT_STREAM_EMULATE") return bool_field(&c->stream_emulate);
  if (name == "DUCT_STREAM_ASYNC") return bool_field(&c->stream_async);
  if (name == "DUCT_STREAM_ENGINE") return bool_field(&c->stream_engine);
  auto long_field = [&](long* field, long lo, long hi, const char* expected) -> Status {
    long n;
    if (!parse_long(value, &n) || n < lo || n > hi) return bad_value(v, value, expected);
    *field = n;
    return Status::ok();
  };
  if (name == "DUCT_ENGINE_BLOCKS") return long_field(&c->engine_blocks, 0, 1L << 16, "an integer from 0 to 65536");
  if (name == "DUCT_IPC_CACHE_SIZE") return long_field(&c->ipc_cache_size, 1, 1L << 20, "an integer from 1 to 1048576");
  if (name == "DUCT_TREE_RADIX") return long_field(&c->tree_radix, 2, 64, "an integer from 2 to 64");
  if (name == "DUCT_NODE_TREE_RADIX") return long_field(&c->node_tree_radix, 0, 1L << 20, "an integer from 0 to 1048576");
  if (name == "DUCT_PIPELINE_DEPTH") return long_field(&c->pipeline_depth, 1, 64, "an integer from 1 to 64");
  return make_error(Errc::internal, "config row %s has no parser", v.name);
}

Status g_status;
std::mutex g_load_mutex;

}  // namespace

namespace detail {
Config g_config;
std::atomic<bool> g_loaded{false};
}  // namespace detail
using detail::g_config;
using detail::g_loaded;

std::span<const Var> table() noexcept { return kTable; }

Env process_env() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::string value_of(const Var& v, const Env& env) {
  const char* s = env(v.name);
  return s ? s : v.def;
}

Status parse(const Env& env, Config* out) {
  Status first;
  for (const Var& v : kTable) {
    Status st = apply(v, v.def, out);
    if (!st) return st.context("default of " + std::string(v.name));
    const char* s = env(v.name);
    if (!s) continue;
    st = apply(v, s, out);
    if (!st && first) first = st;
  }
  return first;
}

const Config& detail::load() {
  // The slow path of get() (std::call_once would cost a thread-local lookup per call).
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (g_loaded.load(std::memory_order_relaxed)) return g_config;
  {
    g_status = parse(process_env(), &g_config);
    log::g_state.level = g_config.log_level;
    log::g_state.subsys_mask = g_config.log_subsys;
    if (!g_status) DUCT_LOG(error, config, "%s", g_status.message().c_str());
    std::string unknown = unknown_vars();
    if (!unknown.empty())
      DUCT_WARN(config, "unknown environment variables (not in duct's table): %s", unknown.c_str());
  }
  g_loaded.store(true, std::memory_order_release);
  return g_config;
}

const Status& load_status() {
  get();
  return g_status;
}

unsigned long long agree_digest(const Env& env) {
  // FNV-1a over "name=value;" of every must_agree row.
  std::uint64_t h = kFnv1aBasis;
  for (const Var& v : kTable)
    if (v.must_agree) h = fnv1a(std::string(v.name) + "=" + value_of(v, env) + ";", h);
  return h;
}

#ifndef DUCT_DEFAULT_TUNE_FILE
#define DUCT_DEFAULT_TUNE_FILE "/etc/duct/tune.rules"
#endif

const char* default_rules_file() noexcept { return DUCT_DEFAULT_TUNE_FILE; }

const RulesFile& rules_file() {
  static const RulesFile file = [] {
    RulesFile f;
    const std::string& set = get().tune_file;
    if (set == "none") {
      f.why = "DUCT_TUNE_FILE=none";
      return f;
    }
    const bool named = !set.empty();
    const std::string path = named ? set : default_rules_file();
    std::FILE* fp = std::fopen(path.c_str(), "rb");
    if (!fp) {
      if (named)
        f.status = make_error(Errc::config, "DUCT_TUNE_FILE=%s cannot be read: %s", path.c_str(), std::strerror(errno));
      else
        f.why = "no file at the default " + path;
      return f;
    }
    char buf[4096];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, fp)) > 0) f.text.append(buf, got);
    const bool bad = std::ferror(fp) != 0;
    std::fclose(fp);
    if (bad) {
      f.status = make_error(Errc::config, "reading the selection rules file %s failed", path.c_str());
      f.text.clear();
      return f;
    }
    f.path = path;
    f.why = named ? "DUCT_TUNE_FILE" : "the installed default";
    f.digest = fnv1a(f.text);
    return f;
  }();
  return file;
}

std::string unknown_vars() {
  std::string out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (kv.substr(0, 5) != "DUCT_") continue;
    std::string_view name = kv.substr(0, kv.find('='));
    bool known = false;
    for (const Var& v : kTable) known = known || name == v.name;
    // The simulated platform's (mpi_launch_scripts/duct-sim-rails.cpp), set
    // by duct-sim run -N/-ppn: read by SimGrid's loading of it, not by duct;
    // and duct-sim's own (its build directory, extra SMPI options).
    for (const char* p : {"DUCT_SIM_NODES", "DUCT_SIM_PPN", "DUCT_SIM_RAILS", "DUCT_SIM_NIC_BW", "DUCT_SIM_NIC_LAT",
                          "DUCT_SIM_NVL_BW", "DUCT_SIM_NVL_LAT", "DUCT_SIM_BUILD", "DUCT_SIM_CFG"})
      known = known || name == p;
    if (!known) {
      if (!out.empty()) out += ", ";
      out += name;
    }
  }
  return out;
}

Status parse_size(const char* text, size_t* out) {
  std::string_view s = trim(text ? text : "");
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9'))
    return make_error(Errc::config, "'%s' is not a byte count", text ? text : "");
  errno = 0;
  char* end = nullptr;
  std::string digits(s);
  unsigned long long n = std::strtoull(digits.c_str(), &end, 10);
  if (errno == ERANGE) return make_error(Errc::config, "'%s' is too large", text);
  std::string_view suffix(end);
  unsigned shift = 0;
  if (!suffix.empty()) {
    switch (suffix[0]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      case 'b': case 'B': shift = 0; break;
      default: return make_error(Errc::config, "'%s' has an unknown unit", text);
    }
    std::string_view rest = suffix.substr(1);
    if (shift && !rest.empty() && rest != "B" && rest != "iB" && rest != "b")
      return make_error(Errc::config, "'%s' has an unknown unit", text);
    if (!shift && !rest.empty()) return make_error(Errc::config, "'%s' has an unknown unit", text);
  }
  if (shift && n > (~0ull >> shift)) return make_error(Errc::config, "'%s' is too large", text);
  *out = static_cast<size_t>(n << shift);
  return Status::ok();
}

Status parse_long(const char* text, long* out) {
  std::string s(trim(text ? text : ""));
  if (s.empty()) return make_error(Errc::config, "empty integer");
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0')
    return make_error(Errc::config, "'%s' is not an integer", text);
  *out = v;
  return Status::ok();
}

Status parse_bool(const char* text, bool* out) {
  std::string_view s = trim(text ? text : "");
  for (const char* t : {"1", "y", "yes", "on", "true"})
    if (s == t) return (*out = true), Status::ok();
  for (const char* f : {"0", "n", "no", "off", "false"})
    if (s == f) return (*out = false), Status::ok();
  return make_error(Errc::config, "'%s' is not a boolean (use 1/0, yes/no, on/off)", text);
}

Status parse_seconds(const char* text, double* out) {
  std::string s(trim(text ? text : ""));
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
    return make_error(Errc::config, "'%s' is not a number of seconds", text);
  *out = v;
  return Status::ok();
}

std::string format_size(size_t bytes) {
  static const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  size_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + units[u];
}

namespace {
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::boolean: return "bool";
    case Kind::integer: return "integer";
    case Kind::size: return "bytes";
    case Kind::seconds: return "seconds";
    case Kind::choice: return "choice";
    case Kind::string: return "string";
    case Kind::subsys_list: return "list";
  }
  return "?";
}
}  // namespace

std::string render_markdown() {
  std::string out =
      "# duct environment variables\n\n"
      "Generated from the configuration table in `lib/core/config.cpp` by\n"
      "`duct-info -c --markdown`; a test fails when this page and the table differ.\n"
      "Variables marked *agree* must have the same value on every rank of a\n"
      "communicator: duct checks this when it first uses the communicator.\n\n"
      "| variable | type | default | agree | meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const Var& v : kTable) {
    std::string type = kind_name(v.kind);
    if (v.kind == Kind::choice) type += " (" + std::string(v.choices) + ")";
    std::string def = "(empty)";
    if (*v.def) def.assign("`").append(v.def).append("`");
    for (char& ch : type)
      if (ch == '|') ch = '/';
    out += "| `" + std::string(v.name) + "` | " + type + " | " + def + " | " +
           (v.must_agree ? "yes" : "") + " | " + v.doc + " |\n";
  }
  return out;
}

}  // namespace duct::config
