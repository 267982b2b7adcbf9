// duct core: what duct knows of an MPI communicator before any transport.
//
// Topology is built collectively, once per communicator, with PMPI calls
// only (so an MPI interposition library never re-enters duct): an
// allgather of a hash of each rank's host name (MPI_Get_processor_name) and
// kernel boot id gives the node of each rank. (Not MPI_Comm_split_type: it creates
// a communicator, which the setup must not, coll/context.cpp.)
// CommAttr wraps an MPI attribute keyval that caches duct's per-communicator
// state on the user's communicator and frees it when the communicator is
// freed (MPI-4.0 §7.7).
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace duct {

// Map a failed MPI call to a Status naming the call and MPI's own message.
Status mpi_error(int rc, const char* call);

#define DUCT_MPI_CHECK(call)                                   \
  do {                                                         \
    int duct_mpi_rc_ = (call);                                 \
    if (duct_mpi_rc_ != MPI_SUCCESS) return ::duct::mpi_error(duct_mpi_rc_, #call); \
  } while (0)

struct Topology {
  int rank = 0;
  int size = 1;
  int num_nodes = 1;
  int node = 0;              // index of this rank's node, 0..num_nodes-1
  int local_rank = 0;        // rank within the node
  int local_size = 1;        // ranks of this communicator on the node
  // Ranks of this communicator on this machine's kernel (same boot id):
  // more than local_size where "nodes" with their own host names share one
  // machine's cores (network namespaces, containers).
  int machine_size = 1;
  std::vector<int> node_of;  // node index of every rank
  std::vector<int> local_rank_of;       // local rank of every rank
  std::vector<std::vector<int>> ranks_on;  // ranks of every node, in rank order
  // Every node has this many ranks of the communicator (0: nodes differ).
  int ranks_per_node = 0;
  // This rank's rail: the rank of local index local_rank on every node, in
  // node order (this rank is rail[node]); empty when nodes differ.
  std::vector<int> rail;

  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  // Whether node j's ranks are consecutive in the communicator (so their
  // blocks of a rank-ordered buffer are one contiguous piece).
  bool consecutive(int j) const {
    const std::vector<int>& on = ranks_on[static_cast<std::size_t>(j)];
    return on.back() - on.front() + 1 == static_cast<int>(on.size());
  }
};

// How setup code waits for a nonblocking MPI request it started: the
// collective layer passes one that watches DUCT_TIMEOUT and answers SIGUSR1
// (coll::wait_setup); `what` names the exchange ("MPI_Iallgather of the
// hostnames"). `buffers` owns every buffer the request reads or writes
// (counts and displacements included): a wait that gives up on a request
// keeps them for the life of the process, since MPI may still complete the
// request when a late rank arrives (a nonblocking collective can be neither
// cancelled nor freed). mpi_wait is the plain MPI_Wait.
using MpiWait = std::function<Status(MPI_Request* req, const char* what, std::shared_ptr<void> buffers)>;
Status mpi_wait(MPI_Request* req, const char* what, std::shared_ptr<void> buffers);

// The nonblocking collectives of duct's setup exchanges (context creation,
// DUCT_CHECK's comparison): the MPI library's, except under the simulation
// build, where each is the blocking collective and the request is
// MPI_REQUEST_NULL. SimGrid's SMPI (3.32) runs a nonblocking collective as
// one message per pair of ranks, and its bookkeeping of completed messages
// made a 128-rank context set-up take seconds of real time; a simulated
// rank waits for the request at once anyway (coll::wait_setup).
namespace setup_mpi {
#ifdef DUCT_SIM
inline int Iallgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
                      MPI_Request* q) {
  *q = MPI_REQUEST_NULL;
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
inline int Iallgatherv(const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* d, MPI_Datatype rt,
                       MPI_Comm c, MPI_Request* q) {
  *q = MPI_REQUEST_NULL;
  return PMPI_Allgatherv(s, sc, st, r, rc, d, rt, c);
}
inline int Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* q) {
  *q = MPI_REQUEST_NULL;
  return PMPI_Allreduce(s, r, n, t, op, c);
}
inline int Ibarrier(MPI_Comm c, MPI_Request* q) {
  *q = MPI_REQUEST_NULL;
  return PMPI_Barrier(c);
}
inline int Ibcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q) {
  *q = MPI_REQUEST_NULL;
  return PMPI_Bcast(b, n, t, root, c);
}
inline int Ialltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
                     MPI_Request* q) {
  *q = MPI_REQUEST_NULL;
  return PMPI_Alltoall(s, sc, st, r, rc, rt, c);
}
#else
inline int Iallgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
                      MPI_Request* q) {
  return PMPI_Iallgather(s, sc, st, r, rc, rt, c, q);
}
inline int Iallgatherv(const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* d, MPI_Datatype rt,
                       MPI_Comm c, MPI_Request* q) {
  return PMPI_Iallgatherv(s, sc, st, r, rc, d, rt, c, q);
}
inline int Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* q) {
  return PMPI_Iallreduce(s, r, n, t, op, c, q);
}
inline int Ibarrier(MPI_Comm c, MPI_Request* q) { return PMPI_Ibarrier(c, q); }
inline int Ibcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q) {
  return PMPI_Ibcast(b, n, t, root, c, q);
}
inline int Ialltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
                     MPI_Request* q) {
  return PMPI_Ialltoall(s, sc, st, r, rc, rt, c, q);
}
#endif
}  // namespace setup_mpi

// Collective over `comm` (one MPI_Iallgather, completed through `wait`).
// A node is the ranks with one host name and one boot id: the host names
// are those the MPI library gives (the launcher's node names; network
// namespaces with their own host names are nodes of their own), and the
// boot id keeps apart two machines that share a host name (containers).
// Node indices are ordered by the lowest rank on each node, so they are the
// same on every rank.
Status build_topology(MPI_Comm comm, Topology* out, const MpiWait& wait = mpi_wait);

// An attribute keyval whose values are deleted with `deleter` when the
// communicator they are attached to is freed. Copies of the communicator
// (MPI_Comm_dup) do not inherit the value.
class CommAttr {
 public:
  using Deleter = void (*)(void* value) noexcept;
  explicit CommAttr(Deleter deleter);

  // Returns the cached value, or nullptr.
  Status get(MPI_Comm comm, void** value);
  Status set(MPI_Comm comm, void* value);
  // Detach without running the deleter.
  Status clear(MPI_Comm comm);
  // Free the keyval (at finalize); cached values stay where they are.
  void release() noexcept;

 private:
  static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra);
  Status ensure_keyval();
  // MPI may run the delete callback after this object is gone (attributes
  // of MPI_COMM_WORLD are deleted late in MPI_Finalize), so the callback's
  // state lives on the heap for the life of the process (a few bytes per
  // keyval).
  struct Shared {
    Deleter deleter;
  };
  static Shared* make_shared(Deleter deleter);
  Shared* shared_;
  int keyval_ = MPI_KEYVAL_INVALID;
};

// This process's host name (MPI_Get_processor_name).
std::string processor_name();
// The node a host name (`len` bytes) belongs to: the name itself, except
// under the simulation build, where a simulated host is one rank and
// mpi_launch_scripts/duct-sim names local rank l of node X "X.r<l>"
// (its platform: mpi_launch_scripts/duct-sim-rails.cpp): the node is X.
std::string node_name(const char* host, std::size_t len);

// The kernel's boot id ("" where /proc does not have it): one per machine,
// shared by its network namespaces and containers. Read once per process.
const std::string& boot_id();

}  // namespace duct
