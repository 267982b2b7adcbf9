// The channel table: which channel serves each rank pair.
#include "channel/table.hpp"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <utility>

#include "channel/mpi_channel.hpp"
#include "channel/ucx.hpp"
#include "channel/ucx_channel.hpp"
#include "core/config.hpp"
#include "core/hash.hpp"
#include "core/log.hpp"
#include "memory/buffer.hpp"
#include "memory/ipc_cache.hpp"

namespace duct::channel {

std::unique_ptr<Channel> make_cuda_ipc_channel(const PairSetup& s);
std::unique_ptr<Channel> make_cma_channel(const PairSetup& s);

namespace {

bool mpi_usable(const PeerRow& a, const PeerRow& b, bool, std::string* why) {
  if (config::get().channel == config::ChannelMode::mpi) return (*why = "DUCT_CHANNEL=mpi"), true;
  // ChannelSet::create marks both rows when some rank of the communicator has no UCX.
  if (a.no_ucx || b.no_ucx) return (*why = "UCX did not start on some rank of the communicator (DUCT_CHANNEL=auto)"), true;
  return (*why = "DUCT_CHANNEL is not mpi"), false;
}

std::unique_ptr<Channel> make_mpi_channel(const PairSetup& s) {
  return std::make_unique<MpiChannel>(s.mpi_comm, s.peer, s.mpi_tag_ub, s.mpi_cuda);
}

bool ipc_usable(const PeerRow& a, const PeerRow& b, bool same_node, std::string* why) {
  const auto mode = config::get().channel;
  if (mode == config::ChannelMode::ucx) return (*why = "DUCT_CHANNEL=ucx"), false;
  if (!same_node) return (*why = "ranks on different nodes"), false;
  if (mode == config::ChannelMode::ipc) return (*why = "DUCT_CHANNEL=ipc"), true;
  if (!a.cuda || !b.cuda) return (*why = "a rank of the pair has no CUDA device"), false;
  return (*why = "same node, both ranks have a CUDA device"), true;
}

bool cma_usable(const PeerRow&, const PeerRow&, bool same_node, std::string* why) {
  if (config::get().channel == config::ChannelMode::ucx) return (*why = "DUCT_CHANNEL=ucx"), false;
  if (!same_node) return (*why = "ranks on different nodes"), false;
  return (*why = "same node: host buffers by process_vm_readv"), true;
}

bool ucx_usable(const PeerRow&, const PeerRow&, bool same_node, std::string* why) {
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
  auto set = std::make_unique<ChannelSet>();
  set->topo_ = &topo;
  set->local_ = local;
  set->mpi_only_ = config::get().channel == config::ChannelMode::mpi;
  ucx::Worker* w = nullptr;

  // Settings that change the wire protocol or the algorithm choice must
  // agree, and a pair splits messages into the smaller of its two chunk
  // sizes: one allreduce (MPI_MIN) of each digest, its complement (whose
  // minimum is the complement of the maximum) and the two sizes.
  struct Bufs {
    std::uint64_t agree[6], agreed[6];
    PeerRow mine;
    std::vector<PeerRow> rows;
    std::vector<std::uint64_t> digests;  // only when they differ: 2 per rank
    std::vector<char> mine_addr, addrs;
  };
  auto buf = std::make_shared<Bufs>();
  buf->agree[0] = local.digest;
  buf->agree[1] = ~local.digest;
  buf->agree[2] = local.rules_digest;
  buf->agree[3] = ~local.rules_digest;
  buf->agree[4] = local.chunk;
  buf->agree[5] = local.eager;
  MPI_Request req;
  DUCT_MPI_CHECK(setup_mpi::Iallreduce(buf->agree, buf->agreed, 6, MPI_UINT64_T, MPI_MIN, comm, &req));
  DUCT_TRY(wait(&req, "MPI_Iallreduce of the settings that must agree", buf));
  if (buf->agreed[0] != ~buf->agreed[1] || buf->agreed[2] != ~buf->agreed[3]) {
    // Some rank differs: every rank learns which, to say so.
    buf->digests.resize(2 * static_cast<size_t>(n));
    DUCT_MPI_CHECK(setup_mpi::Iallgather(&buf->agree[0], 1, MPI_UINT64_T, buf->digests.data(), 1, MPI_UINT64_T, comm,
                                         &req));
    DUCT_TRY(wait(&req, "MPI_Iallgather of the must-agree digests", buf));
    DUCT_MPI_CHECK(setup_mpi::Iallgather(&buf->agree[2], 1, MPI_UINT64_T, buf->digests.data() + n, 1, MPI_UINT64_T,
                                         comm, &req));
    DUCT_TRY(wait(&req, "MPI_Iallgather of the rules files' digests", buf));
    for (int r = 0; r < n; ++r) {
      if (buf->digests[static_cast<size_t>(r)] != local.digest)
        return make_error(Errc::config, "rank %d and rank %d have different values of the DUCT_* variables that "
                          "must agree (%s); set them identically for every rank", topo.rank, r, must_agree_names().c_str());
      if (buf->digests[static_cast<size_t>(n + r)] != local.rules_digest) {
        const config::RulesFile& f = config::rules_file();
        return make_error(Errc::config, "rank %d and rank %d read different selection rules files (rank %d: %s); "
                          "every rank must select alike: give every rank the same file (DUCT_TUNE_FILE) or none "
                          "(DUCT_TUNE_FILE=none)", topo.rank, r, topo.rank,
                          f.path.empty() ? "none" : f.path.c_str());
      }
    }
    // Another pair differs (this rank agrees with every rank): say it.
    return make_error(Errc::config, "rank %d: the ranks of this communicator have different values of the DUCT_* "
                      "variables that must agree (%s) or read different selection rules files (DUCT_TUNE_FILE); "
                      "the ranks that differ say which", topo.rank, must_agree_names().c_str());
  }
  set->chunk_ = buf->agreed[4];
  set->eager_ = buf->agreed[5];

  PeerRow& mine = buf->mine;
  mine.proc = local.proc;
  mine.bus = local.bus_id[0] ? fnv1a(local.bus_id) : 0;
  mine.pid = local.pid;
  mine.device = local.device;
  mine.numa = local.numa;
  mine.addr_len = local.addr_len;
  mine.cuda = static_cast<std::uint8_t>(local.cuda != 0);
  mine.ucx_cuda = static_cast<std::uint8_t>(local.ucx_cuda != 0);
  mine.no_ucx = static_cast<std::uint8_t>(local.no_ucx != 0);
  buf->rows.resize(static_cast<size_t>(n));
  DUCT_MPI_CHECK(setup_mpi::Iallgather(&buf->mine, sizeof(PeerRow), MPI_BYTE, buf->rows.data(), sizeof(PeerRow),
                                       MPI_BYTE, comm, &req));
  DUCT_TRY(wait(&req, "MPI_Iallgather of the ranks' transport facts", buf));
  const std::vector<PeerRow>& rows = buf->rows;

  // A rank without UCX makes every pair of the communicator take the mpi
  // channel (every rank sees the same rows, so every rank decides alike).
  for (const PeerRow& p : rows) set->mpi_only_ = set->mpi_only_ || p.no_ucx;
  set->flags_.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const PeerRow& p = rows[static_cast<size_t>(r)];
    set->flags_[static_cast<size_t>(r)] =
        static_cast<std::uint8_t>((p.cuda ? kCuda : 0) | (p.ucx_cuda ? kUcxCuda : 0));
    set->any_cuda_ = set->any_cuda_ || p.cuda;
  }
  for (int r : topo.ranks_on[static_cast<size_t>(topo.node)]) {
    PeerRow p = rows[static_cast<size_t>(r)];
    if (set->mpi_only_) p.no_ucx = 1;
    set->node_rows_.push_back(p);
  }
  if (!set->mpi_only_) DUCT_TRY(ucx::Worker::get(&w));

