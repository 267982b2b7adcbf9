// DUCT_CHECK: ranks compare each collective call before running it.
//
// Every rank contributes a signature of its call (collective, root,
// datatype, op, count or bytes, a hash of the counts array) to one
// MPI_Iallgather on the context's private communicator; every rank then
// holds all signatures and finds the same disagreement, so every rank
// returns the same Errc::mismatch error instead of a hang or corrupted
// memory. The v-collectives whose counts are split across ranks need a
// second exchange: alltoallv (an alltoall of what each rank sends to each)
// and gatherv / scatterv (the root's counts against each rank's own).
//
// The exchanges wait under DUCT_TIMEOUT like any collective, so a rank that
// never calls makes the others fail with a timeout rather than hang.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sched.h>

#include "coll/collectives.hpp"
#include "coll/wait.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace duct::coll {

namespace {

using select::Coll;

struct Sig {
  std::int64_t coll;
  std::int64_t root;
  std::int64_t dt;     // Elem x 16 + Category, or -1 for byte-moving collectives
  std::int64_t op;     // RedOp, or -1
  std::int64_t count;  // elements (reductions) or bytes (one block / the message)
  std::uint64_t layout_hash;  // FNV-1a over the counts array (allgatherv, reduce_scatter)
  std::int64_t own;    // this rank's own block in bytes (gatherv, scatterv)
  std::int64_t pad;
  char dt_name[32];    // "MPI_INT", for messages
};
static_assert(sizeof(Sig) == 96);

// What must be equal on every rank, per collective.
struct Fields {
  bool root, dt, op, count, layout;
};
Fields fields_of(Coll c) {
  switch (c) {
    case Coll::allreduce: return {false, true, true, true, false};
    case Coll::reduce: return {true, true, true, true, false};
    case Coll::reduce_scatter_block: return {false, true, true, true, false};
    case Coll::reduce_scatter: return {false, true, true, false, true};
    case Coll::bcast: return {true, false, false, true, false};
    case Coll::allgather:
    case Coll::alltoall: return {false, false, false, true, false};
    case Coll::gather:
    case Coll::scatter: return {true, false, false, true, false};
    case Coll::allgatherv: return {false, false, false, false, true};
    case Coll::gatherv:
    case Coll::scatterv: return {true, false, false, false, false};
    case Coll::alltoallv:
    case Coll::barrier:
    case Coll::count_: break;
  }
  return {false, false, false, false, false};
}

const char* call_name(std::int64_t c) {
  static const char* const names[] = {"DUCT_Allreduce", "DUCT_Bcast", "DUCT_Reduce", "DUCT_Allgather",
                                      "DUCT_Allgatherv", "DUCT_Reduce_scatter_block", "DUCT_Reduce_scatter",
                                      "DUCT_Alltoall", "DUCT_Alltoallv", "DUCT_Gather", "DUCT_Gatherv",
                                      "DUCT_Scatter", "DUCT_Scatterv", "DUCT_Barrier"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<std::size_t>(Coll::count_));
  return c >= 0 && c < static_cast<std::int64_t>(Coll::count_) ? names[c] : "an unknown collective";
}

std::uint64_t hash_lens(const std::vector<std::size_t>& len) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t v : len)
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  return h ^ len.size();
}

Sig signature(const CollArgs& a) {
  Sig s{};
  s.coll = static_cast<std::int64_t>(a.coll);
  s.root = a.root;
  const bool reduction = a.coll == Coll::allreduce || a.coll == Coll::reduce || a.coll == Coll::reduce_scatter_block ||
                         a.coll == Coll::reduce_scatter;
  s.dt = reduction ? static_cast<std::int64_t>(a.dt.elem) * 16 + static_cast<std::int64_t>(a.dt.cat) : -1;
  s.op = reduction ? static_cast<std::int64_t>(a.op) : -1;
  s.count = reduction ? static_cast<std::int64_t>(a.count) : static_cast<std::int64_t>(a.bytes);
  if (a.coll == Coll::allgatherv || a.coll == Coll::reduce_scatter) s.layout_hash = hash_lens(a.recv_layout.len);
  s.own = static_cast<std::int64_t>(a.bytes);
  if (reduction && a.dt.name) std::snprintf(s.dt_name, sizeof s.dt_name, "%s", a.dt.name);
  return s;
}

