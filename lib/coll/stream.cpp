// Stream-ordered collectives: see stream.hpp for the protocol.
#include "coll/stream.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "coll/wait.hpp"
#include "coll/shm.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "memory/cuda.hpp"

namespace duct::coll {

namespace {
// A value past every stream-ordered call number: written at finalize so
// that no stream waits for a collective that will never run.
constexpr std::uint64_t kReleased = std::uint64_t{1} << 62;


// DUCT_STREAM_EMULATE=1 (tests without a GPU): no CUDA call. The
// "stream" reaches every call at once (the host function runs in the
// call) and its wait is the caller spinning on the completion word, so
// each call returns when its collective is done; everything between (the
// stream thread, the stream side, the words) runs as on a GPU.
bool emulated() { return config::get().stream_emulate; }

}  // namespace

struct StreamSide {
  MPI_Comm comm = MPI_COMM_NULL;  // duct's duplicate of the user's communicator
  Context* ctx = nullptr;         // its context: the collectives run there
  std::uint32_t user_cid = 0;     // the user's communicator, for messages
  // Calls made outside graph capture ("eager"), numbered 1, 2, ... at call
  // time; the word holds the number of the last one finished with all
  // before it, and the stream after call k waits for it to reach k.
  std::uint64_t* done = nullptr;
  void* done_dev = nullptr;
  std::uint64_t issued = 0;           // the application thread's count
  std::uint64_t finished = 0;         // under the runtime lock
  std::set<std::uint64_t> early;      // finished before an earlier one (under the runtime lock)
  // Where the previous call went, to order a call on another stream after it.
  void* last_stream = nullptr;
  unsigned long long last_capture = 0;
  bool any = false;
  void* order_ev = nullptr;
  // The first failure; later calls return it.
  std::mutex m;
  Status error;
  std::atomic<bool> failed{false};
  std::atomic<bool> dead{false};  // the user's communicator was freed

  void record(const Status& st, const char* call) {
    std::lock_guard<std::mutex> lock(m);
    if (failed.load(std::memory_order_relaxed)) return;
    error = st;
    error.context(strprintf("%s in stream order on communicator cid %u", call, user_cid));
    DUCT_WARN(coll, "%s (the stream was released; later stream-ordered calls on this communicator fail)",
              error.message().c_str());
    failed.store(true, std::memory_order_release);
  }
  Status first_error() {
    std::lock_guard<std::mutex> lock(m);
    Status st = error;
    return st.context("an earlier stream-ordered collective on this communicator failed");
  }
  ~StreamSide();
};

namespace {

// Words the GPU waits on: one per 64-byte line of registered host pages.
class FlagPool {
 public:
  static FlagPool& instance() {
    static FlagPool* p = new FlagPool;  // never destroyed: CUDA threads may return words at exit
    return *p;
  }
  Status get(std::uint64_t** host, void** dev) {
    std::lock_guard<std::mutex> lock(m_);
    if (free_.empty()) {
      void* page = std::aligned_alloc(kPage, kPage);
      if (!page) return make_error(Errc::no_memory, "no memory for stream completion words");
      std::memset(page, 0, kPage);
      void* d = page;  // emulated streams read the host address
      Status st = emulated() ? Status::ok() : memory::cuda::host_register(page, kPage, &d);
      if (!st) {
        std::free(page);
        return st.context("registering stream completion words with CUDA");
      }
      for (std::size_t i = 0; i < kPage / kLine; ++i)
        free_.push_back({reinterpret_cast<std::uint64_t*>(static_cast<char*>(page) + i * kLine),
                         static_cast<char*>(d) + i * kLine});
    }
    *host = free_.back().first;
    *dev = free_.back().second;
    free_.pop_back();
    word_store(*host, 0);
    return Status::ok();
  }
  void put(std::uint64_t* host, void* dev) {
    if (!host) return;
    std::lock_guard<std::mutex> lock(m_);
    free_.push_back({host, dev});
  }

