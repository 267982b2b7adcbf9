// duct select: a measured choice between two algorithms for one call size.
//
// On one node the shared-memory rounds (shm: copy in, copy out, the slots
// pipelined through the cores' caches) and the single copy (cma:
// process_vm_readv from the peer's buffer) trade places from one machine
// state to the next: on the 2-core build VM the 2-rank allgather at 32 KiB
// took 2.0 us by shm and 4.0 by cma on 2026-12-03, and shm fell to
// 0.53-1.15x Open MPI where cma held 1.09-1.21x on 2026-11-29
// (docs/benchmarks/2026-11-29-sim-regret.md section 4). No fixed rule wins
// on both, so for these rows duct times both forms on the first calls of
// each size and keeps the faster one, as STAR-MPI does for every
// collective (A. Faraj, X. Yuan, D. Lowenthal, "STAR-MPI: self tuned
// adaptive routines for MPI collective operations", ICS 2006).
//
// The protocol, the same on every rank so that every rank runs the same
// algorithm in every call (MPI orders a communicator's blocking
// collectives alike on all ranks):
//   - blocking call k (k = 0, 1, ... of this size) runs algo[k % 2] while
//     k < kCalls, and the rank records the call's time; calls that are not
//     timed (nonblocking, stream-ordered) run algo[0] and are not counted;
//   - after call kCalls - 1 the ranks take, per algorithm, the largest
//     over ranks of each rank's best time (one MPI_Allreduce, MAX), and
//     keep algo[1] if it is below kMargin of algo[0], else algo[0];
//   - from then on every call of the size runs the kept algorithm.
// The best (not the mean) of each rank's calls leaves out the first use's
// costs (pages touched first) and the waits for a late peer.
#pragma once

#include <algorithm>
#include <limits>

namespace duct::select {

struct Trial {
  static constexpr int kCalls = 6;          // 3 calls per algorithm, alternating
  static constexpr double kMargin = 0.97;   // algo[1] must be 3% faster to replace the rule's
  int algo[2] = {-1, -1};                   // [0] the rule's choice, [1] the other form
  int calls = 0;                            // timed calls so far
  double best[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  int kept = -1;                            // 0 or 1 once decided

  bool trying() const noexcept { return kept < 0; }
  // The algorithm of the next call (timed: part of the trial).
  int next(bool timed) const noexcept { return kept >= 0 ? algo[kept] : timed ? algo[calls % 2] : algo[0]; }
  // A timed call of the trial took `seconds` (run with next(true)).
  void record(double seconds) noexcept {
    double& b = best[calls % 2];
    b = std::min(b, seconds);
    ++calls;
  }
  // Whether the ranks must now agree (after the last timed call).
  bool due() const noexcept { return kept < 0 && calls >= kCalls; }
  // The decision from the slowest rank's best time of each algorithm.
  static int decide(const double slowest_best[2]) noexcept {
    return slowest_best[1] < kMargin * slowest_best[0] ? 1 : 0;
  }
};

}  // namespace duct::select