const char* mpi_op_name(std::int64_t op) {
  static const char* const names[] = {"MPI_SUM", "MPI_PROD", "MPI_MIN", "MPI_MAX", "MPI_LAND",
                                      "MPI_LOR", "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR",
                                      "MPI_MINLOC", "MPI_MAXLOC"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<std::size_t>(RedOp::count_));
  return op >= 0 && op < static_cast<std::int64_t>(RedOp::count_) ? names[op] : "?";
}

// "count 999" / "root 2" / "datatype MPI_FLOAT" for one field of a signature.
std::string field_text(const char* field, const Sig& s) {
  if (!std::strcmp(field, "root")) return strprintf("root %lld", static_cast<long long>(s.root));
  if (!std::strcmp(field, "datatype"))
    return strprintf("datatype %s", s.dt_name[0] ? s.dt_name : elem_name(static_cast<Elem>(s.dt / 16)));
  if (!std::strcmp(field, "op")) return strprintf("op %s", s.op >= 0 ? mpi_op_name(s.op) : "(none)");
  if (!std::strcmp(field, "count")) {
    const Coll c = static_cast<Coll>(s.coll);
    if (c == Coll::reduce_scatter_block) return strprintf("recvcount %lld", static_cast<long long>(s.count));
    if (c == Coll::allreduce || c == Coll::reduce) return strprintf("count %lld", static_cast<long long>(s.count));
    return strprintf("%lld bytes per block", static_cast<long long>(s.count));
  }
  return strprintf("recvcounts hashing to %016llx", static_cast<unsigned long long>(s.layout_hash));
}

// The first field in which `s` differs from `ref`, or nullptr.
const char* differs(const Sig& s, const Sig& ref) {
  if (s.coll != ref.coll) return "collective";
  Fields f = fields_of(static_cast<Coll>(ref.coll));
  if (f.root && s.root != ref.root) return "root";
  if (f.dt && s.dt != ref.dt) return "datatype";
  if (f.op && s.op != ref.op) return "op";
  if (f.count && s.count != ref.count) return "count";
  if (f.layout && s.layout_hash != ref.layout_hash) return "recvcounts";
  return nullptr;
}

// Every rank learns the first (lowest-rank) record with bad != 0.
struct Verdict {
  std::int64_t bad, rank, peer, got, expected;
};

}  // namespace

