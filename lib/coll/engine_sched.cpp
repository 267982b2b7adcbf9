// The device engine's schedules: a collective run on a context's engine
// (engine.hpp has the protocol and the kernels), and the wait for the GPU
// to reach a stream-ordered call. The engine object is in engine.cpp.
#include "coll/engine_sched.hpp"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "coll/context.hpp"
#include "coll/shm.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "reduce/reduce.hpp"

namespace duct::coll {

namespace {

// Phase word of a rank: call number * 8 + phase. Words only grow.
enum Phase : std::uint64_t {
  kDeclined = 1,    // arrived at call k, not taking the engine
  kArrived = 2,     // arrived, eligible: descriptor written
  kMapped = 3,      // opened every peer buffer it needs
  kCannotMap = 4,   // could not: every rank falls back
  kDone = 5,        // its share of the work is complete
  kFailed = 6,      // its kernel failed (the call fails on every rank)
};
constexpr std::uint64_t word(std::uint64_t k, Phase p) { return k * 8 + p; }
const char* phase_name(std::uint64_t p) {
  static const char* names[] = {"none", "declined", "arrived", "mapped", "cannot map", "done", "failed", "?"};
  return names[p & 7];
}

// One rank's buffer as its peers need it.
struct EngineBuf {
  memory::IpcHandle handle;
  std::uint64_t base, size, offset;
  unsigned long long id;
  std::uint32_t present;  // 0: not significant here, or no data
  std::uint32_t pad;
};
struct EngineDesc {
  EngineBuf buf[2];  // kSend, kRecv
  // Stream-ordered calls: this rank's interprocess events "in" (its input
  // is ready on its stream) and "done" (its kernel finished on it).
  memory::IpcHandle ev_in, ev_done;
  // Captured calls: this rank's barrier flag page (Engine::own_flags).
  memory::IpcHandle graph_flags;
};
constexpr int kSend = 0, kRecv = 1;
static_assert(sizeof(EngineDesc) <= ShmArea::kEngineGraphAt);


// Wait until every other rank's phase word (or only rank `only`'s) reaches `target`.
class PhaseWait final : public Waitable {
 public:
  PhaseWait(const ShmArea& s, int me, std::uint64_t target, const char* what)
      : s_(s), me_(me), target_(target), what_(what) {}
  void poll(bool* ready) override {
    for (; next_ < s_.size(); ++next_) {
      if (next_ == me_) continue;
      if (word_load(s_.engine_word(next_)) < target_) {
        *ready = false;
        return;
      }
    }
    *ready = true;
  }
  std::string describe() const override {
    const std::uint64_t w = word_load(s_.engine_word(next_));
    return strprintf("rank %d's device engine to reach \"%s\" of engine call %llu (it is at \"%s\" of call %llu; %s)",
                     next_, phase_name(target_), static_cast<unsigned long long>(target_ / 8), phase_name(w),
                     static_cast<unsigned long long>(w / 8), what_);
  }

 private:
  const ShmArea& s_;
  int me_;
  std::uint64_t target_;
  const char* what_;
  int next_ = 0;
};

// The worker waits for its own done word (written by the GPU after the
// kernel); every 4096 polls it asks the stream, so a kernel that failed
// (and will never write the word) is reported.
class DoneWait final : public Waitable {
 public:
  DoneWait(const std::uint64_t* done, std::uint64_t k, void* stream) : done_(done), k_(k), stream_(stream) {}
  void poll(bool* ready) override {
    *ready = word_load(done_) >= k_;
    if (*ready || ++polls_ % 4096 != 0) return;
    bool finished = false;
    status = memory::cuda::stream_query(stream_, &finished);
    *ready = !status || finished;
  }
  std::string describe() const override {
    return strprintf("the device engine's kernel of engine call %llu to finish on the GPU (the done word is at %llu)",
                     static_cast<unsigned long long>(k_), static_cast<unsigned long long>(word_load(done_)));
  }