  // Every pair's PairSetup starts from this: the mpi channel's duplicate
  // of the communicator, or the UCX worker.
  set->base_ = std::make_unique<PairSetup>();
  PairSetup& base = *set->base_;
  base.cid = cid;
  base.rank = topo.rank;
  base.eager = set->eager_;
  base.depth = static_cast<int>(config::get().pipeline_depth);
  base.direct_device = local.ucx_cuda != 0;
  if (set->mpi_only_) {
    DUCT_TRY(set->open_mpi_comm(comm, wait, &base));
  } else {
    base.worker = w->worker();
    // UCX worker addresses (variable length), kept for the endpoints made
    // at first use.
    set->addr_lens_.resize(static_cast<size_t>(n));
    set->addr_displs_.resize(static_cast<size_t>(n));
    int total = 0;
    for (int r = 0; r < n; ++r) {
      set->addr_lens_[static_cast<size_t>(r)] = static_cast<int>(rows[static_cast<size_t>(r)].addr_len);
      set->addr_displs_[static_cast<size_t>(r)] = total;
      total += set->addr_lens_[static_cast<size_t>(r)];
    }
    buf->addrs.resize(static_cast<size_t>(total));
    buf->mine_addr.assign(w->address().begin(), w->address().end());
    DUCT_MPI_CHECK(setup_mpi::Iallgatherv(buf->mine_addr.data(), static_cast<int>(buf->mine_addr.size()), MPI_BYTE,
                                          buf->addrs.data(), set->addr_lens_.data(), set->addr_displs_.data(), MPI_BYTE,
                                          comm, &req));
    DUCT_TRY(wait(&req, "MPI_Iallgatherv of the UCX worker addresses", buf));
    set->addrs_ = std::move(buf->addrs);  // the exchange is complete
    // Bounce buffers must hold a whole chunk of any pair that stages.
    for (int r = 0; r < n; ++r) {
      if (r != topo.rank && set->chunk_ && set->may_stage(r)) {
        memory::BouncePool::instance().configure(set->chunk_,
                                                 std::max<std::size_t>(64, 4 * static_cast<std::size_t>(base.depth)));
        break;
      }
    }
  }

