// Schedule arithmetic: block partition, pipeline segments, message tags,
// algorithm selection rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "channel/ucx.hpp"
#include "coll/common.hpp"
#include "coll/node_tree.hpp"
#include "select/select.hpp"

using namespace duct;

TEST_CASE("blocks cover the vector exactly, sizes differ by at most one", "[schedule]") {
  for (std::size_t count : {0ul, 1ul, 2ul, 3ul, 7ul, 100ul, 1000003ul}) {
    for (int n : {1, 2, 3, 4, 5, 7, 64}) {
      coll::Blocks b{count, n};
      std::size_t total = 0, lo = ~0ul, hi = 0;
      for (int i = 0; i < n; ++i) {
        INFO("count " << count << " n " << n << " block " << i);
        CHECK(b.offset(i) == total);  // contiguous, in order
        total += b.size(i);
        lo = std::min(lo, b.size(i));
        hi = std::max(hi, b.size(i));
      }
      CHECK(total == count);
      CHECK(hi - lo <= 1);
    }
  }
}

TEST_CASE("segments cut a block into pieces of at most the segment size", "[schedule]") {
  for (std::size_t elems : {0ul, 1ul, 5ul, 65536ul, 65537ul, 1000003ul}) {
    for (std::size_t esz : {1ul, 2ul, 4ul, 8ul}) {
      for (std::size_t seg : {1ul, 3ul, 4096ul, 262144ul}) {
        coll::Segments s(elems, esz, seg);
        std::size_t covered = 0;
        for (std::size_t k = 0; k < s.count(); ++k) {
          CHECK(s.offset(k) == covered);
          CHECK(s.size(k) >= 1);
          CHECK((s.size(k) * esz <= seg || s.size(k) == 1));
          covered += s.size(k);
        }
        CHECK(covered == elems);
      }
    }
  }
}

TEST_CASE("message tags keep their fields apart", "[schedule]") {
  using channel::ucx::make_tag;
  using channel::ucx::MsgType;
  std::set<std::uint64_t> seen;
  for (std::uint32_t cid : {1u, 2u, 65535u})
    for (std::uint32_t src : {0u, 1u, (1u << 20) - 1})
      for (MsgType t : {MsgType::data, MsgType::header, MsgType::fin})
        for (std::uint32_t seq : {0u, 1u, 0x3fffu})
          for (std::uint32_t step : {0u, 1u, 0xfffu}) CHECK(seen.insert(make_tag(cid, src, t, seq, step)).second);
  // Sequence numbers wrap at 14 bits, steps at 12, by design.
  CHECK(make_tag(1, 2, MsgType::data, 0x4000, 0) == make_tag(1, 2, MsgType::data, 0, 0));
  CHECK(make_tag(1, 2, MsgType::data, 0, 0x1000) == make_tag(1, 2, MsgType::data, 0, 0));
}

TEST_CASE("k-nomial trees: every member but the root has one parent, depth ceil(log_k n)", "[schedule]") {
  for (int k : {2, 3, 4, 8}) {
    for (int n : {1, 2, 3, 5, 8, 9, 16, 17, 63, 64, 65, 100}) {
      const coll::KnomialTree t{n, k};
      INFO("n " << n << " k " << k);
      // Children as a sender lists them: v + j m for the places m below v's own.
      std::vector<int> parent_of(static_cast<std::size_t>(n), -1);
      for (int v = 0; v < n; ++v) {
        for (int m = t.place(v) / k; m > 0; m /= k) {
          for (int j = 1; j < k; ++j) {
            if (v + j * m >= n) continue;
            CHECK(parent_of[static_cast<std::size_t>(v + j * m)] == -1);  // one sender each
            parent_of[static_cast<std::size_t>(v + j * m)] = v;
          }
        }
      }
      int depth_max = 0;
      for (int v = 1; v < n; ++v) {
        CHECK(t.parent(v) == parent_of[static_cast<std::size_t>(v)]);  // the receiver agrees
        CHECK(t.parent(v) < v);
        int d = 0;
        for (int u = v; u != 0; u = t.parent(u)) ++d;
        depth_max = std::max(depth_max, d);
      }
      int levels = 0;
      for (long p = 1; p < n; p *= k) ++levels;  // ceil(log_k n)
      // A member's hops to the root are its nonzero base-k digits: at most
      // one per level, all of them for n - 1 when n is a power of k.
      CHECK(depth_max <= levels);
      long pk = 1;
      for (int i = 0; i < levels; ++i) pk *= k;
      if (pk == n) CHECK(depth_max == levels);
    }
  }
  // 64 members, radix 4: the root's children are 1-3, 4-12 by 4 and 16-48 by 16.
  const coll::KnomialTree t{64, 4};
  CHECK(t.place(0) == 64);
  CHECK(t.parent(48) == 0);
  CHECK(t.parent(52) == 48);
  CHECK(t.parent(63) == 60);
  CHECK(t.parent(60) == 48);
}

