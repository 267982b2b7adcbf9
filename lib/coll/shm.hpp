// duct coll: a node-local shared-memory area for small collectives.
//
// When every rank of a communicator is on one node, each rank owns a region
// of a segment allocated with MPI_Win_allocate_shared (the MPI library
// provides and maps the memory): two slots, double-buffered by the parity of
// the collective's sequence number. A slot starts on a cache line with its
// "ready" sequence number, and the data follows right after it, so a vector
// of up to 56 bytes travels with its flag in one cache line. Ranks write
// their slot, publish the sequence number with a release store, and read the
// others' slots after an acquire load.
//
// Each region also starts with a "done" line: the sequence number of the
// last shared-memory collective this rank finished (all its reads of other
// ranks' slots complete). A rank may write its slot of sequence k (parity
// k & 1) once every rank is done with k-2, the slot's previous use. Where
// every rank publishes and waits for every rank (allreduce, allgather,
// barrier, the root of reduce and gather), a rank that saw every rank's
// sequence k-1 knows they had all returned from k-2, so it needs no look at
// the done lines (synced()). The rooted algorithms need no such exchange:
// the root of bcast or scatter writes and returns, a non-root of reduce or
// gather writes and returns, as eager messages would, and a rank runs at most
// two collectives ahead of the slowest reader.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/comm.hpp"
#include "core/status.hpp"

namespace duct::coll {

class ShmArea {
 public:
  // Data bytes per slot: the largest vector the shared-memory algorithms take.
  static constexpr std::size_t kSlotBytes = 16u << 10;

  // Collective over `comm` (all ranks on one node). On failure every rank
  // gets an error and no area (the algorithms are then not selected).
  // MPI_Win_allocate_shared has no nonblocking form (every rank has arrived
  // by then); the agreement and the barrier after it complete through `wait`.
  static Status create(MPI_Comm comm, int rank, int size, std::unique_ptr<ShmArea>* out, const MpiWait& wait);
  // Collective: frees the window.
  ~ShmArea();

  // Rank r's ready sequence number (access it through std::atomic_ref) and
  // data of slot `parity`.
  std::uint64_t* ready(int r, int parity) const;
  void* slot(int r, int parity) const;
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
  // This rank finished sequence k: publish it (release).
  void finish(int me, std::uint64_t k) const;
  // This rank saw every rank publish sequence k.
  void saw_all(std::uint64_t k) noexcept { synced_ = k; }
  // Whether this rank may write its slot of sequence k now without looking:
  // it saw every rank publish k-1 (or k < 3: the slots are unused).
  bool synced(std::uint64_t k) const noexcept { return k < 3 || synced_ + 1 >= k; }
  int size() const noexcept { return size_; }
  // The next sequence number of a shared-memory collective (starts at 1; equal
  // on every rank because collectives on a communicator are ordered).
  std::uint64_t next_seq() noexcept { return ++seq_; }

 private:
  ShmArea() = default;
  MPI_Win win_ = MPI_WIN_NULL;
  int size_ = 0;
  std::vector<char*> base_;  // each rank's region, mapped here
  std::uint64_t seq_ = 0;
  std::uint64_t synced_ = 0;
};

}  // namespace duct::coll
