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

// A collective that failed leaves its communicator failed: its messages
// may still be in flight, so every later call returns the error (free the
// communicator; a new one gets a fresh id).
void fail_context(Context& ctx, const Status& st);

}  // namespace duct::coll