TEST_CASE("selection rules parse, override and choose by size", "[select]") {
  std::vector<select::Rule> rules;
  REQUIRE(select::parse_rules(select::default_rules(), &rules).is_ok());
  REQUIRE(!rules.empty());

  select::Table t;
  REQUIRE(select::Table::make("", &t).is_ok());
  select::Query small{select::Coll::allreduce, 8, 4, 1};
  select::Query large{select::Coll::allreduce, 64u << 20, 4, 1};
  CHECK(std::string(select::algorithms()[static_cast<size_t>(t.choose(small))].name) == "recursive_doubling");
  CHECK(std::string(select::algorithms()[static_cast<size_t>(t.choose(large))].name) == "ring");

  select::Table forced;
  REQUIRE(select::Table::make("allreduce:0-inf:ring", &forced).is_ok());
  std::string why;
  CHECK(std::string(select::algorithms()[static_cast<size_t>(forced.choose(small, &why))].name) == "ring");
  CHECK(why.find("8 bytes") != std::string::npos);
  CHECK(forced.describe().find("allreduce:0-inf:ring") != std::string::npos);

  select::Table ucc;  // UCC's "@name" spelling is accepted
  REQUIRE(select::Table::make("allreduce:0-4k:@recursive_doubling,4k-inf:@ring", &ucc).is_ok());
  CHECK(std::string(select::algorithms()[static_cast<size_t>(ucc.choose({select::Coll::allreduce, 8192, 2, 1}))].name) == "ring");

  // A size outside every rule falls back to the collective's fallback.
  select::Table partial;
  REQUIRE(select::Table::make("allreduce:0-1k:recursive_doubling", &partial).is_ok());
  CHECK(std::string(select::algorithms()[static_cast<size_t>(partial.choose(large, &why))].name) == "ring");
  CHECK(why.find("fallback") != std::string::npos);
}

TEST_CASE("bad selection rules are refused with the reason", "[select]") {
  std::vector<select::Rule> rules;
  struct Bad {
    const char* text;
    const char* says;
  };
  for (Bad b : {Bad{"allreduce", "no ':'"}, Bad{"bcastx:0-inf:ring", "unknown collective"},
                Bad{"allreduce:0-inf:fastest", "no algorithm 'fastest'"}, Bad{"allreduce:64k-4k:ring", "empty size range"},
                Bad{"allreduce:0:ring", "<lo>-<hi>"}, Bad{"allreduce:x-inf:ring", "not a size"}}) {
    INFO(b.text);
    Status st = select::parse_rules(b.text, &rules);
    CHECK(st.code() == Errc::config);
    CHECK(st.message().find(b.says) != std::string::npos);
  }
}

// copy_local between host buffers: every distance modulo a page near the
// one glibc's `rep movsb` handles slowly (destination 1-63 bytes ahead of
// the source), sizes around the piece size, and overlapping moves in both
// directions (memmove semantics), against a byte-by-byte reference.
TEST_CASE("host copy_local copies every byte at every short distance, overlapping or not", "[schedule]") {
  std::vector<unsigned char> src(300000), dst(300000 + 8192);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (std::size_t bytes : {1ul, 2047ul, 2048ul, 3000ul, 65536ul, 65537ul, 262147ul}) {
    for (std::size_t ahead : {0ul, 1ul, 8ul, 15ul, 16ul, 63ul, 64ul, 4095ul}) {
      INFO("bytes " << bytes << " destination " << ahead << " bytes ahead modulo 4096");
      std::fill(dst.begin(), dst.end(), 0xEE);
      const std::uintptr_t s = reinterpret_cast<std::uintptr_t>(src.data());
      std::uintptr_t d = reinterpret_cast<std::uintptr_t>(dst.data()) + 64;
      d += ((s + ahead) - d) & 4095u;  // (d - s) % 4096 == ahead
      auto* out = reinterpret_cast<unsigned char*>(d);
      REQUIRE(coll::copy_local(out, memory::MemKind::host, src.data(), memory::MemKind::host, bytes).is_ok());
      CHECK(std::equal(src.begin(), src.begin() + static_cast<long>(bytes), out));
      CHECK(out[-1] == 0xEE);  // nothing written outside [out, out + bytes)
      CHECK(out[bytes] == 0xEE);
    }
  }
  for (long shift : {-4096l, -63l, -8l, -1l, 1l, 8l, 15l, 63l, 4097l}) {
    INFO("overlapping move by " << shift << " bytes");
    std::vector<unsigned char> buf(200000), want;
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 7 + 3);
    const std::size_t from = 5000, bytes = 100000;
    want = buf;
    std::memmove(want.data() + from + shift, want.data() + from, bytes);
    REQUIRE(coll::copy_local(buf.data() + from + shift, memory::MemKind::host, buf.data() + from, memory::MemKind::host, bytes).is_ok());
    CHECK(buf == want);
  }
}