 private:
  const std::uint64_t* done_;
  std::uint64_t k_;
  void* stream_;
  std::uint64_t polls_ = 0;
};

// A rank other than the worker (one GPU) waits for the worker's outcome.
enum class Outcome { pending, done, fallback, failed };
Outcome worker_outcome(const ShmArea& s, std::uint64_t k) {
  const std::uint64_t w = word_load(s.engine_word(0));  // before the done word (see all_at)
  if (word_load(s.engine_done(0)) >= k) return Outcome::done;
  if (w == word(k, kFailed)) return Outcome::failed;
  if (w / 8 > k || w == word(k, kCannotMap)) return Outcome::fallback;
  return Outcome::pending;
}
class OutcomeWait final : public Waitable {
 public:
  OutcomeWait(const ShmArea& s, std::uint64_t k) : s_(s), k_(k) {}
  void poll(bool* ready) override { *ready = (outcome = worker_outcome(s_, k_)) != Outcome::pending; }
  std::string describe() const override {
    const std::uint64_t w = word_load(s_.engine_word(0));
    return strprintf("rank 0's device engine kernel of engine call %llu to finish (rank 0 is at \"%s\" of call %llu; "
                     "its done word is at %llu)",
                     static_cast<unsigned long long>(k_), phase_name(w), static_cast<unsigned long long>(w / 8),
                     static_cast<unsigned long long>(word_load(s_.engine_done(0))));
  }
  Outcome outcome = Outcome::pending;

