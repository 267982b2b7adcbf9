// Every collective against the MPI library's own, on host copies, for every
// algorithm (forced with DUCT_Tune), every root, counts 0/1/7/large-and-odd,
// in place wherever MPI allows it, on MPI_COMM_WORLD and on a split
// communicator in reversed rank order; v-variants with uneven counts (zeros
// included) and displacements out of rank order, with gaps. Inputs are
// integers, so results are exact: duct and MPI must agree byte for byte, and
// bytes outside the result (gaps, guards) must be untouched.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include <unistd.h>

#include "duct/duct.h"
#include "select/select.hpp"
#include "testutil.hpp"

using namespace duct;
using namespace duct::test;
using select::Coll;

namespace {

constexpr int kLarge = 100003;  // large and odd
constexpr int kPoison = -77777;

int value(int rank, std::size_t i) { return static_cast<int>((static_cast<std::size_t>(rank) * 1009 + i * 7) % 251) - 125; }

std::vector<int> pattern(int rank, std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(rank, i);
  return v;
}

struct Comm {
  MPI_Comm comm;
  int rank, size;
  const char* name;
};

std::vector<Comm> comms_under_test(std::vector<MPI_Comm>* owned) {
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, rank() % 2, size() - rank(), &split);
  owned->push_back(split);
  std::vector<Comm> out;
  for (auto [c, name] : {std::pair<MPI_Comm, const char*>{MPI_COMM_WORLD, "MPI_COMM_WORLD"}, {split, "split"}}) {
    Comm x{c, 0, 0, name};
    MPI_Comm_rank(c, &x.rank);
    MPI_Comm_size(c, &x.size);
    out.push_back(x);
  }
  return out;
}

// Run `body` once per algorithm of `coll`, forcing it.
void each_algorithm(Coll coll, const std::function<void(const char*)>& body) {
  for (const select::AlgoDesc& a : select::algorithms()) {
    if (a.coll != coll) continue;
    std::string rule = std::string(select::coll_name(coll)) + ":0-inf:" + a.name;
    REQUIRE(DUCT_Tune(rule.c_str()) == MPI_SUCCESS);
    body(a.name);
  }
  REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
}

std::string what(const char* call, const char* algo, const Comm& c, int count, int root, bool ip) {
  return std::string(call) + " [" + algo + "] on " + c.name + " (" + std::to_string(c.size) + " ranks) count=" +
         std::to_string(count) + (root >= 0 ? " root=" + std::to_string(root) : "") + (ip ? " in place" : "");
}

std::vector<int> counts_for(int count) { return count > 7 ? std::vector<int>{0, 1, 7, count} : std::vector<int>{0, 1, 7}; }

// Roots to try: all of them for small counts, the first and last for large.
std::vector<int> roots(const Comm& c, int count) {
  if (count <= 7) {
    std::vector<int> r(static_cast<std::size_t>(c.size));
    std::iota(r.begin(), r.end(), 0);
    return r;
  }
  return c.size > 1 ? std::vector<int>{0, c.size - 1} : std::vector<int>{0};
}

// v-variant counts: uneven, zeros included; displacements in reverse rank
// order with a gap of 3 elements between blocks.
std::vector<int> vcounts(int n, int base, int salt) {
  std::vector<int> c(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) c[static_cast<std::size_t>(i)] = ((i + salt) % 3 == 0) ? 0 : base + (i * 5 + salt) % 4;
  return c;
}
std::vector<int> vdispls(const std::vector<int>& counts) {
  const int n = static_cast<int>(counts.size());
  std::vector<int> d(counts.size());
  int pos = 0;
  for (int i = n - 1; i >= 0; --i) {
    d[static_cast<std::size_t>(i)] = pos;
    pos += counts[static_cast<std::size_t>(i)] + 3;
  }
  return d;
}
int span(const std::vector<int>& counts, const std::vector<int>& displs) {
  int s = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) s = std::max(s, displs[i] + counts[i]);
  return s;
}

}  // namespace