  set->channels_.resize(static_cast<size_t>(n));
  for (int r : topo.ranks_on[static_cast<size_t>(topo.node)]) {
    if (r == topo.rank) continue;
    Channel* c = nullptr;
    DUCT_TRY(set->make(r, &c));
  }
  *out = std::move(set);
  return Status::ok();
}

PeerRow ChannelSet::row_of(int rank) const {
  if (topo_->same_node(topo_->rank, rank)) return info(rank);
  PeerRow p;
  const std::uint8_t f = flags_[static_cast<size_t>(rank)];
  p.cuda = (f & kCuda) ? 1 : 0;
  p.ucx_cuda = (f & kUcxCuda) ? 1 : 0;
  p.no_ucx = mpi_only_ ? 1 : 0;
  return p;
}

const PeerRow& ChannelSet::info(int rank) const {
  // Only the node's rows are kept; the callers (the device engine, the IPC
  // cache keys, duct-info) ask for no other.
  assert(topo_->same_node(topo_->rank, rank));
  return node_rows_[static_cast<size_t>(topo_->local_rank_of[static_cast<size_t>(rank)])];
}

bool ChannelSet::may_stage(int rank) const {
  const std::uint8_t f = flags_[static_cast<size_t>(rank)];
  return (local_.cuda && !local_.ucx_cuda) || ((f & kCuda) && !(f & kUcxCuda));
}

std::string ChannelSet::address_of(int rank) const {
  return std::string(addrs_.data() + addr_displs_[static_cast<size_t>(rank)],
                     static_cast<size_t>(addr_lens_[static_cast<size_t>(rank)]));
}

int ChannelSet::kind_index(int rank, std::string* why) const {
  const PeerRow me = row_of(topo_->rank), peer = row_of(rank);
  const bool same_node = topo_->same_node(topo_->rank, rank);
  const std::vector<ChannelKind>& table = channel_table();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].usable(me, peer, same_node, why)) return static_cast<int>(i);
  return -1;
}

const char* ChannelSet::kind_to(int rank) const {
  if (rank == topo_->rank) return "self";
  std::string why;
  const int k = kind_index(rank, &why);
  return k < 0 ? "none" : channel_table()[static_cast<size_t>(k)].name;
}

Status ChannelSet::make(int r, Channel** out) {
  if (r < 0 || r >= topo_->size || r == topo_->rank)
    return make_error(Errc::internal, "rank %d: no channel to rank %d of %d", topo_->rank, r, topo_->size);
  std::string why;
  const int k = kind_index(r, &why);
  if (k < 0) return make_error(Errc::internal, "rank %d: no channel kind serves rank %d", topo_->rank, r);
  const ChannelKind& kind = channel_table()[static_cast<size_t>(k)];
  const bool same_node = topo_->same_node(topo_->rank, r);
  PairSetup s = *base_;
  s.peer = r;
  s.peer_proc = same_node ? info(r).proc : 0;
  if (!mpi_only_) {
    ucx::Worker* w = nullptr;
    DUCT_TRY(ucx::Worker::get(&w));
    // The first message to rank r makes its endpoint: a peer that cannot be
    // reached (its link down, its process gone) is named here.
    if (Status st = w->endpoint(address_of(r), &s.ep); !st.is_ok())
      return make_error(st.code(), "connecting to rank %d (%s) over UCX: %s", r,
                        same_node ? "this node" : "another node", st.message().c_str());
    s.chunk = may_stage(r) ? chunk_ : 0;
  }
  channels_[static_cast<size_t>(r)] = kind.create(s);
  if (std::strcmp(kind.name, "cuda_ipc") == 0) {  // (cma maps no device memory)
    memory::IpcCache::instance().retain_peer(s.peer_proc);
    ipc_peers_.push_back(s.peer_proc);
  }
  DUCT_DEBUG(channel, "rank %d -> rank %d: %s (%s)", topo_->rank, r, kind.name, why.c_str());
  *out = channels_[static_cast<size_t>(r)].get();
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

std::string ChannelSet::describe_pair(int rank) {
  const std::string k = kind_to(rank);
  if (k != "ucx") return k;
  Channel* c = nullptr;
  ucx::Worker* w = ucx::Worker::existing();
  if (!to(rank, &c) || !w) return k;
  ucp_ep_h ep = nullptr;
  if (!w->endpoint(address_of(rank), &ep) || !ep) return k;
  return k + " (" + w->transports(ep) + ")";
}

}  // namespace duct::channel
