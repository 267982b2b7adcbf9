// duct-info: what duct sees and would do on this job.
//
//   mpirun -np 4 duct-info          ranks, hosts, nodes, GPU and NUMA node per
//                                   rank, which ranks share each GPU and
//                                   whether MPS serves them, the channel of
//                                   every rank pair, UCX, IPC handle cache
//                                   counters (after three device allreduces
//                                   where cuda_ipc is used)
//   duct-info -c                    every DUCT_* variable: default, value, doc
//   duct-info -c --markdown         the same as docs/env.md
//   duct-info -a                    every algorithm, the selection table in force
//                                   and the rules file it came from (duct-tune)
//   duct-info -t                    which datatype x op reductions duct serves
//                                   natively (host and device), which go to
//                                   the MPI library, and why
//   duct-info --has-device          exit 0 when a CUDA device is usable, else 1
//   duct-info --rank-binding L      for the rank with local rank L: its GPU by
//                                   local rank, the CUDA_VISIBLE_DEVICES order
//                                   that makes it device 0, its NUMA node and
//                                   CPUs (hwloc), whether MPS serves it, as
//                                   shell assignments
//                                   (mpi_launch_scripts/duct-run uses them)
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "channel/table.hpp"
#include "channel/ucx.hpp"
#include "coll/context.hpp"
#include "core/config.hpp"
#include "core/dtype.hpp"
#include "core/hwtopo.hpp"
#include "duct/duct.h"
#include "memory/cuda.hpp"
#include "memory/ipc_cache.hpp"
#include "reduce/reduce.hpp"
#include "select/select.hpp"

namespace {

using namespace duct;

void print_config(bool markdown) {
  if (markdown) {
    std::fputs(config::render_markdown().c_str(), stdout);
    return;
  }
  auto env = config::process_env();
  std::printf("# duct configuration (DUCT_* environment variables)\n");
  for (const config::Var& v : config::table()) {
    const char* set = env(v.name);
    std::printf("%-22s = %-12s (default %s%s%s)\n    %s\n", v.name, config::value_of(v, env).c_str(),
                *v.def ? v.def : "empty", set ? ", set" : "", v.must_agree ? ", must agree across ranks" : "",
                v.doc);
  }
  std::string unknown = config::unknown_vars();
  if (!unknown.empty()) std::printf("# unknown DUCT_* variables in the environment: %s\n", unknown.c_str());
  const Status& st = config::load_status();
  if (!st) std::printf("# invalid: %s\n", st.message().c_str());
}

// One line per GPU in use (host, PCI bus id): the ranks on it and whether
// MPS serves them. `gpus[r]` is "host bus mps" of rank r, empty without a GPU.
void print_mps(const std::vector<std::string>& gpus) {
  struct Gpu {
    std::string key, ranks;
    int n = 0, mps = 0;
  };
  std::vector<Gpu> seen;
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    if (gpus[r].empty()) continue;
    const std::string key = gpus[r].substr(0, gpus[r].rfind(' '));
    const int mps = gpus[r].back() == '1';
    auto it = std::find_if(seen.begin(), seen.end(), [&](const Gpu& g) { return g.key == key; });
    if (it == seen.end()) it = seen.insert(seen.end(), Gpu{key, "", 0, 0});
    if (it->n++) it->ranks += ',';
    it->ranks += std::to_string(r);
    it->mps += mps;
  }
  for (const Gpu& g : seen) {
    const char* state = g.mps == g.n ? "MPS active" : g.mps == 0 ? "MPS not active" : "MPS active on some ranks only";
    std::printf("# GPU %s: ranks %s, %s", g.key.c_str(), g.ranks.c_str(), state);
    if (g.n > 1 && g.mps < g.n)
      std::printf(" (%d ranks share this GPU: without MPS every GPU operation of one rank is a context switch for the others, "
                  "and small device collectives take 10x longer; duct-run --mps starts MPS for the job)",
                  g.n);
    std::printf("\n");
  }
}

