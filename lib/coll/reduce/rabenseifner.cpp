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
constexpr std::uint32_t kFoldStep = 0x000, kHalvingStep = 0x001, kGatherStep = 0x200;
}

Sched reduce_rabenseifner(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), rank = ctx.rank();
  const bool root = rank == a.root;
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  // One kind for the reduction: the root's output's, the input's elsewhere.
  const MemKind kind = root ? a.recv_kind : a.send_kind;
  void* acc = nullptr;
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 1, &acc));
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &tmp));
  // The input into acc first: the root's receive buffer may be its input
  // (MPI_IN_PLACE), and blocks arrive there below.
  DUCT_CO_TRY(copy_local(acc, kind, a.sendbuf, a.send_kind, bytes));
  Link link{ctx, seq, Group{nullptr, n, rank}};
  int newrank = -1;
  DUCT_CO_TRY(co_await fold_pairs(link, acc, tmp, kind, a.count, a.dt, a.op, kFoldStep, &newrank));
  // The 2^k ranks left: member i is rank 2i+1 (folded) or i+rem.
  std::vector<int> members = folded_members(n);
  const int p2 = static_cast<int>(members.size());
  const Layout blocks = Layout::even(a.count, p2);
  if (newrank >= 0) {
    Link g = link.on(Group{members.data(), p2, newrank});
    DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, g, acc, tmp, kind, blocks, a.dt, a.op, kHalvingStep));
  }
  // The gather: member i's block i to the root.
  if (!root) {
    if (newrank < 0) co_return Status::ok();
    const std::size_t i = static_cast<std::size_t>(newrank);
    Request r;
    DUCT_CO_TRY(link.send(a.root, at(acc, blocks.off[i] * esz), blocks.len[i] * esz, kind, kGatherStep, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  std::vector<Request> recvs;
  recvs.reserve(static_cast<std::size_t>(p2));
  for (int i = 0; i < p2; ++i) {
    const std::size_t ui = static_cast<std::size_t>(i);
    if (i == newrank) {
      DUCT_CO_TRY(copy_local(at(a.recvbuf, blocks.off[ui] * esz), a.recv_kind, at(acc, blocks.off[ui] * esz), kind,
                             blocks.len[ui] * esz));
      continue;
    }
    recvs.emplace_back();
    DUCT_CO_TRY(link.recv(members[ui], at(a.recvbuf, blocks.off[ui] * esz), blocks.len[ui] * esz, a.recv_kind,
                          kGatherStep, &recvs.back()));
  }
  DUCT_CO_TRY(co_await wait(recvs));
  co_return Status::ok();
}

}  // namespace duct::coll
