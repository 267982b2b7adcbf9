#include "coll/wait.hpp"

#include <execinfo.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "coll/ft.hpp"
#ifdef DUCT_SIM
#include "channel/mpi_channel.hpp"
#endif
#include "core/config.hpp"
#include "core/log.hpp"
#include "core/sim.hpp"

namespace duct::coll {

namespace {
// Idle polls before giving the core away on an oversubscribed node. Measured
// on 4 ranks / 2 cores (duct-bench -n 2000, three runs each): 1 -> 8.1-8.5 us
// at 8 B, 4 -> 5.0-5.5 us, 16 -> 7.4-9.9 us.
constexpr unsigned kIdlePollsBeforeYield = 4;

// An idle pass of a wait loop: after a few, the core goes to another
// process when `give_core` (oversubscription, as Open MPI's
// mpi_yield_when_idle). Under SimGrid (DUCT_SIM) the simulated ranks are
// coroutines of one thread and the clock moves only when every rank waits:
// every idle pass is kSimPollSeconds of simulated computation (sim_pause),
// so a wait ends at most that late, and a wait of T costs T /
// kSimPollSeconds passes of real time.
#ifdef DUCT_SIM
constexpr double kSimPollSeconds = 50e-9;
inline void sim_pause() { sim::compute(kSimPollSeconds); }
#endif
// `moved`: the pass before made progress. Under the simulation build a pass
// that moved nothing blocks until one of the mpi channel's messages
// completes (nothing else can move a simulated rank), else it is a pause.
inline void idle_pass(bool give_core, unsigned* idle, bool moved = false) {
#ifdef DUCT_SIM
  (void)give_core;
  (void)idle;
  if (moved) return;
  if (!channel::wait_for_any_message()) sim_pause();
#else
  (void)moved;
  if (give_core && ++*idle >= kIdlePollsBeforeYield) {
    sched_yield();
    *idle = 0;
  }
#endif
}
// Polls between looks at the clock when a timeout is set.
constexpr unsigned kPollsPerClockRead = 256;

// ---- SIGUSR1: dump what is pending ----
// The handler only bumps a counter (async-signal-safe); every run loop that
// sees it change prints its task. With no collective running the handler
// writes a prepared line itself, and the stack of the thread it interrupted:
// a rank stuck outside duct's waits (inside UCX, CUDA or the MPI library,
// for example while a communicator's context is created) then still says
// where. backtrace_symbols_fd writes without allocating; backtrace() is
// primed at install, so its first call's loading of the unwinder does not
// happen in the handler.
std::atomic<unsigned> g_dump_gen{0};
std::atomic<int> g_running{0};
char g_idle_line[160];
std::size_t g_idle_len = 0;
struct sigaction g_old_usr1;
bool g_usr1_installed = false;

void on_usr1(int) {
  if (g_running.load(std::memory_order_relaxed) == 0) {
    if (g_idle_len) (void)!write(STDERR_FILENO, g_idle_line, g_idle_len);
    void* frames[48];
    const int depth = backtrace(frames, 48);
    backtrace_symbols_fd(frames, depth, STDERR_FILENO);
    return;
  }
  g_dump_gen.fetch_add(1, std::memory_order_relaxed);
}

// `what`: what the call is waiting for (Task::describe(), or a setup wait's).
void dump(const std::string& what, double waited) {
  Runtime* rt = Runtime::ready();
  std::string out = strprintf("duct: rank %d (pid %d): pending for %.1f s: %s\n", rt ? rt->world_rank() : -1,
                              static_cast<int>(getpid()), waited, what.c_str());
  out += describe_pending();
  std::string ops = channel::describe_active();
  if (!ops.empty()) out += "duct:   channel operations in flight:\n" + ops;
  if (rt) out += rt->describe_contexts();
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

// Plain stores rather than read-modify-writes (a locked instruction on
// every call): with several threads running collectives the "no collective
// in progress" line may be wrong in a race, never a dump.
struct Running {
  Running() { g_running.store(1, std::memory_order_relaxed); }
  ~Running() { g_running.store(0, std::memory_order_relaxed); }
};

// Progress under the runtime lock when the application calls duct from
// several threads (MPI_THREAD_MULTIPLE): the UCX worker and the operation
// list are single-threaded. The lock is taken per poll, never across the
// wait, so collectives of different threads interleave.
// Nonblocking collectives of other communicators move too: a peer may be
// waiting in one of them for this rank.
Status step(Task& task, bool* done, std::recursive_mutex* m) {
  if (any_pending()) progress_pending();
  if (!m) return task.progress(done);
  std::lock_guard<std::recursive_mutex> lock(*m);
  return task.progress(done);
}

}  // namespace

void install_dump_signal(int world_rank) noexcept {
  if (g_usr1_installed) return;
  struct sigaction cur;
  if (sigaction(SIGUSR1, nullptr, &cur) != 0) return;
  if (cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO)) {
    DUCT_INFO(init, "SIGUSR1 has a handler already: duct's pending-operation dump is off");
    return;
  }
  int n = std::snprintf(g_idle_line, sizeof g_idle_line,
                        "duct: rank %d (pid %d): no collective in progress; the interrupted thread's stack:\n",
                        world_rank, static_cast<int>(getpid()));
  g_idle_len = n > 0 ? std::min<std::size_t>(static_cast<std::size_t>(n), sizeof g_idle_line - 1) : 0;
  void* prime[2];
  (void)backtrace(prime, 2);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = &on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGUSR1, &sa, &g_old_usr1) == 0) g_usr1_installed = true;
}

