// duct coll: a node-local shared-memory area for small collectives.
//
// When every rank of a communicator is on one node, each rank owns a region
// of a POSIX shared-memory segment that rank 0 creates and every rank maps
// (ShmArea::create): kSlots slots, used in turn by the
// collective's sequence number k (slot k % kSlots; a call of several rounds,
// or of more than 4 KiB in a slot, uses the first kPipeSlots of them, slot
// k % kPipeSlots: piped()). A slot starts on a cache line with its
// "ready" sequence number, and the data follows right after it, so a vector
// of up to 56 bytes travels with its flag in one cache line (a call of
// more than 4 KiB per slot: from the next line, aligned; slot()). Ranks write
// their slot, publish the sequence number with a release store, and read the
// others' slots after an acquire load.
//
// Each region also starts with a "done" line: the sequence number of the
// last shared-memory collective this rank finished (all its reads of other
// ranks' slots complete). A rank may write its slot of sequence k once every
// rank is done with the slot's previous use (claim_need: k - kSlots, or
// k - kPipeSlots in a piped call). Where every rank
// publishes and waits for every rank (allreduce, allgather, barrier, the
// root of reduce and gather), a rank that saw every rank's sequence j knows
// they had all returned from j-1; a look at the done lines tells the same of
// their values. Either way the rank remembers up to which sequence number it
// may write without looking (writable()), so a look costs a cache-line
// transfer per peer only once every few calls. The rooted algorithms need no
// exchange: the root of bcast or scatter writes and returns, a non-root of
// reduce or gather writes and returns, as eager messages would, and a rank
// runs at most kSlots collectives ahead of the slowest reader (Open MPI's
// shared-memory "fast boxes" give eager sends the same kind of slack).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/comm.hpp"
#include "core/status.hpp"

namespace duct::coll {

// A sequence word other processes (or the GPU) write: acquire load and
// release store through std::atomic_ref.
inline std::uint64_t word_load(const std::uint64_t* w) {
  return std::atomic_ref<const std::uint64_t>(*w).load(std::memory_order_acquire);
}
inline void word_store(std::uint64_t* w, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*w).store(v, std::memory_order_release);
}

class ShmArea {
 public:
  // Data bytes per slot: the largest vector the shared-memory algorithms
  // take. Up to 64 KiB, one copy into shared memory and one out beat a
  // message on one node (8 us for a 32 KiB cma message against 2 us through
  // a slot on 2 ranks here); pages of a slot are backed only as far as
  // messages reach, so small messages cost no memory beyond the first page.
  static constexpr std::size_t kSlotBytes = 64u << 10;
  // Slots per rank: how many shared-memory collectives of one round (a
  // slot's worth or less) a rank may run ahead of the slowest reader. 8
  // until 2026-11-29: at 4 ranks on the build VM's 2 cores, a root of small
  // bcasts, reduces, gathers or scatters that stopped every 8 calls for a
  // reader's time slice took 0.7-1.1 us a call against 0.3-0.6 with 32
  // (Open MPI's eager FIFO lets its root run far ahead too;
  // docs/benchmarks/2026-11-29-shm-depth.md). A rank's slots take 2 MiB of
  // the segment (Open MPI's vader: 4 MiB a process), backed only as far as
  // calls reach.
  static constexpr int kSlots = 32;
  // Slots of a piped call: one of several rounds (a vector larger than a
  // slot, in slot-sized pieces) or that puts more than kDeepBytes in a slot.
  // They run at most kPipeSlots rounds ahead of the slowest rank, and their
  // slots' pages stay in the caches: with all 32 slots, a 2-rank reduce
  // of 64 KiB took 1.4x longer (4 MiB of two ranks' slots, past the build
  // VM's 2 MiB of L2 per core) and one of 4 ranks 1.4-1.9x.
  static constexpr int kPipeSlots = 8;
  static constexpr std::size_t kDeepBytes = 4096;
  static_assert(kPipeSlots <= kSlots);
  // Whether a call of `rounds` rounds that puts at most `used` bytes in a
  // slot is piped (equal on every rank: both are).
  static constexpr bool piped(std::size_t rounds, std::size_t used) noexcept {
    return rounds > 1 || used > kDeepBytes;
  }
  // The slot of sequence k, in a piped call or not.
  static int slot_of(std::uint64_t k, bool piped = false) noexcept {
    return static_cast<int>(k % (piped ? kPipeSlots : kSlots));
  }
  // The sequence number every rank must be done with before this rank
  // writes its slot of sequence k: the slot's previous use, or later. In a
  // piped call, k - kPipeSlots (its slot's earlier users, of either kind,
  // are sequences congruent to k mod kPipeSlots). Otherwise k - kSlots, and
  // for a slot below kPipeSlots also the last sequence of the latest piped
  // call (which may have used it since).
  std::uint64_t claim_need(std::uint64_t k, bool piped) const noexcept {
    const std::uint64_t lag = piped ? kPipeSlots : kSlots;
    std::uint64_t need = k > lag ? k - lag : 0;
    if (!piped && slot_of(k) < kPipeSlots && last_piped_ > need) need = last_piped_;
    return need;
  }
  // A slot's ready word is the sequence number k and the call's tag
  // (shm_tag: which collective, its root): word(k, tag). A rank waiting for
  // k finds an older word (not yet), word(k, tag), or a later call's word
  // (a rank that publishes without writing data, the barrier, does not
  // claim the slot first, so its word may pass a reader of k's data; the
  // data is k's). Sequence k with another tag means the ranks are in
  // different calls (different collectives or roots, or one returned early
  // with an error), which the wait reports instead of reading the slot.
  static constexpr int kTagBits = 12;
  static std::uint64_t word(std::uint64_t k, std::uint32_t tag) noexcept { return k << kTagBits | tag; }
  static std::uint64_t seq_of(std::uint64_t word) noexcept { return word >> kTagBits; }
  static std::uint32_t tag_of(std::uint64_t word) noexcept { return static_cast<std::uint32_t>(word & ((1u << kTagBits) - 1)); }

