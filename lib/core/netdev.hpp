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
//      uses dev[l mod K];
//   2. UCX_NET_DEVICES set by the user: UCX's own reading of it, untouched;
//   3. otherwise UCX's default (every device it finds).
// The local rank comes from the launcher (Open MPI, MPICH/Hydra, SLURM,
// PMIx: the rank's index among the job's ranks on its host), since the
// worker is created once per process, before any communicator's topology.
#pragma once

#include <string>
#include <vector>

namespace duct::netdev {

struct Choice {
  std::string devices;  // the value for UCX's NET_DEVICES; empty: leave UCX's configuration alone
  std::string why;      // one line for logs and duct-info
};

// This process's index among the job's ranks on its node, from the
// launcher's environment; -1 when no launcher variable says.
int launcher_local_rank();

// The choice for a process with local rank `local_rank` (-1: unknown),
// given DUCT_NET_DEVICES (`rails`, comma list, may be empty) and the
// user's UCX_NET_DEVICES (`ucx_env`, nullptr when unset).
Choice choose(const std::string& rails, const char* ucx_env, int local_rank);

// Split a comma list, dropping empty items and spaces.
std::vector<std::string> split_list(const std::string& list);

}  // namespace duct::netdev
