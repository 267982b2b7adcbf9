// Selection rules: the rules file's form (comments, lines), and the order
// of the three sources (DUCT_TUNE, the rules file, the built-in rules).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "select/ranges.hpp"
#include "select/select.hpp"
#include "select/trial.hpp"

using namespace duct::select;

namespace {

Query single_node(Coll c, std::size_t bytes, int n) {
  Query q;
  q.coll = c;
  q.bytes = bytes;
  q.comm_size = n;
  q.num_nodes = 1;
  q.shm_bytes = 64 << 10;
  q.ranks_per_node = n;
  return q;
}

std::string name(int algo) { return algo >= 0 ? algorithms()[static_cast<size_t>(algo)].name : "?"; }

}  // namespace

TEST_CASE("rule groups: one per rule, comments removed, by collective", "[select]") {
  const std::string text =
      "# head\n allreduce/node/n=2-2:0-4k:shm,4k-inf:ring # tail\n\nallgatherv:0-inf:ring; allgather:0-8:bruck\r\n"
      "#allreduce:0-inf:rabenseifner\nallreduce:0-inf:ring";
  const std::vector<std::string> all = rule_groups(text);
  REQUIRE(all.size() == 4);
  CHECK(all[0] == "allreduce/node/n=2-2:0-4k:shm,4k-inf:ring");
  CHECK(all[2] == "allgather:0-8:bruck");
  const std::vector<std::string> ar = rule_groups(text, Coll::allreduce);
  REQUIRE(ar.size() == 2);
  CHECK(ar[1] == "allreduce:0-inf:ring");
  // allgather is not a prefix match of allgatherv.
  const std::vector<std::string> ag = rule_groups(text, Coll::allgather);
  REQUIRE(ag.size() == 1);
  CHECK(ag[0] == "allgather:0-8:bruck");
  CHECK(rule_groups(text, Coll::bcast).empty());
  CHECK(rule_groups(" # only a comment\n;;\n").empty());
}

TEST_CASE("the pow2 qualifier: only communicators of a power-of-two size", "[select]") {
  Table t;
  REQUIRE(Table::make("allgather/nodes/pow2:0-inf:recursive_doubling,0-inf:ring", &t));
  Query q;
  q.coll = Coll::allgather;
  q.bytes = 1 << 20;
  q.num_nodes = 4;
  for (int n : {8, 16, 256}) {
    q.comm_size = n;
    CHECK(name(t.choose(q)) == "recursive_doubling");
  }
  for (int n : {6, 12, 24}) {
    q.comm_size = n;
    CHECK(name(t.choose(q)) == "ring");  // the pow2 rule does not match; the next one serves
  }
  CHECK(t.describe().find("[nodes/pow2]") != std::string::npos);
  std::vector<Rule> r;
  REQUIRE(parse_rules("reduce_scatter/pow2/n=64-inf:16k-inf:recursive_halving", &r));
  REQUIRE(r.size() == 1);
  CHECK(r[0].pow2);
  CHECK(r[0].nmin == 64);
}

TEST_CASE("rules files: '#' comments and newlines separate rules", "[select]") {
  std::vector<Rule> r;
  REQUIRE(parse_rules("# a comment\nallreduce/node/n=2-2:0-4k:shm,4k-inf:ring  # tail\n\n"
                      "bcast:0-inf:binomial\r\n# allreduce:0-inf:rabenseifner\n",
                      &r));
  REQUIRE(r.size() == 3);
  CHECK(r[0].coll == Coll::allreduce);
  CHECK(r[0].nodes == 0);
  CHECK(r[0].nmin == 2);
  CHECK(r[0].nmax == 2);
  CHECK(r[0].hi == 4096);
  CHECK(name(r[1].algo) == "ring");
  CHECK(r[2].coll == Coll::bcast);
  // Errors still name what is wrong.
  CHECK_FALSE(parse_rules("allreduce:0-inf:nosuch\n", &r));
  Table t;
  duct::Status st = Table::make("", "bcast:0-inf:nosuch\n", "/x/tune.rules", &t);
  REQUIRE_FALSE(st);
  CHECK(st.message().find("/x/tune.rules") != std::string::npos);
  CHECK(st.message().find("nosuch") != std::string::npos);
}