  // Collective over `comm` (all ranks on one node): rank 0 creates the
  // segment (shm_open, a check that its file system has room for all of
  // it, ftruncate) and broadcasts its name, every rank maps it and zeroes
  // its flags (pages are backed where first touched: a rank's slots by the
  // rank that writes them), then rank 0 removes the name. The exchanges are nonblocking
  // collectives on `comm` completed through `wait`; no communicator is
  // created. (It was MPI_Win_allocate_shared until 2026-11-26: Open MPI
  // duplicates the communicator inside it, and a communicator created
  // inside a collective can deadlock threads that create communicators, as
  // the setup's own duplicate did: coll/context.cpp.) On failure every rank
  // gets an error and no area (the algorithms are then not selected).
  static Status create(MPI_Comm comm, int rank, int size, std::unique_ptr<ShmArea>* out, const MpiWait& wait);
  // Unmaps the segment (local: each rank's mapping is its own).
  ~ShmArea();

  // Rank r's ready word (word(k, tag); access it through std::atomic_ref)
  // and data of slot `idx` (slot_of(k)) in a call that puts at most `used`
  // bytes in a slot (a number equal on every rank of the call). Where the
  // data starts depends on it (data_at): on the ready word's line, 8 bytes
  // past it, when `used` is at most kAlignedFrom, so that a small vector
  // travels with its flag in one line; else on the next line, 64-byte
  // aligned as the callers' buffers usually are. glibc copies blocks of
  // kilobytes with `rep movsb`, which is slow when source and destination
  // are not equally aligned: a 64 KiB memcpy in cache took 0.78 us to an
  // address 8 bytes past a line against 0.61 us to a line's start on the
  // build VM (2026-11-28), and the 2-rank shm allgather of 4 MiB went from
  // 250 to 210 us (docs/benchmarks/2026-11-28-led-shm.md).
  static constexpr std::size_t kAlignedFrom = 4096;
  static constexpr std::size_t data_at(std::size_t used) noexcept { return used > kAlignedFrom ? 64 : 8; }
  std::uint64_t* ready(int r, int idx) const;
  void* slot(int r, int idx, std::size_t used) const;
  // Rank r's done sequence number (std::atomic_ref).
  std::uint64_t* done(int r) const;
  // The device engine's part of rank r's region (coll/engine.hpp): its
  // phase word on a cache line of its own, its done word (the number of the
  // last engine call whose work it finished, written by the GPU) on
  // another, then kEngineBytes of descriptor.
  static constexpr std::size_t kEngineBytes = 512;
  std::uint64_t* engine_word(int r) const;
  std::uint64_t* engine_done(int r) const;
  void* engine_desc(int r) const;
  // Rank r's words of the collectives captured into CUDA graphs
  // (reduce::Barrier): [0] arrive and [1] depart counters, [2] failed (the
  // peer a barrier timed out on, plus one), on one line of the descriptor's
  // space after the descriptor.
  static constexpr std::size_t kEngineGraphAt = 448;
  std::uint64_t* engine_graph(int r) const;
  // The pages that hold rank r's engine words (to register with CUDA; each
  // rank's region is on pages of its own).
  void engine_pages(int r, void** start, std::size_t* bytes) const;
  // This rank finished sequence k: publish it (release).
  void finish(int me, std::uint64_t k) const;
  // Ask now for the lines of slot k+1 of the ranks this call read from that
  // it read in their slots (data bytes [lo, hi), and the ready word's
  // line; a range of more than kPrefetchLines lines, only its first), so
  // that the next small call finds
  // what its peers wrote meanwhile in this core's cache instead of missing
  // on it then. A call is too long for the
  // processor to overlap one call's miss with the next's, and that miss is
  // a cache-to-cache transfer: about 0.03 us between near cores and 0.25 us
  // between far ones on the build VM (bcast and reduce of 8 B on 2 ranks
  // went from 0.26-0.29 to 0.15-0.16 us there while its cores sat far
  // apart, docs/benchmarks/2026-11-24-shm-phases.md). A line a peer has not
  // written yet costs the same transfer when it writes, as without.
  // The first two lines (120 bytes of data) were the rule until
  // 2026-11-25: a 2-rank gather of 128-byte blocks, three lines, took
  // 0.27-0.28 against 0.15 us for 64-byte blocks while the cores sat far
  // apart (Open MPI: 0.16); now 0.17. Lines the call did not read are left
  // alone (a scatter's reader that took the root's lines too slowed the
  // root, which writes them for the next call: 512 B, 0.22 -> 0.29 us), and
  // so are long ranges (scatter of 512-byte blocks: 0.22-0.24 -> 0.29 us
  // with 8 of its 9 lines; likely the reader's prefetch meets the root
  // filling the next slot).
  // `from`: the rank this call read from (-1: every rank).
  static constexpr std::size_t kPrefetchLines = 6;
  // `used`: as for slot(); `more`: k + 1 is another round of this call (a
  // piped call's slot).
  void prefetch_next(int from, int me, std::uint64_t k, std::size_t used, std::size_t lo, std::size_t hi,
                     bool more = false) const {
    const int p = slot_of(k + 1, more);
    const std::size_t first = (data_at(used) + lo) / 64;
    std::size_t end = std::max(first + 1, (data_at(used) + hi + 63) / 64);
    if (end - first > kPrefetchLines) end = first + 1;
    auto lines_of = [&](int q) {
      const char* line = reinterpret_cast<const char*>(ready(q, p));
      if (first > 0) __builtin_prefetch(line, 0, 3);
      for (std::size_t i = first; i < end; ++i) __builtin_prefetch(line + 64 * i, 0, 3);
    };
    if (from >= 0) return lines_of(from);
    for (int q = 0; q < size_; ++q)
      if (q != me) lines_of(q);
  }
  // Every rank is done with sequence k.
  void every_rank_done(std::uint64_t k) noexcept {
    if (k > all_done_) all_done_ = k;
  }
  // Whether every rank is known to be done with sequence `need`
  // (claim_need), so that this rank may write without looking.
  bool writable(std::uint64_t need) const noexcept { return need <= all_done_; }
  int size() const noexcept { return size_; }
  // Cross-memory attach: whether every rank of the area may read every
  // other's memory with process_vm_readv(2) (create() tried it from every
  // rank to every other and the ranks agreed; Yama's ptrace_scope, seccomp
  // or ranks in different PID namespaces forbid it), and rank r's process id
  // for it. The single-copy algorithms (coll/cma.hpp) need it.
  bool cma() const noexcept { return cma_; }
  long pid(int r) const noexcept { return pids_[static_cast<std::size_t>(r)]; }
  // The next sequence number of a shared-memory collective (starts at 1; equal
  // on every rank because collectives on a communicator are ordered).
  std::uint64_t next_seq() noexcept { return next_seqs(1, false); }
  // `count` consecutive sequence numbers for one call's rounds, of a piped
  // call or not: the first.
  std::uint64_t next_seqs(std::size_t count, bool piped) noexcept {
    const std::uint64_t k = seq_ + 1;
    seq_ += count;
    if (piped) last_piped_ = seq_;
    return k;
  }

 private:
  ShmArea() = default;
  char* map_ = nullptr;  // the whole segment, mapped here
  std::size_t map_bytes_ = 0;
  int size_ = 0;
  std::vector<char*> base_;  // each rank's region, mapped here
  bool cma_ = false;
  std::vector<long> pids_;
  std::uint64_t probe_ = 0;  // what the other ranks read at create() to try process_vm_readv
  std::uint64_t seq_ = 0;
  std::uint64_t all_done_ = 0;    // every rank is known to be done with this sequence number
  std::uint64_t last_piped_ = 0;  // the last sequence number of the latest piped call
};

}  // namespace duct::coll
