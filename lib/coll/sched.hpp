// duct coll: collective schedules as C++20 coroutines.
//
// An algorithm is written as a coroutine returning Sched (a Status when it
// finishes). Where it must wait for messages or device work it writes
//   DUCT_CO_TRY(co_await wait(req_a, req_b));
//   DUCT_CO_TRY(co_await wait(fence));
// and is suspended; its state lives in the coroutine frame. Sub-schedules
// compose (`co_await reduce_scatter_ring(...)`), as UCC chains tasks: the
// ring allreduce is a reduce-scatter schedule followed by an allgather one.
//
// A Task (task.hpp) owns the root schedule. Its progress() drives the
// channels, asks the innermost waiting point whether it is ready, and only
// then resumes it, so progress never blocks.
#pragma once

#include <coroutine>
#include <exception>
#include <string>
#include <utility>
#include <span>
#include <vector>

#include "channel/channel.hpp"
#include "core/status.hpp"
#include "memory/buffer.hpp"

namespace duct::coll {

// Coroutine frames come from a small pool: a schedule's frame is allocated
// and freed on every call, and glibc's malloc costs several hundred
// instructions for frames of this size (measured with callgrind: ~970 per
// 8-byte allreduce).
void* frame_alloc(std::size_t bytes);
void frame_free(void* p, std::size_t bytes) noexcept;

// Something a suspended schedule waits for.
class Waitable {
 public:
  virtual ~Waitable() = default;
  // Check (and advance) the condition; *ready when the schedule may resume.
  // An error also makes it ready; await_resume then returns it.
  virtual void poll(bool* ready) = 0;
  virtual std::string describe() const = 0;
  Status status;
};

// Shared by all coroutines of one task.
struct TaskState {
  std::coroutine_handle<> resume_at;  // the innermost suspended schedule
  Waitable* waiting = nullptr;        // what it waits for
  bool done = false;
  Status result;
  std::exception_ptr exception;
};

class [[nodiscard]] Sched {
 public:
  struct promise_type;
  using handle = std::coroutine_handle<promise_type>;

  struct promise_type {
    Status result;
    TaskState* ts = nullptr;
    std::coroutine_handle<> continuation;  // the awaiting parent; null for the root

    static void* operator new(std::size_t bytes) { return frame_alloc(bytes); }
    static void operator delete(void* p, std::size_t bytes) noexcept { frame_free(p, bytes); }