TEST_CASE("the rules file goes before the built-in rules; DUCT_TUNE replaces both", "[select]") {
  Table builtin, filed, tuned;
  REQUIRE(Table::make("", &builtin));
  const std::string file = "allreduce/node/n=2-2:0-inf:ring\n";
  REQUIRE(Table::make("", file, "f", &filed));
  REQUIRE(Table::make("allreduce:0-inf:rabenseifner", file, "f", &tuned));
  // The built-in choice at 8 B on 2 ranks is shared memory.
  CHECK(name(builtin.choose(single_node(Coll::allreduce, 8, 2))) == "shm");
  // The file's rule serves its shape ...
  std::string why;
  CHECK(name(filed.choose(single_node(Coll::allreduce, 8, 2), &why)) == "ring");
  CHECK(why.find("of the rules file") != std::string::npos);
  // ... and other shapes keep the built-in rules.
  CHECK(name(filed.choose(single_node(Coll::allreduce, 8, 3))) == "shm");
  Query nodes = single_node(Coll::allreduce, 8, 2);
  nodes.num_nodes = 2;
  nodes.ranks_per_node = 1;
  nodes.shm_bytes = 0;
  CHECK(name(filed.choose(nodes)) == name(builtin.choose(nodes)));
  // DUCT_TUNE names allreduce: its rules replace the file's and the built-in ones.
  CHECK(name(tuned.choose(single_node(Coll::allreduce, 8, 2), &why)) == "rabenseifner");
  CHECK(why.find("of DUCT_TUNE") != std::string::npos);
  CHECK(name(tuned.choose(single_node(Coll::allreduce, 8, 3))) == "rabenseifner");
  // describe() marks where rules came from.
  CHECK(filed.describe().find("ring{file}") != std::string::npos);
  CHECK(tuned.describe().find("rabenseifner{DUCT_TUNE}") != std::string::npos);
}

// duct-tune's ranges (select/ranges.hpp): only where a challenger won.
TEST_CASE("duct-tune rules claim only the sizes a challenger won", "[select][tune]") {
  const int shm = 1, ring = 2, rab = 3, bin = 4;
  auto ranges = [](const std::vector<TunedSize>& s, bool sized = true, bool from_zero = true) {
    return won_ranges(s, sized, from_zero);
  };
  auto same = [](const std::vector<TunedRange>& got, const std::vector<TunedRange>& want) {
    bool ok = got.size() == want.size();
    for (std::size_t i = 0; ok && i < got.size(); ++i)
      ok = got[i].lo == want[i].lo && got[i].hi == want[i].hi && got[i].algo == want[i].algo;
    return ok;
  };
  // Nothing won: no ranges, also where the built-in choice changes between
  // two measured sizes (the 8-rank allreduce of 2026-11-26: shm at 4 KiB,
  // ring at 32 KiB, both built-in; its crossover at 16 KiB must stay).
  CHECK(ranges({{8, shm, shm}, {4096, shm, shm}, {32768, ring, ring}, {262144, ring, ring}}).empty());
  // One win between sizes where the built-in choice held: from the size to
  // the next power of two, no further toward either neighbour.
  CHECK(same(ranges({{4096, bin, bin}, {32768, ring, bin}, {262144, bin, bin}}), {{32768, 65536, ring}}));
  // A non-power-of-two size: up to the power of two above it.
  CHECK(same(ranges({{8, shm, shm}, {3000, ring, shm}, {24000, shm, shm}}), {{3000, 4096, ring}}));
  // A run won by one algorithm spans the sizes between its ends.
  CHECK(same(ranges({{8, shm, shm}, {64, bin, shm}, {512, bin, shm}, {4096, shm, shm}}), {{64, 1024, bin}}));
  // Two challengers side by side meet at the geometric mean (a power of two).
  CHECK(same(ranges({{4096, shm, shm}, {32768, rab, ring}, {262144, shm, ring}, {2097152, ring, ring}}),
             {{32768, 65536, rab}, {65536, 524288, shm}}));
  // The grid's first size from 0 when the grid starts at the smallest size;
  // else from the size itself. The last size: to the power of two above it.
  CHECK(same(ranges({{8, bin, shm}, {64, shm, shm}}), {{0, 16, bin}}));
  CHECK(same(ranges({{8, bin, shm}, {64, shm, shm}}, true, false), {{8, 16, bin}}));
  CHECK(same(ranges({{8, shm, shm}, {1048576, ring, shm}}), {{1048576, 2097152, ring}}));
  // A barrier (no size): one range, every size.
  CHECK(same(ranges({{0, shm, bin}}, false), {{0, SIZE_MAX, shm}}));
  CHECK(ranges({{0, shm, shm}}, false).empty());
  // Boundaries: above a, at most b, a power of two near the geometric mean.
  CHECK(tune_boundary(4096, 32768) == 8192);
  CHECK(tune_boundary(32768, 65536) == 65536);
  CHECK(tune_boundary(1, 2) == 2);
}