void restore_dump_signal() noexcept {
  if (!g_usr1_installed) return;
  sigaction(SIGUSR1, &g_old_usr1, nullptr);
  g_usr1_installed = false;
}

Status wait_setup(MPI_Request* req, const Describe& doing, const Describe& waiting_for, std::shared_ptr<void> buffers,
                  bool yield) {
#ifdef DUCT_SIM
  // Simulated ranks wait for nothing else: block (SimGrid finds deadlocks).
  (void)buffers;
  (void)yield;
  Running running;
  const int wrc = PMPI_Wait(req, MPI_STATUS_IGNORE);
  return wrc == MPI_SUCCESS ? Status::ok() : mpi_error(wrc, waiting_for().c_str()).context(doing().c_str());
#else
  using clock = std::chrono::steady_clock;
  const double timeout = config::get().wait_timeout();
  Running running;
  unsigned dump_seen = g_dump_gen.load(std::memory_order_relaxed);
  const clock::time_point started = clock::now();
  for (unsigned polls = 1;; ++polls) {
    int flag = 0;
    int rc = PMPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_error(rc, waiting_for().c_str()).context(doing().c_str());
    if (flag) return Status::ok();
    // Setup is rare and may wait long for a late rank: after a short spin
    // the core is given away on every poll.
    if (yield || polls > 1024) sched_yield();
    const bool dump_now = g_dump_gen.load(std::memory_order_relaxed) != dump_seen;
    if (polls % kPollsPerClockRead != 0 && !dump_now) continue;
    const double waited = std::chrono::duration<double>(clock::now() - started).count();
    if (dump_now) {
      dump_seen = g_dump_gen.load(std::memory_order_relaxed);
      dump(doing() + ": waiting for " + waiting_for(), waited);
    }
    if (timeout > 0 && waited >= timeout) {
      // MPI can neither cancel nor free a pending nonblocking collective:
      // its buffers stay, in case a late rank completes it.
      static std::mutex m;
      static std::vector<std::shared_ptr<void>> abandoned;
      {
        std::lock_guard<std::mutex> lock(m);
        abandoned.push_back(std::move(buffers));
      }
      Status st = make_error(Errc::timeout, "%s: no progress for %.1f s (DUCT_TIMEOUT=%g): waiting for %s",
                             doing().c_str(), waited, timeout, waiting_for().c_str());
      DUCT_WARN(coll, "%s", st.message().c_str());
      return st;
    }
  }
#endif
}

