// Split-rail alltoall: every block crosses the network on the rail of the
// rank it is for.
//
// With L ranks on each of N nodes, rank (i, l) (node i, local index l) has
// a block for every rank (j, m). A flat exchange sends block (i,l)->(j,m)
// over rank (i,l)'s network device to (j,m)'s: where rails are separate
// fabrics, the pairs of different rails share links unevenly (on the
// emulated cluster, 2 nodes x 2 rails, pairwise exchange put three of the
// four flows of a node on one link and reached 58-64% of the bound). Here:
//   (1) inside node i, rank (i,l) hands rank (i,m) its blocks for the ranks
//       of local index m: the one for (i,m) itself into its output, those
//       for (j,m), j != i, into a staging buffer (N-1 blocks);
//   (2) over rail l, rank (i,l) sends each rail peer (j,l) the L blocks
//       node i has for it, its own and the L-1 it was handed, straight
//       into (j,l)'s output.
// Every rail then carries exactly its ranks' share of the node's traffic,
// one flow per peer node: the rail-aligned all-to-all of NCCL's PXN
// (NVIDIA, "Doubling all2all performance with NVIDIA Collective
// Communication Library 2.12", 2022), with the node level over shared
// memory or CUDA IPC instead of NVLink. The node level is memory speed, so
// (1) runs all at once; (2) keeps kWindow peer nodes in flight (as
// pairwise exchange does), node i+d and i-d at distance d, and forwards a
// handed block as soon as it has arrived.
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr int kWindow = 8;  // peer nodes in flight over the rail
constexpr std::size_t kPiece = 1u << 20;  // rail messages: pieces of a block
constexpr std::size_t kInFlight = 2;      // rail sends in flight per rank
// Message steps: the node level names the destination's node j, the rail
// level the source's local index (select's rails_alltoall keeps both below
// 0x800).
constexpr std::uint32_t kNode = 0x000, kRail = 0x800;
}  // namespace

Sched alltoall_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  Levels lv = levels(ctx, seq);
  const int l = lv.l, L = lv.L, N = lv.N, i = t.node;
  const std::size_t B = a.bytes;
  const MemKind kind = a.recv_kind;
  auto rank_of = [&t](int j, int m) {
    return static_cast<std::size_t>(t.ranks_on[static_cast<std::size_t>(j)][static_cast<std::size_t>(m)]);
  };
  const void* src = a.sendbuf;
  MemKind skind = a.send_kind;
  if (a.in_place) {  // the input is the output: copied aside first
    DUCT_CO_TRY(copy_aside(ctx, kind, a.recvbuf, B * static_cast<std::size_t>(ctx.size()), 2, &src));
    skind = kind;
  }
  const std::size_t me = static_cast<std::size_t>(ctx.rank());
  if (!a.in_place) DUCT_CO_TRY(copy_local(at(a.recvbuf, me * B), kind, at(src, me * B), skind, B));
  if (B == 0) co_return Status::ok();
  // Per (local m, node j): the node-level requests, and in staging the
  // block local m handed this rank for node j.
  const std::size_t LN = static_cast<std::size_t>(L) * static_cast<std::size_t>(N);
  auto idx = [N](int m, int j) {
    return static_cast<std::size_t>(m) * static_cast<std::size_t>(N) + static_cast<std::size_t>(j);
  };
  void* stage = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, LN * B, 3, &stage));
  auto staged = [stage, B, &idx](int m, int j) { return at(stage, idx(m, j) * B); };

  // (1) The node level, every message at once: to local m, this rank's
  // blocks for the ranks (j, m); from it, its blocks for (j, l).
  std::vector<Request> node_sends(LN), handed(LN);
  for (int m = 0; m < L; ++m) {
    if (m == l) continue;
    for (int j = 0; j < N; ++j) {
      const std::size_t k = idx(m, j);
      const std::uint32_t step = kNode + static_cast<std::uint32_t>(j);
      DUCT_CO_TRY(lv.node.send(m, at(src, rank_of(j, m) * B), B, skind, step, &node_sends[k]));
      void* into = j == i ? at(a.recvbuf, rank_of(i, m) * B) : staged(m, j);
      DUCT_CO_TRY(lv.node.recv(m, into, B, kind, step, &handed[k]));
    }
  }

  // (2) The rail level: at distance d, to node i+d the L blocks for its
  // rank (i+d, l), from node i-d the L blocks of its ranks for this one;
  // each block in pieces of up to kPiece bytes (one step per source local
  // index: messages of one step between a pair match in posting order).
  // Receives are posted kWindow nodes ahead; this rank's sends go out in
  // order, at most kInFlight pieces at a time (its NIC is the bottleneck).
  const std::size_t P = (B + kPiece - 1) / kPiece, per = static_cast<std::size_t>(L) * P;
  std::vector<Request> recvs(per * static_cast<std::size_t>(N));
  std::vector<Request> sends(per * static_cast<std::size_t>(N));
  std::size_t posted = 0;  // sends posted so far, in order (sends[posted] is the next)
  auto piece = [B](std::size_t p) { return std::min(kPiece, B - p * kPiece); };
  for (int d = 1; d < N; ++d) {
    if (d > kWindow) {
      std::vector<Request*> old;
      for (std::size_t x = 0; x < per; ++x) old.push_back(&recvs[per * static_cast<std::size_t>(d - kWindow) + x]);
      DUCT_CO_TRY(co_await wait(std::move(old)));
    }
    const int to = mod(i + d, N), from = mod(i - d, N);
    for (int m = 0; m < L; ++m)  // from (from, m), for this rank
      for (std::size_t p = 0; p < P; ++p)
        DUCT_CO_TRY(lv.rail.recv(from, at(a.recvbuf, rank_of(from, m) * B + p * kPiece), piece(p), kind,
                                 kRail + static_cast<std::uint32_t>(m),
                                 &recvs[per * static_cast<std::size_t>(d) + static_cast<std::size_t>(m) * P + p]));
    // This rank's block first, then what each local m handed it for `to`.
    for (int k = 0; k < L; ++k) {
      const int m = k == 0 ? l : (k <= l ? k - 1 : k);
      const void* block = at(src, rank_of(to, l) * B);
      MemKind bkind = skind;
      if (m != l) {
        DUCT_CO_TRY(co_await wait(handed[idx(m, to)]));
        block = staged(m, to);
        bkind = kind;
      }
      for (std::size_t p = 0; p < P; ++p, ++posted) {
        if (posted >= kInFlight) DUCT_CO_TRY(co_await wait(sends[posted - kInFlight]));
        DUCT_CO_TRY(lv.rail.send(to, at(block, p * kPiece), piece(p), bkind, kRail + static_cast<std::uint32_t>(m),
                                 &sends[posted]));
      }
    }
  }
  std::vector<Request*> rest = pointers(recvs);
  for (Request* r : pointers(sends)) rest.push_back(r);
  for (Request* r : pointers(node_sends)) rest.push_back(r);
  for (Request* r : pointers(handed)) rest.push_back(r);
  DUCT_CO_TRY(co_await wait(std::move(rest)));
  co_return Status::ok();
}

}  // namespace duct::coll