// The rules across nodes by communicator size (lib/select/select.cpp, from
// simulation at 8 ranks per node): split_rail's ring per rail keeps only
// the sizes where it pays on many nodes; a few nodes keep the measured
// rules of the emulated cluster.
static std::string across(const Table& t, Coll c, int nodes, int ppn, std::size_t bytes) {
  Query q;
  q.coll = c;
  q.bytes = bytes;
  q.comm_size = nodes * ppn;
  q.num_nodes = nodes;
  q.ranks_per_node = ppn;
  return name(t.choose(q));
}

TEST_CASE("allgather across nodes: the rules by communicator size", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  const Coll ag = Coll::allgather;
  // 2 x 2 (the emulated cluster's measurements): hierarchical below 16 KiB, then split_rail.
  CHECK(across(t, ag, 2, 2, 4 << 10) == "hierarchical");
  CHECK(across(t, ag, 2, 2, 64 << 10) == "split_rail");
  // 8 x 8: recursive doubling to 16 MiB, then split_rail.
  CHECK(across(t, ag, 8, 8, 16 << 10) == "recursive_doubling");
  CHECK(across(t, ag, 8, 8, 256 << 10) == "recursive_doubling");
  CHECK(across(t, ag, 8, 8, 4 << 20) == "recursive_doubling");
  CHECK(across(t, ag, 8, 8, 16 << 20) == "split_rail");
  // 12 x 8 (not a power of two): hierarchical to 128 KiB, then split_rail.
  CHECK(across(t, ag, 12, 8, 64 << 10) == "hierarchical");
  CHECK(across(t, ag, 12, 8, 256 << 10) == "split_rail");
  // 16 x 8 and 64 x 8: recursive doubling at every size.
  for (int nodes : {16, 64}) {
    CHECK(across(t, ag, nodes, 8, 16 << 10) == "recursive_doubling");
    CHECK(across(t, ag, nodes, 8, 64 << 10) == "recursive_doubling");
    CHECK(across(t, ag, nodes, 8, 1 << 20) == "recursive_doubling");
    CHECK(across(t, ag, nodes, 8, 256 << 20) == "recursive_doubling");
  }
  // 24 x 8 (not a power of two): hierarchical below 64 KiB, Bruck to 1 MiB.
  CHECK(across(t, ag, 24, 8, 16 << 10) == "hierarchical");
  CHECK(across(t, ag, 24, 8, 64 << 10) == "bruck");
  CHECK(across(t, ag, 24, 8, 1 << 20) == "split_rail");
  // One rank per node on 9 or more nodes: Bruck at every size.
  CHECK(across(t, ag, 128, 1, 16 << 20) == "bruck");
}

TEST_CASE("alltoall across nodes: split_rail to 128 ranks of 8 per node, Bruck below 64 KiB beyond", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  const Coll a = Coll::alltoall;
  // 2 x 2 (the emulated cluster's rules): Bruck to 4 KiB, pairwise, split_rail from 32 KiB.
  CHECK(across(t, a, 2, 2, 2 << 10) == "bruck");
  CHECK(across(t, a, 2, 2, 16 << 10) == "pairwise");
  CHECK(across(t, a, 2, 2, 32 << 10) == "split_rail");
  // 2 x 8 and 16 x 8: split_rail (packed below 64 KiB a block) at every size.
  for (int nodes : {2, 16}) {
    CHECK(across(t, a, nodes, 8, 512) == "split_rail");
    CHECK(across(t, a, nodes, 8, 32 << 10) == "split_rail");
    CHECK(across(t, a, nodes, 8, 64 << 20) == "split_rail");
  }
  // 64 x 8, and 32 x 4: Bruck below 64 KiB, split_rail from it.
  for (auto [nodes, ppn] : {std::pair{64, 8}, std::pair{32, 4}}) {
    CHECK(across(t, a, nodes, ppn, 512) == "bruck");
    CHECK(across(t, a, nodes, ppn, (64 << 10) - 1) == "bruck");
    CHECK(across(t, a, nodes, ppn, 64 << 10) == "split_rail");
  }
}