    Sched get_return_object() noexcept { return Sched(handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(handle h) noexcept {
        promise_type& p = h.promise();
        if (p.continuation) return p.continuation;
        p.ts->done = true;
        p.ts->result = std::move(p.result);
        return std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_value(Status s) noexcept { result = std::move(s); }
    void unhandled_exception() noexcept {
      if (ts) ts->exception = std::current_exception();
      result = Status(Errc::internal, "exception in a collective schedule");
    }
  };

  Sched() = default;
  explicit Sched(handle h) noexcept : h_(h) {}
  Sched(Sched&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Sched& operator=(Sched&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Sched(const Sched&) = delete;
  Sched& operator=(const Sched&) = delete;
  ~Sched() {
    if (h_) h_.destroy();
  }

  handle get() const noexcept { return h_; }

  // Run a sub-schedule: the parent resumes when it finishes.
  auto operator co_await() && noexcept {
    struct Awaiter {
      handle child;
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(handle parent) noexcept {
        child.promise().ts = parent.promise().ts;
        child.promise().continuation = parent;
        return child;
      }
      Status await_resume() noexcept { return std::move(child.promise().result); }
    };
    return Awaiter{h_};
  }

 private:
  handle h_;
};

// co_await on a Waitable: suspends unless it is ready already.
template <class W>
struct WaitAwaiter {
  W w;
  bool await_ready() {
    bool ready = false;
    w.poll(&ready);
    return ready;
  }
  void await_suspend(Sched::handle h) noexcept {
    TaskState* ts = h.promise().ts;
    ts->resume_at = h;
    ts->waiting = &w;
  }
  Status await_resume() noexcept { return std::move(w.status); }
};

// Wait for channel requests (all of them). Up to kInline requests are held
// without allocating (the common case: one or two per wait).
class WaitRequests final : public Waitable {
 public:
  static constexpr std::size_t kInline = 4;
  explicit WaitRequests(std::vector<channel::Request*> reqs) : many_(std::move(reqs)) {}
  // Requests kept by the caller (a vector in its frame, unchanged while it
  // waits): polled where they are, nothing copied or allocated.
  explicit WaitRequests(std::span<channel::Request> reqs) : span_(reqs) {}
  template <class... R>
  explicit WaitRequests(channel::Request& first, R&... rest) : few_{&first, &rest...}, nfew_(1 + sizeof...(rest)) {
    static_assert(sizeof...(rest) < kInline);
  }
  void poll(bool* ready) override;
  std::string describe() const override;

 private:
  channel::Request* few_[kInline] = {};
  std::size_t nfew_ = 0;
  std::vector<channel::Request*> many_;
  std::span<channel::Request> span_;
};

// Wait for device work recorded in a fence.
class WaitFence final : public Waitable {
 public:
  // `what`: what the fence stands for, in hang reports.
  explicit WaitFence(memory::Fence& f, const char* what = "device work (reduction kernel or copy)")
      : f_(&f), what_(what) {}
  void poll(bool* ready) override;
  std::string describe() const override { return what_; }

 private:
  memory::Fence* f_;
  const char* what_;
};

// Wait until `count` reaches `target`: a schedule running beside this one
// (all_of) counts the stages it has finished, and the stages of a pipeline
// start in order (coll/allreduce/pipelined_rabenseifner.cpp).
class WaitCount final : public Waitable {
 public:
  // `what`: what the count stands for, in hang reports.
  WaitCount(const std::size_t& count, std::size_t target, const char* what)
      : count_(&count), target_(target), what_(what) {}
  void poll(bool* ready) override { *ready = *count_ >= target_; }
  std::string describe() const override {
    return std::string(what_) + " (" + std::to_string(*count_) + " of " + std::to_string(target_) + ")";
  }

 private:
  const std::size_t* count_;
  std::size_t target_;
  const char* what_;
};

// Run schedules side by side (the levels of a pipelined collective: the
// network phase of one segment while the node phases of others move): each
// child runs as a root of its own, resumed whenever what it waits for is
// ready; the awaiting schedule resumes when every child has finished, with
// the first error. A child may wait for an earlier one only through
// wait_count on a count that the earlier child advances and that lives in
// the awaiting schedule's frame; children are polled in order, so a later
// child sees the count in the same pass. No child may wait for a later one.
class WaitAll final : public Waitable {
 public:
  explicit WaitAll(std::vector<Sched> children) : kids_(std::move(children)), ts_(kids_.size()) {}
  WaitAll(WaitAll&&) = default;
  void poll(bool* ready) override;
  std::string describe() const override;

 private:
  std::vector<Sched> kids_;
  std::vector<TaskState> ts_;  // sized once: children point into it
  bool started_ = false;
};

// (Variadic rather than a braced list: GCC 12 rejects braced initializers
// inside co_await expressions.)
inline WaitAwaiter<WaitRequests> wait(std::vector<channel::Request*> reqs) {
  return WaitAwaiter<WaitRequests>{WaitRequests(std::move(reqs))};
}
// Every request of `reqs`, which must stay as it is until the wait ends.
inline WaitAwaiter<WaitRequests> wait(std::vector<channel::Request>& reqs) {
  return WaitAwaiter<WaitRequests>{WaitRequests(std::span<channel::Request>(reqs))};
}
template <class... R>
WaitAwaiter<WaitRequests> wait(channel::Request& first, R&... rest) {
  return WaitAwaiter<WaitRequests>{WaitRequests(first, rest...)};
}
inline WaitAwaiter<WaitFence> wait(memory::Fence& f) { return WaitAwaiter<WaitFence>{WaitFence(f)}; }
inline WaitAwaiter<WaitCount> wait_count(const std::size_t& count, std::size_t target, const char* what) {
  return WaitAwaiter<WaitCount>{WaitCount(count, target, what)};
}
inline WaitAwaiter<WaitAll> all_of(std::vector<Sched> children) {
  return WaitAwaiter<WaitAll>{WaitAll(std::move(children))};
}

}  // namespace duct::coll