namespace {
// A topology of nodes of the given sizes; `by_node`: ranks dealt to the
// nodes in turn (mpirun --map-by node) instead of in blocks.
std::vector<Topology> topologies(const std::vector<int>& sizes, bool by_node) {
  const int N = static_cast<int>(sizes.size());
  Topology t;
  t.num_nodes = N;
  t.ranks_on.resize(sizes.size());
  const int most = *std::max_element(sizes.begin(), sizes.end());
  int r = 0;
  if (by_node) {
    for (int m = 0; m < most; ++m)
      for (int j = 0; j < N; ++j)
        if (m < sizes[static_cast<std::size_t>(j)]) t.ranks_on[static_cast<std::size_t>(j)].push_back(r++);
  } else {
    for (int j = 0; j < N; ++j)
      for (int m = 0; m < sizes[static_cast<std::size_t>(j)]; ++m) t.ranks_on[static_cast<std::size_t>(j)].push_back(r++);
  }
  t.size = 0;
  for (int s : sizes) t.size += s;
  t.node_of.resize(static_cast<std::size_t>(t.size));
  t.local_rank_of.resize(static_cast<std::size_t>(t.size));
  for (int j = 0; j < N; ++j)
    for (std::size_t m = 0; m < t.ranks_on[static_cast<std::size_t>(j)].size(); ++m) {
      const int r = t.ranks_on[static_cast<std::size_t>(j)][m];
      t.node_of[static_cast<std::size_t>(r)] = j;
      t.local_rank_of[static_cast<std::size_t>(r)] = static_cast<int>(m);
    }
  std::vector<Topology> per_rank;
  for (int r = 0; r < t.size; ++r) {
    Topology mine = t;
    mine.rank = r;
    mine.node = t.node_of[static_cast<std::size_t>(r)];
    mine.local_rank = t.local_rank_of[static_cast<std::size_t>(r)];
    per_rank.push_back(mine);
  }
  return per_rank;
}
}  // namespace

TEST_CASE("node leaders' trees: children's subtrees tile their parent's, blocks packed in member order", "[schedule]") {
  for (const auto& sizes : std::vector<std::vector<int>>{
           {2}, {2, 2}, {3, 1, 2}, {2, 2, 2, 2, 2}, {1, 3, 2, 2, 1, 4, 2}, {4, 4, 4, 4, 4, 4, 4, 4, 4}}) {
    for (bool by_node : {false, true}) {
      const Topology t = topologies(sizes, by_node)[0];
      const int N = t.num_nodes;
      for (int root = 0; root < t.size; ++root)
        for (int k : {2, 3, 4, 64}) {
          INFO("nodes " << N << " root " << root << " radix " << k << (by_node ? " mapped by node" : ""));
          const coll::NodeTree nt(t, root, k);
          CHECK(nt.node(0) == t.node_of[static_cast<std::size_t>(root)]);
          CHECK(nt.leader(0) == root);
          CHECK(nt.end(0) == N);
          CHECK(nt.ranks(0, N) == static_cast<std::size_t>(t.size));
          for (int v = 0; v < N; ++v) {
            CHECK(nt.member(nt.node(v)) == v);
            if (v > 0) CHECK(nt.leader(v) == t.ranks_on[static_cast<std::size_t>(nt.node(v))].front());
            // v itself, then its children's subtrees in order, tile [v, end(v)).
            int next = v + 1;
            for (const coll::NodeTree::Subtree& kid : nt.children(v)) {
              CHECK(kid.first == next);
              CHECK(kid.end > kid.first);
              CHECK(nt.tree.parent(kid.first) == v);
              CHECK(nt.end(kid.first) == kid.end);
              next = kid.end;
            }
            CHECK(next == nt.end(v));
            // run_start against the ranks written out in member order.
            for (int e = v + 1; e <= N; ++e) {
              std::vector<int> ranks;
              for (int u = v; u < e; ++u)
                for (int r : t.ranks_on[static_cast<std::size_t>(nt.node(u))]) ranks.push_back(r);
              CHECK(ranks.size() == nt.ranks(v, e));
              bool run = true;
              for (std::size_t i = 1; i < ranks.size(); ++i) run = run && ranks[i] == ranks[0] + static_cast<int>(i);
              CHECK(nt.run_start(v, e) == (run ? ranks[0] : -1));
            }
          }
          // k >= N: the flat tree, every other node a child of the root's.
          if (k >= N) {
            const std::vector<coll::NodeTree::Subtree> kids = nt.children(0);
            for (const coll::NodeTree::Subtree& kid : kids) CHECK(kid.end == kid.first + 1);
            CHECK(kids.size() == static_cast<std::size_t>(N - 1));
          }
        }
    }
  }
}