void print_algorithms() {
  std::printf("# duct algorithms\n");
  for (const select::AlgoDesc& a : select::algorithms())
    std::printf("%-10s %-20s %s%s\n", select::coll_name(a.coll), a.name, a.doc, a.fallback ? " [fallback]" : "");
  const config::RulesFile& file = config::rules_file();
  std::printf("\n# rules file: %s\n",
              !file.status     ? file.status.message().c_str()
              : file.path.empty() ? file.why.c_str()
                                  : (file.path + " (" + file.why + "), its rules before the built-in ones").c_str());
  if (file.path.empty() && config::get().tune_file.empty())
    std::printf("#   (a site puts duct-tune's output at %s, or names a file with DUCT_TUNE_FILE)\n",
                config::default_rules_file());
  select::Table t;
  Status st = file.status;
  if (st) st = select::Table::make(config::get().tune, file.text, file.path, &t);
  std::printf("# selection table (built-in: %s%s%s)\n", select::default_rules(),
              config::get().tune.empty() ? "" : "; DUCT_TUNE=", config::get().tune.c_str());
  if (!st)
    std::printf("invalid rules: %s\n", st.message().c_str());
  else
    std::fputs(t.describe().c_str(), stdout);
  std::printf("# {file}: from the rules file; {DUCT_TUNE}: from DUCT_TUNE; unmarked: built in\n");
}

// Gather one string per rank at rank 0.
std::vector<std::string> gather(const std::string& mine, MPI_Comm comm) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(n)), displs(static_cast<size_t>(n));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < n; ++r) {
    displs[static_cast<size_t>(r)] = total;
    total += lens[static_cast<size_t>(r)];
  }
  std::vector<char> all(static_cast<size_t>(rank == 0 ? total : 0) + 1);
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < n; ++r)
      out.emplace_back(all.data() + displs[static_cast<size_t>(r)], static_cast<size_t>(lens[static_cast<size_t>(r)]));
  return out;
}