 private:
  static constexpr std::size_t kPage = 4096, kLine = 64;
  std::mutex m_;
  std::vector<std::pair<std::uint64_t*, void*>> free_;
};

struct StreamOp {
  std::shared_ptr<StreamSide> side;
  CollArgs args;
  int device = 0;
  bool graph = false;
  std::uint64_t value = 0;          // eager: its number on the side
  std::uint64_t* flag = nullptr;    // graph: its own word (0: running, 1: done)
  void* flag_dev = nullptr;
};

// duct's stream thread: starts the collectives the GPU has reached and
// progresses them. It makes no MPI call (duct's channels, shared memory
// and CUDA only); it and the application's threads take turns under the
// runtime lock.
class Worker {
 public:
  static Worker& instance() {
    static Worker* w = new Worker;  // the thread is joined at MPI_Finalize
    return *w;
  }
  Status ensure_started(Runtime& rt);
  void fire(StreamOp* op);   // a CUDA thread: the GPU reached op
  void doom(StreamOp* op);   // a CUDA thread: op's graph is gone
  void track(StreamOp* op) {
    std::lock_guard<std::mutex> lock(m_);
    graph_ops_.insert(op);
  }
  void add_side(const std::shared_ptr<StreamSide>& s) {
    std::lock_guard<std::mutex> lock(m_);
    sides_.push_back(s);
  }
  // Under the runtime lock: op finished (or failed).
  void finish(StreamOp* op, const Status& st);

