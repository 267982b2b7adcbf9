// duct coll: a collective in flight.
//
// Every collective is a Task with four phases: init (the collective's entry
// point validates its arguments, selects an algorithm and builds the
// schedule), post (start it), progress (never blocks; resumes the schedule
// where it left off) and finalize (the result). A blocking call is post plus
// a progress loop (run()); non-blocking and stream-ordered calls can reuse
// the same tasks.
#pragma once

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
  // The schedule's result (after progress reported done).
  Status finalize();
  // "DUCT_Allreduce (ring, 64 MiB): waiting for ucx receive of ... from rank 2".
  std::string describe() const;

 private:
  Sched root_;
  TaskState ts_;
  TaskInfo info_;
};

// Post `task` and progress it to completion on `ctx`'s communicator.
Status run(Context& ctx, Task& task);

}  // namespace duct::coll