namespace {
// Progress nonblocking collectives until `done()`; their own watch in
// progress_pending turns a stall into DUCT_TIMEOUT. `what` is for SIGUSR1.
Status wait_until(const std::function<bool()>& done, const std::function<std::string()>& what, bool yield) {
  Running running;
  unsigned dump_seen = g_dump_gen.load(std::memory_order_relaxed);
  const auto started = std::chrono::steady_clock::now();
  unsigned idle = 0, polls = 0;
  while (!done()) {
    if (progress_pending() == 0) idle_pass(yield, &idle);
    if (++polls % kPollsPerMpiPoke == 0) poke_mpi();
    if (g_dump_gen.load(std::memory_order_relaxed) != dump_seen) {
      dump_seen = g_dump_gen.load(std::memory_order_relaxed);
      dump(what(), std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  }
  return Status::ok();
}
}  // namespace

Status wait_pending(Pending* p) {
  const bool yield = p->context() && p->context()->yield;
  DUCT_TRY(wait_until([p] { return p->done(); }, [p] { return p->describe(); }, yield));
  return p->result();
}

Status drain(Context& ctx) {
  DUCT_TRY(wait_until([&ctx] { return ctx.queue.empty(); },
                      [&ctx] {
                        return strprintf("finishing %zu nonblocking collective(s) on communicator cid %u before a "
                                         "blocking one",
                                         ctx.queue.size(), ctx.cid);
                      },
                      ctx.yield));
  return ctx.failed;
}

Status drain_mpi(MPI_Comm comm) {
  return wait_until([comm] { return !mpi_pending_on(comm); },
                    [] { return std::string("finishing nonblocking collectives handed to the MPI library on a "
                                            "communicator being freed"); },
                    false);
}

namespace {
// The DUCT_TIMEOUT and SIGUSR1 watch of a blocking wait, looked at after
// every poll: the clock is read every kPollsPerClockRead polls (and only
// with a timeout set) or when a dump was asked for.
class Watch {
 public:
  // `ctx`: the communicator waited on, whose revocation and failed ranks
  // are looked at under DUCT_FT (coll/ft.hpp); may be null.
  // A rank that gives its core away on every idle poll (an oversubscribed
  // node) looks every 16 polls: 256 yields at 3 ranks per core took 0.1 s,
  // which a dead peer's detection (DUCT_FT) waited out.
  explicit Watch(Context* ctx)
      : timeout_(config::get().wait_timeout()),
        dump_seen_(g_dump_gen.load(std::memory_order_relaxed)),
        ft_(ctx && ctx->ft ? ctx : nullptr),
        every_(ctx && ctx->yield ? kPollsPerClockRead / 16 : kPollsPerClockRead) {}
  // `activity` grows whenever the wait moved; `what()` says what it waits
  // for (built only for a dump or the timeout's message). An error when
  // nothing moved for DUCT_TIMEOUT seconds.
  template <class What>
  Status check(std::uint64_t activity, What&& what) {
    const bool dump_now = g_dump_gen.load(std::memory_order_relaxed) != dump_seen_;
    if (!((timeout_ > 0 && ++polls_ >= every_) || dump_now)) return Status::ok();
    polls_ = 0;
    if (ft_) DUCT_TRY(ft::watch(*ft_->ft));
    const clock::time_point now = clock::now();
    if (!clock_started_) {
      started_ = last_move_ = now;
      clock_started_ = true;
    }
    if (activity != last_activity_) {
      last_activity_ = activity;
      last_move_ = now;
    }
    if (dump_now) {
      dump_seen_ = g_dump_gen.load(std::memory_order_relaxed);
      dump(what(), std::chrono::duration<double>(now - started_).count());
    }
    const double still = std::chrono::duration<double>(now - last_move_).count();
    if (timeout_ > 0 && still >= timeout_) {
      Status st = make_error(Errc::timeout, "no progress for %.1f s (DUCT_TIMEOUT=%g): %s", still, timeout_,
                             what().c_str());
      DUCT_WARN(coll, "%s", st.message().c_str());
      return st;
    }
    return Status::ok();
  }

 private:
  using clock = std::chrono::steady_clock;
  const double timeout_;
  unsigned dump_seen_;
  unsigned polls_ = 0;
  std::uint64_t last_activity_ = 0;
  clock::time_point started_{}, last_move_{};
  bool clock_started_ = false;
  Context* ft_;
  unsigned every_;
};

}  // namespace


Status run(Context& ctx, Task& task) {
  if (!ctx.failed.is_ok()) return ctx.failed;
  Runtime* rt = Runtime::ready();
  std::recursive_mutex* m = rt && rt->threaded() ? &rt->mutex() : nullptr;
  Running running;
  Status st;
  {
    std::unique_lock<std::recursive_mutex> lock;
    if (m) lock = std::unique_lock<std::recursive_mutex>(*m);
    st = task.post();
  }
  bool done = false;
  if (st) st = step(task, &done, m);

  // Spin on progress; on an oversubscribed node give the core away after a
  // few idle polls, as Open MPI does with mpi_yield_when_idle.
  Watch watch(&ctx);
  unsigned idle = 0, polls = 0;
  while (st && !done) {
    const std::uint64_t before = task.activity();
    st = step(task, &done, m);
    idle_pass(ctx.yield, &idle, task.activity() != before);
    if (++polls % kPollsPerMpiPoke == 0) poke_mpi();
    if (st && !done) st = watch.check(task.activity(), [&] { return task.describe(); });
  }
  if (st) st = task.finalize();
  if (!st) fail_context(ctx, st);
  return st;
}

// ---- waits in place ----------------------------------------------------------------

Spinner::Spinner(const TaskInfo& info, bool yield, Context* ctx) : info_(info), yield_(yield), ctx_(ctx) {
  g_running.store(1, std::memory_order_relaxed);
}

Spinner::~Spinner() { g_running.store(0, std::memory_order_relaxed); }

Status Spinner::wait(Waitable& w) {
  Watch watch(ctx_);
  unsigned idle = 0, polls = 0;
  for (;;) {
    bool ready = false;
    w.poll(&ready);
    if (ready) return std::move(w.status);
    if (any_pending()) progress_pending();
    const unsigned moved = channel::progress();
    activity_ += moved;
    idle_pass(yield_, &idle, moved != 0);
    if (++polls % kPollsPerMpiPoke == 0) poke_mpi();
    DUCT_TRY(watch.check(activity_, [&] {
      return strprintf("%s: waiting for %s", describe_task(info_).c_str(), w.describe().c_str());
    }));
  }
}


// ---- communicators freed with requests outstanding -------------------------------

namespace {
void watched_comm_freed(void* value) noexcept {
  auto* c = static_cast<MPI_Comm*>(value);
  if (mpi_pending_on(*c)) {
    Status st;
    try {
      st = drain_mpi(*c);
    } catch (...) {
      st = Status(Errc::internal, "exception while finishing nonblocking collectives");
    }
    if (!st) DUCT_WARN(coll, "freeing a communicator with nonblocking collectives pending: %s", st.message().c_str());
  }
  forget_comm(*c);
  delete c;
}
}  // namespace

Status watch_comm(MPI_Comm comm) {
  static CommAttr* watch = new CommAttr(&watched_comm_freed);  // its keyval lives as long as the process
  void* v = nullptr;
  DUCT_TRY(watch->get(comm, &v));
  if (v) return Status::ok();
  auto* c = new MPI_Comm(comm);
  Status st = watch->set(comm, c);
  if (!st) delete c;
  return st;
}

Status start_checked(Context& ctx, const CollArgs& a, Pending* p) {
  if (ctx.failed.is_ok() && ctx.size() > 1 && config::get().check) {
    // The comparison waits for every rank to start the call (documented).
    if (!ctx.queue.empty()) DUCT_TRY(drain(ctx));
    DUCT_TRY(check_call(ctx, a));
  }
  return start_collective(ctx, a, p);
}

// ---- this layer's part in the runtime (LayerHooks, coll/context.hpp) ---------------

namespace {
// A context ends: MPI_Comm_free lets operations pending on the
// communicator complete (MPI-4.0 §7.4.3), so its nonblocking collectives
// finish first (every rank started them before freeing it); its requests
// may still be waited for, and their errors no longer name it.
void end_queue(Context& ctx) noexcept {
  if (!ctx.queue.empty()) {
    Status st;
    try {
      st = drain(ctx);
    } catch (...) {
      st = Status(Errc::internal, "exception while finishing nonblocking collectives");
    }
    if (!ctx.queue.empty()) abandon(ctx, st ? Status(Errc::internal, "communicator freed") : st);
  }
  forget_comm(ctx.comm);
}

const bool g_hooked = [] {
  LayerHooks& h = layer_hooks();
  h.end_queue = &end_queue;
  h.abandon_queue = &abandon;
  h.setup_wait = &wait_setup;
  h.runtime_up = &install_dump_signal;
  h.runtime_down = &restore_dump_signal;
  return true;
}();
}  // namespace

}  // namespace duct::coll