Status check_call(Context& ctx, const CollArgs& a) {
  const int n = ctx.size(), me = ctx.rank();
  // The exchange buffers live on the heap: a wait that gives up keeps them
  // (MPI may still complete its request when a late rank arrives).
  struct Bufs {
    Sig mine;
    std::vector<Sig> all;
    Verdict v{0, 0, 0, 0, 0}, mine_v{0, 0, 0, 0, 0};
    std::vector<std::int64_t> sends, got;
    std::vector<Verdict> verdicts;
  };
  auto b = std::make_shared<Bufs>();
  const Describe doing = [&] { return strprintf("DUCT_CHECK of %s on communicator cid %u", a.call, ctx.cid); };
  auto wait_mpi = [&](MPI_Request* r, const char* what) {
    Status w = wait_setup(
        r, doing, [what] { return std::string(what) + " (a rank of the communicator has not entered the collective)"; },
        b, ctx.yield);
    if (!w) ctx.failed = w;
    return w;
  };
  b->mine = signature(a);
  const Sig& mine = b->mine;
  b->all.resize(static_cast<std::size_t>(n));
  const std::vector<Sig>& all = b->all;
  MPI_Request req;
  DUCT_MPI_CHECK(setup_mpi::Iallgather(&b->mine, sizeof(Sig), MPI_BYTE, b->all.data(), sizeof(Sig), MPI_BYTE, ctx.comm,
                                 &req));
  DUCT_TRY(wait_mpi(&req, "the signature exchange (MPI_Iallgather)"));

  // Every rank compares against rank 0 and names up to 4 ranks that differ.
  const Sig& ref = all[0];
  std::string diffs;
  int ndiff = 0;
  for (int r = 1; r < n; ++r) {
    const char* f = differs(all[static_cast<std::size_t>(r)], ref);
    if (!f) continue;
    if (++ndiff > 4) continue;
    const Sig& s = all[static_cast<std::size_t>(r)];
    if (!diffs.empty()) diffs += "; ";
    if (!std::strcmp(f, "collective"))
      diffs += strprintf("rank %d called %s, rank 0 called %s", r, call_name(s.coll), call_name(ref.coll));
    else
      diffs += strprintf("rank %d called %s with %s, rank 0 with %s", r, call_name(s.coll), field_text(f, s).c_str(),
                         field_text(f, ref).c_str());
  }
  if (ndiff > 0) {
    if (ndiff > 4) diffs += strprintf("; and %d more ranks", ndiff - 4);
    return make_error(Errc::mismatch, "DUCT_CHECK: ranks called with different arguments: %s", diffs.c_str());
  }

  // Counts split across ranks: compare each pair that exchanges data.
  Verdict& v = b->v;
  if (a.coll == Coll::gatherv || a.coll == Coll::scatterv) {
    if (me == a.root) {
      const Layout& l = a.coll == Coll::gatherv ? a.recv_layout : a.send_layout;
      for (int r = 0; r < n && !v.bad; ++r) {
        const auto got = all[static_cast<std::size_t>(r)].own, expected = static_cast<std::int64_t>(l.len[static_cast<std::size_t>(r)]);
        if (got != expected) v = {1, r, a.root, got, expected};
      }
    }
    DUCT_MPI_CHECK(setup_mpi::Ibcast(&v, sizeof v, MPI_BYTE, a.root, ctx.comm, &req));
    DUCT_TRY(wait_mpi(&req, "the counts check (MPI_Ibcast)"));
    if (v.bad)
      return make_error(Errc::mismatch,
                        "DUCT_CHECK: rank %lld called %s with %lld bytes for its block, but the root %d's %s "
                        "say %lld bytes", static_cast<long long>(v.rank), call_name(mine.coll),
                        static_cast<long long>(v.got), a.root, a.coll == Coll::gatherv ? "recvcounts" : "sendcounts",
                        static_cast<long long>(v.expected));
  } else if (a.coll == Coll::alltoallv) {
    std::vector<std::int64_t>& sends = b->sends;
    std::vector<std::int64_t>& got = b->got;
    sends.resize(static_cast<std::size_t>(n));
    got.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      sends[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(a.send_layout.len[static_cast<std::size_t>(r)]);
    DUCT_MPI_CHECK(setup_mpi::Ialltoall(sends.data(), 1, MPI_INT64_T, got.data(), 1, MPI_INT64_T, ctx.comm, &req));
    DUCT_TRY(wait_mpi(&req, "the counts check (MPI_Ialltoall)"));
    Verdict& mine_v = b->mine_v;
    mine_v = {0, me, 0, 0, 0};
    for (int r = 0; r < n && !mine_v.bad; ++r) {
      const auto expected = static_cast<std::int64_t>(a.recv_layout.len[static_cast<std::size_t>(r)]);
      if (got[static_cast<std::size_t>(r)] != expected) mine_v = {1, me, r, got[static_cast<std::size_t>(r)], expected};
    }
    std::vector<Verdict>& verdicts = b->verdicts;
    verdicts.resize(static_cast<std::size_t>(n));
    DUCT_MPI_CHECK(setup_mpi::Iallgather(&mine_v, sizeof(Verdict), MPI_BYTE, verdicts.data(), sizeof(Verdict), MPI_BYTE,
                                   ctx.comm, &req));
    DUCT_TRY(wait_mpi(&req, "the counts check (MPI_Iallgather)"));
    for (const Verdict& x : verdicts)
      if (x.bad) {
        v = x;
        break;
      }
    if (v.bad)
      return make_error(Errc::mismatch,
                        "DUCT_CHECK: rank %lld sends %lld bytes to rank %lld in DUCT_Alltoallv, but rank %lld's "
                        "recvcounts expect %lld bytes from it", static_cast<long long>(v.peer),
                        static_cast<long long>(v.got), static_cast<long long>(v.rank), static_cast<long long>(v.rank),
                        static_cast<long long>(v.expected));
  }
  return Status::ok();
}

}  // namespace duct::coll