 private:
  void loop();
  void begin(StreamOp* op);
  void stop() noexcept;

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<StreamOp*> fired_;
  std::vector<StreamOp*> doomed_;
  std::set<StreamOp*> graph_ops_;
  std::vector<std::weak_ptr<StreamSide>> sides_;
  bool stop_ = false, started_ = false;
  std::atomic<int> active_{0};
  std::atomic<int> queued_{0};  // fired_ or doomed_ has entries (read without the mutex)
  static constexpr int kSpinBeforeSleepUs = 50;
  std::thread thread_;
  int device_ = -1;
};

void fire_cb(void* op) { Worker::instance().fire(static_cast<StreamOp*>(op)); }
void destroy_cb(void* op) { Worker::instance().doom(static_cast<StreamOp*>(op)); }

Status Worker::ensure_started(Runtime& rt) {
  std::lock_guard<std::mutex> lock(m_);
  if (started_) return Status::ok();
  if (stop_) return make_error(Errc::internal, "duct's stream thread has stopped (MPI is finalizing)");
  rt.helper_thread_started();  // before the thread runs: every progress from now on is locked
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (const std::exception& e) {
    return make_error(Errc::internal, "cannot start duct's stream thread: %s", e.what());
  }
  started_ = true;
  rt.on_finalize([this] { stop(); });
  DUCT_INFO(coll, "stream thread started (stream-ordered collectives)");
  return Status::ok();
}

void Worker::fire(StreamOp* op) {
  if (op->graph) word_store(op->flag, 0);  // this replay's completion is still to come
  std::lock_guard<std::mutex> lock(m_);
  if (stop_) {  // after MPI_Finalize: never leave a stream waiting
    if (op->graph) word_store(op->flag, 1);
    return;
  }
  fired_.push_back(op);
  queued_.store(1, std::memory_order_release);
  cv_.notify_one();
}

void Worker::doom(StreamOp* op) {
  std::lock_guard<std::mutex> lock(m_);
  doomed_.push_back(op);
  queued_.store(1, std::memory_order_release);
  cv_.notify_one();
}

void Worker::finish(StreamOp* op, const Status& st) {
  StreamSide& s = *op->side;
  if (!st) s.record(st, op->args.call);
  if (op->graph) {
    word_store(op->flag, 1);
  } else {
    s.early.insert(op->value);
    while (!s.early.empty() && *s.early.begin() == s.finished + 1) {
      s.early.erase(s.early.begin());
      ++s.finished;
    }
    word_store(s.done, s.finished);
    delete op;
  }
  active_.fetch_sub(1, std::memory_order_acq_rel);
}

void Worker::begin(StreamOp* op) {
  active_.fetch_add(1, std::memory_order_acq_rel);
  StreamSide& s = *op->side;
  if (s.dead.load(std::memory_order_acquire) || !s.ctx) {
    finish(op, make_error(Errc::comm, "its communicator was freed before the graph was replayed"));
    return;
  }
  if (op->device != device_ && !emulated()) {
    Status st = memory::cuda::set_device(op->device);
    if (!st) {
      finish(op, st);
      return;
    }
    device_ = op->device;
  }
  auto* p = new Pending;
  p->call = op->args.call;
  p->comm = s.comm;
  p->on_complete = [this, op](Pending& q) { finish(op, q.result()); };
  Status st = start_collective(*s.ctx, op->args, p);
  if (!st) {
    p->on_complete = nullptr;
    delete p;  // not queued
    finish(op, st);
    return;
  }
  release(p);  // deleted when it completes
}

void Worker::loop() {
  // Its CUDA calls (kernels, copies, IPC mappings, allocations) are never
  // part of an application's capture, and must not fail during one.
  if (!emulated()) (void)memory::cuda::relax_capture_mode();
  unsigned idle = 0;
  std::deque<StreamOp*> batch;
  std::vector<StreamOp*> gone;
  for (;;) {
    if (active_.load(std::memory_order_acquire) == 0 && queued_.load(std::memory_order_acquire) == 0) {
      // Idle: look for the next call for a moment before sleeping. In a
      // loop of calls on one stream the next host function runs a few
      // microseconds after this call's completion released the stream;
      // catching it here saves a futex wake-up per call.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinBeforeSleepUs);
      while (queued_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until) sched_yield();
    }
    {
      std::unique_lock<std::mutex> lock(m_);
      if (fired_.empty() && doomed_.empty() && active_.load(std::memory_order_acquire) == 0)
        cv_.wait(lock, [this] { return stop_ || !fired_.empty() || !doomed_.empty(); });
      if (stop_) return;
      batch.swap(fired_);
      gone.swap(doomed_);
      queued_.store(0, std::memory_order_release);
    }
    if (!batch.empty() || !gone.empty()) {
      Runtime* rt = Runtime::ready();
      if (!rt) return;
      std::lock_guard<std::recursive_mutex> lock(rt->mutex());
      for (StreamOp* op : batch) begin(op);
      for (StreamOp* op : gone) {
        {
          std::lock_guard<std::mutex> l(m_);
          graph_ops_.erase(op);
        }
        FlagPool::instance().put(op->flag, op->flag_dev);
        delete op;
      }
      batch.clear();
      gone.clear();
      idle = 0;
    }
    if (active_.load(std::memory_order_acquire) > 0) {
      // Spin while collectives run; give the core away now and then (the
      // application may be computing on it).
      if (progress_pending() == 0 && ++idle >= 64) {
        sched_yield();
        idle = 0;
      }
    }
  }
}

void Worker::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // MPI_Finalize with stream-ordered collectives not finished is erroneous;
  // release their streams rather than leave the GPU waiting forever.
  std::vector<std::shared_ptr<StreamSide>> live;
  {
    std::lock_guard<std::mutex> lock(m_);
    for (StreamOp* op : graph_ops_) word_store(op->flag, 1);
    for (auto& w : sides_)
      if (auto s = w.lock()) live.push_back(std::move(s));
    sides_.clear();
  }
  // Free the duplicates the sides own, in creation order (the same on every
  // rank: freeing their contexts is collective). MPI still works here: duct
  // tears down at the start of MPI_Finalize.
  for (auto& s : live) {
    if (s->finished < s->issued)
      DUCT_WARN(coll, "MPI_Finalize with %llu stream-ordered collective(s) of communicator cid %u not finished",
                static_cast<unsigned long long>(s->issued - s->finished), s->user_cid);
    word_store(s->done, kReleased);
    s->dead.store(true, std::memory_order_release);
    Context* c = std::exchange(s->ctx, nullptr);
    if (c && !c->queue.empty())
      abandon(*c, make_error(Errc::internal, "MPI_Finalize was called with stream-ordered collectives of "
                                             "communicator cid %u not finished", s->user_cid));
    if (s->comm != MPI_COMM_NULL) PMPI_Comm_free(&s->comm);
  }
}

// The stream side of ctx, created collectively by the first call.
Status side_of(Context& ctx, MPI_Comm comm, Runtime& rt, std::shared_ptr<StreamSide>* out) {
  if (ctx.streams) {
    *out = ctx.streams;
    return Status::ok();
  }
  auto s = std::make_shared<StreamSide>();
  s->user_cid = ctx.cid;
  DUCT_TRY(FlagPool::instance().get(&s->done, &s->done_dev));
  if (!emulated()) DUCT_TRY(memory::cuda::event_create(&s->order_ev));
  int rc = PMPI_Comm_dup(comm, &s->comm);
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Comm_dup").context("creating the communicator's stream side");
  Status st;
  {
    // As Entry::context: setting a context up touches the UCX worker and
    // the runtime's tables, which the stream thread's progress uses too.
    std::unique_lock<std::recursive_mutex> lock(rt.mutex());
    st = rt.context(s->comm, &s->ctx, &lock);
  }
  if (!st) return st.context("creating the communicator's stream side");
  ctx.streams = s;
  Worker::instance().add_side(s);
  *out = std::move(s);
  return Status::ok();
}

}  // namespace