TEST_CASE("port trees: every other node in one tree, each tree on one local index", "[schedule]") {
  for (const auto& sizes : std::vector<std::vector<int>>{
           {2, 2}, {2, 2, 2}, {2, 2, 2, 2, 2}, {1, 1, 1}, {4, 4, 4}, {2, 1}, {1, 3, 2}, {3, 1, 2, 2}, {8, 8}}) {
    for (bool by_node : {false, true}) {
      const std::vector<Topology> ts = topologies(sizes, by_node);
      const int n = static_cast<int>(ts.size()), N = static_cast<int>(sizes.size());
      for (int root = 0; root < n; ++root) {
        INFO("nodes " << N << " root " << root << (by_node ? " mapped by node" : ""));
        const Topology& any = ts[0];
        const int rn = any.node_of[static_cast<std::size_t>(root)];
        std::vector<coll::PortTree> pts;
        for (const Topology& t : ts) pts.push_back(coll::port_tree(t, root));
        std::vector<int> in_trees(static_cast<std::size_t>(N), 0);
        for (int r = 0; r < n; ++r) {
          const coll::PortTree& pt = pts[static_cast<std::size_t>(r)];
          if (pt.me < 0) continue;
          REQUIRE(pt.members.size() >= 2);
          CHECK(pt.members[static_cast<std::size_t>(pt.me)] == r);
          const int tree_root = pt.members[0];
          CHECK(any.node_of[static_cast<std::size_t>(tree_root)] == rn);
          // Every member sees the same tree, and all are on one local index (one rail).
          for (int m : pt.members) {
            CHECK(pts[static_cast<std::size_t>(m)].members == pt.members);
            CHECK(any.local_rank_of[static_cast<std::size_t>(m)] == any.local_rank_of[static_cast<std::size_t>(tree_root)]);
          }
          if (any.node_of[static_cast<std::size_t>(r)] != rn) {
            ++in_trees[static_cast<std::size_t>(any.node_of[static_cast<std::size_t>(r)])];
            CHECK(pt.port == any.local_rank_of[static_cast<std::size_t>(r)]);
          }
        }
        for (int j = 0; j < N; ++j) {
          if (j == rn) continue;
          CHECK(in_trees[static_cast<std::size_t>(j)] == 1);  // exactly one rank of node j is in a tree
          // Its other ranks agree on which one (their node level's root).
          for (int r : any.ranks_on[static_cast<std::size_t>(j)])
            CHECK(pts[static_cast<std::size_t>(r)].port == pts[static_cast<std::size_t>(any.ranks_on[static_cast<std::size_t>(j)][0])].port);
        }
        // The node after the root's joins the root's own tree where it has a
        // rank of the root's local index (the root's rail).
        const coll::PortTree& at_root = pts[static_cast<std::size_t>(root)];
        if (static_cast<int>(any.ranks_on[static_cast<std::size_t>((rn + 1) % N)].size()) >
            any.local_rank_of[static_cast<std::size_t>(root)]) {
          REQUIRE(at_root.me == 0);
          CHECK(any.node_of[static_cast<std::size_t>(at_root.members[1])] == (rn + 1) % N);
        }
      }
    }
  }
}

