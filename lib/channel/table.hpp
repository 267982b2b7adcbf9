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

// What every rank publishes about itself when a communicator is first used.
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

struct PairSetup;  // channel/ucx_channel.hpp

// One row of the channel table. Rows are asked in order; the first usable
// channel serves the pair. `usable` must give the same answer on both ranks
// of the pair (it sees the same two PeerInfo rows there).
struct ChannelKind {
  const char* name;
  const char* doc;
  bool (*usable)(const PeerInfo& a, const PeerInfo& b, bool same_node, std::string* why);
  std::unique_ptr<Channel> (*create)(const PairSetup& s);
};
const std::vector<ChannelKind>& channel_table();

// The channels from one rank to every other rank of a communicator.
class ChannelSet {
 public:
  ChannelSet() = default;
  ~ChannelSet();
  ChannelSet(const ChannelSet&) = delete;
  ChannelSet& operator=(const ChannelSet&) = delete;
  // Collective over `comm`: exchanges PeerInfo and UCX addresses with PMPI,
  // checks that the must-agree settings match, and picks a channel per pair.
  // `local` holds this rank's extra facts (numa). The exchanges are
  // nonblocking, completed through `wait` (core/comm.hpp).
  static Status create(MPI_Comm comm, const Topology& topo, std::uint32_t cid, const PeerInfo& local,
                       std::unique_ptr<ChannelSet>* out, const MpiWait& wait = mpi_wait);

  Channel& to(int rank) { return *channels_[static_cast<size_t>(rank)]; }
  const std::string& kind_to(int rank) const { return kinds_[static_cast<size_t>(rank)]; }
  const PeerInfo& info(int rank) const { return infos_[static_cast<size_t>(rank)]; }
  // "ucx (sysv/memory cma/memory)", "cuda_ipc" or "mpi".
  std::string describe_pair(int rank) const;
  bool any_cuda() const noexcept { return any_cuda_; }
  bool uses_ipc() const noexcept { return !ipc_peers_.empty(); }

 private:
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::string> kinds_;
  std::vector<PeerInfo> infos_;
  std::vector<void*> eps_;  // ucp_ep_h per rank, for describe_pair
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
