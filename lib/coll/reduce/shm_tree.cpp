// Reduce through node-local shared memory as a tree (single-node
// communicators): the ranks, numbered from the root (v = (rank - root) mod
// n), form a kShmTreeFanIn-ary tree, v's children being kShmTreeFanIn * v
// + 1 .. kShmTreeFanIn * v + kShmTreeFanIn. A leaf copies its vector into
// its slot and returns (eager); an inner rank waits for its children's
// slots, writes its vector combined with theirs (its own first, then the
// children in order) into its slot and returns; the root does the same and
// reduces its slot and its children's into the receive buffer. The root
// reads kShmTreeFanIn slots instead of n - 1 (the flat `shm` reduce): on
// many ranks the root's reads of lines the other cores wrote, one after
// another, are what a small reduce costs (16 ranks on 16 cores: the flat
// reduce of 8-64 B at 0.38-0.40x of Open MPI, whose tuned reduce is a
// tree, docs/benchmarks/2026-11-26-gpu-run8-h200.md). The tree's depth is
// log_F(n); each rank reads at most F slots. A k-ary tree over shared
// memory is how MPICH's and Open MPI's shared-memory collectives (coll/sm,
// xpmem) fan in as well.
//
// The coll/shm_rounds.hpp round structure with a tree Spec: vectors larger
// than a slot go in slot-sized chunks, each under its own sequence number.
// Not in the built-in rules: duct-tune measures it on the machine and a
// rules file selects it (`reduce:0-4k:shm_tree`).
#include <algorithm>
#include <span>

#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
constexpr int kShmTreeFanIn = 4;

struct ReduceTreeSpec {
  ReduceTreeSpec(Context& ctx, const CollArgs& a)
      : writes(true),
        wait(kShmNone),
        n_(ctx.size()),
        v_((ctx.rank() - a.root + ctx.size()) % ctx.size()),
        esz_(elem_size(a.dt.elem)),
        ctx_(&ctx),
        a_(&a) {
    group_[0] = ctx.rank();
    for (int i = 1; i <= kShmTreeFanIn; ++i) {
      const long c = static_cast<long>(kShmTreeFanIn) * v_ + i;
      if (c >= n_) break;
      group_[++nkids_] = static_cast<int>((c + a.root) % n_);
    }
    const std::size_t bytes = a.count * esz_;
    chunk_ = chunk_of_slot(bytes, esz_);
    rounds = rounds_of(bytes, chunk_);
    used = std::min(bytes, chunk_);
  }
  std::size_t rounds = 0, used = 0;
  bool writes;
  int wait;
  std::span<const int> children() const { return {group_ + 1, static_cast<std::size_t>(nkids_)}; }
  Status begin() { return Status::ok(); }
  // This rank's vector, then (below the root) its children's combined into it.
  Status fill_from(std::size_t r, int p, void* slot) {
    DUCT_TRY(copy_local(slot, MemKind::host, at(a_->sendbuf, r * chunk_), a_->send_kind, len(r)));
    if (v_ == 0) return Status::ok();
    ShmArea& s = *ctx_->shm;
    for (int c : children())
      DUCT_TRY(reduce_local(slot, slot, s.slot(c, p, used), elems(r), a_->dt, a_->op, MemKind::host, nullptr));
    return Status::ok();
  }
  // The root: its slot combined with its children's, into the receive buffer.
  Status read(std::size_t r, int p) {
    if (v_ != 0) return Status::ok();
    return shm_reduce_slots(*ctx_, *ctx_->shm, p, used, a_->dt, a_->op, elems(r), at(a_->recvbuf, r * chunk_), a_->recv_kind,
                            {group_, static_cast<std::size_t>(nkids_) + 1});
  }
  Status end() { return Status::ok(); }
  Span span(std::size_t r) const { return {0, len(r)}; }

 private:
  std::size_t len(std::size_t r) const { return std::min(chunk_, a_->count * esz_ - r * chunk_); }
  std::size_t elems(std::size_t r) const { return rounds == 1 ? a_->count : len(r) / esz_; }
  int n_, v_;
  int group_[1 + kShmTreeFanIn] = {};  // this rank, then its children
  int nkids_ = 0;
  std::size_t esz_, chunk_ = 0;
  Context* ctx_;
  const CollArgs* a_;
};
static_assert(ShmTreeSpec<ReduceTreeSpec>);
}  // namespace

Sched reduce_shm_tree(Context& ctx, const CollArgs& a, std::uint32_t) {
  return shm_rounds(ctx, a, ReduceTreeSpec(ctx, a));
}
Status reduce_shm_tree_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_rounds_now(ctx, a, ReduceTreeSpec(ctx, a), sp);
}

}  // namespace duct::coll
