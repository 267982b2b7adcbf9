// duct coll: what the algorithms share: groups of ranks, block layouts,
// messages of one collective instance, local reduce and copy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/context.hpp"
#include "core/arith.hpp"
#include "core/config.hpp"
#include "core/dtype.hpp"
#include "memory/buffer.hpp"
#include "reduce/reduce.hpp"

namespace duct::coll {

using channel::Request;
using memory::MemKind;

// The ranks an algorithm runs over, numbered 0..n-1 within the group: all
// ranks of the communicator, the ranks of one node, one leader per node, or
// the ranks relative to a root. Composite algorithms (node-aware allreduce,
// broadcast by scatter + allgather) reuse the flat ones on groups.
struct Group {
  const int* ranks = nullptr;  // communicator rank of each member; nullptr: member i is rank i
  int n = 1;                   // members
  int me = 0;                  // this rank's index, or -1 when it is not a member
  int rank(int i) const noexcept { return ranks ? ranks[i] : i; }
};

// A k-nomial tree of n members numbered from its root, radix k >= 2 (k = 2:
// the binomial tree of Thakur, Rabenseifner, Gropp 2005, sections 4.1-4.2;
// larger k: the k-nomial trees of MVAPICH2's and UCC's broadcast and
// reduce). Member v's parent is v with its lowest nonzero base-k digit
// cleared; its children are v + j k^l for j = 1..k-1 and every k^l below
// that digit's place. ceil(log_k n) levels, k - 1 messages per level from
// a member: fewer latencies than the binomial tree's ceil(log2 n) where a
// message's latency outweighs its sender's per-message cost.
struct KnomialTree {
  int n;      // members
  int k = 2;  // radix
  // The place value of v's lowest nonzero base-k digit; for the root (v 0),
  // the first power of k not below n.
  int place(int v) const noexcept {
    int m = 1;
    while (m < n && (v / m) % k == 0) m *= k;
    return m;
  }
  int parent(int v) const noexcept {
    const int m = place(v);
    return v - (v / m) % k * m;
  }
};
// n blocks of a buffer: offset and length of each, in bytes or elements
// (the user of a layout says which). Blocks need not be in rank order or
// contiguous (allgatherv displacements).
struct Layout {
  std::vector<std::size_t> off, len;
  // `count` units split into n blocks as evenly as possible, in order: the
  // first count % n blocks have one unit more.
  static Layout even(std::size_t count, int n);
  // n blocks of `each` units, in order.
  static Layout uniform(std::size_t each, int n);
  int n() const noexcept { return static_cast<int>(len.size()); }
  std::size_t max_len() const noexcept;
  std::size_t total() const noexcept;
  // The same layout scaled from elements to bytes.
  Layout scaled(std::size_t unit) const;
};

// `count` elements split into `n` blocks as evenly as possible (arithmetic
// only; Layout::even builds the vectors from it).
struct Blocks {
  std::size_t count;
  int n;
  std::size_t size(int b) const noexcept {
    std::size_t q = count / static_cast<std::size_t>(n), r = count % static_cast<std::size_t>(n);
    return q + (static_cast<std::size_t>(b) < r ? 1 : 0);
  }
  std::size_t offset(int b) const noexcept {
    std::size_t q = count / static_cast<std::size_t>(n), r = count % static_cast<std::size_t>(n);
    std::size_t ub = static_cast<std::size_t>(b);
    return ub * q + std::min(ub, r);
  }
};

// A block of `elems` elements of `esz` bytes cut into pipeline segments of
// at most `seg_bytes` (at least one element each). Both ends of a transfer
// compute the same cuts from the same block size.
struct Segments {
  std::size_t elems, per;
  Segments(std::size_t elems_, std::size_t esz, std::size_t seg_bytes)
      : elems(elems_), per(std::max<std::size_t>(1, seg_bytes / std::max<std::size_t>(esz, 1))) {}
  std::size_t count() const noexcept { return (elems + per - 1) / per; }
  std::size_t offset(std::size_t k) const noexcept { return k * per; }
  std::size_t size(std::size_t k) const noexcept { return std::min(per, elems - k * per); }
};

// The messages of one collective instance, to and from members of a group.
struct Link {
  Context& ctx;
  std::uint32_t seq;
  Group g;
  Status send(int peer, const void* buf, std::size_t bytes, MemKind kind, std::uint32_t step, Request* r) {
    channel::Channel* c = nullptr;
    DUCT_TRY(ctx.channels->to(g.rank(peer), &c));
    return c->isend(buf, bytes, kind, channel::Tag{seq, step & 0xfffu}, r);
  }
  Status recv(int peer, void* buf, std::size_t bytes, MemKind kind, std::uint32_t step, Request* r) {
    channel::Channel* c = nullptr;
    DUCT_TRY(ctx.channels->to(g.rank(peer), &c));
    return c->irecv(buf, bytes, kind, channel::Tag{seq, step & 0xfffu}, r);
  }
  // The same messages over another group (phases of a composite algorithm).
  Link on(Group other) const { return Link{ctx, seq, other}; }
};

// The members of a power-of-two communicator in node-aware order for
// recursive halving and doubling: member v is local rank v / N of node
// v % N (N nodes of L ranks each, both powers of two), so the top log2(L)
// bits of a member index are its local rank. Halving from distance n/2
// then takes its first log2(L) steps, with the biggest halves, inside the
// nodes, and each rank's NIC carries 1/L of what rank order sends across
// (doubling, which goes from distance 1 up, sends its small blocks across
// the nodes first): the dimension order of a hierarchical recursive
// halving (Thakur, Rabenseifner, Gropp 2005 take dimensions in rank
// order). False, leaving `members` empty, where rank order stays: one
// node, nodes of different sizes, one rank per node, or not a power of
// two. `me`: this rank's member index.
bool node_aware_order(const Topology& t, std::vector<int>* members, int* me);
// The reduce-scatter and the allgather in node-aware order move each block
// to or from its rank in one message more (coll/reduce_scatter/
// recursive_halving.cpp, coll/allgather/recursive_doubling.cpp): below
// this many bytes in all, that message costs more than the NIC bytes it
// saves. Simulated on the rails platform (docs/benchmarks/
// 2026-11-27-sim-node-aware.md), reduce-scatter, us, node-aware / rank
// order: 16 x 8, 64 KiB 16.3 / 15.3, 256 KiB 17.2 / 19.2; 64 x 8, 64 KiB
// 20.3 / 19.4, 256 KiB 21.2 / 23.4.
constexpr std::size_t kNodeAwareMinBytes = 128u << 10;
// The step (message tag) of that one message more.
constexpr std::uint32_t kNodeAwareMoveStep = 0x200;

// The two levels of a split-rail collective (coll/*/split_rail.cpp): this
// rank's node (member: its local rank) and its rail (the ranks of its local
// index on every node; member: its node index). Only where every node holds
// the same number of ranks (Topology::ranks_per_node): rails() says why not.
struct Levels {
  Link node, rail;
  int l, L, N;  // local rank, ranks per node, nodes
};
Status rails(const Topology& t);
// This rank's node (member: its local rank), and the node leaders, one per
// node in node order (member: the leader index; -1 on other ranks): the
// groups of the node-aware (hierarchical) forms.
inline Group node_group(const Context& ctx) {
  const std::vector<int>& node = ctx.node_ranks();
  return Group{node.data(), static_cast<int>(node.size()), ctx.topo.local_rank};
}
inline Group leader_group(const Context& ctx) {
  const std::vector<int>& leaders = ctx.leaders();
  return Group{leaders.data(), static_cast<int>(leaders.size()), ctx.leader_index()};
}
inline Levels levels(Context& ctx, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  Link node_link{ctx, seq, node_group(ctx)};
  return Levels{node_link, node_link.on(Group{t.rail.data(), t.num_nodes, t.node}), t.local_rank, node_link.g.n,
                t.num_nodes};
}

// The members of a port tree (coll/port_tree.hpp) as a group.
inline Group group_of(const PortTree& pt) {
  return Group{pt.members.data(), static_cast<int>(pt.members.size()), pt.me};
}

// Pipelined split-rail forms: the number of segments of about `segment`
// bytes that `bytes` are cut into (1 to kMaxSegments), and the offset
// between the message steps of consecutive segments (16: a phase's rings
// of up to 15 members; larger rings, `widest` > 15, run as one segment).
constexpr std::size_t kMaxSegments = 64;
inline std::size_t pipeline_segments(std::size_t bytes, std::size_t segment, int widest) {
  if (widest > 15) return 1;
  return std::clamp<std::size_t>((bytes + segment - 1) / segment, 1, kMaxSegments);
}
inline std::uint32_t segment_stride(std::size_t segments) { return segments > 1 ? 16 : 0; }
// The segments of a vector of `units` units of `unit` bytes (elements, or
// bytes with unit 1) for a pipeline whose levels cut each segment over the
// L ranks of a node: pipeline_segments of it, with at least one unit per
// node rank in each.
inline Layout pipeline_layout(std::size_t units, std::size_t unit, std::size_t segment, int L, int N) {
  const std::size_t segs = std::min(pipeline_segments(units * unit, segment, std::max(L, N)),
                                    std::max<std::size_t>(1, units / static_cast<std::size_t>(L)));
  return Layout::even(units, static_cast<int>(segs));
}
// The segments of the pipelined two-level forms (pipelined Rabenseifner,
// pipelined halving): `total` elements of `esz` bytes as one first segment
// of `first` bytes where the vector holds at least twice that, then even
// segments of about `segment` bytes, or of 1/kLeadSegments of the vector
// where that is more (above 32 MiB at 2 MiB segments: SimGrid 3.32's real
// time grows faster than the count of segments, and the simulated time of
// both forms moved by less than 5%; 2026-12-03-sim-64m); each of at least
// `per` elements (one a rank), at most kMaxSegments in all. A short first
// segment starts the NICs early: its node level is the one before any rail
// message leaves.
constexpr std::size_t kLeadSegments = 16;
Layout lead_segments(std::size_t total, std::size_t esz, std::size_t per, std::size_t first, std::size_t segment);
// Scratch elements per segment of those forms, for a segment of at most
// `longest` elements cut over L node ranks: the one-step node
// reduce-scatter's L - 1 parts (a part of an even layout is at most
// longest / L rounded up), and at least half of the segment for the rail
// halving that follows (half of one part is all it needs).
inline std::size_t segment_scratch(std::size_t longest, int L) {
  const std::size_t l = static_cast<std::size_t>(L);
  return std::max((l - 1) * ((longest + l - 1) / l), (longest + 1) / 2);
}
// Whether the rail level of a pipeline of `segments` over N nodes runs as
// a chain of the nodes (N-1 hops, each block over each rail link once:
// segments + N - 1 steps of one block) rather than a binomial tree per
// segment (ceil(log2 N) blocks from the root's node in every step).
inline bool rail_chain(std::size_t segments, int N) {
  if (N <= 2) return false;  // one message either way
  std::size_t depth = 0;
  for (int m = 1; m < N; m <<= 1) ++depth;
  return segments + static_cast<std::size_t>(N) - 1 < segments * depth;
}
// The segment size of a rooted split-rail pipeline (bcast, reduce) of
// `bytes` over N nodes of L ranks: `base` on two nodes; on more, about 2N
// segments, so that the chain over the rail (rail_chain) has enough of
// them to fill it, at most `base` and at least DUCT_RAIL_SEGMENT_MIN
// (16 KiB) per rail message, L of them per segment. Open MPI coll/han cuts
// its levels into 64 KiB segments; here 16 KiB rail messages on 3 nodes x 2
// ranks (links at 1 Gbit/s) took bcast and reduce of 128-512 KiB from 48%
// to 95-96% of the links, where a 512 KiB floor left them one segment (a
// binomial tree per rail, every block sent twice from the root's node).
// 8 KiB pipelines 64 KiB too there (95-96%); 4 KiB costs more than it
// gains (16 KiB reduce 145 against 137 us), and on a fast fabric, where a
// message's software cost outweighs 8 KiB of wire time, so would 8 KiB.
inline std::size_t rooted_segment(std::size_t bytes, int N, int L, std::size_t base) {
  if (N <= 2) return base;
  const std::size_t piece = config::get().rail_segment_min;
  const std::size_t floor = std::min(piece * static_cast<std::size_t>(std::max(L, 1)), base);
  return std::clamp<std::size_t>(bytes / (2 * static_cast<std::size_t>(N)), floor, base);
}
// Piece s of S of every block of `blocks` (each block cut as Blocks does).
Layout piece_of(const Layout& blocks, std::size_t s, std::size_t S);

// dst = a (op) b on memory of `kind`. Host: done on return. Device:
// enqueued on duct's stream and recorded in `fence` (await it). `store`:
// whether the result is read again soon (reduce/reduce.hpp).
Status reduce_local(void* dst, const void* a, const void* b, std::size_t count, const DType& dt, RedOp op,
                    MemKind kind, memory::Fence* fence, reduce::Store store = reduce::Store::cached);

// Copy between any kinds; done on return.
Status copy_local(void* dst, MemKind dst_kind, const void* src, MemKind src_kind, std::size_t bytes);

// An in-place call's input, kept from being overwritten by its output:
// the first `bytes` of `buf` (memory of `kind`) copied into the context's
// scratch `slot`, returned in *copy. The exchanges that write blocks of the
// output before they have sent the same blocks of the input (alltoall's
// pairwise and split-rail forms) read from the copy.
Status copy_aside(Context& ctx, MemKind kind, const void* buf, std::size_t bytes, int slot, const void** copy);

// Byte offset arithmetic.
inline void* at(void* p, std::size_t off) { return static_cast<char*>(p) + off; }
inline const void* at(const void* p, std::size_t off) { return static_cast<const char*>(p) + off; }

// Test finished requests without waiting, so lists of sends stay short.
Status reap(std::vector<Request>& reqs);
std::vector<Request*> pointers(std::vector<Request>& reqs);

}  // namespace duct::coll