TEST_CASE("bcast equals MPI_Bcast for every algorithm and root", "[collectives][bcast]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::bcast, [&](const char* algo) {
      for (int count : counts_for(kLarge))
        for (int root : roots(c, count)) {
          INFO(what("DUCT_Bcast", algo, c, count, root, false));
          std::vector<int> init = c.rank == root ? pattern(root, static_cast<std::size_t>(count))
                                                 : std::vector<int>(static_cast<std::size_t>(count), kPoison);
          std::vector<int> ref = init;
          MPI_Bcast(ref.data(), count, MPI_INT, root, c.comm);
          IBuf b(init);
          Pending p(what("DUCT_Bcast", algo, c, count, root, false));
          CHECK(DUCT_Bcast(b.p(), count, MPI_INT, root, c.comm) == MPI_SUCCESS);
          CHECK(b.get() == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("reduce equals MPI_Reduce for every algorithm, root and in-place", "[collectives][reduce]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::reduce, [&](const char* algo) {
      for (int count : counts_for(kLarge))
        for (int root : roots(c, count))
          for (bool ip : {false, true}) {
            INFO(what("DUCT_Reduce", algo, c, count, root, ip));
            const std::size_t n = static_cast<std::size_t>(count);
            std::vector<int> in = pattern(c.rank, n), ref(n, kPoison);
            MPI_Reduce(in.data(), c.rank == root ? ref.data() : nullptr, count, MPI_INT, MPI_SUM, root, c.comm);
            const bool at_root_in_place = ip && c.rank == root;
            IBuf s(in), r(at_root_in_place ? in : std::vector<int>(n, kPoison));
            Pending p(what("DUCT_Reduce", algo, c, count, root, ip));
            CHECK(DUCT_Reduce(at_root_in_place ? MPI_IN_PLACE : s.p(), c.rank == root ? r.p() : nullptr, count, MPI_INT,
                              MPI_SUM, root, c.comm) == MPI_SUCCESS);
            if (c.rank == root) CHECK(r.get() == ref);
            CHECK(s.get() == in);  // the send buffer is read only
          }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("allgather equals MPI_Allgather for every algorithm and in-place", "[collectives][allgather]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::allgather, [&](const char* algo) {
      for (int count : counts_for(kLarge / 4))
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Allgather", algo, c, count, -1, ip));
          const std::size_t n = static_cast<std::size_t>(count), total = n * static_cast<std::size_t>(c.size);
          std::vector<int> in = pattern(c.rank, n), ref(total, kPoison);
          MPI_Allgather(in.data(), count, MPI_INT, ref.data(), count, MPI_INT, c.comm);
          std::vector<int> init(total, kPoison);
          if (ip) std::copy(in.begin(), in.end(), init.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(c.rank)));
          IBuf s(in), r(init);
          Pending p(what("DUCT_Allgather", algo, c, count, -1, ip));
          CHECK(DUCT_Allgather(ip ? MPI_IN_PLACE : s.p(), count, MPI_INT, r.p(), count, MPI_INT, c.comm) == MPI_SUCCESS);
          CHECK(r.get() == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("allgatherv equals MPI_Allgatherv with uneven counts and permuted displacements", "[collectives][allgatherv]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::allgatherv, [&](const char* algo) {
      for (int base : {0, 1, 7, kLarge / 8})
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Allgatherv", algo, c, base, -1, ip));
          std::vector<int> counts = vcounts(c.size, base, 1), displs = vdispls(counts);
          const int mine = counts[static_cast<std::size_t>(c.rank)];
          const std::size_t total = static_cast<std::size_t>(span(counts, displs));
          std::vector<int> in = pattern(c.rank, static_cast<std::size_t>(mine)), ref(total, kPoison);
          MPI_Allgatherv(in.data(), mine, MPI_INT, ref.data(), counts.data(), displs.data(), MPI_INT, c.comm);
          std::vector<int> init(total, kPoison);
          if (ip) std::copy(in.begin(), in.end(), init.begin() + displs[static_cast<std::size_t>(c.rank)]);
          IBuf s(in), r(init);
          Pending p(what("DUCT_Allgatherv", algo, c, base, -1, ip));
          CHECK(DUCT_Allgatherv(ip ? MPI_IN_PLACE : s.p(), mine, MPI_INT, r.p(), counts.data(), displs.data(), MPI_INT,
                                c.comm) == MPI_SUCCESS);
          CHECK(r.get() == ref);  // gaps keep the poison
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("reduce_scatter_block equals MPI_Reduce_scatter_block", "[collectives][reduce_scatter]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::reduce_scatter_block, [&](const char* algo) {
      for (int count : counts_for(kLarge / 4))
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Reduce_scatter_block", algo, c, count, -1, ip));
          const std::size_t n = static_cast<std::size_t>(count), total = n * static_cast<std::size_t>(c.size);
          std::vector<int> in = pattern(c.rank, total), ref(n, kPoison);
          MPI_Reduce_scatter_block(in.data(), ref.data(), count, MPI_INT, MPI_SUM, c.comm);
          IBuf s(in), r(ip ? in : std::vector<int>(n, kPoison));
          Pending p(what("DUCT_Reduce_scatter_block", algo, c, count, -1, ip));
          CHECK(DUCT_Reduce_scatter_block(ip ? MPI_IN_PLACE : s.p(), r.p(), count, MPI_INT, MPI_SUM, c.comm) == MPI_SUCCESS);
          std::vector<int> got = r.get();
          got.resize(n);
          CHECK(got == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("reduce_scatter equals MPI_Reduce_scatter with uneven counts", "[collectives][reduce_scatter]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::reduce_scatter, [&](const char* algo) {
      for (int base : {0, 1, 7, kLarge / 8})
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Reduce_scatter", algo, c, base, -1, ip));
          std::vector<int> counts = vcounts(c.size, base, 2);
          const std::size_t total = static_cast<std::size_t>(std::accumulate(counts.begin(), counts.end(), 0));
          const std::size_t mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(c.rank)]);
          std::vector<int> in = pattern(c.rank, total), ref(mine, kPoison);
          MPI_Reduce_scatter(in.data(), ref.data(), counts.data(), MPI_INT, MPI_SUM, c.comm);
          IBuf s(in), r(ip ? in : std::vector<int>(std::max(mine, std::size_t{1}), kPoison));
          Pending p(what("DUCT_Reduce_scatter", algo, c, base, -1, ip));
          CHECK(DUCT_Reduce_scatter(ip ? MPI_IN_PLACE : s.p(), r.p(), counts.data(), MPI_INT, MPI_SUM, c.comm) ==
                MPI_SUCCESS);
          std::vector<int> got = r.get();
          got.resize(mine);
          CHECK(got == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

// The pipelined halving reduce-scatter cuts the vector into segments of
// megabytes, each piece sent to the rank whose block it falls in: uneven
// blocks (zeros among them) over several segments, so that pieces straddle
// the blocks' edges. Where it cannot serve (one node, nodes or ranks per
// node not powers of two) the rules serve the call, checked the same way.
TEST_CASE("reduce_scatter over several segments with uneven counts", "[collectives][reduce_scatter]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned)) {
    REQUIRE(DUCT_Tune("reduce_scatter:0-inf:pipelined_halving") == MPI_SUCCESS);
    for (bool ip : {false, true}) {
      INFO(what("DUCT_Reduce_scatter", "pipelined_halving", c, 700001, -1, ip));
      std::vector<int> counts = vcounts(c.size, 700001, 1);
      const std::size_t total = static_cast<std::size_t>(std::accumulate(counts.begin(), counts.end(), 0));
      const std::size_t mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(c.rank)]);
      std::vector<int> in = pattern(c.rank, total), ref(mine, kPoison);
      MPI_Reduce_scatter(in.data(), ref.data(), counts.data(), MPI_INT, MPI_SUM, c.comm);
      IBuf s(in), r(ip ? in : std::vector<int>(std::max(mine, std::size_t{1}), kPoison));
      Pending p(what("DUCT_Reduce_scatter", "pipelined_halving", c, 700001, -1, ip));
      CHECK(DUCT_Reduce_scatter(ip ? MPI_IN_PLACE : s.p(), r.p(), counts.data(), MPI_INT, MPI_SUM, c.comm) ==
            MPI_SUCCESS);
      std::vector<int> got = r.get();
      got.resize(mine);
      CHECK(got == ref);
    }
    REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
  }
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("alltoall equals MPI_Alltoall for every algorithm and in-place", "[collectives][alltoall]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::alltoall, [&](const char* algo) {
      for (int count : counts_for(kLarge / 8))
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Alltoall", algo, c, count, -1, ip));
          const std::size_t total = static_cast<std::size_t>(count) * static_cast<std::size_t>(c.size);
          std::vector<int> in = pattern(c.rank, total), ref(total, kPoison);
          MPI_Alltoall(in.data(), count, MPI_INT, ref.data(), count, MPI_INT, c.comm);
          IBuf s(in), r(ip ? in : std::vector<int>(total, kPoison));
          Pending p(what("DUCT_Alltoall", algo, c, count, -1, ip));
          CHECK(DUCT_Alltoall(ip ? MPI_IN_PLACE : s.p(), count, MPI_INT, r.p(), count, MPI_INT, c.comm) == MPI_SUCCESS);
          CHECK(r.get() == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("alltoallv equals MPI_Alltoallv with uneven counts and permuted displacements", "[collectives][alltoallv]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::alltoallv, [&](const char* algo) {
      for (int base : {0, 1, 7, kLarge / 16})
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Alltoallv", algo, c, base, -1, ip));
          const int n = c.size, me = c.rank;
          // I send f(me, j) to j and receive f(j, me) from j; in place both are f(j, me).
          auto f = [&](int from, int to) { return ((from + 2 * to) % 3 == 0) ? 0 : base + (from * 3 + to) % 4; };
          std::vector<int> sc(static_cast<std::size_t>(n)), rc(static_cast<std::size_t>(n));
          for (int j = 0; j < n; ++j) {
            sc[static_cast<std::size_t>(j)] = ip ? f(j, me) : f(me, j);
            rc[static_cast<std::size_t>(j)] = f(j, me);
          }
          if (ip)  // in place needs symmetric counts: what j sends me equals what I send j
            for (int j = 0; j < n; ++j) rc[static_cast<std::size_t>(j)] = sc[static_cast<std::size_t>(j)] = f(std::min(j, me), std::max(j, me));
          std::vector<int> sd = vdispls(sc), rd = vdispls(rc);  // blocks in reverse rank order, with gaps
          const std::size_t ssize = static_cast<std::size_t>(span(sc, sd)), rsize = static_cast<std::size_t>(span(rc, rd));
          std::vector<int> in = pattern(me, std::max(ssize, rsize)), ref(rsize, kPoison);
          std::vector<int> init = ip ? std::vector<int>(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(rsize))
                                     : std::vector<int>(rsize, kPoison);
          if (ip) {
            ref = init;
            MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_INT, ref.data(), rc.data(), rd.data(), MPI_INT, c.comm);
          } else {
            MPI_Alltoallv(in.data(), sc.data(), sd.data(), MPI_INT, ref.data(), rc.data(), rd.data(), MPI_INT, c.comm);
          }
          IBuf s(in), r(init);
          Pending p(what("DUCT_Alltoallv", algo, c, base, -1, ip));
          if (ip)
            CHECK(DUCT_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_INT, r.p(), rc.data(), rd.data(), MPI_INT, c.comm) ==
                  MPI_SUCCESS);
          else
            CHECK(DUCT_Alltoallv(s.p(), sc.data(), sd.data(), MPI_INT, r.p(), rc.data(), rd.data(), MPI_INT, c.comm) ==
                  MPI_SUCCESS);
          CHECK(r.get() == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("gather equals MPI_Gather for every algorithm, root and in-place", "[collectives][gather]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::gather, [&](const char* algo) {
      for (int count : counts_for(kLarge / 4))
        for (int root : roots(c, count))
          for (bool ip : {false, true}) {
            INFO(what("DUCT_Gather", algo, c, count, root, ip));
            const std::size_t n = static_cast<std::size_t>(count), total = n * static_cast<std::size_t>(c.size);
            const bool is_root = c.rank == root, use_ip = ip && is_root;
            std::vector<int> in = pattern(c.rank, n), ref(total, kPoison);
            MPI_Gather(in.data(), count, MPI_INT, is_root ? ref.data() : nullptr, count, MPI_INT, root, c.comm);
            std::vector<int> init(total, kPoison);
            if (use_ip) std::copy(in.begin(), in.end(), init.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(root)));
            IBuf s(in), r(init);
            Pending p(what("DUCT_Gather", algo, c, count, root, ip));
            CHECK(DUCT_Gather(use_ip ? MPI_IN_PLACE : s.p(), count, MPI_INT, is_root ? r.p() : nullptr, count, MPI_INT,
                              root, c.comm) == MPI_SUCCESS);
            if (is_root) CHECK(r.get() == ref);
          }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("gatherv equals MPI_Gatherv with uneven counts and permuted displacements", "[collectives][gatherv]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::gatherv, [&](const char* algo) {
      for (int base : {0, 1, 7, kLarge / 8})
        for (int root : roots(c, base))
          for (bool ip : {false, true}) {
            INFO(what("DUCT_Gatherv", algo, c, base, root, ip));
            std::vector<int> counts = vcounts(c.size, base, 0), displs = vdispls(counts);
            const bool is_root = c.rank == root, use_ip = ip && is_root;
            const int mine = counts[static_cast<std::size_t>(c.rank)];
            const std::size_t total = static_cast<std::size_t>(span(counts, displs));
            std::vector<int> in = pattern(c.rank, static_cast<std::size_t>(mine)), ref(total, kPoison);
            MPI_Gatherv(in.data(), mine, MPI_INT, ref.data(), counts.data(), displs.data(), MPI_INT, root, c.comm);
            std::vector<int> init(total, kPoison);
            if (use_ip) std::copy(in.begin(), in.end(), init.begin() + displs[static_cast<std::size_t>(root)]);
            IBuf s(in), r(init);
            Pending p(what("DUCT_Gatherv", algo, c, base, root, ip));
            CHECK(DUCT_Gatherv(use_ip ? MPI_IN_PLACE : s.p(), mine, MPI_INT, is_root ? r.p() : nullptr,
                               is_root ? counts.data() : nullptr, is_root ? displs.data() : nullptr, MPI_INT, root,
                               c.comm) == MPI_SUCCESS);
            if (is_root) CHECK(r.get() == ref);
          }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("scatter equals MPI_Scatter for every algorithm, root and in-place", "[collectives][scatter]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::scatter, [&](const char* algo) {
      for (int count : counts_for(kLarge / 4))
        for (int root : roots(c, count))
          for (bool ip : {false, true}) {
            INFO(what("DUCT_Scatter", algo, c, count, root, ip));
            const std::size_t n = static_cast<std::size_t>(count), total = n * static_cast<std::size_t>(c.size);
            const bool is_root = c.rank == root, use_ip = ip && is_root;
            std::vector<int> in = pattern(root, total), ref(n, kPoison);
            MPI_Scatter(is_root ? in.data() : nullptr, count, MPI_INT, ref.data(), count, MPI_INT, root, c.comm);
            IBuf s(in), r(std::vector<int>(n, kPoison));
            Pending p(what("DUCT_Scatter", algo, c, count, root, ip));
            CHECK(DUCT_Scatter(is_root ? s.p() : nullptr, count, MPI_INT, use_ip ? MPI_IN_PLACE : r.p(), count, MPI_INT,
                               root, c.comm) == MPI_SUCCESS);
            if (!use_ip) CHECK(r.get() == ref);
            if (is_root) CHECK(s.get() == in);  // the root's send buffer is read only, in place too
          }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("scatterv equals MPI_Scatterv with uneven counts and permuted displacements", "[collectives][scatterv]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::scatterv, [&](const char* algo) {
      for (int base : {0, 1, 7, kLarge / 8})
        for (int root : roots(c, base))
          for (bool ip : {false, true}) {
            INFO(what("DUCT_Scatterv", algo, c, base, root, ip));
            std::vector<int> counts = vcounts(c.size, base, 1), displs = vdispls(counts);
            const bool is_root = c.rank == root, use_ip = ip && is_root;
            const int mine = counts[static_cast<std::size_t>(c.rank)];
            std::vector<int> in = pattern(root, static_cast<std::size_t>(span(counts, displs))),
                             ref(static_cast<std::size_t>(mine), kPoison);
            MPI_Scatterv(in.data(), counts.data(), displs.data(), MPI_INT, ref.data(), mine, MPI_INT, root, c.comm);
            IBuf s(in), r(std::vector<int>(static_cast<std::size_t>(mine), kPoison));
            Pending p(what("DUCT_Scatterv", algo, c, base, root, ip));
            CHECK(DUCT_Scatterv(is_root ? s.p() : nullptr, is_root ? counts.data() : nullptr,
                                is_root ? displs.data() : nullptr, MPI_INT, use_ip ? MPI_IN_PLACE : r.p(), mine, MPI_INT,
                                root, c.comm) == MPI_SUCCESS);
            if (!use_ip) CHECK(r.get() == ref);
          }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

TEST_CASE("barrier holds every rank until the last one arrives", "[collectives][barrier]") {
  each_algorithm(Coll::barrier, [&](const char* algo) {
    for (int last = 0; last < std::min(size(), 3); ++last) {
      INFO("DUCT_Barrier [" << algo << "], rank " << last << " arrives 60 ms late");
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (rank() == last) usleep(60000);
      {
        Pending p(std::string("DUCT_Barrier [") + algo + "]");
        CHECK(DUCT_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
      }
      double waited = MPI_Wtime() - t0;
      if (size() > 1) CHECK(waited >= 0.050);
    }
    for (int i = 0; i < 200; ++i) CHECK(DUCT_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);  // back to back
  });
}

TEST_CASE("ranks may pass different datatypes with the same type signature", "[collectives][datatypes]") {
  // Rank 0 sends 4 MPI_INTs, others a contiguous type of 4 ints (count 1);
  // receivers use a strided type. MPI allows any combination whose type
  // signatures match: every rank must still take duct's path.
  MPI_Datatype four, strided;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  MPI_Type_vector(4, 1, 2, MPI_INT, &strided);  // 4 ints, one every other int
  MPI_Type_commit(&strided);
  const int n = size();
  std::vector<int> in = pattern(rank(), 4);
  // Allgather into a strided receive buffer: 2*4 ints per rank (the gaps keep the poison).
  std::vector<int> ref(static_cast<std::size_t>(8 * n), kPoison), init = ref;
  MPI_Aint lb, ext;
  MPI_Type_get_extent(strided, &lb, &ext);
  MPI_Datatype strided_r;  // resized so consecutive blocks follow each other
  MPI_Type_create_resized(strided, 0, 8 * static_cast<MPI_Aint>(sizeof(int)), &strided_r);
  MPI_Type_commit(&strided_r);
  MPI_Allgather(in.data(), 4, MPI_INT, ref.data(), 1, strided_r, MPI_COMM_WORLD);
  IBuf s(in), r(init);
  {
    Pending p("DUCT_Allgather with mixed datatypes");
    if (rank() == 0)
      CHECK(DUCT_Allgather(s.p(), 4, MPI_INT, r.p(), 1, strided_r, MPI_COMM_WORLD) == MPI_SUCCESS);
    else
      CHECK(DUCT_Allgather(s.p(), 1, four, r.p(), 1, strided_r, MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  CHECK(r.get() == ref);
  // Bcast: the root packs a strided buffer, others receive contiguous ints.
  std::vector<int> b(8, kPoison), bref;
  if (rank() == 0)
    for (int i = 0; i < 4; ++i) b[static_cast<std::size_t>(2 * i)] = 100 + i;
  {
    IBuf bb(b);
    Pending p("DUCT_Bcast with mixed datatypes");
    CHECK(DUCT_Bcast(bb.p(), rank() == 0 ? 1 : 4, rank() == 0 ? strided : MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    std::vector<int> got = bb.get();
    if (rank() == 0)
      CHECK(got == b);
    else
      CHECK(std::vector<int>(got.begin(), got.begin() + 4) == std::vector<int>({100, 101, 102, 103}));
  }
  MPI_Type_free(&four);
  MPI_Type_free(&strided);
  MPI_Type_free(&strided_r);
}

TEST_CASE("large-count forms give the same results", "[collectives][large-count]") {
  const int n = size();
  std::vector<int> in = pattern(rank(), 5), ref(static_cast<std::size_t>(5 * n));
  MPI_Allgather(in.data(), 5, MPI_INT, ref.data(), 5, MPI_INT, MPI_COMM_WORLD);
  IBuf s(in), r(std::vector<int>(static_cast<std::size_t>(5 * n), kPoison));
  Pending p("_c forms");
  CHECK(DUCT_Allgather_c(s.p(), 5, MPI_INT, r.p(), 5, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(r.get() == ref);
  std::vector<int> b = rank() == 0 ? pattern(0, 9) : std::vector<int>(9, kPoison);
  IBuf bb(b);
  CHECK(DUCT_Bcast_c(bb.p(), 9, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(bb.get() == pattern(0, 9));
  std::vector<MPI_Count> counts(static_cast<std::size_t>(n), 2);
  std::vector<MPI_Aint> displs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) displs[static_cast<std::size_t>(i)] = 2 * (n - 1 - i);
  std::vector<int> gin = pattern(rank(), 2), gref(static_cast<std::size_t>(2 * n)), icounts(static_cast<std::size_t>(n), 2),
                   idispls(displs.begin(), displs.end());
  MPI_Allgatherv(gin.data(), 2, MPI_INT, gref.data(), icounts.data(), idispls.data(), MPI_INT, MPI_COMM_WORLD);
  IBuf gs(gin), gr(std::vector<int>(static_cast<std::size_t>(2 * n), kPoison));
  CHECK(DUCT_Allgatherv_c(gs.p(), 2, MPI_INT, gr.p(), counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(gr.get() == gref);
  CHECK(DUCT_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
}

TEST_CASE("allreduce equals MPI_Allreduce for every algorithm and in-place", "[collectives][allreduce]") {
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    each_algorithm(Coll::allreduce, [&](const char* algo) {
      for (int count : counts_for(kLarge))
        for (bool ip : {false, true}) {
          INFO(what("DUCT_Allreduce", algo, c, count, -1, ip));
          const std::size_t n = static_cast<std::size_t>(count);
          std::vector<int> in = pattern(c.rank, n), ref(n, kPoison);
          MPI_Allreduce(in.data(), ref.data(), count, MPI_INT, MPI_SUM, c.comm);
          IBuf s(in), r(ip ? in : std::vector<int>(n, kPoison));
          Pending p(what("DUCT_Allreduce", algo, c, count, -1, ip));
          CHECK(DUCT_Allreduce(ip ? MPI_IN_PLACE : s.p(), r.p(), count, MPI_INT, MPI_SUM, c.comm) == MPI_SUCCESS);
          CHECK(r.get() == ref);
        }
    });
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}

// The built-in rules (no DUCT_Tune), repeated calls of one size: on one
// node the first blocking calls of a size alternate the shared-memory
// rounds and the single copy, timed, and the ranks then keep the faster
// (DUCT_MEASURE, select/trial.hpp). Every call, during the trial and
// after, must give MPI's result, whatever the root and in place or not,
// and a nonblocking call in the middle of the trial must match too.
TEST_CASE("repeated calls of one size at the built-in rules equal MPI's, through the measured choice",
          "[collectives][measured]") {
  REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
  constexpr int kRepeats = 10;  // more than the trial's calls (select::Trial::kCalls)
  std::vector<MPI_Comm> owned;
  for (const Comm& c : comms_under_test(&owned))
    for (std::size_t total : {std::size_t{32} << 10, std::size_t{256} << 10}) {
      const int block = static_cast<int>(total / sizeof(int) / static_cast<std::size_t>(c.size));
      const std::size_t n = static_cast<std::size_t>(block), all = n * static_cast<std::size_t>(c.size);
      for (int k = 0; k < kRepeats; ++k) {
        const bool ip = k % 3 == 2, nb = k == 3;
        const int root = k % c.size, salt = 17 * k;
        MPI_Request req = MPI_REQUEST_NULL;
        auto done = [&](int rc) {
          CHECK(rc == MPI_SUCCESS);
          if (nb) CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        };
        {
          INFO(what(nb ? "DUCT_Iallgather" : "DUCT_Allgather", "built-in", c, block, -1, ip) + " call " + std::to_string(k));
          std::vector<int> in = pattern(c.rank + salt, n), ref(all, kPoison), init(all, kPoison);
          MPI_Allgather(in.data(), block, MPI_INT, ref.data(), block, MPI_INT, c.comm);
          if (ip) std::copy(in.begin(), in.end(), init.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(c.rank)));
          IBuf s(in), r(init);
          Pending p("DUCT_Allgather, repeated");
          const void* sb = ip ? MPI_IN_PLACE : s.p();
          done(nb ? DUCT_Iallgather(sb, block, MPI_INT, r.p(), block, MPI_INT, c.comm, &req)
                  : DUCT_Allgather(sb, block, MPI_INT, r.p(), block, MPI_INT, c.comm));
          CHECK(r.get() == ref);
        }
        {
          INFO(what(nb ? "DUCT_Ialltoall" : "DUCT_Alltoall", "built-in", c, block, -1, ip) + " call " + std::to_string(k));
          std::vector<int> in = pattern(c.rank + salt, all), ref(all, kPoison);
          MPI_Alltoall(in.data(), block, MPI_INT, ref.data(), block, MPI_INT, c.comm);
          IBuf s(in), r(ip ? in : std::vector<int>(all, kPoison));
          Pending p("DUCT_Alltoall, repeated");
          const void* sb = ip ? MPI_IN_PLACE : s.p();
          done(nb ? DUCT_Ialltoall(sb, block, MPI_INT, r.p(), block, MPI_INT, c.comm, &req)
                  : DUCT_Alltoall(sb, block, MPI_INT, r.p(), block, MPI_INT, c.comm));
          CHECK(r.get() == ref);
        }
        {
          const int count = static_cast<int>(all);
          INFO(what(nb ? "DUCT_Ibcast" : "DUCT_Bcast", "built-in", c, count, root, false) + " call " + std::to_string(k));
          std::vector<int> init = c.rank == root ? pattern(root + salt, all) : std::vector<int>(all, kPoison);
          std::vector<int> ref = init;
          MPI_Bcast(ref.data(), count, MPI_INT, root, c.comm);
          IBuf b(init);
          Pending p("DUCT_Bcast, repeated");
          done(nb ? DUCT_Ibcast(b.p(), count, MPI_INT, root, c.comm, &req) : DUCT_Bcast(b.p(), count, MPI_INT, root, c.comm));
          CHECK(b.get() == ref);
        }
        {
          INFO(what(nb ? "DUCT_Igather" : "DUCT_Gather", "built-in", c, block, root, ip) + " call " + std::to_string(k));
          const bool is_root = c.rank == root, use_ip = ip && is_root;
          std::vector<int> in = pattern(c.rank + salt, n), ref(all, kPoison), init(all, kPoison);
          MPI_Gather(in.data(), block, MPI_INT, is_root ? ref.data() : nullptr, block, MPI_INT, root, c.comm);
          if (use_ip) std::copy(in.begin(), in.end(), init.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(c.rank)));
          IBuf s(in), r(init);
          Pending p("DUCT_Gather, repeated");
          const void* sb = use_ip ? MPI_IN_PLACE : s.p();
          void* rb = is_root ? r.p() : nullptr;
          done(nb ? DUCT_Igather(sb, block, MPI_INT, rb, block, MPI_INT, root, c.comm, &req)
                  : DUCT_Gather(sb, block, MPI_INT, rb, block, MPI_INT, root, c.comm));
          if (is_root) CHECK(r.get() == ref);
          CHECK(s.get() == in);
        }
        {
          INFO(what(nb ? "DUCT_Iscatter" : "DUCT_Scatter", "built-in", c, block, root, ip) + " call " + std::to_string(k));
          const bool is_root = c.rank == root, use_ip = ip && is_root;
          std::vector<int> in = pattern(root + salt, all), ref(n, kPoison);
          MPI_Scatter(is_root ? in.data() : nullptr, block, MPI_INT, ref.data(), block, MPI_INT, root, c.comm);
          IBuf s(in), r(std::vector<int>(n, kPoison));
          Pending p("DUCT_Scatter, repeated");
          const void* sb = is_root ? s.p() : nullptr;
          void* rb = use_ip ? MPI_IN_PLACE : r.p();
          done(nb ? DUCT_Iscatter(sb, block, MPI_INT, rb, block, MPI_INT, root, c.comm, &req)
                  : DUCT_Scatter(sb, block, MPI_INT, rb, block, MPI_INT, root, c.comm));
          if (!use_ip) CHECK(r.get() == ref);
          if (is_root) CHECK(s.get() == in);
        }
      }
    }
  for (MPI_Comm& m : owned) MPI_Comm_free(&m);
}