StreamSide::~StreamSide() {
  FlagPool::instance().put(done, done_dev);
  memory::cuda::event_destroy(order_ev);
}

namespace {
// What an emulated stream does with the three stream operations.
Status emulated_call(StreamSide& s, std::unique_ptr<StreamOp> op) {
  op->value = s.issued + 1;
  s.issued = op->value;
  const std::uint64_t v = op->value;
  Worker::instance().fire(op.release());
  const double timeout = config::get().timeout;
  const auto started = std::chrono::steady_clock::now();
  for (unsigned polls = 0; word_load(s.done) < v; ++polls) {
    sched_yield();
    if (timeout > 0 && polls % 1024 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > 2 * timeout + 5)
      return make_error(Errc::timeout, "emulated stream: the collective did not finish (the stream thread is stuck)");
  }
  return Status::ok();
}
}  // namespace

namespace {
// An eager stream-ordered call without DUCT_STREAM_ASYNC: the collective
// runs on the calling thread, on the stream side, as a blocking call (its
// DUCT_CHECK comparison was made by the caller). A failure is also the
// side's, as for a call the stream thread ran.
Status complete_now(StreamSide& s, const CollArgs& a) {
  auto* p = new Pending;
  p->call = a.call;
  p->comm = s.comm;
  Status st = start_collective(*s.ctx, a, p);
  if (!st) {
    delete p;  // not queued
  } else {
    st = wait_pending(p);
    release(p);
  }
  if (!st && !refused_capture(a, st)) s.record(st, a.call);
  return st;
}

// Until the GPU has finished the work on `stream` before this call, under
// DUCT_TIMEOUT (a stream that never gets there is the application's
// deadlock, reported rather than waited out).
Status wait_for_stream(void* stream, const char* call) {
  const double timeout = config::get().timeout;
  const auto started = std::chrono::steady_clock::now();
  for (unsigned polls = 0;; ++polls) {
    bool done = false;
    DUCT_TRY(memory::cuda::stream_query(stream, &done));
    if (done) return Status::ok();
    progress_pending();  // earlier nonblocking calls (and graph replays' collectives) keep moving
    sched_yield();
    if (timeout > 0 && polls % 256 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > timeout)
      return make_error(Errc::timeout, "%s: the GPU did not reach the call on its stream within DUCT_TIMEOUT=%g s "
                                       "(the work enqueued before it has not finished)",
                        call, timeout);
  }
}

// The device of a call captured into a graph: its first device buffer's,
// else the calling thread's current device.
Status capture_device(const CollArgs& a, int* dev) {
  for (const void* p : {static_cast<const void*>(a.recvbuf), a.sendbuf}) {
    memory::PtrInfo info;
    if (p && memory::cuda::query(p, &info) && info.kind == MemKind::device && info.device >= 0) {
      *dev = info.device;
      return Status::ok();
    }
  }
  return memory::cuda::stream_device(nullptr, dev);
}
}  // namespace

