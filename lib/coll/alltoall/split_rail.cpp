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
//
// Small blocks on host memory (B <= kPackedBlock): the form above sends
// every block as a message of its own, 2 (L-1) N + 2 (N-1) L per rank,
// and each costs the CPU what a send costs whatever its size (16 nodes x
// 8, 0.3 us per send and receive: 140 us at 512 B-32 KiB, SMPI's ompi
// table 18-21). Packed instead: rank (i,l) packs its blocks for the ranks
// (j,m) of each local m into one message to (i,m) (N blocks), then packs
// the L blocks node i has for node j's rank (j,l) into one rail message:
// 2 (L-1) + 2 (N-1) messages per rank, and two host copies of the data.
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
// The packed form serves blocks up to this size on host memory: at 0.3 us
// a send and 50 GB/s a NIC, a message costs as much as 15 KiB of wire.
constexpr std::size_t kPackedBlock = 64u << 10;

// Rank (node j, local index m) of the communicator.
std::size_t rank_of(const Topology& t, int j, int m) {
  return static_cast<std::size_t>(t.ranks_on[static_cast<std::size_t>(j)][static_cast<std::size_t>(m)]);
}

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

namespace {
// The packed form (see the top): one node-level message per local rank and
// one rail message per peer node. `src` is the input (in place: a copy of
// it), this rank's own block is already in place.
Sched packed(Context& ctx, Levels& lv, const CollArgs& a, const void* src) {
  const Topology& t = ctx.topo;
  const int l = lv.l, L = lv.L, N = lv.N, i = t.node;
  const std::size_t B = a.bytes, uN = static_cast<std::size_t>(N), uL = static_cast<std::size_t>(L);
  // out[m][j]: this rank's block for (j,m), packed for local m; after the
  // node level, rail[j][m]: node i's L blocks for (j,l), packed for node j
  // (the same buffer). in[m][j]: what local m handed this rank.
  void *out = nullptr, *in = nullptr;
  DUCT_CO_TRY(ctx.scratch(MemKind::host, uL * uN * B, 3, &out));
  DUCT_CO_TRY(ctx.scratch(MemKind::host, uL * uN * B, 4, &in));
  auto cell = [B, uN](void* base, int m, int j) {
    return at(base, (static_cast<std::size_t>(m) * uN + static_cast<std::size_t>(j)) * B);
  };
  auto rail_cell = [B, uL](void* base, int j, int m) {
    return at(base, (static_cast<std::size_t>(j) * uL + static_cast<std::size_t>(m)) * B);
  };
  std::vector<Request> node(2 * uL);
  for (int m = 0; m < L; ++m) {
    if (m == l) continue;
    for (int j = 0; j < N; ++j)
      DUCT_CO_TRY(copy_local(cell(out, m, j), MemKind::host, at(src, rank_of(t, j, m) * B), MemKind::host, B));
    DUCT_CO_TRY(lv.node.send(m, cell(out, m, 0), uN * B, MemKind::host, kNode, &node[2 * static_cast<std::size_t>(m)]));
    DUCT_CO_TRY(lv.node.recv(m, cell(in, m, 0), uN * B, MemKind::host, kNode, &node[2 * static_cast<std::size_t>(m) + 1]));
  }
  DUCT_CO_TRY(co_await wait(node));
  // The blocks from this node's ranks; the rail messages.
  for (int m = 0; m < L; ++m) {
    if (m == l) continue;
    DUCT_CO_TRY(copy_local(at(a.recvbuf, rank_of(t, i, m) * B), MemKind::host, cell(in, m, i), MemKind::host, B));
  }
  for (int j = 0; j < N; ++j) {
    if (j == i) continue;
    for (int m = 0; m < L; ++m) {
      const void* b = m == l ? at(src, rank_of(t, j, l) * B) : cell(in, m, j);
      DUCT_CO_TRY(copy_local(rail_cell(out, j, m), MemKind::host, b, MemKind::host, B));
    }
  }
  // Over the rail: from node i-d the L blocks of its ranks for this one,
  // straight into the output where their ranks are consecutive, to node
  // i+d node i's L blocks for rank (i+d, l).
  void* stage = nullptr;
  std::vector<Request> rail(2 * uN);
  for (int d = 1; d < N; ++d) {
    const int to = mod(i + d, N), from = mod(i - d, N);
    void* into = at(a.recvbuf, rank_of(t, from, 0) * B);
    if (!t.consecutive(from)) {
      if (!stage) DUCT_CO_TRY(ctx.scratch(MemKind::host, uL * uN * B, 5, &stage));
      into = rail_cell(stage, from, 0);
    }
    const auto k = 2 * static_cast<std::size_t>(d);
    DUCT_CO_TRY(lv.rail.recv(from, into, uL * B, MemKind::host, kRail, &rail[k]));
    DUCT_CO_TRY(lv.rail.send(to, rail_cell(out, to, 0), uL * B, MemKind::host, kRail, &rail[k + 1]));
  }
  DUCT_CO_TRY(co_await wait(rail));
  if (stage)
    for (int j = 0; j < N; ++j) {
      if (j == i) continue;
      for (int m = 0; m < L; ++m)
        DUCT_CO_TRY(copy_local(at(a.recvbuf, rank_of(t, j, m) * B), MemKind::host, rail_cell(stage, j, m), MemKind::host, B));
    }
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
  const void* src = a.sendbuf;
  MemKind skind = a.send_kind;
  if (a.in_place) {  // the input is the output: copied aside first
    DUCT_CO_TRY(copy_aside(ctx, kind, a.recvbuf, B * static_cast<std::size_t>(ctx.size()), 2, &src));
    skind = kind;
  }
  const std::size_t me = static_cast<std::size_t>(ctx.rank());
  if (!a.in_place) DUCT_CO_TRY(copy_local(at(a.recvbuf, me * B), kind, at(src, me * B), skind, B));
  if (B == 0) co_return Status::ok();
  if (B <= kPackedBlock && kind == MemKind::host && skind == MemKind::host) {
    DUCT_CO_TRY(co_await packed(ctx, lv, a, src));
    co_return Status::ok();
  }
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
      DUCT_CO_TRY(lv.node.send(m, at(src, rank_of(t, j, m) * B), B, skind, step, &node_sends[k]));
      void* into = j == i ? at(a.recvbuf, rank_of(t, i, m) * B) : staged(m, j);
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
          DUCT_CO_TRY(lv.rail.recv(from, at(a.recvbuf, rank_of(t, from, m) * B + p * kPiece),
                                   std::min(kPiece, B - p * kPiece), kind, kRail + static_cast<std::uint32_t>(m),
                                   &recvs[per * static_cast<std::size_t>(d) + static_cast<std::size_t>(m) * P + p]));
      // This rank's block first, then what each local m handed it for `to`.
      std::vector<LaneBlock> blocks;
      blocks.push_back({at(src, rank_of(t, to, l) * B), skind, kRail + static_cast<std::uint32_t>(l), nullptr});
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
