// duct coll: a collective in flight.
//
// Every collective is a Task with four phases: init (the collective's entry
// point validates its arguments, selects an algorithm and builds the
// schedule), post (start it), progress (never blocks; resumes the schedule
// where it left off) and finalize (the result). A blocking call is post plus
// a progress loop (run()); nonblocking calls run the same tasks
// (coll/nonblocking.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "coll/context.hpp"
#include "coll/sched.hpp"

namespace duct::coll {

// What a task is, for hang reports; formatted only when asked for.
struct TaskInfo {
  const char* call;   // "DUCT_Allreduce"
  const char* algo;   // "ring"
  std::size_t bytes;  // of the vector
  std::uint32_t cid;  // communicator id
};

// "DUCT_Allreduce (ring, 65536 bytes) on communicator cid 3".
std::string describe_task(const TaskInfo& info);

class Task {
 public:
  Task(Sched root, const TaskInfo& info) : root_(std::move(root)), info_(info) {}
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // Start the schedule; it runs until it first waits.
  Status post();
  // Drive communication once; resume the schedule if what it waits for is
  // ready. *done when the schedule has finished.
  Status progress(bool* done);
  // Grows whenever the task moved (its schedule resumed, a multi-stage
  // channel operation finished): unchanged over a while means no progress.
  // A single transfer longer than DUCT_TIMEOUT therefore counts as a hang;
  // algorithms move large vectors in segments (DUCT_RING_SEGMENT).
  std::uint64_t activity() const noexcept { return activity_; }
  // The schedule's result (after progress reported done).
  Status finalize();
  // "DUCT_Allreduce (ring, 64 MiB): waiting for ucx receive of ... from rank 2".
  std::string describe() const;

 private:
  Sched root_;
  TaskState ts_;
  TaskInfo info_;
  std::uint64_t activity_ = 0;
};

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

// A collective that failed leaves its communicator failed: its messages
// may still be in flight, so every later call returns the error (free the
// communicator; a new one gets a fresh id).
void fail_context(Context& ctx, const Status& st);

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
using Describe = std::function<std::string()>;
Status wait_setup(MPI_Request* req, const Describe& doing, const Describe& waiting_for, std::shared_ptr<void> buffers,
                  bool yield);

// Take SIGUSR1 for pending-operation dumps, unless the application handles
// it already; restore the previous disposition at teardown.
void install_dump_signal(int world_rank) noexcept;
void restore_dump_signal() noexcept;

}  // namespace duct::coll