TEST_CASE("barrier across nodes: two-level dissemination where every node holds the same ranks", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  const Coll b = Coll::barrier;
  CHECK(across(t, b, 1024, 8, 0) == "split_rail");
  CHECK(across(t, b, 2, 2, 0) == "split_rail");
  CHECK(across(t, b, 5, 3, 0) == "split_rail");
  CHECK(across(t, b, 64, 1, 0) == "dissemination");  // one rank per node: no node level
  Query q;  // 7 ranks on 3 nodes of different sizes
  q.coll = b;
  q.comm_size = 7;
  q.num_nodes = 3;
  q.ranks_per_node = 0;
  CHECK(name(t.choose(q)) == "dissemination");
}

TEST_CASE("scatter across nodes: the node-aware form on 64-1024 ranks of 8 per node", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  const Coll sc = Coll::scatter;
  CHECK(across(t, sc, 64, 8, 4 << 10) == "hierarchical");
  CHECK(across(t, sc, 8, 8, (64 << 10) - 1) == "hierarchical");
  CHECK(across(t, sc, 64, 8, 64 << 20) == "hierarchical");
  CHECK(across(t, sc, 128, 8, 4 << 10) == "hierarchical");  // 1024 ranks: its leaders' tree
  CHECK(across(t, sc, 128, 8, 64 << 20) == "hierarchical");
  CHECK(across(t, sc, 256, 8, 1 << 20) == "linear");       // 2048 ranks: as before
  CHECK(across(t, sc, 256, 8, 4 << 10) == "binomial");
  CHECK(across(t, sc, 64, 1, 4 << 10) == "binomial");   // one rank per node
  CHECK(across(t, sc, 2, 2, 2 << 10) == "binomial");    // the emulated cluster's rules
}

TEST_CASE("reduce_scatter across nodes: recursive halving at 64+ ranks, pipelined halving from 512 KiB, the pipelined pairwise form at 4 MiB+ on 64-127", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  for (Coll c : {Coll::reduce_scatter_block, Coll::reduce_scatter}) {
    CHECK(across(t, c, 2, 8, 64 << 10) == "split_rail");             // 16 ranks: the emulated cluster's rules
    CHECK(across(t, c, 8, 8, 256 << 10) == "recursive_halving");      // 64 ranks: below 512 KiB,
    CHECK(across(t, c, 8, 8, (512 << 10) - 1) == "recursive_halving");
    CHECK(across(t, c, 8, 8, 512 << 10) == "pipelined_halving");      // then pipelined halving to 4 MiB
    CHECK(across(t, c, 8, 8, (4 << 20) - 1) == "pipelined_halving");
    CHECK(across(t, c, 8, 8, 4 << 20) == "pipelined_pairwise");       // then the pipelined pairwise form
    CHECK(across(t, c, 8, 8, 64 << 20) == "pipelined_pairwise");
    CHECK(across(t, c, 32, 2, 1 << 20) == "pipelined_halving");       // 64 ranks of 2 per node
    CHECK(across(t, c, 16, 8, 16 << 10) == "recursive_halving");      // 128 ranks: from 16 KiB on,
    CHECK(across(t, c, 16, 8, (512 << 10) - 1) == "recursive_halving");
    CHECK(across(t, c, 16, 8, 512 << 10) == "pipelined_halving");     // pipelined halving from 512 KiB
    CHECK(across(t, c, 16, 8, 64 << 20) == "pipelined_halving");
    CHECK(across(t, c, 1024, 8, 16 << 20) == "pipelined_halving");    // 8192 ranks
    CHECK(across(t, c, 128, 1, 16 << 20) == "recursive_halving");     // one rank per node: no node level
    CHECK(across(t, c, 12, 8, 64 << 10) == "split_rail");             // 96 ranks, not a power of two
    CHECK(across(t, c, 12, 8, 1 << 20) == "pipelined_pairwise");      // 1-16 MiB
    CHECK(across(t, c, 12, 8, 16 << 20) == "split_rail");
  }
}

