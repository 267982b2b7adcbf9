// The channel table: which channel serves each rank pair.
#include "channel/table.hpp"

#include <unistd.h>

#include <cstring>
#include <functional>

#include "channel/mpi_channel.hpp"
#include "channel/ucx.hpp"
#include "channel/ucx_channel.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "memory/buffer.hpp"
#include "memory/ipc_cache.hpp"

namespace duct::channel {

std::unique_ptr<Channel> make_cuda_ipc_channel(const PairSetup& s);
std::unique_ptr<Channel> make_cma_channel(const PairSetup& s);

namespace {

bool mpi_usable(const PeerInfo& a, const PeerInfo& b, bool, std::string* why) {
  if (config::get().channel == config::ChannelMode::mpi) return (*why = "DUCT_CHANNEL=mpi"), true;
  // ChannelSet::create marks both rows when some rank of the communicator has no UCX.
  if (a.no_ucx || b.no_ucx) return (*why = "UCX did not start on some rank of the communicator (DUCT_CHANNEL=auto)"), true;
  return (*why = "DUCT_CHANNEL is not mpi"), false;
}

std::unique_ptr<Channel> make_mpi_channel(const PairSetup& s) {
  return std::make_unique<MpiChannel>(s.mpi_comm, s.peer, s.mpi_tag_ub, s.mpi_cuda);
}

bool ipc_usable(const PeerInfo& a, const PeerInfo& b, bool same_node, std::string* why) {
  const auto mode = config::get().channel;
  if (mode == config::ChannelMode::ucx) return (*why = "DUCT_CHANNEL=ucx"), false;
  if (!same_node) return (*why = "ranks on different nodes"), false;
  if (mode == config::ChannelMode::ipc) return (*why = "DUCT_CHANNEL=ipc"), true;
  if (!a.cuda || !b.cuda) return (*why = "a rank of the pair has no CUDA device"), false;
  return (*why = "same node, both ranks have a CUDA device"), true;
}

bool cma_usable(const PeerInfo&, const PeerInfo&, bool same_node, std::string* why) {
  if (config::get().channel == config::ChannelMode::ucx) return (*why = "DUCT_CHANNEL=ucx"), false;
  if (!same_node) return (*why = "ranks on different nodes"), false;
  return (*why = "same node: host buffers by process_vm_readv"), true;
}

bool ucx_usable(const PeerInfo&, const PeerInfo&, bool same_node, std::string* why) {
  *why = same_node ? "UCX shared memory / CMA" : "UCX network transport";
  return true;
}

std::unique_ptr<Channel> make_ucx_channel(const PairSetup& s) { return std::make_unique<UcxChannel>(s); }

std::uint64_t hash_proc(const std::string& host, int pid) {
  std::uint64_t h = std::hash<std::string>{}(host);
  return h ^ (static_cast<std::uint64_t>(pid) * 0x9e3779b97f4a7c15ull);
}

std::string must_agree_names() {
  std::string out;
  for (const config::Var& v : config::table())
    if (v.must_agree) {
      if (!out.empty()) out += ", ";
      out += v.name;
    }
  return out;
}

}  // namespace

const std::vector<ChannelKind>& channel_table() {
  static const std::vector<ChannelKind> table = {
      {"mpi",
       "every pair when DUCT_CHANNEL=mpi: the MPI library's PMPI_Isend/PMPI_Irecv on a duplicate of the "
       "communicator; device memory direct where the MPI is CUDA-aware, else staged through host memory",
       mpi_usable, make_mpi_channel},
      {"cuda_ipc",
       "same node, both ranks with CUDA: device buffers by cudaIpcMemHandle + cudaMemcpyAsync, "
       "small messages inline, host buffers as ucx messages",
       ipc_usable, make_cuda_ipc_channel},
      {"cma",
       "same node: host buffers copied once by the receiver with process_vm_readv (cross-memory attach), "
       "small messages inline, device buffers as ucx messages",
       cma_usable, make_cma_channel},
      {"ucx",
       "any pair: UCX tag messages (shared memory, CMA or network); device memory direct when UCX "
       "has CUDA support, else through pinned bounce buffers",
       ucx_usable, make_ucx_channel},
  };
  return table;
}

Status local_peer_info(PeerInfo* out) {
  const config::Config& cfg = config::get();
  const bool mpi_only = cfg.channel == config::ChannelMode::mpi;  // no UCX at all
  ucx::Worker* w = nullptr;
  bool no_ucx = false;
  if (!mpi_only) {
    Status st = ucx::Worker::get(&w);
    if (!st) {
      // With DUCT_CHANNEL=auto a process without a working UCX (none on
      // the site, or none that starts) still runs duct's algorithms: over
      // the MPI library, for every rank of its communicators.
      if (cfg.channel != config::ChannelMode::auto_) return st;
      static bool said = false;
      if (!said) {
        said = true;
        DUCT_WARN(channel, "UCX did not start (%s): duct's messages go through the MPI library (the mpi channel) on "
                  "every communicator of this process and its peers; DUCT_CHANNEL=mpi says so without trying UCX",
                  st.message().c_str());
      }
      w = nullptr;
      no_ucx = true;
    }
  }
  PeerInfo p;
  p.no_ucx = no_ucx ? 1 : 0;
  p.pid = static_cast<std::int32_t>(getpid());
  p.proc = hash_proc(processor_name(), p.pid);
  p.cuda = memory::cuda::available() ? 1 : 0;
  p.ucx_cuda = w && w->cuda_support() ? 1 : 0;
  if (p.cuda) {
    int dev = 0;
    std::string bus;
    DUCT_TRY(memory::cuda::current_device(&dev));
    DUCT_TRY(memory::cuda::pci_bus_id(dev, &bus));
    p.device = dev;
    std::snprintf(p.bus_id, sizeof p.bus_id, "%s", bus.c_str());
  }
  p.chunk = cfg.pipeline_chunk;
  p.eager = cfg.eager_limit;
  p.digest = config::agree_digest(config::process_env());
  p.rules_digest = config::rules_file().digest;
  p.addr_len = w ? static_cast<std::uint32_t>(w->address().size()) : 0;
  *out = p;
  return Status::ok();
}

Status ChannelSet::create(MPI_Comm comm, const Topology& topo, std::uint32_t cid, const PeerInfo& local,
                          std::unique_ptr<ChannelSet>* out, const MpiWait& wait) {
  const int n = topo.size;
  if (n > ucx::kMaxRanks)
    return make_error(Errc::not_supported, "communicator of %d ranks: duct supports up to %d", n, ucx::kMaxRanks);
  bool mpi_only = config::get().channel == config::ChannelMode::mpi;
  ucx::Worker* w = nullptr;

  // The exchange buffers live on the heap, owned by `buf` (see MpiWait).
  struct Bufs {
    PeerInfo local;
    std::vector<PeerInfo> infos;
    std::vector<int> lens, displs;
    std::vector<char> mine, addrs;
  };
  auto buf = std::make_shared<Bufs>();
  buf->local = local;
  buf->infos.resize(static_cast<size_t>(n));
  MPI_Request req;
  DUCT_MPI_CHECK(setup_mpi::Iallgather(&buf->local, sizeof(PeerInfo), MPI_BYTE, buf->infos.data(), sizeof(PeerInfo),
                                 MPI_BYTE, comm, &req));
  DUCT_TRY(wait(&req, "MPI_Iallgather of the ranks' transport facts", buf));
  auto set = std::make_unique<ChannelSet>();
  set->infos_ = buf->infos;
  // Settings that change the wire protocol or the algorithm choice must agree.
  for (int r = 0; r < n; ++r) {
    const PeerInfo& p = set->infos_[static_cast<size_t>(r)];
    if (p.digest != local.digest)
      return make_error(Errc::config, "rank %d and rank %d have different values of the DUCT_* variables that "
                        "must agree (%s); set them identically for every rank", topo.rank, r, must_agree_names().c_str());
    if (p.rules_digest != local.rules_digest) {
      const config::RulesFile& f = config::rules_file();
      return make_error(Errc::config, "rank %d and rank %d read different selection rules files (rank %d: %s); "
                        "every rank must select alike: give every rank the same file (DUCT_TUNE_FILE) or none "
                        "(DUCT_TUNE_FILE=none)", topo.rank, r, topo.rank,
                        f.path.empty() ? "none" : f.path.c_str());
    }
  }

  // A rank without UCX makes every pair of the communicator take the mpi
  // channel (every rank sees the same rows, so every rank decides alike).
  bool fallback = false;
  for (const PeerInfo& p : set->infos_) fallback = fallback || p.no_ucx;
  if (fallback) {
    for (PeerInfo& p : set->infos_) p.no_ucx = 1;
    mpi_only = true;
  }
  if (!mpi_only) DUCT_TRY(ucx::Worker::get(&w));

  // Every pair's PairSetup starts from this: the mpi channel's duplicate
  // of the communicator, or nothing of it.
  PairSetup base;
  base.cid = cid;
  base.rank = topo.rank;
  if (mpi_only) {
    DUCT_TRY(set->open_mpi_comm(comm, wait, &base));
  } else {
    // UCX worker addresses (variable length).
    buf->lens.resize(static_cast<size_t>(n));
    buf->displs.resize(static_cast<size_t>(n));
    int total = 0;
    for (int r = 0; r < n; ++r) {
      buf->lens[static_cast<size_t>(r)] = static_cast<int>(set->infos_[static_cast<size_t>(r)].addr_len);
      buf->displs[static_cast<size_t>(r)] = total;
      total += buf->lens[static_cast<size_t>(r)];
    }
    buf->addrs.resize(static_cast<size_t>(total));
    buf->mine.assign(w->address().begin(), w->address().end());
    DUCT_MPI_CHECK(setup_mpi::Iallgatherv(buf->mine.data(), static_cast<int>(buf->mine.size()), MPI_BYTE,
                                    buf->addrs.data(), buf->lens.data(), buf->displs.data(), MPI_BYTE, comm, &req));
    DUCT_TRY(wait(&req, "MPI_Iallgatherv of the UCX worker addresses", buf));
  }
  const std::vector<char>& addrs = buf->addrs;
  const std::vector<int>& displs = buf->displs;
  const std::vector<int>& lens = buf->lens;

  const config::Config& cfg = config::get();
  set->channels_.resize(static_cast<size_t>(n));
  set->kinds_.resize(static_cast<size_t>(n));
  set->eps_.resize(static_cast<size_t>(n), nullptr);
  for (int r = 0; r < n; ++r) {
    const PeerInfo& p = set->infos_[static_cast<size_t>(r)];
    set->any_cuda_ = set->any_cuda_ || p.cuda;
    if (r == topo.rank) {
      set->kinds_[static_cast<size_t>(r)] = "self";
      continue;
    }
    PairSetup s = base;
    s.peer = r;
    s.peer_proc = p.proc;
    if (w) {  // the UCX-based channels (none with DUCT_CHANNEL=mpi)
      s.worker = w->worker();
      std::string addr(addrs.data() + displs[static_cast<size_t>(r)], static_cast<size_t>(lens[static_cast<size_t>(r)]));
      DUCT_TRY(w->endpoint(addr, &s.ep));
      set->eps_[static_cast<size_t>(r)] = s.ep;
      // Split messages only where one side may hold device memory that UCX
      // cannot reach; both sides compute the same value.
      bool may_stage = (local.cuda && !local.ucx_cuda) || (p.cuda && !p.ucx_cuda);
      s.chunk = may_stage ? std::min(local.chunk, p.chunk) : 0;
      // Bounce buffers must hold a whole chunk of this pair.
      if (s.chunk)
        memory::BouncePool::instance().configure(s.chunk, std::max<std::size_t>(64, 4 * static_cast<std::size_t>(cfg.pipeline_depth)));
      s.eager = std::min(local.eager, p.eager);
      s.depth = static_cast<int>(cfg.pipeline_depth);
      s.direct_device = local.ucx_cuda != 0;
    }
    bool same_node = topo.same_node(topo.rank, r);
    for (const ChannelKind& k : channel_table()) {
      std::string why;
      if (!k.usable(local, p, same_node, &why)) continue;
      set->channels_[static_cast<size_t>(r)] = k.create(s);
      set->kinds_[static_cast<size_t>(r)] = k.name;
      if (std::strcmp(k.name, "cuda_ipc") == 0) {  // (cma maps no device memory)
        memory::IpcCache::instance().retain_peer(p.proc);
        set->ipc_peers_.push_back(p.proc);
      }
      DUCT_DEBUG(channel, "rank %d -> rank %d: %s (%s)", topo.rank, r, k.name, why.c_str());
      break;
    }
  }
  *out = std::move(set);
  return Status::ok();
}

Status ChannelSet::open_mpi_comm(MPI_Comm comm, const MpiWait& wait, PairSetup* s) {
  // The duplicate keeps duct's messages apart from the application's, whatever
  // tags it uses (MPI_ANY_TAG included). Nonblocking, so that it waits like
  // every other setup exchange (DUCT_TIMEOUT, other threads' setups).
#ifdef DUCT_SIM
  // SimGrid's SMPI (3.32) has no MPI_Comm_idup; its ranks take turns in one
  // process, so the blocking form waits for nothing else of duct's.
  (void)wait;
  DUCT_MPI_CHECK(PMPI_Comm_dup(comm, &mpi_comm_));
#else
  MPI_Request req;
  DUCT_MPI_CHECK(PMPI_Comm_idup(comm, &mpi_comm_, &req));
  DUCT_TRY(wait(&req, "MPI_Comm_idup of the communicator for the mpi channel", nullptr));
#endif
  DUCT_MPI_CHECK(PMPI_Comm_set_errhandler(mpi_comm_, MPI_ERRORS_RETURN));
  int* ub = nullptr;
  int flag = 0;
  DUCT_MPI_CHECK(PMPI_Comm_get_attr(mpi_comm_, MPI_TAG_UB, &ub, &flag));
  s->mpi_comm = mpi_comm_;
  s->mpi_tag_ub = flag && ub ? *ub : 32767;
  s->mpi_cuda = mpi_cuda_aware();
  DUCT_DEBUG(channel, "rank %d: the mpi channel's communicator (MPI_TAG_UB %d, %s)", s->rank, s->mpi_tag_ub,
             s->mpi_cuda ? "CUDA-aware MPI: device memory direct" : "device memory staged through host");
  return Status::ok();
}

ChannelSet::~ChannelSet() {
  channels_.clear();  // no operation is in flight: the communicator is being freed
  for (std::uint64_t p : ipc_peers_) memory::IpcCache::instance().release_peer(p);
  if (mpi_comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    (void)PMPI_Finalized(&finalized);
    if (!finalized) (void)PMPI_Comm_free(&mpi_comm_);
  }
}

std::string ChannelSet::describe_pair(int rank) const {
  const std::string& k = kinds_[static_cast<size_t>(rank)];
  if (k != "ucx") return k;
  ucx::Worker* w = ucx::Worker::existing();
  void* ep = eps_[static_cast<size_t>(rank)];
  if (!w || !ep) return k;
  return k + " (" + w->transports(static_cast<ucp_ep_h>(ep)) + ")";
}

}  // namespace duct::channel
