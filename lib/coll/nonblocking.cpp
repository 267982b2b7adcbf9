// Nonblocking collectives: a FIFO of tasks per context, progressed by
// whoever waits.
#include "coll/nonblocking.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>

#include "coll/ft.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace duct::coll {

using clock = std::chrono::steady_clock;

// Every outstanding request, in start order.
struct PendingOps {
  std::vector<Pending*> all;
  std::vector<Pending*> pass;         // progress's copy of `all` (kept: no allocation per call)
  std::atomic<std::size_t> count{0};
  unsigned calls = 0;                 // progress calls since the clock was last read
  clock::time_point last_call{};      // when progress last read the clock

  void track(Pending* p) {
    all.push_back(p);
    count.store(all.size(), std::memory_order_relaxed);
  }
  void forget(Pending* p) {
    auto it = std::find(all.begin(), all.end(), p);
    if (it == all.end()) return;
    all.erase(it);
    count.store(all.size(), std::memory_order_relaxed);
  }
  // Complete `p`; delete it if its handle was given up (also during the
  // completion itself).
  static void complete(Pending* p, Status st) {
    p->complete(std::move(st));
    if (p->released_) delete p;
  }
  // Unlink an outstanding `p` (its context's queue, the list) and complete it.
  void finish(Pending* p, Status st);
};

namespace {
PendingOps g_ops;
thread_local int t_depth = 0;  // progress_pending on this thread's stack

// A gap longer than this between two progress calls means nobody was
// waiting (the application computed): the timeout counts waiting time only.
constexpr double kNotWaitingGap = 0.5;
constexpr unsigned kCallsPerClockRead = 256;

// The runtime lock when the application runs MPI_THREAD_MULTIPLE (an empty
// lock otherwise).
std::unique_lock<std::recursive_mutex> runtime_lock() {
  Runtime* rt = Runtime::ready();
  if (!rt || !rt->threaded()) return {};
  return std::unique_lock<std::recursive_mutex>(rt->mutex());
}

struct Depth {
  Depth() { ++t_depth; }
  ~Depth() { --t_depth; }
};
}  // namespace

// Every Pending alive, for forget_comm (its own lock: a Pending may be made
// and deleted outside the runtime lock).
struct LivePending {
  std::mutex m;
  std::set<Pending*> all;
};
LivePending& live_pending() {
  static LivePending* l = new LivePending;  // requests may be freed during static destruction
  return *l;
}

Pending::Pending() {
  LivePending& l = live_pending();
  std::lock_guard<std::mutex> lock(l.m);
  l.all.insert(this);
}

Pending::~Pending() {
  LivePending& l = live_pending();
  std::lock_guard<std::mutex> lock(l.m);
  l.all.erase(this);
}

void forget_comm(MPI_Comm comm) noexcept {
  LivePending& l = live_pending();
  std::lock_guard<std::mutex> lock(l.m);
  for (Pending* p : l.all)
    if (p->comm == comm) p->comm = MPI_COMM_NULL;
}

std::string Pending::describe() const {
  if (task_) return task_->describe();
  if (mpi_ != MPI_REQUEST_NULL) return strprintf("%s: handed to the MPI library, waiting for it", call);
  if (ctx_) {
    auto pos = std::find(ctx_->queue.begin(), ctx_->queue.end(), this);
    return strprintf("%s (%s, %zu bytes) on communicator cid %u: queued behind %zu earlier nonblocking collective(s)",
                     call, plan_.name, plan_.bytes, ctx_->cid, static_cast<std::size_t>(pos - ctx_->queue.begin()));
  }
  return strprintf("%s: %s", call, done_ ? "complete" : "starting");
}

void Pending::complete(Status st) {
  if (st) {
    for (auto& f : after) {
      st = f();
      if (!st) break;
    }
  }
  after.clear();
  keep.clear();
  task_.reset();
  result_ = std::move(st);
  // on_complete may release this (MPI calls the free function of a request
  // freed earlier from MPI_Grequest_complete): release() then only marks it.
  completing_ = true;
  done_.store(true, std::memory_order_release);
  if (on_complete) on_complete(*this);
  completing_ = false;
}

void PendingOps::finish(Pending* p, Status st) {
  if (p->ctx_) {
    Context& c = *p->ctx_;
    if (!st && c.failed.is_ok() && !refused_capture(p->args_, st)) fail_context(c, st);
    if (!c.queue.empty() && c.queue.front() == p) c.queue.pop_front();
    // The context may go (MPI_Comm_free) while the request is still held.
    p->ctx_ = nullptr;
  }
  forget(p);
  complete(p, std::move(st));
}

Status start_collective(Context& ctx, const CollArgs& a, Pending* p) {
  if (!ctx.failed.is_ok()) return ctx.failed;
  p->args_ = a;
  // Threads may start collectives while another progresses (the queue and
  // the list are shared).
  auto lock = runtime_lock();
  if (a.nothing || ctx.size() == 1) {
    PendingOps::complete(p, a.nothing ? Status::ok() : local_only(p->args_));
    return Status::ok();
  }
  DUCT_TRY(plan_collective(ctx, p->args_, &p->plan_));
  p->ctx_ = &ctx;
  ctx.queue.push_back(p);
  g_ops.track(p);
  // Start it now if it is first: an eager message leaves before the caller
  // computes.
  progress_pending();
  return Status::ok();
}

void start_done(Pending* p) { PendingOps::complete(p, Status::ok()); }

