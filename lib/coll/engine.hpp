// duct coll: the device engine (one node, device buffers).
//
// A device collective built as a host schedule over channels (a header, an
// IPC copy, a reduction kernel and a host wait per segment) costs a GPU
// context switch per operation when several ranks share a GPU, and wastes
// NVLink on multi-GPU nodes (measured on an H100: as slow as staging through
// host memory). The engine instead makes every rank's buffer reachable by
// the others and does each collective in one or two kernels that load and
// store peers' memory directly:
//
//   1. arrive: each rank writes a descriptor of its buffers (CUDA IPC handle,
//      allocation, offset) to its part of the node's shared-memory area and
//      publishes its phase word "arrived at call k, eligible or not";
//   2. map: when every rank is eligible, the ranks that do the work open the
//      peers' buffers through the IPC cache and publish "mapped" (or
//      "cannot map": then every rank falls back, before anything is written);
//   3. work: the working ranks launch the collective's kernel on duct's
//      stream, then a stream memory operation that writes the call number
//      into the rank's done word in the shared-memory area (registered with
//      CUDA): the host polls that word (DUCT_TIMEOUT and hang reports work
//      as for any collective; a kernel fault is caught by asking the stream
//      now and then). Without stream memory operations, a CUDA event is
//      polled and the host writes the done word;
//   4. done: with one worker (one GPU), the other ranks return as soon as
//      the worker's done word reaches the call: the worker's kernel was
//      the only thing touching anyone's buffers, and the worker returns
//      without waiting for them. With several workers, every rank publishes
//      "done" and waits for all, so no rank returns while another still
//      reads or writes its buffers.
//
// The fixed cost of a small call is then one kernel launch and its
// completion (measured on an H100: about 9 us without MPS and 10 with it,
// docs/benchmarks/scripts/lat_floor.cu) plus one arrival exchange through
// shared memory.
//
// Who works: when all ranks share one GPU, rank 0 alone runs one kernel for
// the whole collective. Without MPS, kernels of different processes never
// run at once on a GPU, so splitting the work over ranks gains nothing and
// costs a context switch per rank; with MPS one kernel already saturates the
// memory. When ranks are on different GPUs (peer access over NVLink or
// PCIe), every rank reduces or moves its own share (its block of the
// vector, its own receive buffer). The same code serves both: only the
// partition differs.
//
// Kernels, named by their phases as NCCL's symmetric kernels are:
//   allreduce             RSxLD_AGxST: load a block from every rank's input,
//                         fold in rank order, store to every rank's output
//                         (pN bytes read and pN written, the minimum)
//   reduce                RSxLD_ST: the same, stored to the root only
//   reduce_scatter(_block) RSxLD: rank j's block from every input into j's output
//   allgather(v), bcast, gather, scatter, alltoall: copies between ranks'
//                         buffers in one launch (a copy list)
// Reduction order is rank order 0..n-1 for every element: the same bits on
// every rank and every run.
//
// Eligibility is decided per call without an extra round trip: a rank whose
// buffers are host memory, memory that cannot be exported (cudaMallocAsync
// pools), or on another device than its current one, publishes "arrived,
// not eligible" and goes straight to the collective's other algorithm
// without waiting; a rank that is eligible sees that word (or that rank's
// word already past call k, which also means it did not take the engine) and
// takes the same algorithm. Non-power-of-two and uneven counts need nothing
// special; in-place alltoall and in-place reduce_scatter (and in-place
// reduce_scatter_block on several GPUs) are not eligible. alltoallv, gatherv
// and scatterv keep the channel algorithms (their layouts are known at one
// rank only).
//
// Stream-ordered calls (CollArgs::stream, DUCT_STREAM_ENGINE=1): the same
// phases run on the host when the call is made, and the work goes on the
// caller's stream with no host step after the call (design.md: "the
// stream-ordered calls are the same enqueue without [the synchronize]"):
//   - every rank records its interprocess event "in" on its stream before
//     it arrives (its input is ready there); its events' handles travel in
//     its descriptor;
//   - a working rank waits on its stream for every peer's "in"
//     (cudaStreamWaitEvent), enqueues the kernel, records its own "done",
//     and publishes "done" at once (with one GPU, rank 0 also writes its
//     done word from the host);
//   - every other rank waits on its stream for the workers' "done".
// An event is recorded again only after every rank that waits for it has
// enqueued its wait: a rank's next arrival needs the call's "done" from
// every worker, and a worker's next record needs every rank's next
// arrival. The mappings a call pinned stay pinned until a plain event
// after its kernel has completed (checked at the next call, and waited
// for when the engine goes). When the engine does not serve the call,
// the other algorithm runs after the GPU has reached the call.
//
// Captured calls (CollArgs::graph: a stream-ordered call made while its
// stream is captured into a CUDA graph): the host phases (arrive, map) run
// at capture, on every rank (every rank captures the same collectives in
// the same order, as MPI asks of collectives); the graph gets, on each
// rank's stream, a device barrier (reduce::Barrier over every rank's
// "arrive" counter: every input is ready), the kernel (workers only), and
// a second barrier ("depart": every worker has finished reading and
// writing the ranks' buffers). A replay needs no host step. The peers'
// mappings stay pinned until the graph is destroyed; the buffers must
// stay allocated, and the graph must be destroyed before the communicator
// is freed (as NCCL asks of its communicators). A barrier that waits longer
// than DUCT_TIMEOUT gives up: the kernel after it does nothing, the
// rank's failed word names the missing rank, and the next duct call on
// the communicator returns the timeout. Without MPS the ranks' kernels
// take turns on a shared GPU, so a barrier waits for the other process's
// time slice (milliseconds per replay); with MPS they run at once.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "memory/ipc_cache.hpp"
#include "reduce/reduce.hpp"

