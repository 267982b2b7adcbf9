// duct coll: the one round structure of every shared-memory collective.
//
// Each shm algorithm (coll/shm.hpp) moves its data in rounds, one slot's
// worth each, under a sequence number k of its own (slot p = slot_of(k),
// among the first kPipeSlots slots in a piped call: ShmArea::piped):
//   1. a rank that writes this round makes sure every rank is done with
//      the slot's previous use (claim_need), fills its slot and publishes k;
//   2. it waits for the slots it reads: nobody's (a root of bcast or
//      scatter, a non-root of reduce or gather: write and go), the root's,
//      or every rank's (then every rank publishes k, even one that wrote
//      nothing: barrier);
//   3. it reads them (copies out, reduces in rank order);
//   4. it publishes that it is done with k.
// What differs between collectives is what a rank writes and reads in a
// round; a Spec says it:
//
//   struct Spec {
//     std::size_t rounds;  // rounds of this call (equal on every rank)
//     std::size_t used;    // bytes it puts in a slot, at most (equal on every
//                          // rank; where the data starts: ShmArea::slot)
//     bool writes;         // this rank fills its slot in every round
//     int wait;            // kShmNone, kShmAll, or the rank whose slot it reads
//     Status begin();                              // before the first round
//     Status fill(std::size_t r, void* slot);      // this rank's data of round r
//     Status read(std::size_t r, int p);           // after the wait: slots p of every rank
//     Span span(std::size_t r) const;              // the bytes of a slot's data round r reads
//     Status end();                                // after the last round
//   };
//
// A tree Spec (shm_tree reduce) has children() instead: every rank waits
// for its children's slots of k first, then claims and fills its own slot
// from them (fill_from) and publishes it; its parent reads it.
//
// The loops take the call's arguments for its tag (shm_tag), which the
// ready words carry beside k.
//
// A Spec whose ranks all write and all read (wait == kShmAll: allgather,
// alltoall, allreduce, reduce_scatter, the root of reduce and gather) and
// that takes more than one round is led: a rank fills its slots up to
// kLead rounds ahead of its reads (as the root of bcast runs ahead of its
// readers, and as Open MPI's shared-memory FIFO pipelines a message's
// fragments), instead of every rank filling round r and waiting for all
// before it reads it. Between two reads it fills ahead only while the next
// round's slots are not all in, so a rank that is behind reads first. The
// 2-rank shm allgather of 1 MiB went from 73 us in lock step to 54-63 led,
// 4 MiB from 294 to 210-250, against Open MPI's 152-253
// (docs/benchmarks/2026-11-28-led-shm.md). A fill ahead never waits: the
// slot of round r + j is free once every rank is done with r + j - kPipeSlots,
// and at most kPipeSlots - 1 rounds past the one it reads, a rank needs only
// rounds every rank has read already; so it claims without waiting, and
// waits only for the round it reads next.
//
// The round loop exists twice, once per way of waiting: shm_rounds, a
// coroutine for the general path (Task, nonblocking and stream-ordered
// calls), and shm_rounds_now, a plain function that waits in place for the
// small-call path (capi/small.hpp), where a coroutine frame and a Task cost
// more than the collective. Both run the same Spec, so the same bytes land
// and the same reductions happen in the same order.
#pragma once

#include "coll/collectives.hpp"
#include "coll/shm.hpp"
#include "coll/wait.hpp"

