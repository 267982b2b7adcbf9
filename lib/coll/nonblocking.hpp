// duct coll: nonblocking collectives.
//
// A nonblocking collective is the same Task a blocking one runs, started
// now and progressed later. MPI-3 (MPI-4.0 §6.12) lets any number be
// outstanding per communicator, started in the same order on every rank and
// completed in any order. duct runs the ones of one communicator one after
// the other, in the order they were started (a FIFO per context): a
// context's scratch buffers, its shared-memory slots and the device
// engine's phase words serve one collective at a time, and the order is the
// same on every rank, so no rank waits for a collective another rank has
// not reached. Collectives of different communicators progress together.
//
// Whoever waits drives everything: progress_pending() advances the head of
// every context's queue (and requests handed to the MPI library), and is
// called by every duct wait, by the run loop of every blocking collective
// (a peer may be waiting in a nonblocking collective for this rank) and,
// when the application waits with MPI_Wait/MPI_Test, from the MPI library's
// progress loop (capi/requests.cpp).
//
// A blocking collective on a communicator with requests outstanding first
// finishes them (MPI orders blocking and nonblocking collectives of one
// communicator together).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <atomic>
#include <memory>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/context.hpp"
#include "coll/task.hpp"

namespace duct::coll {

class Pending {
 public:
  Pending();
  ~Pending();
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  // What the call was ("DUCT_Iallreduce") and the user's communicator, on
  // which its error is raised. The application may free the communicator
  // before the request completes (MPI-4.0 §7.4.3): forget_comm() then sets
  // this to MPI_COMM_NULL (errors go to MPI_COMM_SELF's handler).
  const char* call = "";
  MPI_Comm comm = MPI_COMM_NULL;
  // Work to do in order after the collective succeeded (unpacking a derived
  // datatype, copying a staged result to device memory), and buffers to
  // keep until then (packed send data).
  std::vector<std::function<Status()>> after;
  std::vector<std::shared_ptr<void>> keep;
  // Called once when the request completes (the generalized request is
  // marked complete there). Runs inside progress: must not wait.
  std::function<void(Pending&)> on_complete;

  // Read without the runtime lock by threads waiting on it (set last, with release).
  bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  const Status& result() const noexcept { return result_; }
  // The context it runs on (null: handed to the MPI library, done at
  // start, or complete).
  Context* context() const noexcept { return ctx_; }
  // "DUCT_Iallreduce (ring, 64 MiB) on communicator cid 3: waiting for ..."
  std::string describe() const;

 private:
  friend struct PendingOps;
  friend Status start_collective(Context&, const CollArgs&, Pending*);
  friend void start_mpi(Pending*, MPI_Request);
  friend void start_done(Pending*);
  friend void release(Pending*) noexcept;
  friend void abandon(Context&, const Status&) noexcept;
  friend std::uint64_t progress_pending();
  friend bool mpi_pending_on(MPI_Comm);
  void complete(Status st);

  Context* ctx_ = nullptr;
  CollArgs args_;  // the schedule refers to it: owned here
  Plan plan_;      // what selection chose, numbered at start
  std::unique_ptr<Task> task_;  // made when the request reaches the head of its context's queue
  MPI_Request mpi_ = MPI_REQUEST_NULL;  // a request handed to the MPI library
  std::atomic<bool> done_{false};
  bool released_ = false;  // the user's handle is gone: delete when done
  bool completing_ = false;  // inside on_complete
  Status result_;
  std::uint64_t activity_ = 0;
  std::chrono::steady_clock::time_point last_move_{};
};

// Start a native collective as `p` (heap-allocated; its owner gives it up
// with release()). The arguments are copied. A call with nothing to move,
// or on one rank, completes here. Errors of the start itself (a failed
// context) are returned and nothing is queued. No DUCT_CHECK comparison
// here: the application's calls go through start_checked (coll/wait.hpp),
// and a stream-ordered collective was compared when it was enqueued (its
// start runs on duct's stream thread, which makes no MPI call).
Status start_collective(Context& ctx, const CollArgs& a, Pending* p);

// A call captured into a CUDA graph that every rank refused alike
// (DUCT_ERRCLASS_NOT_SUPPORTED, nothing captured): it marks neither the
// context nor the stream side failed.
inline bool refused_capture(const CollArgs& a, const Status& st) {
  return a.graph && st.code() == Errc::not_supported;
}
// A call with nothing to do: complete now (its after-work runs).
void start_done(Pending* p);
// A collective duct hands to the MPI library (its nonblocking form on host
// buffers): `r` is the MPI library's request, tested by progress.
void start_mpi(Pending* p, MPI_Request r);
// The handle's owner is done with `p`: it is deleted now if complete, else
// when it completes (MPI_Request_free on an active request).
void release(Pending* p) noexcept;

// Advance every outstanding request once; returns how much moved. Cheap
// when nothing is outstanding. Reentrant calls (from the MPI library's
// progress loop inside duct) return at once.
std::uint64_t progress_pending();
// Whether any request is outstanding (one load).
bool any_pending() noexcept;
// What the MPI library's progress loop runs for duct (capi/requests.cpp
// registers it where the library has such a loop: Open MPI): the
// outstanding requests, and, where messages sent over TCP may still sit in
// UCX's buffers after their collective completed (channel::sends_may_linger),
// the channels every kProgressOutsideEvery-th call, so that a rank
// waiting in the MPI library still hands its last messages over. Not
// reentrant (returns at once inside duct's own progress).
std::uint64_t progress_outside();
// The other direction: the MPI library's own progress, from duct's waits
// (every kPollsPerMpiPoke polls of a blocking wait, on the application's
// thread). A message the application sent with the MPI library just
// before a duct collective may still sit in the library's buffers (Open
// MPI's UCX over TCP, as duct's own: ucx::Worker::tcp_sent) while its
// receiver waits for it before joining the collective; while this rank
// spins in duct, only this moves it on. A probe on MPI_COMM_SELF that
// matches nothing (Open MPI's and MPICH's probes run their progress
// engine when they find nothing); duct's own hook returns at once inside.
void poke_mpi();
inline constexpr unsigned kPollsPerMpiPoke = 512;
// Fail every request outstanding on `ctx` (its communicator is being freed
// or MPI is finalizing with requests still active: erroneous in MPI).
void abandon(Context& ctx, const Status& why) noexcept;
// `comm` is being freed: requests that name it (outstanding or complete
// and not yet waited for) no longer do.
void forget_comm(MPI_Comm comm) noexcept;
// Whether a request handed to the MPI library on `comm` is outstanding.
bool mpi_pending_on(MPI_Comm comm);
// "N nonblocking collectives outstanding: ..." for dumps; empty when none.
std::string describe_pending();

}  // namespace duct::coll