namespace duct::channel {
class ChannelSet;
}

namespace duct::coll {

class Context;
class Sched;
class ShmArea;
struct CollArgs;

class Engine {
 public:
  // Whether a communicator whose context has the node's shared-memory area
  // `shm` (null: none) and the channels `ch` to its `size` ranks (this one
  // `rank`) can have an engine; the answer is the same on every rank.
  static bool possible(const ShmArea* shm, const channel::ChannelSet& ch, int rank, int size, std::string* why);
  Engine(const ShmArea* shm, const channel::ChannelSet& ch, int rank, int size);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // 1: rank 0 does all the work (ranks share one GPU); n: every rank works on its share.
  int workers() const noexcept { return workers_; }
  bool one_gpu() const noexcept { return workers_ == 1; }
  // Whether this rank runs kernels (with one GPU, rank 0 only).
  bool worker() const noexcept { return workers_ > 1 || me_ == 0; }
  // Number the next call (every collective on the communicator, engine or
  // not, on every rank) and return it.
  std::uint64_t next_call() noexcept { return ++calls_; }
  // This rank takes another algorithm for the next call (host buffers, or
  // the rules chose another): number the call and tell the others, without
  // waiting. Every collective on an engine communicator goes through either
  // this or engine_collective, on every rank.
  void decline() noexcept;

  // Captured calls: whether the barrier words are usable here (every
  // rank's engine words registered with CUDA, a skip word allocated), and
  // the failure a replay's barrier recorded (ok: none).
  // own_flags: this rank's barrier flag page (device memory, exported by
  // CUDA IPC) and its failed word registered, before it arrives at its
  // first captured call; open_flags: peer q's page, from the handle in its
  // descriptor, once it has arrived.
  Status own_flags();
  const memory::IpcHandle& flags_handle() const noexcept { return flags_handle_; }
  Status open_flags(int q, const memory::IpcHandle& h);
  // The failure a replay's barrier recorded (ok: none).
  Status graph_failure() const;
  // The barrier of every rank's pages (after open_flags of each), and the
  // word that tells a captured kernel to do nothing.
  reduce::Barrier barrier_args() const;
  const std::uint64_t* skip() const noexcept { return static_cast<const std::uint64_t*>(flags_) + reduce::kSkipWord; }

  // Stream-ordered calls: an interprocess event, this rank's or a peer's
  // as opened here.
  struct IpcEvent {
    void* ev = nullptr;
    memory::IpcHandle handle{};
  };

 private:
  friend Sched engine_collective(Context&, const CollArgs&, std::uint32_t,
                                 Sched (*)(Context&, const CollArgs&, std::uint32_t));
  // This rank's "in" and "done" events, created at its first
  // stream-ordered call.
  Status own_events();
  // Make `stream` wait for peer q's event with this handle (opened once,
  // again if the handle changed).
  Status wait_peer_event(void* stream, std::vector<IpcEvent>* opened, int q, const memory::IpcHandle& h);
  // Release the mappings of stream-ordered calls whose kernels have
  // finished; `wait`: wait for the others first (under DUCT_TIMEOUT).
  void release_finished(bool wait) noexcept;
  IpcEvent in_, done_;
  std::vector<IpcEvent> peer_in_, peer_done_;
  struct Held {
    void* ev;                          // a plain event recorded after the kernel
    std::vector<memory::IpcKey> keys;  // the mappings it reads and writes
  };
  std::deque<Held> held_;
  // This rank's engine pages of the shared segment (its done and failed
  // words), registered with CUDA once, by the first that needs them;
  // `dev_of` gives a word's device address.
  Status register_pages();
  void* dev_of(void* host) const noexcept;
  void* registered_ = nullptr;
  char* registered_dev_ = nullptr;
  // Captured calls: this rank's failed word as the GPU sees it, its flag
  // page, every rank's flag page as mapped here, and the peers' opened
  // mappings.
  static constexpr std::size_t kFlagBytes = 4096;
  std::uint64_t* failed_dev_ = nullptr;
  void* flags_ = nullptr;
  memory::IpcHandle flags_handle_{};
  std::vector<std::uint64_t*> graph_dev_;
  std::vector<void*> opened_;
  bool flags_tried_ = false;
  Status flags_status_;
  const ShmArea* shm_;
  int me_;
  int workers_ = 1;
  std::uint64_t calls_ = 0;
  std::vector<memory::IpcKey> pinned_;  // mappings held by the call in flight (released by its CallGuard)
  // This rank's done word in the shared-memory area, as the GPU sees it:
  // the GPU writes the call number there after the kernel
  // (cuStreamWriteValue64). Null: the host writes it after a CUDA event.
  void* done_dev_ = nullptr;
};

}  // namespace duct::coll
