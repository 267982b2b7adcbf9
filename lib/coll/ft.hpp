// duct coll: surviving a failed rank (DUCT_FT=1): revoke, agree, shrink.
//
// Modelled on MPI's ULFM chapter (MPIX_Comm_revoke/agree/shrink, Bland et
// al., "Post-failure recovery of MPI communication capability", IJHPCA
// 2013), built on the MPI library a site has: Debian's Open MPI 4.1 has no
// ULFM, but under `mpirun --enable-recovery` the survivors of a killed
// process keep running, their point-to-point messages among themselves
// still flow, and MPI_Comm_create_group over the survivors' group works
// (it involves only the group's members).
//
// Under DUCT_FT=1 every context gets a control communicator (an
// MPI_Comm_idup of the user's, made at setup) with two receives always
// posted (ANY_SOURCE): one for revocations, one for agreement messages.
// Every message is a few words (eager in every MPI library), so a send to
// a dead process still completes locally.
//
// Revoke: the revoking rank sends a revocation to its flood neighbours; a
// rank that receives one for the first time marks the context revoked and
// sends it on to its own (so that it arrives even when the revoking rank
// died while sending). The neighbours are the ranks at distances 1, 2,
// 4, ... either way round (mod n) not known to have failed: 2 log2(n)
// messages per rank and about log2(n) hops, where sending to every rank
// was n - 1 messages per rank (at 256 simulated ranks the agreement did not
// finish in 15 minutes of SMPI's time); a rank whose known survivors that
// graph does not connect sends to all of them (flood_targets). Every
// blocking wait of a collective looks at the control receives every 256
// polls (and each collective's start looks once): a revoked context
// ends the wait with Errc::revoked, and every later call returns it.
//
// Detection: a rank on the same machine (same kernel boot id) is dead when
// its pid is gone or a zombie, looked at every 10 ms by every waiting rank;
// a rank elsewhere when a transport says so (UCX's peer error handling) or
// after DUCT_FT_TIMEOUT of silence (wait_timeout()). A rank that finds a
// failure (or whose collective fails in any way) revokes the context.
//
// Agree: a rotating-coordinator consensus for a perfect failure detector
// (Chandra, Toueg, JACM 1996, with the decision flooded as in their
// uniform reliable broadcast). Every rank sends its flag and the failed
// ranks it knows of to the lowest rank it does not know to have failed;
// that coordinator waits for every rank it does not know to have failed
// (learning of failures from the contributions and its own detection),
// decides (AND of the survivors' flags, the union of the failed sets) and
// floods the decision. A rank that receives a decision sends it on to its
// flood neighbours (as a revocation) and to the three survivors after the
// coordinator (the next coordinators) before it returns, so that when the
// coordinator dies after reaching some ranks the others still learn the
// same decision; a rank whose coordinator dies before any decision reached
// it contributes to the next lowest. Every survivor returns the same flag
// and failed set as long as the detection makes no mistake: a slow rank on
// another machine taken as failed after DUCT_FT_TIMEOUT is excluded.
//
// Shrink: agree on the failed set, then MPI_Comm_create_group over the
// control communicator and the survivors' group. Open MPI 4.1 has no way
// to abandon MPI_Comm_create_group: a rank that dies after the agreement
// and before the group creation ends makes it hang there (the window is
// one allreduce of the MPI library among the survivors).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/comm.hpp"
#include "core/status.hpp"

namespace duct::coll::ft {

using Clock = std::chrono::steady_clock;

// What DUCT_FT keeps per context.
struct State {
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State();

  MPI_Comm comm = MPI_COMM_NULL;  // the control communicator
  int me = 0, n = 1;
  std::vector<std::int32_t> pid;
  std::vector<std::uint8_t> local;   // on this machine's kernel: its pid can be looked at
  // On this rank's node (its host name): reached through shared memory, never
  // silent while its process lives. Ranks on other nodes that share this
  // kernel (network namespaces, containers) are `local` but not `same_node`:
  // a cut link silences them although their pids live.
  std::vector<std::uint8_t> same_node;
  std::vector<std::uint8_t> failed;  // known to have failed
  bool revoked = false;
  std::string why;  // what revoked it

  MPI_Request revoke_req = MPI_REQUEST_NULL;
  std::int32_t revoke_in = -1;  // the rank that revoked
  MPI_Request agree_req = MPI_REQUEST_NULL;
  std::vector<std::uint64_t> agree_in;
  struct Out {
    MPI_Request req = MPI_REQUEST_NULL;
    std::vector<std::uint64_t> buf;
  };
  std::list<Out> sends;  // not yet complete (one to a dead process may never be)
  std::deque<std::pair<int, std::vector<std::uint64_t>>> inbox;  // agreement messages: (source, words)
  std::uint32_t agree_seq = 0;
  Clock::time_point last_scan{};
};

// Under DUCT_FT=1, collective over a context's communicator `comm` (this
// rank `me` of `n`; node_of: every rank's node index, Topology::node_of) at
// setup: the control communicator and every rank's pid and machine.
Status attach(int me, int n, MPI_Comm comm, const std::vector<int>& node_of, const MpiWait& wait,
              std::unique_ptr<State>* out);

// Take in what arrived on the control communicator (no clock, one MPI_Test
// per receive): the start of a collective. Errc::revoked when revoked.
Status look(State& s);

// The watch of a blocking wait (every 256 polls): look(), and every 10 ms
// the pids of this machine's ranks. A dead one revokes the context and
// gives Errc::peer_failed naming it; a revocation gives Errc::revoked.
Status watch(State& s);

// A collective on `c` failed with `st`: find what died and revoke. Returns
// what every later call on the communicator returns.
Status on_failure(State& s, const Status& st);

// DUCT_Comm_revoke.
void revoke(State& s, const std::string& why);
// DUCT_Comm_is_revoked (after a look()).
bool is_revoked(State& s);
// The ranks this process knows to have failed, in rank order.
std::vector<int> failed_ranks(State& s);
// DUCT_Comm_agree: `flag` in and out (AND over the survivors); `failed`: the
// agreed failed ranks.
Status agree(State& s, int* flag, std::vector<int>* failed);
// DUCT_Comm_shrink: a communicator of the survivors, in rank order, with
// the error handler of `user`, the communicator shrunk (the caller sets up duct's context
// on it).
Status shrink(State& s, MPI_Comm user, MPI_Comm* out);

}  // namespace duct::coll::ft