 private:
  const ShmArea& s_;
  std::uint64_t k_;
};

WaitAwaiter<PhaseWait> wait_phase(const ShmArea& s, int me, std::uint64_t k, Phase p, const char* what) {
  return WaitAwaiter<PhaseWait>{PhaseWait(s, me, word(k, p), what)};
}

// Whether every other rank's word at call k has one of the phases in `ok`
// (a word already past k means that rank left the call without the engine).
// On false, *who is a rank that did not.
// With one worker (rank 0), a word past k also means "took the engine at
// k" when the worker's done word has reached k: the worker's kernel ran, so
// every rank was eligible, and the ranks leave the call without waiting
// for each other. (The phase word is read before the done word: the worker
// writes its next phase only after it saw its done word.)
bool all_at(const ShmArea& s, int me, std::uint64_t k, std::initializer_list<Phase> ok, int* who, bool one_gpu) {
  for (int q = 0; q < s.size(); ++q) {
    if (q == me) continue;
    const std::uint64_t w = word_load(s.engine_word(q));
    if (one_gpu && w / 8 > k && word_load(s.engine_done(0)) >= k) continue;
    bool good = w / 8 == k;
    if (good) {
      good = false;
      for (Phase p : ok) good = good || (w & 7) == p;
    }
    if (!good) {
      *who = q;
      return false;
    }
  }
  return true;
}

void publish(const ShmArea& s, int me, std::uint64_t k, Phase p) {
  word_store(s.engine_word(me), word(k, p));
}

// Bytes of a rank's send and receive buffer in this call (0: not
// significant on that rank, or empty).
void buffer_bytes(const CollArgs& a, int r, int root, int n, std::size_t out[2]) {
  const std::size_t esz = elem_size(a.dt.elem), un = static_cast<std::size_t>(n);
  out[kSend] = out[kRecv] = 0;
  switch (a.coll) {
    case select::Coll::allreduce: out[kSend] = out[kRecv] = a.count * esz; break;
    case select::Coll::reduce:
      out[kSend] = a.count * esz;
      out[kRecv] = r == root ? a.count * esz : 0;
      break;
    case select::Coll::reduce_scatter_block:
      out[kSend] = a.count * esz * un;
      out[kRecv] = a.count * esz;
      break;
    case select::Coll::reduce_scatter:
      out[kSend] = a.recv_layout.total() * esz;
      out[kRecv] = a.recv_layout.len[static_cast<std::size_t>(r)] * esz;
      break;
    case select::Coll::allgather:
      out[kSend] = a.bytes;
      out[kRecv] = a.bytes * un;
      break;
    case select::Coll::allgatherv:
      out[kSend] = a.recv_layout.len[static_cast<std::size_t>(r)];
      out[kRecv] = a.recv_layout.total();
      break;
    case select::Coll::alltoall: out[kSend] = out[kRecv] = a.bytes * un; break;
    case select::Coll::bcast: out[kRecv] = a.bytes; break;
    case select::Coll::gather:
      out[kSend] = a.bytes;
      out[kRecv] = r == root ? a.bytes * un : 0;
      break;
    case select::Coll::scatter:
      out[kSend] = r == root ? a.bytes * un : 0;
      out[kRecv] = a.bytes;
      break;
    default: break;
  }
}

// Fill this rank's descriptor; false (with the reason) when it cannot take
// the engine for this call.
bool describe_buffers(const Engine& e, const CollArgs& a, int me, int n, EngineDesc* d, std::string* why) {
  using select::Coll;
  if (a.in_place && (a.coll == Coll::alltoall || a.coll == Coll::reduce_scatter ||
                     (a.coll == Coll::reduce_scatter_block && !e.one_gpu())))
    return (*why = "in place"), false;
  std::size_t bytes[2];
  buffer_bytes(a, me, a.root, n, bytes);
  const void* ptr[2] = {a.sendbuf, a.recvbuf};
  const MemKind kind[2] = {a.send_kind, a.recv_kind};
  if (a.coll == Coll::bcast) ptr[kRecv] = a.recvbuf ? a.recvbuf : a.sendbuf;
  std::memset(d->buf, 0, sizeof d->buf);  // not the event handles: peers may be reading them
  for (int i = 0; i < 2; ++i) {
    if (bytes[i] == 0) continue;
    if (kind[i] != MemKind::device) return (*why = strprintf("%s is host memory", i ? "recvbuf" : "sendbuf")), false;
    memory::PtrInfo info;
    if (!memory::cuda::query(ptr[i], &info) || info.kind != MemKind::device)
      return (*why = "the buffer is not device memory"), false;
    if (info.buffer_id == 0) return (*why = "the device buffer cannot be exported (e.g. cudaMallocAsync)"), false;
    EngineBuf& b = d->buf[i];
    if (!memory::IpcExports::instance().handle_for(info, &b.handle))
      return (*why = "cudaIpcGetMemHandle failed on the buffer"), false;
    b.base = info.base;
    b.size = info.size;
    b.offset = reinterpret_cast<std::uintptr_t>(ptr[i]) - info.base;
    b.id = info.buffer_id;
    b.present = 1;
  }
  return true;
}

// This rank's view of every rank's buffers: its own pointers, peers' mapped.
struct Views {
  void* p[reduce::kMaxPeers][2] = {};
};

// Releases the mappings the call pinned, and waits for a kernel left
// running when the schedule is abandoned (timeout, error).
struct CallGuard {
  std::vector<memory::IpcKey>* pinned;
  void* stream = nullptr;
  bool launched = false, completed = false;
  ~CallGuard() {
    if (launched && !completed) (void)memory::cuda::stream_sync(stream);
    for (const memory::IpcKey& k : *pinned) memory::IpcCache::instance().release(k);
    pinned->clear();
  }
};

// Open what this rank needs of every peer's buffers.
Status map_peers(Context& ctx, std::vector<memory::IpcKey>* pinned, const CollArgs& a, Views* v) {
  const ShmArea& s = *ctx.shm;
  const int me = ctx.rank();
  const void* own[2] = {a.sendbuf, a.recvbuf};
  if (a.coll == select::Coll::bcast) own[kRecv] = a.recvbuf ? a.recvbuf : a.sendbuf;
  for (int q = 0; q < ctx.size(); ++q) {
    const auto* d = static_cast<const EngineDesc*>(s.engine_desc(q));
    for (int i = 0; i < 2; ++i) {
      if (!d->buf[i].present) continue;
      if (q == me) {
        v->p[q][i] = const_cast<void*>(own[i]);
        continue;
      }
      const EngineBuf& b = d->buf[i];
      memory::IpcKey key{ctx.channels->info(q).proc, b.id, b.base, b.size};
      void* mapped = nullptr;
      Status st = memory::IpcCache::instance().acquire(key, b.handle, &mapped);
      if (!st) return st.context(strprintf("opening rank %d's %s", q, i ? "recvbuf" : "sendbuf"));
      pinned->push_back(key);
      v->p[q][i] = memory::at(mapped, b.offset);
    }
  }
  return Status::ok();
}

// [lo, hi) of worker w's share of `count` elements, cut at 16-byte multiples.
void share(std::size_t count, std::size_t esz, int w, int workers, std::size_t* lo, std::size_t* hi) {
  const std::size_t v = esz < 16 ? 16 / esz : 1;
  std::size_t per = (count + static_cast<std::size_t>(workers) - 1) / static_cast<std::size_t>(workers);
  per = (per + v - 1) / v * v;
  *lo = std::min(count, per * static_cast<std::size_t>(w));
  *hi = std::min(count, *lo + per);
}

// DUCT_ENGINE_BLOCKS: the most thread blocks of one engine launch.
unsigned max_blocks() { return static_cast<unsigned>(config::get().engine_blocks); }

class CopyBatch {
 public:
  CopyBatch(void* stream, const std::uint64_t* skip) : stream_(stream), skip_(skip) { reset(); }
  Status add(const void* src, void* dst, std::size_t bytes) {
    if (bytes == 0 || src == dst) return Status::ok();
    l_.src[l_.n] = src;
    l_.dst[l_.n] = dst;
    l_.bytes[l_.n] = bytes;
    return ++l_.n == reduce::kMaxCopies ? flush() : Status::ok();
  }
  Status flush() {
    if (l_.n == 0) return Status::ok();
    Status st = reduce::device_copies(l_, stream_);
    reset();
    return st;
  }

