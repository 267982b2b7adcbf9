// Reduce by Rabenseifner's algorithm: recursive halving, then a gather.
//
// R. Rabenseifner, "Optimization of collective reduction operations", ICCS
// 2004; Thakur, Rabenseifner, Gropp 2005, §4.2 (their long-vector reduce).
// A reduce-scatter by recursive halving (halving_reduce_scatter, as in the
// allreduce of the same name) leaves each of the 2^k ranks with one reduced
// block; each sends it to the root. 2(p-1)/p of the vector per rank, as
// the ring reduce-scatter of reduce_scatter_gather, in log2(p) steps where
// the ring takes p - 1: on 64 simulated nodes of one rank the ring's 63
// latencies made that form 0.22-0.50x SMPI's ompi table at 128-256 KiB
// (docs/benchmarks/2026-11-28-sim-knomial.md). For p = 2^k + rem ranks the
// first 2 rem fold in pairs before the halving. Every duct op is
// commutative (user ops go to the MPI library), so the halving's order of
// operands is free.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// The fold's step; the halving takes the steps after it (rabenseifner_reduce).
constexpr std::uint32_t kFoldStep = 0x000, kGatherStep = 0x200;
}

Sched rabenseifner_reduce(Context& ctx, Link link, void* acc, void* tmp, MemKind kind, std::size_t count, DType dt,
                          RedOp op, int root, void* dst, MemKind dst_kind, std::uint32_t step,
                          std::uint32_t gather_step) {
  const std::size_t esz = elem_size(dt.elem);
  int newrank = -1;
  DUCT_CO_TRY(co_await fold_pairs(link, acc, tmp, kind, count, dt, op, step, &newrank));
  // The 2^k members left (member i is 2i+1 or i+rem of link.g), and the
  // same as communicator ranks for the halving's group.
  const std::vector<int> members = folded_members(link.g.n);
  std::vector<int> ranks(members);
  for (int& r : ranks) r = link.g.rank(r);
  const int p2 = static_cast<int>(members.size());
  const Layout pieces = Layout::even(count, p2);
  if (newrank >= 0)
    DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, link.on(Group{ranks.data(), p2, newrank}), acc, tmp, kind,
                                                pieces, dt, op, step + 1));
  // The gather: member i's piece i to the root.
  if (link.g.me != root) {
    if (newrank < 0 || pieces.len[static_cast<std::size_t>(newrank)] == 0) co_return Status::ok();
    const auto i = static_cast<std::size_t>(newrank);
    Request r;
    DUCT_CO_TRY(link.send(root, at(acc, pieces.off[i] * esz), pieces.len[i] * esz, kind, gather_step, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  // The halving is over: the root's acc outside its own piece is free, so
  // dst may be acc.
  std::vector<Request> recvs;
  recvs.reserve(static_cast<std::size_t>(p2));
  for (int i = 0; i < p2; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const std::size_t off = pieces.off[ui] * esz, len = pieces.len[ui] * esz;
    if (len == 0) continue;
    if (i == newrank) {
      if (dst != acc) DUCT_CO_TRY(copy_local(at(dst, off), dst_kind, at(acc, off), kind, len));
      continue;
    }
    recvs.emplace_back();
    DUCT_CO_TRY(link.recv(members[ui], at(dst, off), len, dst_kind, gather_step, &recvs.back()));
  }
  DUCT_CO_TRY(co_await wait(recvs));
  co_return Status::ok();
}

Sched reduce_rabenseifner(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), rank = ctx.rank();
  const bool root = rank == a.root;
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  // One kind for the reduction: the root's output's, the input's elsewhere.
  const MemKind kind = root ? a.recv_kind : a.send_kind;
  void* acc = nullptr;
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 1, &acc));
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &tmp));
  // The input into acc first: the root's receive buffer may be its input
  // (MPI_IN_PLACE), and pieces arrive there.
  DUCT_CO_TRY(copy_local(acc, kind, a.sendbuf, a.send_kind, bytes));
  DUCT_CO_TRY(co_await rabenseifner_reduce(ctx, Link{ctx, seq, Group{nullptr, n, rank}}, acc, tmp, kind, a.count,
                                           a.dt, a.op, a.root, a.recvbuf, a.recv_kind, kFoldStep, kGatherStep));
  co_return Status::ok();
}

}  // namespace duct::coll