Status start_stream(Context& ctx, MPI_Comm comm, const CollArgs& a, void* stream) {
  const bool emulate = emulated();
  if (!emulate && !memory::cuda::available())
    return make_error(Errc::not_supported, "the stream-ordered forms need a CUDA device: %s",
                      memory::cuda::unavailable_reason().c_str());
  if (!emulate && !memory::cuda::stream_memops())
    return make_error(Errc::not_supported,
                      "the stream-ordered forms need CUDA stream memory operations (cuStreamWaitValue64), "
                      "which this driver does not offer");
  Runtime* rt = nullptr;
  DUCT_TRY(Runtime::get(&rt));
  Worker& w = Worker::instance();
  DUCT_TRY(w.ensure_started(*rt));
  if (ctx.size() > 1 && config::get().check) {
    // Compared now, on the user's communicator, in host order (the stream
    // thread makes no MPI call).
    if (!ctx.queue.empty()) DUCT_TRY(drain(ctx));
    DUCT_TRY(check_call(ctx, a));
  }
  std::shared_ptr<StreamSide> s;
  DUCT_TRY(side_of(ctx, comm, *rt, &s));
  if (s->failed.load(std::memory_order_acquire)) return s->first_error();

  const bool async = config::get().stream_async;
  if (emulate) {
    if (!async) return complete_now(*s, a);
    auto op = std::make_unique<StreamOp>();
    op->side = s;
    op->args = a;
    return emulated_call(*s, std::move(op));
  }
  bool capturing = false;
  unsigned long long capture = 0;
  void* graph = nullptr;
  DUCT_TRY(memory::cuda::capture_info(stream, &capturing, &capture, &graph));
  if (capturing && !async) {
    // Captured calls are the device engine's: barriers and kernels on the
    // GPU, nothing on the host at replay (coll/engine.hpp). Without an
    // engine the call is refused before anything is captured: the capture
    // stays valid, and the application can take another path.
    if (!s->ctx->engine || s->ctx->size() < 2)
      return make_error(Errc::not_supported,
                        "capturing stream-ordered collectives into a CUDA graph needs the device engine: a "
                        "communicator of 2 or more ranks on one node whose GPUs reach each other by CUDA IPC "
                        "(this one: %d rank(s), %s)",
                        s->ctx->size(), s->ctx->engine ? "engine" : "no engine");
    if (a.coll == select::Coll::gatherv || a.coll == select::Coll::scatterv || a.coll == select::Coll::alltoallv)
      return make_error(Errc::not_supported,
                        "%s: capturing it into a CUDA graph needs the device engine, which has no gatherv, scatterv "
                        "or alltoallv (their layouts are known at one rank only)",
                        a.call);
    if (s->any && stream != s->last_stream && capture == s->last_capture)
      DUCT_TRY(memory::cuda::stream_wait_event(stream, s->order_ev));
    CollArgs b = a;
    b.stream = stream;
    b.graph = graph;
    // Entry::enqueue has relaxed this thread's capture mode (opening the
    // peers' buffers is allowed while capturing). A refusal leaves the
    // communicator usable (refused_capture).
    DUCT_TRY(complete_now(*s, b));
    DUCT_TRY(memory::cuda::event_record(s->order_ev, stream));
    s->last_stream = stream;
    s->last_capture = capture;
    s->any = true;
    return Status::ok();
  }
  if (!capturing && !async) {
    // Eager call, completed here: after the communicator's previous eager
    // stream-ordered call if that went to another stream (its event; a
    // record made under capture is a node of its graph, no eager record),
    // and after the work already on this stream.
    if (s->any && stream != s->last_stream && s->last_capture == 0)
      DUCT_TRY(memory::cuda::stream_wait_event(stream, s->order_ev));
    if (config::get().stream_engine && s->ctx->size() > 1) {
      // The engine form: the host phases run now, the GPU work goes on
      // the stream (coll/engine.hpp); other algorithms wait for the stream.
      CollArgs b = a;
      b.stream = stream;
      DUCT_TRY(complete_now(*s, b));
    } else {
      DUCT_TRY(wait_for_stream(stream, a.call));
      DUCT_TRY(complete_now(*s, a));
    }
    DUCT_TRY(memory::cuda::event_record(s->order_ev, stream));
    s->last_stream = stream;
    s->last_capture = 0;
    s->any = true;
    return Status::ok();
  }
  // The device whose work the stream thread issues. A capturing stream
  // refuses cudaStreamGetDevice (cudaErrorStreamCaptureUnsupported, which
  // also invalidates the capture: seen on an H200, CUDA 13): under capture
  // it is the device of the buffers, else the calling thread's device.
  int dev = 0;
  if (capturing)
    DUCT_TRY(capture_device(a, &dev));
  else
    DUCT_TRY(memory::cuda::stream_device(stream, &dev));
  if (s->any && stream != s->last_stream && capture == s->last_capture) {
    // Not before the communicator's previous stream-ordered call, on
    // another stream: order_ev was recorded after it (that stream may be
    // gone by now; the record stays valid).
    DUCT_TRY(memory::cuda::stream_wait_event(stream, s->order_ev));
  }

  auto op = std::make_unique<StreamOp>();
  op->side = s;
  op->args = a;
  op->device = dev;
  op->graph = capturing;
  if (capturing) {
    DUCT_TRY(FlagPool::instance().get(&op->flag, &op->flag_dev));
    StreamOp* raw = op.release();
    w.track(raw);
    // From here the graph owns it (freed with the graph, or now if this fails).
    DUCT_TRY(memory::cuda::graph_keep(graph, raw, &destroy_cb));
    DUCT_TRY(memory::cuda::launch_host_func(stream, &fire_cb, raw));
    DUCT_TRY(memory::cuda::wait_value64(stream, raw->flag_dev, 1));
  } else {
    op->value = s->issued + 1;
    DUCT_TRY(memory::cuda::launch_host_func(stream, &fire_cb, op.get()));
    StreamOp* raw = op.release();  // the stream thread has it (or will)
    s->issued = raw->value;
    DUCT_TRY(memory::cuda::wait_value64(stream, s->done_dev, s->issued));
  }
  // Where the next call on another stream must start from.
  DUCT_TRY(memory::cuda::event_record(s->order_ev, stream));
  s->last_stream = stream;
  s->last_capture = capture;
  s->any = true;
  return Status::ok();
}

