// Tasks: a collective's schedule and what it waits on. The waits that
// drive tasks are coll/wait.cpp.
#include "coll/task.hpp"

#include <string>
#include <vector>

#include "coll/context.hpp"
#include "coll/ft.hpp"

namespace duct::coll {

// ---- frame pool -----------------------------------------------------------------

namespace {
// Size classes of 512 bytes up to 8 KiB, a few frames kept per class; larger
// frames go to operator new. No locked instruction on the call path (a
// locked instruction waits for the stores before it, and those are the
// shared-memory flags other cores hold, so a spinlock here cost 0.05-0.1 us
// of every small collective). A frame freed on another thread than it was
// allocated on just joins that thread's pool; a thread's pool is released
// when the thread ends.
constexpr std::size_t kClassBytes = 512;
constexpr std::size_t kClasses = 16;
constexpr std::size_t kKeep = 8;
struct FramePool {
  void* free[kClasses][kKeep] = {};
  std::size_t count[kClasses] = {};
  ~FramePool() {
    for (std::size_t c = 0; c < kClasses; ++c)
      for (std::size_t i = 0; i < count[c]; ++i) ::operator delete(free[c][i]);
  }
};
// Without MPI_THREAD_MULTIPLE one thread at a time is inside duct, so one
// process-wide pool serves it: a thread-local pool in a shared library costs
// a __tls_get_addr call per access (several per collective), and the
// initial-exec TLS model that avoids it cannot be loaded by dlopen (Python)
// once the process's static TLS surplus is used up. Threaded applications
// get a pool per thread. Before the runtime is up nothing is pooled.
FramePool g_frames;
thread_local FramePool t_frames;

FramePool* frames() {
  Runtime* rt = Runtime::ready();
  if (!rt) return nullptr;
  return rt->threaded() ? &t_frames : &g_frames;
}
}  // namespace

void* frame_alloc(std::size_t bytes) {
  std::size_t c = (bytes + kClassBytes - 1) / kClassBytes - 1;
  if (c < kClasses) {  // whole classes even unpooled: the frame may be freed into a pool
    if (FramePool* f = frames(); f && f->count[c] > 0) return f->free[c][--f->count[c]];
    return ::operator new((c + 1) * kClassBytes);
  }
  return ::operator new(bytes);
}

void frame_free(void* p, std::size_t bytes) noexcept {
  std::size_t c = (bytes + kClassBytes - 1) / kClassBytes - 1;
  if (FramePool* f = c < kClasses ? frames() : nullptr; f && f->count[c] < kKeep) {
    f->free[c][f->count[c]++] = p;
    return;
  }
  ::operator delete(p);
}

// ---- waitables ----------------------------------------------------------------

void WaitRequests::poll(bool* ready) {
  *ready = true;
  auto test = [&](channel::Request* r) {
    bool done = false;
    Status st = r->test(&done);
    if (!st) {
      if (status) status = std::move(st);
    } else if (!done) {
      *ready = false;
    }
  };
  for (std::size_t i = 0; i < nfew_; ++i) test(few_[i]);
  for (channel::Request* r : many_) test(r);
  for (channel::Request& r : span_) test(&r);
  if (!status) *ready = true;
}

std::string WaitRequests::describe() const {
  std::string out;
  std::vector<const channel::Request*> all(few_, few_ + nfew_);
  all.insert(all.end(), many_.begin(), many_.end());
  for (const channel::Request& r : span_) all.push_back(&r);
  for (const channel::Request* r : all) {
    if (!r->active()) continue;
    if (!out.empty()) out += "; ";
    out += r->describe();
  }
  return out.empty() ? "completed requests" : out;
}

void WaitFence::poll(bool* ready) {
  Status st = f_->ready(ready);
  if (!st) {
    status = std::move(st);
    *ready = true;
  }
}

void WaitAll::poll(bool* ready) {
  bool all_done = true;
  for (std::size_t i = 0; i < kids_.size(); ++i) {
    TaskState& ts = ts_[i];
    if (!started_) {
      Sched::handle h = kids_[i].get();
      h.promise().ts = &ts;
      h.resume();
    } else if (!ts.done && ts.waiting) {
      bool r = false;
      ts.waiting->poll(&r);
      if (r) {
        ts.waiting = nullptr;
        std::coroutine_handle<> h = ts.resume_at;
        ts.resume_at = nullptr;
        h.resume();
      }
    }
    if (ts.exception) std::rethrow_exception(ts.exception);
    if (ts.done && !ts.result && status.is_ok()) status = ts.result;
    all_done = all_done && ts.done;
  }
  started_ = true;
  // An error ends the wait at once (the task fails; its peers time out or
  // fail too, as for any failed collective).
  *ready = all_done || !status.is_ok();
}

std::string WaitAll::describe() const {
  std::string out;
  for (const TaskState& ts : ts_) {
    if (ts.done || !ts.waiting) continue;
    if (!out.empty()) out += "; ";
    out += ts.waiting->describe();
  }
  return out.empty() ? "side-by-side schedules" : out;
}

// ---- Task -------------------------------------------------------------------------

Status Task::post() {
  Sched::handle h = root_.get();
  h.promise().ts = &ts_;
  h.resume();
  if (ts_.exception) std::rethrow_exception(ts_.exception);
  return Status::ok();
}

Status Task::progress(bool* done) {
  if (!ts_.done) {
    activity_ += channel::progress();
    if (ts_.waiting) {
      bool ready = false;
      ts_.waiting->poll(&ready);
      if (ready) {
        ++activity_;
        ts_.waiting = nullptr;
        std::coroutine_handle<> h = ts_.resume_at;
        ts_.resume_at = nullptr;
        h.resume();
        if (ts_.exception) std::rethrow_exception(ts_.exception);
      }
    }
  }
  *done = ts_.done;
  return Status::ok();
}

Status Task::finalize() { return std::move(ts_.result); }

std::string describe_task(const TaskInfo& info) {
  return strprintf("%s (%s, %zu bytes) on communicator cid %u", info.call, info.algo, info.bytes, info.cid);
}

std::string Task::describe() const {
  std::string what = describe_task(info_);
  if (ts_.done) return what + ": complete";
  if (ts_.waiting) return what + ": waiting for " + ts_.waiting->describe();
  return what + ": running";
}

void fail_context(Context& ctx, const Status& st) {
  if (ctx.ft) {
    // Every survivor learns of it at once (coll/ft.hpp); later calls here
    // return the revocation.
    ctx.failed = ft::on_failure(*ctx.ft, st);
    return;
  }
  ctx.failed = st;
  ctx.failed.context("an earlier collective on this communicator failed");
}

}  // namespace duct::coll
