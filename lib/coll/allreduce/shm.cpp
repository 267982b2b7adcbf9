// Allreduce through node-local shared memory, for small vectors.
//
// Every rank of a single-node communicator copies its vector into its slot
// of the shared area (coll/shm.hpp) and publishes the collective's sequence
// number; then every rank reduces all slots in rank order, 0, 1, ..., n-1,
// into its result. The flat, one-step structure is that of the shared-memory
// collectives of Open MPI's coll/sm and UCC's tl/shm; a reduction of n
// vectors in a fixed order gives the same bits on every rank.
//
// Slots are double-buffered by the parity of the sequence number k. Slot p
// was last used at k-2, and it is free: a rank publishes sequence k-1 only
// after its call for k-2 has returned (done reading every slot), and before
// starting k this rank saw every rank's k-1. So no reader ever sees a slot
// being overwritten, without any extra counter. Device vectors are staged
// through host, as with recursive doubling: at these sizes two copies beat
// device work per peer.
//
// Cost: one slot write (the sequence number shares the first cache line with
// the data) and, per peer, one cache-line handoff for small vectors and a
// reduction: no message and no matching, below a UCX tag exchange on one
// node.
#include "coll/allreduce/allreduce.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

namespace {

// Wait until a shared counter reaches a value. Polls a few times before
// giving control back, so a value that is about to arrive is seen at once.
class WaitCounter final : public Waitable {
 public:
  WaitCounter(std::uint64_t* c, std::uint64_t at_least, int rank) : c_(c), v_(at_least), rank_(rank) {}
  void poll(bool* ready) override {
    for (int i = 0; i < 64; ++i) {
      if (std::atomic_ref<std::uint64_t>(*c_).load(std::memory_order_acquire) >= v_) {
        *ready = true;
        return;
      }
    }
    *ready = false;
  }
  std::string describe() const override {
    return strprintf("rank %d's shared-memory slot to reach sequence %llu (it is at %llu)", rank_,
                     static_cast<unsigned long long>(v_),
                     static_cast<unsigned long long>(std::atomic_ref<std::uint64_t>(*c_).load()));
  }

 private:
  std::uint64_t* c_;
  std::uint64_t v_;
  int rank_;
};

WaitAwaiter<WaitCounter> wait_counter(std::uint64_t* c, std::uint64_t v, int rank) {
  return WaitAwaiter<WaitCounter>{WaitCounter(c, v, rank)};
}

}  // namespace

Sched allreduce_shm(Context& ctx, AllreduceArgs a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  const std::uint64_t k = s.next_seq();
  const int p = static_cast<int>(k & 1);

  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, bytes));
  std::atomic_ref<std::uint64_t>(*s.ready(me, p)).store(k, std::memory_order_release);

  void* acc = a.recvbuf;
  if (a.recv_kind == MemKind::device) DUCT_CO_TRY(ctx.scratch(MemKind::host, bytes, 1, &acc));
  for (int q = 0; q < n; ++q) {
    DUCT_CO_TRY(co_await wait_counter(s.ready(q, p), k, q));
    if (q == 0)
      DUCT_CO_TRY(copy_local(acc, MemKind::host, s.slot(0, p), MemKind::host, bytes));
    else
      DUCT_CO_TRY(reduce_local(acc, acc, s.slot(q, p), a.count, a.dt, a.op, MemKind::host, nullptr));
  }
  if (acc != a.recvbuf) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, acc, MemKind::host, bytes));
  co_return Status::ok();
}

}  // namespace duct::coll
