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
// Every rail then carries exactly its ranks' share of the node's traffic:
// the rail-aligned all-to-all of NCCL's PXN (NVIDIA, "Doubling all2all
// performance with NVIDIA Collective Communication Library 2.12", 2022),
// with the node level over shared memory or CUDA IPC instead of NVLink. The
// node level is memory speed, so (1) runs all at once. (2) sends to up to
// kWindow peer nodes side by side, one lane per peer node that forwards a
// handed block as soon as it has arrived: a rail link then takes its bytes
// from every peer node at once, so a sender that runs late slows its own
// flows only. Sent one peer node after the other (as pairwise exchange
// does), a node whose one sender for that step ran late left its link idle
// while another link took two flows: on 3 nodes x 2 ranks, 2 rails, links
// at 1 Gbit/s, 64 MiB reached 75-87% of the links that way.
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr int kWindow = 8;  // peer nodes in flight over the rail
constexpr std::size_t kPiece = 1u << 20;  // rail messages: pieces of a block
constexpr std::size_t kInFlight = 2;      // rail sends in flight per peer node
// Message steps: the node level names the destination's node j, the rail
// level the source's local index (select's rails_alltoall keeps both below
// 0x800).
constexpr std::uint32_t kNode = 0x000, kRail = 0x800;

// A block that one lane sends: this rank's own (handed == nullptr) or one
// a local rank handed it (ready once `handed` completes).
struct LaneBlock {
  const void* data;
  MemKind kind;
  std::uint32_t step;
  Request* handed;
};

// One lane of the rail level: the blocks for rank (to, l) of peer node
// `to`, each in pieces of up to kPiece bytes, kInFlight in flight.
Sched rail_lane(Link rail, int to, std::vector<LaneBlock> blocks, std::size_t B) {
  const std::size_t P = (B + kPiece - 1) / kPiece;
  std::vector<Request> sends(blocks.size() * P);
  std::size_t posted = 0;
  for (const LaneBlock& b : blocks) {
    if (b.handed) DUCT_CO_TRY(co_await wait(*b.handed));
    for (std::size_t p = 0; p < P; ++p, ++posted) {
      if (posted >= kInFlight) DUCT_CO_TRY(co_await wait(sends[posted - kInFlight]));
      DUCT_CO_TRY(rail.send(to, at(b.data, p * kPiece), std::min(kPiece, B - p * kPiece), b.kind, b.step,
                            &sends[posted]));
    }
  }
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}
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

  // (2) The rail level, in waves of up to kWindow peer nodes (node i+d and
  // i-d at distance d): from node i-d the L blocks of its ranks for this
  // one, to node i+d the L blocks node i has for rank (i+d, l), each peer
  // node a lane of its own. One step per source local index: messages of
  // one step between a pair match in posting order. A wave's receives are
  // posted as it starts, so a peer node's lane finds them posted.
  const std::size_t P = (B + kPiece - 1) / kPiece, per = static_cast<std::size_t>(L) * P;
  std::vector<Request> recvs(per * static_cast<std::size_t>(N));
  for (int d0 = 1; d0 < N; d0 += kWindow) {
    const int d1 = std::min(N, d0 + kWindow);
    std::vector<Sched> lanes;
    for (int d = d0; d < d1; ++d) {
      const int to = mod(i + d, N), from = mod(i - d, N);
      for (int m = 0; m < L; ++m)  // from (from, m), for this rank
        for (std::size_t p = 0; p < P; ++p)
          DUCT_CO_TRY(lv.rail.recv(from, at(a.recvbuf, rank_of(from, m) * B + p * kPiece),
                                   std::min(kPiece, B - p * kPiece), kind, kRail + static_cast<std::uint32_t>(m),
                                   &recvs[per * static_cast<std::size_t>(d) + static_cast<std::size_t>(m) * P + p]));
      // This rank's block first, then what each local m handed it for `to`.
      std::vector<LaneBlock> blocks;
      blocks.push_back({at(src, rank_of(to, l) * B), skind, kRail + static_cast<std::uint32_t>(l), nullptr});
      for (int m = 0; m < L; ++m)
        if (m != l) blocks.push_back({staged(m, to), kind, kRail + static_cast<std::uint32_t>(m), &handed[idx(m, to)]});
      lanes.push_back(rail_lane(lv.rail, to, std::move(blocks), B));
    }
    DUCT_CO_TRY(co_await all_of(std::move(lanes)));
  }
  std::vector<Request*> rest = pointers(recvs);
  for (Request* r : pointers(node_sends)) rest.push_back(r);
  for (Request* r : pointers(handed)) rest.push_back(r);
  DUCT_CO_TRY(co_await wait(std::move(rest)));
  co_return Status::ok();
}

}  // namespace duct::coll