TEST_CASE("allreduce across nodes: recursive doubling to 128 KiB, Rabenseifner above, pipelined from 4 MiB, on 64+ ranks (split_rail 16 KiB-4 MiB on 8-64 x 8)", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  const Coll ar = Coll::allreduce;
  CHECK(across(t, ar, 16, 8, 8 << 10) == "recursive_doubling");  // a power of two: every size below 128 KiB
  CHECK(across(t, ar, 64, 8, 8) == "recursive_doubling");
  CHECK(across(t, ar, 12, 8, 8 << 10) == "hierarchical");        // 96 ranks, not a power of two
  CHECK(across(t, ar, 8, 8, 8 << 10) == "recursive_doubling");   // 64 ranks: below 16 KiB,
  CHECK(across(t, ar, 8, 8, 32 << 10) == "split_rail");          // then split_rail to 4 MiB
  CHECK(across(t, ar, 8, 8, 2 << 20) == "split_rail");
  for (int nodes : {16, 32, 64}) {  // 128-512 ranks: split_rail from 16 KiB
    CHECK(across(t, ar, nodes, 8, (16 << 10) - 4) == "recursive_doubling");
    CHECK(across(t, ar, nodes, 8, 16 << 10) == "split_rail");
    CHECK(across(t, ar, nodes, 8, 1 << 20) == "split_rail");
  }
  for (int nodes : {16, 32, 64}) {  // to 4 MiB on 128-512 ranks (256 and 512 since its rail halving)
    CHECK(across(t, ar, nodes, 8, 2 << 20) == "split_rail");
    CHECK(across(t, ar, nodes, 8, (4 << 20) - 4) == "split_rail");
    CHECK(across(t, ar, nodes, 8, 4 << 20) == "pipelined_rabenseifner");
  }
  CHECK(across(t, ar, 128, 8, 16 << 10) == "recursive_doubling"); // 1024 ranks: as before
  CHECK(across(t, ar, 128, 8, 128 << 10) == "rabenseifner");
  // From 4 MiB the pipelined two-level form, where every node holds the
  // same power of two of ranks; Rabenseifner's where they differ.
  CHECK(across(t, ar, 8, 8, 4 << 20) == "pipelined_rabenseifner");
  CHECK(across(t, ar, 8, 8, 16 << 20) == "pipelined_rabenseifner");
  CHECK(across(t, ar, 64, 8, 256 << 20) == "pipelined_rabenseifner");
  Query uneven;  // 64 ranks on 8 nodes that hold different numbers of them
  uneven.coll = ar;
  uneven.bytes = 16 << 20;
  uneven.comm_size = 64;
  uneven.num_nodes = 8;
  uneven.ranks_per_node = 0;
  CHECK(name(t.choose(uneven)) == "rabenseifner");
  CHECK(across(t, ar, 12, 8, 128 << 10) == "split_rail");        // 96 ranks, not a power of two
  CHECK(across(t, ar, 12, 8, 32 << 10) == "split_rail");
  CHECK(across(t, ar, 4, 8, 32 << 10) == "split_rail");          // 32 ranks: the rules measured on few nodes
}

TEST_CASE("gather across nodes: the node-aware form on 64-1024 ranks of 8 per node", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  const Coll g = Coll::gather;
  CHECK(across(t, g, 64, 8, 4 << 10) == "hierarchical");
  CHECK(across(t, g, 8, 8, 64 << 20) == "hierarchical");
  CHECK(across(t, g, 128, 8, 4 << 10) == "hierarchical");  // 1024 ranks: its leaders' tree
  CHECK(across(t, g, 256, 8, 4 << 10) == "binomial");      // 2048 ranks: as before
  CHECK(across(t, g, 64, 1, 1 << 20) == "linear");     // one rank per node
  CHECK(across(t, g, 2, 2, 1 << 10) == "binomial");    // the emulated cluster's rules
}