void stream_detach(Context& ctx) noexcept {
  std::shared_ptr<StreamSide> s = std::move(ctx.streams);
  if (!s || s->dead.load(std::memory_order_acquire)) return;
  Runtime* rt = Runtime::ready();
  // Wait (progressing) until the GPU has reached and finished every eager
  // call: MPI lets the operations of a freed communicator complete.
  const double timeout = config::get().timeout;
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    std::uint64_t finished;
    {
      std::unique_lock<std::recursive_mutex> lock;
      if (rt) lock = std::unique_lock<std::recursive_mutex>(rt->mutex());
      finished = s->finished;
    }
    if (finished >= s->issued) break;
    progress_pending();
    sched_yield();
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (timeout > 0 && waited >= timeout) {
      DUCT_WARN(coll, "freeing communicator cid %u: %llu stream-ordered collective(s) not finished after %.1f s "
                "(DUCT_TIMEOUT=%g); their streams are released",
                ctx.cid, static_cast<unsigned long long>(s->issued - finished), waited, timeout);
      word_store(s->done, kReleased);
      break;
    }
  }
  s->dead.store(true, std::memory_order_release);
  {
    std::unique_lock<std::recursive_mutex> lock;
    if (rt) lock = std::unique_lock<std::recursive_mutex>(rt->mutex());
    s->ctx = nullptr;
  }
  if (!Runtime::finalized() && s->comm != MPI_COMM_NULL) PMPI_Comm_free(&s->comm);
}

namespace {
// This layer's part in a context's end (LayerHooks, coll/context.hpp).
const bool g_hooked = (layer_hooks().end_streams = &stream_detach, true);
}  // namespace

}  // namespace duct::coll
