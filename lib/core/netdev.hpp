// duct core: which network devices this process's UCX worker uses.
//
// A node with several NICs (rails) is used at its full speed only when its
// ranks spread over them, the ranks with the same local index on every node
// on the same rail, so that rail peers meet on one fabric: NCCL gives each
// GPU its nearest NIC, UCC's split_rail and MVAPICH2's multi-leader
// collectives run one inter-node exchange per local rank. duct's
// split-rail collectives (coll/allreduce/split_rail.cpp) send each local
// rank's share over that rank's own worker, so the worker's devices decide
// which link carries it.
//
// The choice, in order:
//   1. DUCT_NET_DEVICES=dev0,dev1,...  (the rails, per job): local rank l
//      uses dev[l mod K]; DUCT_NET_DEVICES=ucx leaves UCX alone;
//   2. UCX_NET_DEVICES set by the user (a site's module commonly exports
//      the fabric's NICs): the set of devices the site allows, spread as
//      in 1 over the listed devices this node has: local rank l on listed
//      device l mod K (loopback left out of the list). A rank whose device is missing here keeps every
//      listed device this node has (UCX picks); a list of one device, or
//      "all", is UCX's own reading, untouched; so is every list with
//      DUCT_NET_DEVICES=ucx (the whole list for every rank). UCX does not
//      stripe one rank's messages over several devices, so leaving a
//      list of K to every rank used one link of K (issue 48: 0.119 GB/s
//      against 0.239 GB/s for a 64 MiB allreduce on 2 rails);
//   3. automatic, from the node's PCI topology (hwloc) and the network
//      devices UCX can use (`automatic` below): the NIC nearest this rank's
//      GPU, NICs that several GPUs share equally split among them (NCCL's
//      rule, src/graph/search.cc); without a GPU the NICs near the rank's
//      CPU binding, else local rank l on NIC l mod K; with no PCI NIC, the
//      node's virtual links (veth of a network namespace) of one speed in
//      the same way. A node with one usable NIC keeps UCX's default.
// The local rank comes from the launcher (Open MPI, MPICH/Hydra, SLURM,
// PMIx: the rank's index among the job's ranks on its host), since the
// worker is created once per process, before any communicator's topology.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace duct::netdev {

struct Choice {
  std::string devices;  // the value for UCX's NET_DEVICES; empty: leave UCX's configuration alone
  std::string why;      // one line for logs and duct-info
};

// One network device UCX can use, as `automatic` weighs it.
struct Nic {
  std::string ucx;             // UCX's name(s) for it, a comma list: "mlx5_0:1" (each active port), "eth0"
  std::string bus_id;          // its PCI device; empty for a virtual device
  bool rdma = false;           // a verbs (OpenFabrics) device
  long speed_mbps = -1;        // an interface's link speed; -1 unknown
  bool near_process = false;   // local to this process's CPU binding
};

// What one process knows of its node.
struct Node {
  std::vector<Nic> nics;                   // NICs on PCI cards that UCX can use, in bus order (or UCX's
                                           // only network device, unplaced, when it has just one)
  std::vector<Nic> virtual_nics;           // UCX network devices on no PCI card, loopback excluded, by name
  std::vector<std::string> gpus;           // the node's GPUs' PCI bus ids, sorted
  std::vector<std::vector<int>> distance;  // [gpu][nic]: hwtopo::pci_distance, -1 unknown
  int my_gpu = -1;                         // this process's GPU, an index into gpus; -1 none
  bool bound = false;                      // the process's CPU binding is narrower than the machine
};

// This process's index among the job's ranks on its node, from the
// launcher's environment; -1 when no launcher variable says.
int launcher_local_rank();

// Whether the choice is automatic (DUCT_NET_DEVICES empty or "auto", no
// UCX_NET_DEVICES): only then does the caller need to describe the Node.
bool is_automatic(const std::string& rails, const char* ucx_env);

// The choice for a process with local rank `local_rank` (-1: unknown),
// given DUCT_NET_DEVICES (`rails`: a comma list, "auto" or empty, or
// "ucx") and the user's UCX_NET_DEVICES (`ucx_env`, nullptr when unset);
// `node` is used when the choice is automatic (nullptr: UCX's default);
// `devices`: the network devices UCX finds on this node (nullptr or an
// empty `present`: not known, every listed device is taken to be there).
struct Devices {
  std::set<std::string> present;   // UCX's network devices here, loopback included
  std::set<std::string> loopback;  // the loopback interfaces among them (on every node: never a rail)
};
Choice choose(const std::string& rails, const char* ucx_env, int local_rank, const Node* node = nullptr,
              const Devices* devices = nullptr);

// Step 3 of the order above for a process with local rank `local_rank`.
Choice automatic(const Node& node, int local_rank);

// Whether every network device of `selected` (a NET_DEVICES value: a comma
// list of UCX device names; empty or "all": every device) is served only by
// UCX's tcp transport, given `served`: each UCX network device and the UCT
// components that offer it ("eth0" -> {"tcp"}, "mlx5_0:1" -> {"ib"}).
// False where nothing selected is known, or where an RDMA component serves
// one of them (RoCE and InfiniBand ports, an IPoIB interface beside its
// verbs port). Loopback counts only when named. Over TCP duct's worker
// sends every message with UCX's eager protocol (ucx.cpp, Worker::init).
bool tcp_only(const std::map<std::string, std::set<std::string>>& served, const std::set<std::string>& loopbacks,
              const std::string& selected);

// Split a comma list, dropping empty items and spaces.
std::vector<std::string> split_list(const std::string& list);

}  // namespace duct::netdev