TEST_CASE("bcast and reduce across nodes: the node-aware form to 64 KiB on 64+ ranks of 8 per node", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  for (Coll c : {Coll::bcast, Coll::reduce}) {
    CHECK(across(t, c, 8, 8, 32 << 10) == "hierarchical");         // 64 ranks: below 64 KiB
    CHECK(across(t, c, 64, 8, (64 << 10) - 1) == "hierarchical");
    CHECK(across(t, c, 64, 8, 64 << 10) == "split_rail");          // then split_rail
    CHECK(across(t, c, 12, 8, 2 << 20) == "split_rail");
    CHECK(across(t, c, 4, 8, 16 << 10) == "split_rail");           // 32 ranks: from 16 KiB, as before
    CHECK(across(t, c, 2, 2, 8 << 10) == "hierarchical");          // the emulated cluster's rules
    CHECK(across(t, c, 2, 2, 16 << 10) == "split_rail");
  }
}

TEST_CASE("one node: the single-copy (cma) forms where the area allows cross-memory attach", "[select]") {
  Table t;
  REQUIRE(Table::make("", &t));
  auto with = [](Coll c, std::size_t bytes, int n, bool cma) {
    Query q = single_node(c, bytes, n);
    q.cma = cma;
    return q;
  };
  // 2 ranks: cma for the allgather and the alltoall from 32 KiB in all and
  // the scatter from 128 KiB, at every size above (2026-11-29: the led shm
  // rounds 0.53-0.92 of Open MPI there, cma 0.93-1.74); the bcast in shared
  // memory at every size.
  CHECK(name(t.choose(with(Coll::allgather, 16 << 10, 2, true))) == "shm");
  CHECK(name(t.choose(with(Coll::allgather, 32 << 10, 2, true))) == "cma");
  CHECK(name(t.choose(with(Coll::allgather, 64 << 10, 2, false))) == "shm");  // without cross-memory attach
  CHECK(name(t.choose(with(Coll::allgather, 64 << 20, 2, true))) == "cma");
  CHECK(name(t.choose(with(Coll::allgather, 8 << 20, 2, false))) == "shm");  // without cross-memory attach
  CHECK(name(t.choose(with(Coll::bcast, 64 << 10, 2, true))) == "shm");
  CHECK(name(t.choose(with(Coll::bcast, 8 << 20, 2, false))) == "shm");
  CHECK(name(t.choose(with(Coll::alltoall, 16 << 10, 2, true))) == "shm");
  CHECK(name(t.choose(with(Coll::alltoall, 32 << 10, 2, true))) == "cma");
  CHECK(name(t.choose(with(Coll::alltoall, 64 << 20, 2, true))) == "cma");
  CHECK(name(t.choose(with(Coll::scatter, 64 << 10, 2, true))) == "shm");
  CHECK(name(t.choose(with(Coll::scatter, 128 << 10, 2, true))) == "cma");
  CHECK(name(t.choose(with(Coll::scatter, 64 << 20, 2, true))) == "cma");
  CHECK(name(t.choose(with(Coll::scatter, 1 << 20, 2, false))) == "shm");  // without cross-memory attach
  // The reductions in shared memory at every size up to 4 ranks.
  CHECK(name(t.choose(with(Coll::allreduce, 64 << 20, 4, true))) == "shm");
  CHECK(name(t.choose(with(Coll::reduce, 64 << 20, 2, true))) == "shm");
  CHECK(name(t.choose(with(Coll::reduce_scatter, 64 << 20, 3, true))) == "shm");
  CHECK(name(t.choose(with(Coll::allreduce, 64 << 20, 5, true))) == "ring");
  // More ranks: scatter from 512 KiB; alltoall from 256 KiB at every size;
  // allgather, bcast and gather stay in shared memory at every size (its
  // copies in and out, pipelined through slots in cache, beat one reader's
  // copy out of memory there).
  CHECK(name(t.choose(with(Coll::scatter, 256 << 10, 4, true))) == "shm");
  CHECK(name(t.choose(with(Coll::scatter, 512 << 10, 4, true))) == "cma");
  CHECK(name(t.choose(with(Coll::alltoall, 128 << 10, 4, true))) == "shm");
  CHECK(name(t.choose(with(Coll::alltoall, 256 << 10, 4, true))) == "cma");
  CHECK(name(t.choose(with(Coll::alltoall, 64 << 20, 3, true))) == "cma");
  CHECK(name(t.choose(with(Coll::alltoall, 256 << 10, 5, true))) == "cma");
  CHECK(name(t.choose(with(Coll::allgather, 64 << 20, 4, true))) == "shm");
  CHECK(name(t.choose(with(Coll::bcast, 64 << 20, 4, true))) == "shm");
  CHECK(name(t.choose(with(Coll::gather, 64 << 20, 2, true))) == "shm");
  CHECK(name(t.choose(with(Coll::gather, 64 << 20, 4, false))) == "shm");
  // Without cross-memory attach the message forms as before.
  std::string why;
  CHECK(name(t.choose(with(Coll::allgather, 128 << 10, 2, false))) == "ring");
  CHECK(name(t.choose(with(Coll::alltoall, 256 << 10, 2, false), &why)) == "pairwise");
  CHECK(why.find("cross-memory attach") != std::string::npos);
  CHECK(name(t.choose(with(Coll::scatter, 1 << 20, 4, false))) == "linear");
  // Across nodes never.
  Query nodes = with(Coll::alltoall, 1 << 20, 4, true);
  nodes.num_nodes = 2;
  nodes.ranks_per_node = 2;
  nodes.shm_bytes = 0;
  CHECK(name(t.choose(nodes)) == "split_rail");
}

