// duct coll: every wait that progresses collectives.
//
// A blocking collective (run), the plain forms' waits in place (Spinner),
// the waits of a context's setup (wait_setup) and the waits for
// nonblocking collectives (wait_pending, drain, drain_mpi) all spin on
// progress: the channels, the running task, and every context's
// nonblocking queue (coll/nonblocking.hpp progress_pending: a peer may be
// waiting in a nonblocking collective for this rank). They share one watch:
// DUCT_TIMEOUT turns a wait that moves nothing for that long into
// Errc::timeout, SIGUSR1 prints what every rank waits for. This layer sits
// above the tasks (coll/task.hpp) and the nonblocking queue it drives.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

#include "coll/collectives.hpp"
#include "coll/context.hpp"
#include "coll/nonblocking.hpp"
#include "coll/task.hpp"

namespace duct::coll {

// Post `task` and progress it to completion on `ctx`'s communicator.
//
// With DUCT_TIMEOUT set, a task that makes no progress for that long is
// abandoned: run() returns Errc::timeout with task.describe() (the pending
// operation and the peers it waits for). Any error leaves the context
// failed (messages of the abandoned collective may still arrive), so later
// calls on the communicator return at once with the first error.
//
// A SIGUSR1 sent to the process (mpirun forwards it to every rank) makes
// the running tasks print what they wait for to stderr (see
// install_dump_signal).
Status run(Context& ctx, Task& task);

// Blocking waits in place, for the plain forms of the shared-memory
// algorithms that the small-call path runs (coll/shm_rounds.hpp) instead of
// a Task: wait() polls the Waitable until it is ready, driving the channels
// and the pending nonblocking collectives meanwhile, giving the core away
// on an oversubscribed node, under the same DUCT_TIMEOUT and SIGUSR1 watch
// as run() (the report names the call as a Task's does). It takes no lock:
// only for applications that are not threaded.
class Spinner {
 public:
  // `ctx`: the communicator waited on (its DUCT_FT watch), or null.
  Spinner(const TaskInfo& info, bool yield, Context* ctx = nullptr);
  ~Spinner();
  Spinner(const Spinner&) = delete;
  Spinner& operator=(const Spinner&) = delete;
  // The wait's status (its own error, or Errc::timeout).
  Status wait(Waitable& w);

 private:
  TaskInfo info_;
  bool yield_;
  Context* ctx_;
  std::uint64_t activity_ = 0;
};

// Wait for a nonblocking MPI request of duct's setup (creating a context,
// DUCT_CHECK's signature exchange) under the same watch as run(): with
// DUCT_TIMEOUT set it gives up after that long with Errc::timeout, the
// message "<doing>: no progress for T s (DUCT_TIMEOUT=T): waiting for
// <waiting_for>"; SIGUSR1 prints the same. The texts are built only then
// (DUCT_CHECK waits on every call). `buffers` are kept for the life of the
// process when it gives up (core/comm.hpp, MpiWait). `yield` gives the core
// away between polls (oversubscribed node).
using Describe = LayerHooks::Describe;  // a text built only when asked for (coll/context.hpp)
Status wait_setup(MPI_Request* req, const Describe& doing, const Describe& waiting_for, std::shared_ptr<void> buffers,
                  bool yield);

// Take SIGUSR1 for pending-operation dumps, unless the application handles
// it already; restore the previous disposition at teardown.
void install_dump_signal(int world_rank) noexcept;
void restore_dump_signal() noexcept;

// Progress until `p` is complete, under DUCT_TIMEOUT and SIGUSR1 as a
// blocking collective. A timeout fails the request's communicator.
Status wait_pending(Pending* p);
// Finish the requests outstanding on `ctx` (before a blocking collective).
Status drain(Context& ctx);
// When `comm` is freed: finish the requests handed to the MPI library on it
// (drain_mpi), then forget_comm(comm). For requests handed to the MPI
// library (a context's own requests are finished by its delete callback).
Status watch_comm(MPI_Comm comm);
// Progress until no request handed to the MPI library on `comm` is
// outstanding, under DUCT_TIMEOUT. MPI lets the application free a
// communicator with operations pending (MPI-4.0 §7.4.3); Open MPI 4.1's own
// nonblocking collectives then crash in a later progress call (seen with
// MPI_Iallreduce and MPI_Ibarrier: tests/interpose/nb_lifetimes.c), so
// duct completes them inside MPI_Comm_free, which every rank calls.
Status drain_mpi(MPI_Comm comm);

// Start a nonblocking collective the application called (start_collective)
// after DUCT_CHECK's comparison of the call across ranks, when it is on: a
// blocking exchange, so the requests outstanding on `ctx` finish first
// (documented with DUCT_CHECK).
Status start_checked(Context& ctx, const CollArgs& a, Pending* p);

}  // namespace duct::coll