namespace duct::coll {

inline constexpr int kShmNone = -1;  // Spec::wait: read no other rank's slot
inline constexpr int kShmAll = -2;   // Spec::wait: read every rank's slot
struct Span {                        // Spec::span: bytes [lo, hi) of a slot's data
  std::size_t lo, hi;
};

// Bytes of every block per round when n blocks of `bytes` go through a slot
// in rounds: the whole block when all n fit one slot (no division on the
// small-call path), else an n-th of the slot.
inline std::size_t piece_of_slot(std::size_t bytes, std::size_t n) {
  if (bytes <= ShmArea::kSlotBytes && bytes * n <= ShmArea::kSlotBytes) return std::max<std::size_t>(bytes, 1);
  return std::max<std::size_t>(ShmArea::kSlotBytes / n, 1);
}

// Rounds of `piece` bytes that `bytes` take (no division when one does).
inline std::size_t rounds_of(std::size_t bytes, std::size_t piece) {
  return bytes <= piece ? (bytes > 0) : (bytes + piece - 1) / piece;
}

// Bytes per round of a vector of `bytes` in elements of `esz` bytes: whole
// elements, the whole vector when it fits a slot (no division then).
inline std::size_t chunk_of_slot(std::size_t bytes, std::size_t esz) {
  return bytes <= ShmArea::kSlotBytes ? std::max<std::size_t>(bytes, 1) : ShmArea::kSlotBytes / esz * esz;
}

// A Spec whose ranks form a tree: children() are the ranks whose slots this
// rank reads before it fills its own (fill_from(r, p, slot)).
template <class Spec>
concept ShmTreeSpec = requires(const Spec& s, Spec& m, std::size_t r, int p, void* slot) {
  s.children();
  m.fill_from(r, p, slot);
};

// Rounds a led Spec fills ahead of the one it reads (at most kPipeSlots - 1:
// see above).
inline constexpr std::size_t kLead = ShmArea::kPipeSlots - 1;
// Whether a (non-tree) Spec is led.
template <class Spec>
bool shm_led(const Spec& spec) {
  return spec.writes && spec.wait == kShmAll && spec.rounds > 1;
}

// The fills of a led call (rounds k0, k0 + 1, ...), shared by both loops.
template <class Spec>
struct ShmLead {
  ShmArea& s;
  Spec& spec;
  std::uint64_t k0;
  std::uint32_t tag;
  int me, n;
  std::size_t filled = 0;  // rounds this rank has filled and published
  // Fill and publish the next round.
  Status fill() {
    const std::uint64_t kf = k0 + filled;
    const int p = ShmArea::slot_of(kf, true);
    DUCT_TRY(spec.fill(filled, s.slot(me, p, spec.used)));
    shm_publish(s, kf, tag, p, me);
    ++filled;
    return Status::ok();
  }
  // Whether to fill another round ahead before reading round r (slot p):
  // one is left, it is at most kLead past r, r's slots are not all in, and
  // its slot is free without waiting.
  bool ahead(std::size_t r, int p) {
    return filled < spec.rounds && filled <= r + kLead && !shm_all_published(s, k0 + r, p, me) &&
           shm_claimed(s, k0 + filled, true, me, n);
  }
};

template <class Spec>
Sched shm_rounds(Context& ctx, const CollArgs& a, Spec spec) {
  ShmArea& s = *ctx.shm;
  const std::uint32_t tag = shm_tag(a);
  const int n = ctx.size(), me = ctx.rank();
  DUCT_CO_TRY(spec.begin());
  if constexpr (!ShmTreeSpec<Spec>) {
    if (shm_led(spec)) {
      ShmLead<Spec> lead{s, spec, s.next_seqs(spec.rounds, true), tag, me, n};
      for (std::size_t r = 0; r < spec.rounds; ++r) {
        const std::uint64_t k = lead.k0 + r;
        const int p = ShmArea::slot_of(k, true);
        if (lead.filled == r) {
          SHM_CLAIM(s, k, true, me, n);
          DUCT_CO_TRY(lead.fill());
        }
        while (lead.ahead(r, p)) DUCT_CO_TRY(lead.fill());
        DUCT_CO_TRY(co_await shm_wait_all(s, k, tag, p, me, kLead + 1));
        DUCT_CO_TRY(spec.read(r, p));
        s.finish(me, k);
      }
      co_return spec.end();
    }
  }
  const bool piped = ShmArea::piped(spec.rounds, spec.used);
  const std::uint64_t k0 = s.next_seqs(spec.rounds, piped);
  for (std::size_t r = 0; r < spec.rounds; ++r) {
    const std::uint64_t k = k0 + r;
    const int p = ShmArea::slot_of(k, piped);
    if constexpr (ShmTreeSpec<Spec>) {
      for (int c : spec.children()) DUCT_CO_TRY(co_await shm_wait_rank(s, k, tag, p, c));
      SHM_CLAIM(s, k, piped, me, n);
      DUCT_CO_TRY(spec.fill_from(r, p, s.slot(me, p, spec.used)));
      shm_publish(s, k, tag, p, me);
    } else {
      if (spec.writes) {
        SHM_CLAIM(s, k, piped, me, n);
        DUCT_CO_TRY(spec.fill(r, s.slot(me, p, spec.used)));
      }
      if (spec.wait == kShmAll) {
        DUCT_CO_TRY(co_await shm_exchange(s, k, tag, p, me));
      } else {
        if (spec.writes) shm_publish(s, k, tag, p, me);
        if (spec.wait != kShmNone) DUCT_CO_TRY(co_await shm_wait_rank(s, k, tag, p, spec.wait));
      }
    }
    DUCT_CO_TRY(spec.read(r, p));
    s.finish(me, k);
  }
  co_return spec.end();
}

// shm_claim in place.
Status shm_claim_now(ShmArea& s, std::uint64_t k, bool piped, int me, int n, Spinner& sp);

template <class Spec>
Status shm_rounds_now(Context& ctx, const CollArgs& a, Spec spec, Spinner& sp) {
  ShmArea& s = *ctx.shm;
  const std::uint32_t tag = shm_tag(a);
  const int n = ctx.size(), me = ctx.rank();
  DUCT_TRY(spec.begin());
  if constexpr (!ShmTreeSpec<Spec>) {
    if (shm_led(spec)) {  // as in shm_rounds
      ShmLead<Spec> lead{s, spec, s.next_seqs(spec.rounds, true), tag, me, n};
      for (std::size_t r = 0; r < spec.rounds; ++r) {
        const std::uint64_t k = lead.k0 + r;
        const int p = ShmArea::slot_of(k, true);
        if (lead.filled == r) {
          if (!shm_claimed(s, k, true, me, n)) DUCT_TRY(shm_claim_now(s, k, true, me, n, sp));
          DUCT_TRY(lead.fill());
        }
        while (lead.ahead(r, p)) DUCT_TRY(lead.fill());
        WaitShm w(s, k, tag, p, me, true, kLead + 1);
        DUCT_TRY(sp.wait(w));
        DUCT_TRY(spec.read(r, p));
        s.finish(me, k);
      }
      return spec.end();
    }
  }
  const bool piped = ShmArea::piped(spec.rounds, spec.used);
  const std::uint64_t k0 = s.next_seqs(spec.rounds, piped);
  for (std::size_t r = 0; r < spec.rounds; ++r) {
    const std::uint64_t k = k0 + r;
    const int p = ShmArea::slot_of(k, piped);
    if constexpr (ShmTreeSpec<Spec>) {
      for (int c : spec.children()) {
        WaitShm w(s, k, tag, p, c, false);
        DUCT_TRY(sp.wait(w));
      }
      if (!shm_claimed(s, k, piped, me, n)) DUCT_TRY(shm_claim_now(s, k, piped, me, n, sp));
      DUCT_TRY(spec.fill_from(r, p, s.slot(me, p, spec.used)));
      shm_publish(s, k, tag, p, me);
    } else {
      if (spec.writes) {
        if (!shm_claimed(s, k, piped, me, n)) DUCT_TRY(shm_claim_now(s, k, piped, me, n, sp));
        DUCT_TRY(spec.fill(r, s.slot(me, p, spec.used)));
      }
      if (spec.wait == kShmAll || spec.writes) shm_publish(s, k, tag, p, me);
      if (spec.wait != kShmNone) {
        WaitShm w(s, k, tag, p, spec.wait == kShmAll ? me : spec.wait, spec.wait == kShmAll);
        DUCT_TRY(sp.wait(w));
      }
    }
    DUCT_TRY(spec.read(r, p));
    s.finish(me, k);
    if constexpr (ShmTreeSpec<Spec>) {
      const auto [lo, hi] = spec.span(r);
      for (int c : spec.children()) s.prefetch_next(c, me, k, spec.used, lo, hi, r + 1 < spec.rounds);
    } else if (spec.wait != kShmNone) {
      const auto [lo, hi] = spec.span(r);
      s.prefetch_next(spec.wait == kShmAll ? -1 : spec.wait, me, k, spec.used, lo, hi, r + 1 < spec.rounds);
    }
  }
  return spec.end();
}

// The plain forms of the shm algorithms (the Specs of their files).
Status shm_reduce_now(Context& ctx, const CollArgs& a, bool everyone, Spinner& sp);
Status shm_gather_now(Context& ctx, const CollArgs& a, bool everyone, Spinner& sp);
using NowFn = Status (*)(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status allreduce_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status bcast_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status reduce_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status reduce_shm_tree_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status allgather_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status reduce_scatter_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status alltoall_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status gather_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status scatter_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);
Status barrier_shm_now(Context&, const CollArgs&, std::uint32_t, Spinner&);

}  // namespace duct::coll