TEST_CASE("rules report their source: built in, file, DUCT_TUNE", "[select]") {
  Table builtin, filed, tuned;
  REQUIRE(Table::make("", &builtin));
  REQUIRE(Table::make("", "allgather/node/n=2-2:0-inf:ring\n", "f", &filed));
  REQUIRE(Table::make("allgather:0-inf:bruck", "", "f", &tuned));
  int source = -1;
  builtin.choose(single_node(Coll::allgather, 32 << 10, 2), nullptr, &source);
  CHECK(source == 0);
  filed.choose(single_node(Coll::allgather, 32 << 10, 2), nullptr, &source);
  CHECK(source == 1);
  filed.choose(single_node(Coll::allgather, 32 << 10, 3), nullptr, &source);
  CHECK(source == 0);  // the file's rule does not match 3 ranks: the built-in one serves
  tuned.choose(single_node(Coll::allgather, 32 << 10, 2), nullptr, &source);
  CHECK(source == 2);
}

TEST_CASE("a measured choice: alternate, keep each form's best, decide with the margin", "[select]") {
  Trial t;
  t.algo[0] = 7;
  t.algo[1] = 9;
  REQUIRE(t.trying());
  // Untimed calls (nonblocking, stream-ordered) take the rule's form and do not count.
  CHECK(t.next(false) == 7);
  CHECK(t.next(false) == 7);
  CHECK(t.calls == 0);
  // Timed calls alternate, starting with the rule's form.
  const double secs[Trial::kCalls] = {9e-6, 5e-6, 2e-6, 6e-6, 3e-6, 4e-6};
  for (int k = 0; k < Trial::kCalls; ++k) {
    CHECK_FALSE(t.due());
    CHECK(t.next(true) == (k % 2 == 0 ? 7 : 9));
    t.record(secs[k]);
  }
  CHECK(t.due());
  CHECK(t.best[0] == 2e-6);  // min of 9, 2, 3
  CHECK(t.best[1] == 4e-6);  // min of 5, 6, 4
  // The decision takes the slowest rank's best of each form.
  const double rule_wins[2] = {2e-6, 4e-6};
  CHECK(Trial::decide(rule_wins) == 0);
  const double other_wins[2] = {4e-6, 2e-6};
  CHECK(Trial::decide(other_wins) == 1);
  // Within the margin the rule's form stays.
  const double close[2] = {1.0, Trial::kMargin + 0.001};
  CHECK(Trial::decide(close) == 0);
  const double just_below[2] = {1.0, Trial::kMargin - 0.001};
  CHECK(Trial::decide(just_below) == 1);
  // A tie keeps the rule's form; a form that never ran (infinite) never wins.
  const double tie[2] = {3e-6, 3e-6};
  CHECK(Trial::decide(tie) == 0);
  const double inf = std::numeric_limits<double>::infinity();
  const double never[2] = {3e-6, inf};
  CHECK(Trial::decide(never) == 0);
  t.kept = 1;
  CHECK_FALSE(t.trying());
  CHECK_FALSE(t.due());
  CHECK(t.next(true) == 9);
  CHECK(t.next(false) == 9);
}
