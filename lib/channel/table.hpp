// duct channel: the channel table and the channels of one communicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "channel/channel.hpp"
#include "core/comm.hpp"

namespace duct::channel {

// What this process knows of itself when a communicator is first used
// (local_peer_info); what it tells its peers of it is a PeerRow.
struct PeerInfo {
  std::uint64_t proc = 0;       // process identity: hash of host name and pid
  std::int32_t pid = 0;
  std::int32_t cuda = 0;        // 1: a CUDA device is usable
  std::int32_t ucx_cuda = 0;    // 1: UCX moves CUDA memory itself
  std::int32_t device = -1;     // current CUDA device
  char bus_id[32] = {};         // its PCI bus id
  std::uint64_t chunk = 0;      // DUCT_PIPELINE_CHUNK
  std::uint64_t eager = 0;      // DUCT_EAGER_LIMIT
  std::uint64_t digest = 0;     // digest of the must-agree DUCT_* variables
  std::uint64_t rules_digest = 0;  // digest of the selection rules file (config::rules_file)
  std::uint32_t addr_len = 0;   // UCX worker address length
  std::int32_t numa = -1;       // NUMA node (filled by the caller, hwloc)
  std::int32_t no_ucx = 0;      // 1: UCX did not start here (DUCT_CHANNEL=auto: every pair takes the mpi channel)
};

// What every rank sends every other rank at set-up: 40 bytes, since each
// rank holds n of them while they are exchanged (the digests, the chunk
// and the eager limit are agreed by one allreduce instead). After set-up a
// rank keeps the rows of its own node's ranks only, and a byte of flags of
// every other rank.
struct PeerRow {
  std::uint64_t proc = 0;       // PeerInfo::proc
  std::uint64_t bus = 0;        // hash of PeerInfo::bus_id (0: no device): equal for ranks on one GPU
  std::int32_t pid = 0;
  std::int32_t device = -1;
  std::int32_t numa = -1;
  std::uint32_t addr_len = 0;
  std::uint8_t cuda = 0, ucx_cuda = 0, no_ucx = 0, unused = 0;
  std::uint32_t unused2 = 0;
};
static_assert(sizeof(PeerRow) == 40, "PeerRow is the setup exchange's row: keep it small");

struct PairSetup;  // channel/ucx_channel.hpp

// One row of the channel table. Rows are asked in order; the first usable
// channel serves the pair. `usable` must give the same answer on both ranks
// of the pair (it sees the same two rows there; of a rank on another node
// only its flags, cuda, ucx_cuda and no_ucx, are known).
struct ChannelKind {
  const char* name;
  const char* doc;
  bool (*usable)(const PeerRow& a, const PeerRow& b, bool same_node, std::string* why);
  std::unique_ptr<Channel> (*create)(const PairSetup& s);
};
const std::vector<ChannelKind>& channel_table();

// The channels from one rank to every other rank of a communicator.
//
// The channels to the rank's own node are made at set-up; a channel to a
// rank on another node (and its UCX endpoint) at its first use. A rank of a
// communicator across many nodes talks to few of its peers (a tree's parent
// and children, a ring's neighbours, log2(n) recursive-doubling partners),
// and a channel and an endpoint to each of thousands would cost every rank
// memory and set-up time in n (NCCL 2.22 and later connect at first use
// too). Both ranks of a pair still agree on its channel: they compute it
// from the same two rows.
class ChannelSet {
 public:
  ChannelSet() = default;
  ~ChannelSet();
  ChannelSet(const ChannelSet&) = delete;
  ChannelSet& operator=(const ChannelSet&) = delete;
  // Collective over `comm`: exchanges PeerRows and UCX addresses with PMPI,
  // checks that the must-agree settings match, and makes the channels to
  // the node's ranks. `local` holds this rank's extra facts (numa). The
  // exchanges are nonblocking, completed through `wait` (core/comm.hpp).
  // `topo` must outlive the set.
  static Status create(MPI_Comm comm, const Topology& topo, std::uint32_t cid, const PeerInfo& local,
                       std::unique_ptr<ChannelSet>* out, const MpiWait& wait = mpi_wait);

  // The channel to `rank` (not this rank), made if this is its first use.
  // Called where duct's progress is serialized (the runtime's lock, or one
  // thread), as every send and receive is.
  Status to(int rank, Channel** out) {
    Channel* c = channels_[static_cast<size_t>(rank)].get();
    if (c) return (*out = c), Status::ok();
    return make(rank, out);
  }
  // The name of the channel kind that serves the pair ("self" for this rank).
  const char* kind_to(int rank) const;
  // The row of a rank on this rank's node (this rank included).
  const PeerRow& info(int rank) const;
  // This rank's own facts.
  const PeerInfo& self() const noexcept { return local_; }
  // "ucx (sysv/memory cma/memory)", "cuda_ipc" or "mpi"; makes the channel.
  std::string describe_pair(int rank);
  bool any_cuda() const noexcept { return any_cuda_; }
  bool uses_ipc() const noexcept { return !ipc_peers_.empty(); }

 private:
  Status make(int rank, Channel** out);
  int kind_index(int rank, std::string* why) const;
  PeerRow row_of(int rank) const;  // the full row on this node, the flags elsewhere
  // Whether the pair's messages may be split through bounce buffers: one
  // side may hold device memory its UCX cannot reach (both sides agree).
  bool may_stage(int rank) const;
  std::string address_of(int rank) const;  // the rank's UCX worker address
  std::vector<std::unique_ptr<Channel>> channels_;
  const Topology* topo_ = nullptr;
  PeerInfo local_;
  std::vector<PeerRow> node_rows_;      // by local rank
  std::vector<std::uint8_t> flags_;     // every rank: kCuda | kUcxCuda
  static constexpr std::uint8_t kCuda = 1, kUcxCuda = 2;
  bool mpi_only_ = false;
  std::unique_ptr<PairSetup> base_;     // what every pair's setup starts from
  std::vector<char> addrs_;             // UCX worker addresses of every rank (none with DUCT_CHANNEL=mpi)
  std::vector<int> addr_displs_, addr_lens_;
  std::uint64_t chunk_ = 0, eager_ = 0;  // the communicator's smallest DUCT_PIPELINE_CHUNK, DUCT_EAGER_LIMIT
  std::vector<std::uint64_t> ipc_peers_;  // peers held in the IPC cache
  bool any_cuda_ = false;
  MPI_Comm mpi_comm_ = MPI_COMM_NULL;  // the mpi channel's duplicate of the communicator
  // DUCT_CHANNEL=mpi: duplicate `comm` for the mpi channel and put it,
  // its MPI_TAG_UB and the library's CUDA support into `s`.
  Status open_mpi_comm(MPI_Comm comm, const MpiWait& wait, PairSetup* s);
};

// This process's facts (CUDA device, UCX support, configuration).
Status local_peer_info(PeerInfo* out);

}  // namespace duct::channel