 private:
  void reset() {
    l_ = reduce::CopyList{};
    l_.max_blocks = max_blocks();
    l_.skip = skip_;
  }
  void* stream_;
  const std::uint64_t* skip_;
  reduce::CopyList l_;
};

// Enqueue this rank's share of the collective on `stream`; with `fence`
// (a small captured allreduce or reduce), in one kernel between the
// barriers.
Status launch(const Engine& e, const CollArgs& a, int me, int n, const Views& v, void* stream,
              const reduce::Barrier* fence = nullptr) {
  using select::Coll;
  const int W = e.workers();
  const int w = W == 1 ? 0 : me;  // my worker index (only called on workers)
  const std::size_t esz = elem_size(a.dt.elem);
  auto S = [&](int q, std::size_t off) -> const void* { return memory::at(static_cast<const void*>(v.p[q][kSend]), off); };
  auto R = [&](int q, std::size_t off) { return memory::at(v.p[q][kRecv], off); };
  // The ranks whose output this worker produces.
  const int first = W == 1 ? 0 : me, last = W == 1 ? n - 1 : me;
  switch (a.coll) {
    case Coll::allreduce:
    case Coll::reduce: {
      std::size_t lo, hi;
      share(a.count, esz, w, W, &lo, &hi);
      reduce::MultiReduce m;
      m.max_blocks = max_blocks();
      if (a.graph) m.skip = e.skip();
      m.nsrc = n;
      m.count = hi - lo;
      for (int q = 0; q < n; ++q) m.src[q] = S(q, lo * esz);
      if (a.coll == Coll::allreduce)
        for (int q = 0; q < n; ++q) m.dst[m.ndst++] = R(q, lo * esz);
      else
        m.dst[m.ndst++] = R(a.root, lo * esz);
      if (fence) return reduce::device_multi_fenced(m, *fence, a.dt.elem, a.op, stream);
      return reduce::device_multi(m, a.dt.elem, a.op, stream);
    }
    case Coll::reduce_scatter_block:
    case Coll::reduce_scatter: {
      // Rank order j = 0, 1, ...: in place (one GPU), job j overwrites rank
      // j's first block only after job 0 has read every rank's first block.
      for (int j = first; j <= last; ++j) {
        const bool block = a.coll == Coll::reduce_scatter_block;
        const std::size_t off = block ? a.count * static_cast<std::size_t>(j) : a.recv_layout.off[static_cast<std::size_t>(j)];
        const std::size_t cnt = block ? a.count : a.recv_layout.len[static_cast<std::size_t>(j)];
        if (cnt == 0) continue;
        reduce::MultiReduce m;
        m.max_blocks = max_blocks();
        if (a.graph) m.skip = e.skip();
        m.nsrc = n;
        m.count = cnt;
        for (int q = 0; q < n; ++q) m.src[q] = S(q, off * esz);
        m.dst[m.ndst++] = R(j, 0);
        DUCT_TRY(reduce::device_multi(m, a.dt.elem, a.op, stream));
      }
      return Status::ok();
    }
    default: break;
  }
  CopyBatch c(stream, a.graph ? e.skip() : nullptr);
  for (int d = first; d <= last; ++d) {
    switch (a.coll) {
      case Coll::allgather:
      case Coll::allgatherv:
        for (int s = 0; s < n; ++s) {
          const std::size_t off = a.coll == Coll::allgather ? a.bytes * static_cast<std::size_t>(s) : a.recv_layout.off[static_cast<std::size_t>(s)];
          const std::size_t len = a.coll == Coll::allgather ? a.bytes : a.recv_layout.len[static_cast<std::size_t>(s)];
          if (len) DUCT_TRY(c.add(S(s, 0), R(d, off), len));
        }
        break;
      case Coll::bcast:
        if (d != a.root) DUCT_TRY(c.add(R(a.root, 0), R(d, 0), a.bytes));
        break;
      case Coll::gather:  // worker d pushes its own block (one GPU: rank 0 moves all)
        DUCT_TRY(c.add(S(d, 0), R(a.root, a.bytes * static_cast<std::size_t>(d)), a.bytes));
        break;
      case Coll::scatter:
        DUCT_TRY(c.add(S(a.root, a.bytes * static_cast<std::size_t>(d)), R(d, 0), a.bytes));
        break;
      case Coll::alltoall:
        for (int s = 0; s < n; ++s)
          DUCT_TRY(c.add(S(s, a.bytes * static_cast<std::size_t>(d)), R(d, a.bytes * static_cast<std::size_t>(s)), a.bytes));
        break;
      default: return make_error(Errc::internal, "the device engine has no %s", select::coll_name(a.coll));
    }
  }
  return c.flush();
}

// The peers' mappings a captured call pinned, held by its graph. A graph
// is destroyed on a thread of CUDA's that may make no CUDA call, so the
// keys wait in a list that the next engine call releases.
struct GraphHold {
  std::vector<memory::IpcKey> keys;
};
std::mutex g_released_mutex;
std::vector<memory::IpcKey> g_released;
std::atomic<bool> g_any_released{false};  // g_released has keys: every engine call looks, without the mutex

void graph_gone(void* p) {
  auto* h = static_cast<GraphHold*>(p);
  {
    std::lock_guard<std::mutex> lock(g_released_mutex);
    g_released.insert(g_released.end(), h->keys.begin(), h->keys.end());
    g_any_released.store(true, std::memory_order_release);
  }
  delete h;
}

void release_graph_keys() {
  if (!g_any_released.load(std::memory_order_acquire)) return;
  std::vector<memory::IpcKey> keys;
  {
    std::lock_guard<std::mutex> lock(g_released_mutex);
    keys.swap(g_released);
    g_any_released.store(false, std::memory_order_relaxed);
  }
  for (const memory::IpcKey& k : keys) memory::IpcCache::instance().graph_release(k);
}

Sched capture_refused(const CollArgs& a, std::string why) {
  co_return make_error(Errc::not_supported,
                       "%s: capturing it into a CUDA graph needs the device engine (device buffers of every rank, one "
                       "node, CUDA IPC between the ranks): %s",
                       a.call, why.c_str());
}

// This worker's part of call k failed: say so; with one GPU wait until the
// other ranks have seen it (they acknowledge with "done": this rank's next
// phase word must not hide the failure from them).
Sched fail_call(const ShmArea& s, int me, std::uint64_t k, bool one_gpu, Status st, const char* what) {
  publish(s, me, k, kFailed);
  if (one_gpu) {
    Status seen = co_await wait_phase(s, me, k, kDone, "telling the other ranks that the kernel failed");
    (void)seen;
  }
  co_return st.context(what);
}

// This rank's part of call k is done: say so; with several GPUs wait for
// every rank's, and fail if any worker failed.
Sched finish_call(const ShmArea& s, int me, std::uint64_t k, bool one_gpu, const char* what) {
  publish(s, me, k, kDone);
  if (one_gpu) co_return Status::ok();
  DUCT_CO_TRY(co_await wait_phase(s, me, k, kDone, what));
  for (int q = 0; q < s.size(); ++q)
    if (word_load(s.engine_word(q)) == word(k, kFailed))
      co_return make_error(Errc::cuda, "the device engine failed on rank %d (see its message)", q);
  co_return Status::ok();
}

// A captured call's part on this rank: barrier, the kernel (workers), barrier;
// a small allreduce or reduce in one kernel of one block.
constexpr std::size_t kFencedBytes = 64u << 10;
Status enqueue_captured(Engine& e, const CollArgs& a, int me, int n, const Views* v, void* stream) {
  const reduce::Barrier b = e.barrier_args();
  if (!v || a.coll == select::Coll::barrier) return reduce::device_barrier(b, 3, stream);
  if ((a.coll == select::Coll::allreduce || a.coll == select::Coll::reduce) &&
      a.count * elem_size(a.dt.elem) <= kFencedBytes)
    return launch(e, a, me, n, *v, stream, &b);
  DUCT_TRY(reduce::device_barrier(b, 1, stream));
  DUCT_TRY(launch(e, a, me, n, *v, stream));
  return reduce::device_barrier(b, 2, stream);
}

}  // namespace

void Engine::decline() noexcept { publish(*shm_, me_, next_call(), kDeclined); }

Sched engine_collective(Context& ctx, const CollArgs& a, std::uint32_t seq, AlgoFn fallback) {
  Engine& e = *ctx.engine;
  const ShmArea& s = *ctx.shm;
  const int me = ctx.rank(), n = ctx.size();
  const std::uint64_t k = e.next_call();
  void* const stream = a.stream;  // stream-ordered: the work goes on the caller's stream
  // The collective's other algorithm, when the engine does not serve the
  // call (in stream order: once the GPU has reached it).
  std::string why;
  auto other = [&]() -> Sched {
    if (a.graph) return capture_refused(a, why.empty() ? std::string("not every rank qualifies") : why);
    return stream ? after_stream(ctx, a, seq, fallback) : fallback(ctx, a, seq);
  };
  if (!e.held_.empty()) e.release_finished(false);
  release_graph_keys();
  // (gatherv, scatterv and alltoallv are refused before capture: start_stream.)
  if (a.graph) DUCT_CO_TRY(e.graph_failure());

  // 1. arrive
  auto* mine = static_cast<EngineDesc*>(s.engine_desc(me));
  bool eligible = describe_buffers(e, a, me, n, mine, &why);
  if (eligible && a.graph) {
    Status st = e.own_flags();
    if (!st) {
      why = st.message();
      eligible = false;
    } else {
      mine->graph_flags = e.flags_handle();
    }
  } else if (eligible && stream) {
    // The input is ready on this rank's stream where "in" is recorded.
    Status st = e.own_events();
    if (st) st = memory::cuda::event_record(e.in_.ev, stream);
    if (!st) {
      why = "interprocess events: " + st.message();
      eligible = false;
    } else {
      mine->ev_in = e.in_.handle;
      mine->ev_done = e.done_.handle;
    }
  }
  if (!eligible) {
    publish(s, me, k, kDeclined);
    if (ctx.first_time(std::string("engine-declined ") + a.call + why))
      DUCT_INFO(coll, "%s: device engine not used (%s on this rank): %s", a.call, why.c_str(), "other algorithm");
    co_return co_await other();
  }
  publish(s, me, k, kArrived);
  DUCT_CO_TRY(co_await wait_phase(s, me, k, kDeclined, "arriving at the call"));
  int who = -1;
  if (!all_at(s, me, k, {kArrived, kMapped, kCannotMap, kDone, kFailed}, &who, e.one_gpu())) {
    if (ctx.first_time(std::string("engine-peer-declined ") + a.call))
      DUCT_INFO(coll, "%s: device engine not used: rank %d's buffers do not qualify (host memory or not exportable)",
                a.call, who);
    co_return co_await other();
  }
  if (a.graph)
    // Every rank has arrived with its flag page's handle.
    for (int q = 0; q < n; ++q)
      if (q != me) DUCT_CO_TRY(e.open_flags(q, static_cast<const EngineDesc*>(s.engine_desc(q))->graph_flags));

  if (!e.worker()) {
    // One GPU: rank 0 does the work; wait for its outcome.
    WaitAwaiter<OutcomeWait> w{OutcomeWait(s, k)};
    DUCT_CO_TRY(co_await w);
    const Outcome o = w.w.outcome;
    if (o == Outcome::fallback) co_return co_await other();
    if (o == Outcome::done && a.graph) {
      // Captured: this rank's inputs are ready at the first barrier, and
      // rank 0's kernel has finished at the second.
      Status st = enqueue_captured(e, a, me, n, nullptr, stream);
      publish(s, me, k, kDone);
      if (!st) co_return st.context("device engine, captured");
      co_return Status::ok();
    }
    if (o == Outcome::done && stream) {
      // Later work on this stream waits for rank 0's kernel.
      const auto* d0 = static_cast<const EngineDesc*>(s.engine_desc(0));
      Status st = e.wait_peer_event(stream, &e.peer_done_, 0, d0->ev_done);
      publish(s, me, k, kDone);
      if (!st) co_return st.context("device engine: waiting for rank 0's kernel on the stream");
      co_return Status::ok();
    }
    publish(s, me, k, kDone);  // an acknowledgement: rank 0 waits for it only when it failed
    if (o == Outcome::failed) co_return make_error(Errc::cuda, "the device engine failed on rank 0 (see its message)");
    co_return Status::ok();
  }

  // 2. map
  CallGuard guard{&e.pinned_};
  Views v;
  Status st = map_peers(ctx, &e.pinned_, a, &v);
  if (!st) {
    DUCT_INFO(coll, "%s: device engine cannot map the peers' buffers (%s): every rank falls back", a.call,
              st.message().c_str());
    for (const memory::IpcKey& key : e.pinned_) memory::IpcCache::instance().release(key);
    e.pinned_.clear();
  }
  publish(s, me, k, st ? kMapped : kCannotMap);
  if (e.one_gpu()) {
    // The other ranks map nothing; they learn the outcome from rank 0's words.
    if (!st) co_return co_await other();
  } else {
    DUCT_CO_TRY(co_await wait_phase(s, me, k, kMapped, "mapping the peers' buffers"));
    if (!st || !all_at(s, me, k, {kMapped, kDone, kFailed}, &who, false)) {
      // Nothing has been written: every rank takes the other algorithm.
      co_return co_await other();
    }
  }

  // 3. work
  if (a.graph) {
    st = enqueue_captured(e, a, me, n, &v, stream);
    if (st) {
      for (const memory::IpcKey& key : e.pinned_) memory::IpcCache::instance().hand_to_graph(key);
      auto* hold = new GraphHold{std::move(e.pinned_)};
      e.pinned_.clear();
      st = memory::cuda::graph_keep(a.graph, hold, &graph_gone);  // on failure graph_gone has run
    }
    if (!st) co_return co_await fail_call(s, me, k, e.one_gpu(), st, "device engine, captured");
    guard.completed = true;
    if (e.one_gpu()) word_store(s.engine_done(me), k);  // before the phase word (see all_at)
    co_return co_await finish_call(s, me, k, e.one_gpu(), "finishing the capture");
  }
  if (stream) {
    // After every peer's input on its stream, the kernel on this rank's
    // stream, then "done" on it; the host publishes at once.
    for (int q = 0; q < n && st; ++q) {
      if (q == me) continue;
      st = e.wait_peer_event(stream, &e.peer_in_, q, static_cast<const EngineDesc*>(s.engine_desc(q))->ev_in);
    }
    if (st) st = launch(e, a, me, n, v, stream);
    if (st) {
      guard.stream = stream;  // on a failure below, the mappings are released after the kernel
      guard.launched = true;
      st = memory::cuda::event_record(e.done_.ev, stream);
    }
    void* held = nullptr;
    if (st) st = memory::cuda::event_create(&held);
    if (st) st = memory::cuda::event_record(held, stream);
    if (!st) {
      memory::cuda::event_destroy(held);
      co_return co_await fail_call(s, me, k, e.one_gpu(), st, "device engine, stream-ordered");
    }
    // The mappings stay pinned until the kernel has finished.
    e.held_.push_back(Engine::Held{held, std::move(e.pinned_)});
    e.pinned_.clear();
    guard.completed = true;
    if (e.one_gpu()) word_store(s.engine_done(me), k);  // before the phase word (see all_at)
    publish(s, me, k, kDone);
    if (e.one_gpu()) co_return Status::ok();
    // Several GPUs: later work on this stream also waits for every other
    // worker's kernel (they write into this rank's buffers).
    DUCT_CO_TRY(co_await wait_phase(s, me, k, kDone, "finishing the call"));
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      if (word_load(s.engine_word(q)) == word(k, kFailed))
        co_return make_error(Errc::cuda, "the device engine failed on rank %d (see its message)", q);
      const auto* dq = static_cast<const EngineDesc*>(s.engine_desc(q));
      DUCT_CO_TRY(e.wait_peer_event(stream, &e.peer_done_, q, dq->ev_done));
    }
    co_return Status::ok();
  }
  DUCT_CO_TRY(memory::cuda::stream(&guard.stream));
  st = launch(e, a, me, n, v, guard.stream);
  if (st) guard.launched = true;
  if (st && e.done_dev_) {
    st = memory::cuda::write_value64(guard.stream, e.done_dev_, k);
    if (st) {
      WaitAwaiter<DoneWait> w{DoneWait(s.engine_done(me), k, guard.stream)};
      st = co_await w;
    }
  } else if (st) {
    memory::Fence fence;
    st = fence.record(guard.stream);
    if (st) st = co_await wait(fence);
    if (st) word_store(s.engine_done(me), k);
  }
  guard.completed = st.is_ok();
  if (!st) co_return co_await fail_call(s, me, k, e.one_gpu(), st, "device engine");

  // 4. done
  co_return co_await finish_call(s, me, k, e.one_gpu(), "finishing the call");
}

Sched after_stream(Context& ctx, const CollArgs& a, std::uint32_t seq, AlgoFn fn) {
  if (a.stream) {
    // A fence at the call's place on the stream: ready once the work before it has run.
    memory::Fence reached;
    DUCT_CO_TRY(reached.record(a.stream));
    DUCT_CO_TRY(co_await WaitAwaiter<WaitFence>{
        WaitFence(reached, "the GPU to reach the stream-ordered call on its stream (the work enqueued before it)")});
  }
  co_return co_await fn(ctx, a, seq);
}

}  // namespace duct::coll