void start_mpi(Pending* p, MPI_Request r) {
  auto lock = runtime_lock();
  p->mpi_ = r;
  g_ops.track(p);
}

void release(Pending* p) noexcept {
  if (!p) return;
  // Another thread may be completing it (under the lock, in progress).
  auto lock = runtime_lock();
  if (p->done() && !p->completing_) {
    delete p;
  } else {
    p->released_ = true;
  }
}

bool mpi_pending_on(MPI_Comm comm) {
  auto lock = runtime_lock();
  for (const Pending* p : g_ops.all)
    if (p->comm == comm && p->mpi_ != MPI_REQUEST_NULL) return true;
  return false;
}

bool any_pending() noexcept { return g_ops.count.load(std::memory_order_relaxed) != 0; }

std::uint64_t progress_pending() {
  if (!any_pending() || t_depth > 0) return 0;
  auto lock = runtime_lock();
  Depth depth;
  std::uint64_t moved = 0;

  // The timeout watch: the clock is read every few calls; a long gap since
  // the last read means nobody waited in between, and restarts the watch.
  const double timeout = config::get().wait_timeout();
  bool look = false;
  clock::time_point now{};
  if (timeout > 0 && ++g_ops.calls >= kCallsPerClockRead) {
    g_ops.calls = 0;
    now = clock::now();
    const bool gap = std::chrono::duration<double>(now - g_ops.last_call).count() > kNotWaitingGap;
    g_ops.last_call = now;
    look = true;
    if (gap)
      for (Pending* p : g_ops.all) p->last_move_ = now;
  }

  // A copy: finishing a request edits the list (and on_complete may start
  // another). progress_pending does not re-enter (t_depth): one copy serves.
  g_ops.pass.assign(g_ops.all.begin(), g_ops.all.end());
  for (Pending* p : g_ops.pass) {
    if (std::find(g_ops.all.begin(), g_ops.all.end(), p) == g_ops.all.end()) continue;
    if (p->mpi_ != MPI_REQUEST_NULL) {
      int flag = 0;
      int rc = PMPI_Test(&p->mpi_, &flag, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        p->mpi_ = MPI_REQUEST_NULL;
        g_ops.finish(p, mpi_error(rc, "the MPI library's nonblocking collective"));
        ++moved;
      } else if (flag) {
        g_ops.finish(p, Status::ok());
        ++moved;
      }
      continue;
    }
    Context& c = *p->ctx_;
    if (c.queue.empty() || c.queue.front() != p) continue;  // behind another of its communicator
    if (!c.failed.is_ok()) {
      g_ops.finish(p, c.failed);
      ++moved;
      continue;
    }
    Status st;
    if (!p->task_) {
      p->task_ = std::make_unique<Task>(plan_schedule(c, p->args_, p->plan_),
                                        TaskInfo{p->args_.call, p->plan_.name, p->plan_.bytes, c.cid});
      st = p->task_->post();
      ++moved;
    }
    bool done = false;
    if (st) st = p->task_->progress(&done);
    if (st && !done && look && c.ft) st = ft::watch(*c.ft);  // DUCT_FT: revoked, or a rank died
    if (st && !done) {
      const std::uint64_t a = p->task_->activity();
      if (a != p->activity_) {
        p->activity_ = a;
        if (look) p->last_move_ = now;
        ++moved;
      } else if (look) {
        if (p->last_move_ == clock::time_point{}) p->last_move_ = now;
        const double still = std::chrono::duration<double>(now - p->last_move_).count();
        if (still >= timeout) {
          st = make_error(Errc::timeout, "no progress for %.1f s (DUCT_TIMEOUT=%g): %s", still, timeout,
                          p->task_->describe().c_str());
          DUCT_WARN(coll, "%s", st.message().c_str());
        }
      }
    }
    if (st && done) st = p->task_->finalize();
    if (!st || done) {
      g_ops.finish(p, std::move(st));
      ++moved;
    }
  }
  return moved;
}

namespace {
// The MPI library's progress loop spins (a blocking MPI call polls it
// back to back); the UCX worker's progress costs a system call (the tcp
// transport's epoll_wait), and lingering data needs only to move
// eventually.
constexpr unsigned kProgressOutsideEvery = 64;
}  // namespace

std::uint64_t progress_outside() {
  std::uint64_t moved = progress_pending();
  if (t_depth > 0 || !channel::sends_may_linger()) return moved;
  static thread_local unsigned calls = 0;
  if (++calls % kProgressOutsideEvery != 0) return moved;
  auto lock = runtime_lock();
  Depth depth;
  return moved + channel::progress();
}

void poke_mpi() {
#ifdef DUCT_SIM
  return;  // SMPI needs no poke to progress, and its MPI_Iprobe costs simulated time (smpi/iprobe)
#endif
  if (t_depth > 0) return;
  Depth depth;
  int flag = 0;
  (void)PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
}

void abandon(Context& ctx, const Status& why) noexcept {
  while (!ctx.queue.empty()) {
    Pending* p = ctx.queue.front();
    // Its task may hold messages in flight: the context cannot be used again.
    p->task_.reset();
    g_ops.finish(p, why);
  }
}

std::string describe_pending() {
  if (g_ops.all.empty()) return {};
  std::string out = strprintf("duct:   %zu nonblocking collective(s) outstanding:\n", g_ops.all.size());
  for (const Pending* p : g_ops.all) out += "duct:     " + p->describe() + "\n";
  return out;
}

}  // namespace duct::coll