int job_info() {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  // Set duct up on MPI_COMM_WORLD the way a first collective would.
  coll::Runtime* rt = nullptr;
  coll::Context* ctx = nullptr;
  Status st = coll::Runtime::get(&rt);
  if (st) st = rt->context(MPI_COMM_WORLD, &ctx);
  int ok = st.is_ok(), all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all_ok) {
    std::fprintf(stderr, "duct-info: rank %d: %s\n", rank, st ? "another rank failed" : st.message().c_str());
    return 1;
  }

  const Topology& t = ctx->topo;
  const channel::PeerInfo& me = ctx->channels->self();
  std::string gpu = "none";
  bool mps = false;
  if (me.cuda) {
    int numa = hwtopo::pci_numa_node(me.bus_id);
    (void)memory::cuda::mps_enabled(me.device, &mps);
    gpu = strprintf("cuda:%d %s (%s, NUMA %d, MPS %s)", me.device, memory::cuda::device_name(me.device).c_str(),
                    me.bus_id, numa, mps ? "active" : "not active");
  }
  // Per GPU: which ranks share it and whether MPS serves them.
  const std::string host = processor_name();
  std::vector<std::string> hosts = gather(host, MPI_COMM_WORLD);
  std::vector<std::string> gpus = gather(me.cuda ? strprintf("%s %s %d", host.c_str(), me.bus_id, mps ? 1 : 0) : std::string(), MPI_COMM_WORLD);
  std::string line = strprintf("rank %-3d host %-16s node %d local %d pid %-7d NUMA %-2d GPU %s\n", rank,
                               host.c_str(), t.node, t.local_rank, me.pid, me.numa,
                               gpu.c_str());
  if (channel::ucx::Worker* w = channel::ucx::Worker::existing()) {
    line += strprintf("    network devices: %s (%s)\n", w->net_devices().c_str(), w->net_why().c_str());
    line += strprintf("    protocol: %s\n", w->protocol().c_str());
  }
  for (int r = 0; r < n; ++r)
    if (r != rank) line += strprintf("    -> rank %-3d %s\n", r, ctx->channels->describe_pair(r).c_str());
  // Where cuda_ipc serves pairs, exercise it with a few device allreduces
  // (every rank joins; ranks without a device use host memory) and show
  // the IPC handle cache's counters.
  int ipc = ctx->channels->uses_ipc() && memory::cuda::available(), any_ipc = 0;
  MPI_Allreduce(&ipc, &any_ipc, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (any_ipc) {
    const std::size_t count = 256 * 1024;  // 1 MiB of floats: above the inline limit
    void* buf = nullptr;
    std::vector<float> host;
    if (memory::cuda::available() && memory::cuda::alloc_device(count * sizeof(float), &buf)) {
      (void)memory::cuda::copy(buf, std::vector<float>(count, 1.0f).data(), count * sizeof(float));
    } else {
      host.assign(count, 1.0f);
      buf = host.data();
    }
    for (int i = 0; i < 3; ++i)
      DUCT_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (host.empty()) memory::cuda::free_device(buf);
  }
  line += strprintf("    IPC handle cache: %s\n", memory::IpcCache::instance().describe().c_str());
  std::vector<std::string> lines = gather(line, MPI_COMM_WORLD);

  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string libline(lib, static_cast<size_t>(len));
    libline = libline.substr(0, libline.find('\n'));
    channel::ucx::Worker* w = nullptr;
    (void)channel::ucx::Worker::get(&w);
    std::printf("# duct %s\n", DUCT_Version_string());
    std::printf("# MPI: %s\n", libline.c_str());
    std::printf("# UCX: %s\n", w ? w->describe().c_str() : "?");
    std::printf("# CUDA: %s\n", memory::cuda::available()
                                    ? strprintf("%d device(s) visible to rank 0", memory::cuda::device_count()).c_str()
                                    : memory::cuda::unavailable_reason().c_str());
    std::printf("# %s\n", hwtopo::describe().c_str());
    print_mps(gpus);
    std::printf("# %d rank(s) on %d node(s)\n", n, t.num_nodes);
    for (int node = 0; node < t.num_nodes; ++node) {
      std::string ranks;
      for (int r : t.ranks_on[static_cast<size_t>(node)]) {
        if (!ranks.empty()) ranks += ",";
        ranks += std::to_string(r);
      }
      std::printf("#   node %d (%s): ranks %s\n", node, hosts[static_cast<size_t>(t.ranks_on[static_cast<size_t>(node)][0])].c_str(),
                  ranks.c_str());
    }
    std::printf("\n# channel matrix (row: from, column: to; i = cuda_ipc, c = cma, u = ucx, m = mpi, . = self)\n     ");
    for (int c = 0; c < n && n <= 64; ++c) std::printf("%d", c % 10);
    std::printf("\n");
    for (int r = 0; r < n && n <= 64; ++r) {
      std::printf("%4d ", r);
      // Each rank's row is in its lines: "-> rank c <kind>".
      for (int c = 0; c < n; ++c) {
        if (c == r) {
          std::printf(".");
          continue;
        }
        std::string key = strprintf("-> rank %-3d ", c);
        const std::string& l = lines[static_cast<size_t>(r)];
        size_t p = l.find(key);
        char mark = '?';
        if (p != std::string::npos) {
          const std::string kind = l.substr(p + key.size(), 8);
          mark = kind.rfind("cuda_ipc", 0) == 0 ? 'i'
                 : kind.rfind("cma", 0) == 0    ? 'c'
                 : kind.rfind("mpi", 0) == 0    ? 'm'
                                                : 'u';
        }
        std::printf("%c", mark);
      }
      std::printf("\n");
    }
    std::printf("\n# ranks and their channels\n");
    for (const std::string& l : lines) std::fputs(l.c_str(), stdout);
    std::printf("\n");
    print_config(false);
  }
  return 0;
}

// Shell assignments for the rank with local rank `local`: DUCTRUN_GPU (an
// index into the devices visible now), DUCTRUN_VISIBLE (CUDA_VISIBLE_DEVICES
// rotated so that this GPU is device 0 while every GPU stays visible for CUDA
// IPC), DUCTRUN_BUS, DUCTRUN_NUMA and DUCTRUN_CPUS (the GPU's NUMA node and
// its CPUs, from hwloc). Without a GPU only DUCTRUN_GPU=none.
int rank_binding(int local) {
  const int n = memory::cuda::available() ? memory::cuda::device_count() : 0;
  if (n <= 0) {
    std::string why = memory::cuda::unavailable_reason();
    for (char& c : why)
      if (c == '\'') c = '"';  // the line is eval'ed by a shell
    std::printf("DUCTRUN_GPU=none\nDUCTRUN_WHY='%s'\n", why.c_str());
    return 0;
  }
  const int g = local % n;
  // The visible list as CUDA sees it now (CUDA_VISIBLE_DEVICES or 0..n-1).
  std::vector<std::string> visible;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::string s = v;
    for (std::size_t pos = 0; pos <= s.size();) {
      std::size_t comma = s.find(',', pos);
      if (comma == std::string::npos) comma = s.size();
      visible.push_back(s.substr(pos, comma - pos));
      pos = comma + 1;
    }
  }
  if (static_cast<int>(visible.size()) != n) {
    visible.clear();
    for (int d = 0; d < n; ++d) visible.push_back(std::to_string(d));
  }
  std::string rotated;
  for (int k = 0; k < n; ++k) rotated += (k ? "," : "") + visible[static_cast<std::size_t>((g + k) % n)];
  std::string bus;
  (void)memory::cuda::pci_bus_id(g, &bus);
  const int numa = hwtopo::pci_numa_node(bus);
  bool mps = false;
  (void)memory::cuda::mps_enabled(g, &mps);
  std::printf("DUCTRUN_GPU=%d\nDUCTRUN_VISIBLE=%s\nDUCTRUN_BUS=%s\nDUCTRUN_NUMA=%d\nDUCTRUN_CPUS=%s\nDUCTRUN_MPS=%d\n", g,
              rotated.c_str(), bus.c_str(), numa, hwtopo::numa_cpus(numa).c_str(), mps ? 1 : 0);
  return 0;
}