TEST_CASE("rooted split-rail segments: one message on two nodes, a chain from 128 KiB on three", "[schedule]") {
  constexpr std::size_t base = 4u << 20;
  for (std::size_t bytes : {1ul, 40004ul, 131072ul, 600004ul, 9000004ul, 64ul << 20})
    CHECK(coll::rooted_segment(bytes, 2, 2, base) == base);
  for (int N : {3, 5, 16})
    for (int L : {1, 2, 8})
      for (std::size_t bytes : {1ul, 40004ul, 131072ul, 600004ul, 9000004ul, 64ul << 20}) {
        INFO("N " << N << " L " << L << " bytes " << bytes);
        const std::size_t s = coll::rooted_segment(bytes, N, L, base);
        CHECK(s <= base);
        CHECK(s >= config::get().rail_segment_min * static_cast<std::size_t>(L));  // no rail message below it
      }
  // 3 nodes x 2 ranks: 128 KiB and 600004 bytes cross the rail as a chain,
  // 40004 bytes (two segments) as a binomial tree per segment.
  auto segments = [](std::size_t bytes) {
    return coll::pipeline_layout(bytes, 1, coll::rooted_segment(bytes, 3, 2, base), 2, 3).len.size();
  };
  CHECK(coll::rail_chain(segments(131072), 3));
  CHECK(coll::rail_chain(segments(600004), 3));
  CHECK(segments(40004) == 2);
  CHECK_FALSE(coll::rail_chain(segments(40004), 3));
  CHECK_FALSE(coll::rail_chain(segments(40004), 5));
}

TEST_CASE("node-aware order: halving's first steps inside the node, then one rail across the nodes", "[schedule]") {
  for (const auto& sizes : std::vector<std::vector<int>>{{2, 2}, {4, 4}, {2, 2, 2, 2}, {8, 8, 8, 8}, {4, 4, 4, 4, 4, 4, 4, 4}}) {
    for (bool by_node : {false, true}) {
      std::vector<Topology> ts = topologies(sizes, by_node);
      const int n = static_cast<int>(ts.size()), L = sizes[0];
      INFO(sizes.size() << " nodes of " << L << (by_node ? ", mapped by node" : ""));
      std::vector<std::vector<int>> orders;
      for (Topology& t : ts) {
        t.ranks_per_node = L;
        std::vector<int> members;
        int me = -1;
        REQUIRE(coll::node_aware_order(t, &members, &me));
        REQUIRE(members.size() == static_cast<std::size_t>(n));
        CHECK(members[static_cast<std::size_t>(me)] == t.rank);
        orders.push_back(members);
      }
      // One order on every rank, and a permutation of the ranks.
      for (const auto& o : orders) CHECK(o == orders[0]);
      std::vector<int> sorted = orders[0];
      std::sort(sorted.begin(), sorted.end());
      for (int r = 0; r < n; ++r) CHECK(sorted[static_cast<std::size_t>(r)] == r);
      // Halving's partners (member v ^ mask, mask from n/2 down): the first
      // log2(L) on this rank's node, the others on other nodes at its local
      // rank (its rail).
      const std::vector<int>& m = orders[0];
      const Topology& any = ts[0];
      for (int v = 0; v < n; ++v) {
        const int r = m[static_cast<std::size_t>(v)];
        for (int mask = n / 2; mask > 0; mask >>= 1) {
          const int p = m[static_cast<std::size_t>(v ^ mask)];
          const bool inside = mask >= n / L;
          CHECK(any.same_node(r, p) == inside);
          if (!inside) CHECK(any.local_rank_of[static_cast<std::size_t>(p)] == any.local_rank_of[static_cast<std::size_t>(r)]);
        }
      }
    }
  }
  // Rank order stays where the order does not apply.
  for (const auto& sizes : std::vector<std::vector<int>>{{4}, {1, 1}, {2, 1}, {3, 3}, {2, 2, 2}, {1, 1, 1, 1}}) {
    std::vector<Topology> ts = topologies(sizes, false);
    const bool same = std::all_of(sizes.begin(), sizes.end(), [&](int s) { return s == sizes[0]; });
    ts[0].ranks_per_node = same ? sizes[0] : 0;
    std::vector<int> members{7};
    int me = -1;
    INFO(sizes.size() << " nodes, the first of " << sizes[0]);
    CHECK_FALSE(coll::node_aware_order(ts[0], &members, &me));
    CHECK(members.empty());
  }
}