// -t: one row per predefined datatype, one column per reduction op.
int print_types() {
  struct T {
    const char* name;
    MPI_Datatype t;
  };
  const T types[] = {
      {"MPI_CHAR", MPI_CHAR}, {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR}, {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR},
      {"MPI_WCHAR", MPI_WCHAR}, {"MPI_SHORT", MPI_SHORT}, {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT},
      {"MPI_INT", MPI_INT}, {"MPI_UNSIGNED", MPI_UNSIGNED}, {"MPI_LONG", MPI_LONG},
      {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG}, {"MPI_LONG_LONG", MPI_LONG_LONG},
      {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG}, {"MPI_INT8_T", MPI_INT8_T}, {"MPI_UINT8_T", MPI_UINT8_T},
      {"MPI_INT16_T", MPI_INT16_T}, {"MPI_UINT16_T", MPI_UINT16_T}, {"MPI_INT32_T", MPI_INT32_T},
      {"MPI_UINT32_T", MPI_UINT32_T}, {"MPI_INT64_T", MPI_INT64_T}, {"MPI_UINT64_T", MPI_UINT64_T},
      {"MPI_AINT", MPI_AINT}, {"MPI_OFFSET", MPI_OFFSET}, {"MPI_COUNT", MPI_COUNT},
      {"MPI_FLOAT", MPI_FLOAT}, {"MPI_DOUBLE", MPI_DOUBLE}, {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE},
      {"DUCT_FLOAT16", DUCT_FLOAT16}, {"DUCT_BFLOAT16", DUCT_BFLOAT16},
      {"MPI_C_BOOL", MPI_C_BOOL}, {"MPI_BYTE", MPI_BYTE},
      {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX}, {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX},
      {"MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX},
#if defined(MPI_CXX_BOOL) && !defined(DUCT_SIM)  // SMPI names the C++ complex types without defining them
      {"MPI_CXX_BOOL", MPI_CXX_BOOL}, {"MPI_CXX_FLOAT_COMPLEX", MPI_CXX_FLOAT_COMPLEX},
      {"MPI_CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX}, {"MPI_CXX_LONG_DOUBLE_COMPLEX", MPI_CXX_LONG_DOUBLE_COMPLEX},
#endif
      {"MPI_FLOAT_INT", MPI_FLOAT_INT}, {"MPI_DOUBLE_INT", MPI_DOUBLE_INT}, {"MPI_LONG_INT", MPI_LONG_INT},
      {"MPI_2INT", MPI_2INT}, {"MPI_SHORT_INT", MPI_SHORT_INT}, {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT},
      {"MPI_INTEGER", MPI_INTEGER}, {"MPI_INTEGER1", MPI_INTEGER1}, {"MPI_INTEGER2", MPI_INTEGER2},
      {"MPI_INTEGER4", MPI_INTEGER4}, {"MPI_INTEGER8", MPI_INTEGER8}, {"MPI_REAL", MPI_REAL},
      {"MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION}, {"MPI_REAL4", MPI_REAL4}, {"MPI_REAL8", MPI_REAL8},
      {"MPI_COMPLEX", MPI_COMPLEX}, {"MPI_DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX}, {"MPI_COMPLEX8", MPI_COMPLEX8},
      {"MPI_COMPLEX16", MPI_COMPLEX16}, {"MPI_LOGICAL", MPI_LOGICAL}, {"MPI_2REAL", MPI_2REAL},
      {"MPI_2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION}, {"MPI_2INTEGER", MPI_2INTEGER},
  };
  const char* ops[] = {"SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR", "MINLOC", "MAXLOC"};
  static_assert(sizeof ops / sizeof ops[0] == static_cast<std::size_t>(RedOp::count_));
  const bool device = reduce::device_built();
  std::printf("# Reductions (allreduce, reduce, reduce_scatter[_block]) by datatype and op, as this build and this\n"
              "# MPI library's datatype layouts give them:\n"
              "#   D  native on host and device buffers (device kernels%s)\n"
              "#   H  native; device buffers are reduced on host copies (no device kernel: long double; or the\n"
              "#      element ends in padding that lies past a buffer's end: MPI_DOUBLE_INT, MPI_LONG_INT)\n"
              "#   M  served by the MPI library (device buffers staged through host): the note says why\n"
              "#   .  not defined by MPI-4.0 for this datatype: an MPI_ERR_OP-class error (duct's or MPI's)\n"
              "# Other ops (user ops, MPI_REPLACE) and derived datatypes: M. Intercommunicators: M.\n",
              device ? "" : " not built here: D runs on host buffers only");
  std::printf("%-28s %-22s", "datatype", "element");
  for (const char* o : ops) std::printf(" %-6s", o);
  std::printf(" note\n");
  for (const T& t : types) {
    DType d;
    const bool known = t.t != MPI_DATATYPE_NULL && lookup_dtype(t.t, &d);
    std::printf("%-28s %-22s", t.name, known ? elem_name(d.elem) : "-");
    std::string note;
    for (int o = 0; o < static_cast<int>(RedOp::count_); ++o) {
      const RedOp op = static_cast<RedOp>(o);
      char c;
      if (!known) {
        c = 'M';
      } else if (d.cat == Category::f_integer && (op == RedOp::land || op == RedOp::lor || op == RedOp::lxor)) {
        c = 'M';
        note = "logical ops on a Fortran integer: MPI answers";
      } else if (!op_valid_for(op, d.cat)) {
        c = '.';
      } else if (!reduce::supported(d.elem, op)) {
        c = 'M';
      } else {
        c = host_only(d.elem) || tail_padded(d.elem) ? 'H' : 'D';
      }
      std::printf(" %-6c", c);
    }
    if (!known) {
      note = t.t == MPI_DATATYPE_NULL ? "not defined by this MPI library"
             : t.t == MPI_WCHAR      ? "no reduction is defined on it (Open MPI refuses every op)"
             : t.t == MPI_OFFSET     ? "Open MPI 4.1's MIN/MAX on it are not a signed 64-bit comparison"
                                     : "its layout here is not one of duct's elements";
    }
    std::printf(" %s\n", note.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool cfg = false, markdown = false, algos = false, has_device = false, version = false, types = false;
  int binding_for = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-c" || a == "--config") cfg = true;
    else if (a == "--markdown") markdown = true;
    else if (a == "-a" || a == "--algorithms") algos = true;
    else if (a == "--has-device") has_device = true;
    else if (a == "-t" || a == "--types") types = true;
    else if (a == "--version") version = true;
    else if (a == "--rank-binding" && i + 1 < argc) binding_for = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: duct-info [--version] [-c [--markdown]] [-a] [-t] [--has-device] [--rank-binding LOCAL_RANK]\n");
      return 2;
    }
  }
  // The local queries need no MPI.
  if (version) {
    int major = 0, minor = 0, patch = 0;
    DUCT_Get_version(&major, &minor, &patch);
    std::printf("duct %d.%d.%d (library: %s; compiled against duct.h %d.%d.%d)\n", major, minor, patch,
                DUCT_Version_string(), DUCT_VERSION_MAJOR, DUCT_VERSION_MINOR, DUCT_VERSION_PATCH);
    return 0;
  }
  if (binding_for >= 0) return rank_binding(binding_for);
  if (has_device) {
    if (!memory::cuda::available()) std::printf("no CUDA device: %s\n", memory::cuda::unavailable_reason().c_str());
    return memory::cuda::available() ? 0 : 1;
  }
  if (cfg || algos) {
    if (cfg) print_config(markdown);
    if (algos) print_algorithms();
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rc = types ? print_types() : job_info();
  MPI_Finalize();
  return rc;
}
