// One path for every collective: selection, logging, the task.
#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/engine_sched.hpp"
#include "coll/msg_rounds.hpp"
#include "coll/nonblocking.hpp"
#include "coll/shm.hpp"
#include "coll/shm_rounds.hpp"
#include "coll/wait.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace duct::coll {

namespace {

using select::Coll;

struct Impl {
  Coll coll;
  const char* name;
  AlgoFn fn;
  // The plain form of a shared-memory algorithm (coll/shm_rounds.hpp) or a
  // message algorithm (coll/msg_rounds.hpp), for the small-call path.
  NowFn now = nullptr;
};

// Every implementation, by the names select/ uses: the one explicit table
// (no registration at static-initialisation time).
constexpr Impl kImpls[] = {
    // The device engine's entries stand for engine_collective (run_collective
    // calls it with the fallback algorithm); they are never called.
    {Coll::allreduce, "engine", nullptr},
    {Coll::bcast, "engine", nullptr},
    {Coll::reduce, "engine", nullptr},
    {Coll::allgather, "engine", nullptr},
    {Coll::allgatherv, "engine", nullptr},
    {Coll::reduce_scatter_block, "engine", nullptr},
    {Coll::reduce_scatter, "engine", nullptr},
    {Coll::alltoall, "engine", nullptr},
    {Coll::gather, "engine", nullptr},
    {Coll::scatter, "engine", nullptr},
    {Coll::allreduce, "shm", &allreduce_shm, &allreduce_shm_now},
    {Coll::allreduce, "recursive_doubling", &allreduce_recursive_doubling, &allreduce_recursive_doubling_now},
    {Coll::allreduce, "ring", &allreduce_ring},
    {Coll::allreduce, "rabenseifner", &allreduce_rabenseifner},
    {Coll::allreduce, "hierarchical", &allreduce_hierarchical, &allreduce_hierarchical_now},
    {Coll::allreduce, "split_rail", &allreduce_split_rail},
    {Coll::allreduce, "pipelined_rabenseifner", &allreduce_pipelined_rabenseifner},
    {Coll::bcast, "shm", &bcast_shm, &bcast_shm_now},
    {Coll::bcast, "cma", &bcast_cma},
    {Coll::bcast, "binomial", &bcast_binomial, &bcast_binomial_now},
    {Coll::bcast, "scatter_allgather", &bcast_scatter_allgather},
    {Coll::bcast, "pipelined_chain", &bcast_pipelined_chain},
    {Coll::bcast, "split_rail", &bcast_split_rail},
    {Coll::bcast, "hierarchical", &bcast_hierarchical, &bcast_hierarchical_now},
    {Coll::reduce, "shm", &reduce_shm, &reduce_shm_now},
    {Coll::reduce, "shm_tree", &reduce_shm_tree, &reduce_shm_tree_now},
    {Coll::reduce, "binomial", &reduce_binomial, &reduce_binomial_now},
    {Coll::reduce, "reduce_scatter_gather", &reduce_reduce_scatter_gather},
    {Coll::reduce, "rabenseifner", &reduce_rabenseifner},
    {Coll::reduce, "split_rail", &reduce_split_rail},
    {Coll::reduce, "hierarchical", &reduce_hierarchical, &reduce_hierarchical_now},
    {Coll::allgather, "shm", &allgather_shm, &allgather_shm_now},
    {Coll::allgather, "cma", &allgather_cma},
    {Coll::allgather, "bruck", &allgather_bruck},
    {Coll::allgather, "recursive_doubling", &allgather_recursive_doubling},
    {Coll::allgather, "ring", &allgather_ring},
    {Coll::allgather, "split_rail", &allgather_split_rail},
    {Coll::allgather, "hierarchical", &allgather_hierarchical},
    {Coll::allgatherv, "bruck", &allgather_bruck},
    {Coll::allgatherv, "ring", &allgather_ring},
    {Coll::allgatherv, "split_rail", &allgather_split_rail},
    {Coll::reduce_scatter_block, "shm", &reduce_scatter_shm, &reduce_scatter_shm_now},
    {Coll::reduce_scatter_block, "recursive_halving", &reduce_scatter_recursive_halving},
    {Coll::reduce_scatter_block, "pairwise", &reduce_scatter_pairwise},
    {Coll::reduce_scatter_block, "ring", &reduce_scatter_ring},
    {Coll::reduce_scatter_block, "split_rail", &reduce_scatter_split_rail},
    {Coll::reduce_scatter_block, "pipelined_pairwise", &reduce_scatter_pipelined_pairwise},
    {Coll::reduce_scatter_block, "pipelined_halving", &reduce_scatter_pipelined_halving},
    {Coll::reduce_scatter_block, "hierarchical", &reduce_scatter_hierarchical},
    {Coll::reduce_scatter, "shm", &reduce_scatter_shm, &reduce_scatter_shm_now},
    {Coll::reduce_scatter, "recursive_halving", &reduce_scatter_recursive_halving},
    {Coll::reduce_scatter, "pairwise", &reduce_scatter_pairwise},
    {Coll::reduce_scatter, "ring", &reduce_scatter_ring},
    {Coll::reduce_scatter, "split_rail", &reduce_scatter_split_rail},
    {Coll::reduce_scatter, "pipelined_pairwise", &reduce_scatter_pipelined_pairwise},
    {Coll::reduce_scatter, "pipelined_halving", &reduce_scatter_pipelined_halving},
    {Coll::reduce_scatter, "hierarchical", &reduce_scatter_hierarchical},
    {Coll::alltoall, "shm", &alltoall_shm, &alltoall_shm_now},
    {Coll::alltoall, "cma", &alltoall_cma},
    {Coll::alltoall, "bruck", &alltoall_bruck},
    {Coll::alltoall, "pairwise", &alltoall_pairwise},
    {Coll::alltoall, "split_rail", &alltoall_split_rail},
    {Coll::alltoallv, "pairwise", &alltoall_pairwise},
    {Coll::gather, "shm", &gather_shm, &gather_shm_now},
    {Coll::gather, "cma", &gather_cma},
    {Coll::gather, "binomial", &gather_binomial, &gather_binomial_now},
    {Coll::gather, "linear", &gather_linear, &gather_linear_now},
    {Coll::gather, "hierarchical", &gather_hierarchical},
    {Coll::gatherv, "linear", &gather_linear},
    {Coll::scatter, "shm", &scatter_shm, &scatter_shm_now},
    {Coll::scatter, "cma", &scatter_cma},
    {Coll::scatter, "binomial", &scatter_binomial, &scatter_binomial_now},
    {Coll::scatter, "linear", &scatter_linear, &scatter_linear_now},
    {Coll::scatter, "hierarchical", &scatter_hierarchical},
    {Coll::scatterv, "linear", &scatter_linear},
    {Coll::barrier, "shm", &barrier_shm, &barrier_shm_now},
    {Coll::barrier, "dissemination", &barrier_dissemination},
    {Coll::barrier, "split_rail", &barrier_split_rail},
};

// select/'s algorithm index -> implementation, resolved by name once.
const Impl* impl_of(int algo) {
  static const std::vector<const Impl*> by_index = [] {
    const auto& all = select::algorithms();
    std::vector<const Impl*> v(all.size(), nullptr);
    for (size_t a = 0; a < all.size(); ++a)
      for (const Impl& i : kImpls)
        if (all[a].coll == i.coll && std::strcmp(i.name, all[a].name) == 0) v[a] = &i;
    return v;
  }();
  return algo >= 0 && static_cast<size_t>(algo) < by_index.size() ? by_index[static_cast<size_t>(algo)] : nullptr;
}

bool is_engine(int algo) {
  return algo >= 0 && std::strcmp(select::algorithms()[static_cast<size_t>(algo)].name, "engine") == 0;
}

// The size selection sees, equal on every rank (select::Query::bytes).
std::size_t query_bytes(const CollArgs& a, int n) {
  const std::size_t esz = elem_size(a.dt.elem), un = static_cast<std::size_t>(n);
  switch (a.coll) {
    case Coll::allreduce:
    case Coll::reduce: return a.count * esz;
    case Coll::bcast: return a.bytes;
    case Coll::allgather:
    case Coll::alltoall:
    case Coll::gather:
    case Coll::scatter: return a.bytes * un;
    case Coll::allgatherv: return a.recv_layout.total();
    case Coll::reduce_scatter_block: return a.count * esz * un;
    case Coll::reduce_scatter: return a.recv_layout.total() * esz;
    default: return 0;  // alltoallv, gatherv, scatterv, barrier: not known on every rank
  }
}

// A communicator of one rank: local copies, no communication.
}  // namespace

Status local_only(const CollArgs& a) {
  const std::size_t esz = elem_size(a.dt.elem);
  switch (a.coll) {
    case Coll::barrier:
    case Coll::bcast: return Status::ok();
    case Coll::allreduce:
    case Coll::reduce:
    case Coll::reduce_scatter_block: {
      std::size_t bytes = a.count * esz;
      return a.in_place ? Status::ok() : copy_local(a.recvbuf, a.recv_kind, a.sendbuf, a.send_kind, bytes);
    }
    case Coll::reduce_scatter: {
      std::size_t bytes = a.recv_layout.total() * esz;
      return a.in_place ? Status::ok() : copy_local(a.recvbuf, a.recv_kind, a.sendbuf, a.send_kind, bytes);
    }
    case Coll::allgather:
    case Coll::alltoall:
    case Coll::gather:
    case Coll::scatter:
      return a.in_place ? Status::ok() : copy_local(a.recvbuf, a.recv_kind, a.sendbuf, a.send_kind, a.bytes);
    case Coll::allgatherv:
    case Coll::gatherv:
      // The one block goes to its displacement.
      return a.in_place ? Status::ok()
                        : copy_local(at(a.recvbuf, a.recv_layout.off[0]), a.recv_kind, a.sendbuf, a.send_kind,
                                     a.recv_layout.len[0]);
    case Coll::scatterv:
      return a.in_place ? Status::ok()
                        : copy_local(a.recvbuf, a.recv_kind, at(a.sendbuf, a.send_layout.off[0]), a.send_kind,
                                     a.send_layout.len[0]);
    case Coll::alltoallv:
      return a.in_place ? Status::ok()
                        : copy_local(at(a.recvbuf, a.recv_layout.off[0]), a.recv_kind,
                                     at(a.sendbuf, a.send_layout.off[0]), a.send_kind, a.recv_layout.len[0]);
    case Coll::count_: break;
  }
  return make_error(Errc::internal, "no local path for %s", select::coll_name(a.coll));
}


select::Query query_of(const Context& ctx, select::Coll c, std::size_t bytes, bool device) {
  return select::Query{c, bytes, ctx.size(), ctx.topo.num_nodes, ctx.shm ? ShmArea::kSlotBytes : 0, device,
                       ctx.engine != nullptr, ctx.topo.ranks_per_node, ctx.shm && ctx.shm->cma()};
}

namespace {

// The other form of a measured choice (select/trial.hpp) for a call that
// the built-in rules gave to `algo`, or -1: one node, a collective that
// only moves data (so either form gives the same bytes), 16 KiB-8 MiB, shm
// against cma where both can serve the call, and more cores than ranks on
// the machine (4 ranks on the build VM's 2 cores timed the 256 KiB
// alltoall's trial calls at 66-82 us by cma against 29 steady, and kept the
// slower form in two of three runs). Only what every rank knows
// alike decides (not this rank's memory kind: both forms serve host and
// device buffers, and a rank whose buffers go to the device engine runs
// the trial on the engine's fallback), so every rank runs the same trial.
int measured_partner(const Context& ctx, const select::Query& q, int algo) {
  if (!config::get().measure || ctx.ft || ctx.oversubscribed || q.num_nodes != 1 || !q.cma || algo < 0) return -1;
  switch (q.coll) {
    case Coll::allgather:
    case Coll::alltoall:
    case Coll::bcast:
    case Coll::gather:
    case Coll::scatter: break;
    default: return -1;
  }
  if (q.bytes < (std::size_t{16} << 10) || q.bytes > (std::size_t{8} << 20)) return -1;
  const auto& all = select::algorithms();
  const char* name = all[static_cast<size_t>(algo)].name;
  const char* other = std::strcmp(name, "shm") == 0 ? "cma" : std::strcmp(name, "cma") == 0 ? "shm" : nullptr;
  if (!other) return -1;
  const int o = select::find_algo(q.coll, other);
  std::string why;
  return o >= 0 && all[static_cast<size_t>(o)].can_serve(q, &why) ? o : -1;
}

// The trial of (collective, size) under the rules of `generation`, made
// with the rules' choice `algo` and its `other` form when new; null when
// the context holds kMaxTrials sizes already.
select::Trial* trial_of(Context& ctx, Coll c, std::size_t bytes, int algo, int other, int generation) {
  if (ctx.trials_generation != generation) {
    ctx.trials.clear();
    ctx.trials_generation = generation;
  }
  const auto key = std::make_pair(static_cast<int>(c), bytes);
  auto it = ctx.trials.find(key);
  if (it == ctx.trials.end()) {
    if (ctx.trials.size() >= Context::kMaxTrials) return nullptr;
    select::Trial t;
    t.algo[0] = algo;
    t.algo[1] = other;
    it = ctx.trials.emplace(key, t).first;
  }
  return &it->second;
}

// After a trial's last timed call: every rank learns the slowest rank's
// best time of each form (one MPI_Iallreduce on the communicator, waited
// for under DUCT_TIMEOUT as the setup exchanges are) and keeps the same one.
Status agree_trial(Context& ctx, const CollArgs& a, std::size_t bytes, select::Trial& t) {
  auto b = std::make_shared<std::array<double, 4>>();  // [0, 2) this rank's best, [2, 4) the slowest rank's
  (*b)[0] = t.best[0];
  (*b)[1] = t.best[1];
  MPI_Request req;
  DUCT_MPI_CHECK(setup_mpi::Iallreduce(b->data(), b->data() + 2, 2, MPI_DOUBLE, MPI_MAX, ctx.comm, &req));
  Status w = wait_setup(
      &req, [&] { return strprintf("the measured choice of %s on communicator cid %u", a.call, ctx.cid); },
      [] { return std::string("the exchange of the trial's times (MPI_Iallreduce; a rank has not finished its calls)"); },
      b, ctx.yield);
  if (!w) return ctx.failed = w;
  t.kept = select::Trial::decide(b->data() + 2);
  const auto& all = select::algorithms();
  DUCT_INFO(coll, "%s of %zu bytes on %d ranks: %s %.2f us, %s %.2f us (the slowest rank's best of %d calls each): %s "
            "from now on (DUCT_MEASURE)",
            a.call, bytes, ctx.size(), all[static_cast<size_t>(t.algo[0])].name, (*b)[2] * 1e6,
            all[static_cast<size_t>(t.algo[1])].name, (*b)[3] * 1e6, select::Trial::kCalls / 2,
            all[static_cast<size_t>(t.algo[t.kept])].name);
  return Status::ok();
}

}  // namespace

Status plan_collective(Context& ctx, const CollArgs& a, Plan* out, bool timed) {
  Runtime* rt = Runtime::ready();
  if (!rt) DUCT_TRY(Runtime::get(&rt));
  select::Query q = query_of(ctx, a.coll, query_bytes(a, ctx.size()), a.recv_kind == MemKind::device);
  if (a.coll == Coll::scatter || a.coll == Coll::scatterv || a.coll == Coll::bcast)
    q.device = (ctx.rank() == a.root ? a.send_kind : a.recv_kind) == MemKind::device;
  else if (a.coll == Coll::reduce || a.coll == Coll::gather)
    q.device = a.send_kind == MemKind::device &&
               (ctx.rank() != a.root || a.recv_kind == MemKind::device);

  // Repeated calls of one size skip the rule table (per collective, per rules generation).
  Context::LastChoice& last = ctx.last_choice[static_cast<int>(a.coll)];
  select::Trial* trial = nullptr;  // a measured choice still measuring (not cached)
  if (last.bytes != q.bytes || last.generation != rt->rules_generation() || last.device != q.device) {
    int source = 0;
    int algo = rt->table().choose(q, nullptr, &source);
    int fallback = -1;
    if (is_engine(algo)) {
      select::Query without = q;
      without.engine = false;
      fallback = rt->table().choose(without, nullptr, &source);
    }
    // A measured choice between the forms that serve the call without the
    // engine, where the built-in rules chose (a rules file or DUCT_TUNE is
    // obeyed as written).
    int& served = fallback >= 0 ? fallback : algo;
    if (source == 0) {
      const int other = measured_partner(ctx, q, served);
      select::Trial* t = other >= 0 ? trial_of(ctx, a.coll, q.bytes, served, other, rt->rules_generation()) : nullptr;
      if (t) {
        served = t->next(timed);
        if (t->trying()) trial = t;
      }
    }
    const Impl* impl = impl_of(fallback >= 0 ? fallback : algo);
    last = {q.bytes, algo, fallback, rt->rules_generation(), q.device,
            algo >= 0 ? select::algorithms()[static_cast<size_t>(algo)].name : "", impl ? impl->fn : nullptr,
            impl && fallback < 0 ? impl->now : nullptr};
  }
  const int algo = last.algo;
  out->engine = last.fallback >= 0;
  out->fn = last.fn;
  if (!out->fn) return make_error(Errc::internal, "%s: algorithm %d has no implementation", a.call, algo);
  out->name = last.name;
  out->bytes = q.bytes;

  if (log::enabled(log::Level::info, log::Subsys::coll)) {
    std::string sig = strprintf("%s %zu %s %s %s %d", a.call, q.bytes, a.dt.name ? a.dt.name : "bytes", op_name(a.op),
                                q.device ? "device" : "host", rt->rules_generation());
    if (ctx.first_time(sig)) {
      std::string why;
      rt->table().choose(q, &why);
      DUCT_INFO(coll, "%s on %d ranks (%d node(s)), %s memory: %s, because %s%s%s", a.call, ctx.size(),
                ctx.topo.num_nodes, q.device ? "device" : "host", out->name, why.c_str(),
                out->engine ? "; without it: " : "",
                out->engine ? select::algorithms()[static_cast<size_t>(last.fallback)].name : "");
      if (trial)
        DUCT_INFO(coll, "%s of %zu bytes: %s and %s take turns on the first %d blocking calls of this size, timed "
                  "(DUCT_MEASURE)",
                  a.call, q.bytes, select::algorithms()[static_cast<size_t>(trial->algo[0])].name,
                  select::algorithms()[static_cast<size_t>(trial->algo[1])].name, select::Trial::kCalls);
    }
  }
  if (trial) {
    // Not cached: the next call of this size takes the other form, and the
    // small-call path (run_small) must not take it meanwhile.
    last.bytes = ~std::size_t{0};
    if (timed) out->trial = trial;
  }
  out->seq = ctx.next_seq();
  return Status::ok();
}

Sched plan_schedule(Context& ctx, const CollArgs& a, const Plan& p) {
  // A call captured into a graph is the engine's whatever the rules say
  // (no other algorithm can run at replay without the host).
  if (p.engine || (a.graph && ctx.engine)) return engine_collective(ctx, a, p.seq, p.fn);
  // Every call on an engine communicator is numbered there on every rank:
  // ranks that take the engine learn from this one that it does not.
  if (ctx.engine) ctx.engine->decline();
  if (a.stream) return after_stream(ctx, a, p.seq, p.fn);
  return p.fn(ctx, a, p.seq);
}

Status run_collective(Context& ctx, const CollArgs& a) {
  if (!ctx.failed.is_ok()) return ctx.failed;
  if (ctx.ft) {
    Status st = ft::look(*ctx.ft);  // a revocation that arrived since the last call
    if (!st) return ctx.failed = st;
  }
  // MPI orders a communicator's blocking and nonblocking collectives together.
  if (!ctx.queue.empty()) DUCT_TRY(drain(ctx));
  if (ctx.size() > 1 && config::get().check) DUCT_TRY(check_call(ctx, a));
  if (a.nothing) return Status::ok();
  if (ctx.size() == 1) return local_only(a);
  Plan p;
  // Blocking (stream-ordered and nonblocking calls go through
  // start_collective), so timed for a measured choice.
  DUCT_TRY(plan_collective(ctx, a, &p, true));
  Task task(plan_schedule(ctx, a, p), TaskInfo{a.call, p.name, p.bytes, ctx.cid});
  if (!p.trial) return run(ctx, task);
  const auto t0 = std::chrono::steady_clock::now();
  DUCT_TRY(run(ctx, task));
  p.trial->record(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return p.trial->due() ? agree_trial(ctx, a, p.bytes, *p.trial) : Status::ok();
}

namespace {
std::uint64_t g_small_calls = 0;  // one thread at a time: the path is off for threaded applications
}  // namespace

std::uint64_t small_calls() noexcept { return g_small_calls; }

Status run_small(Context& ctx, const CollArgs& a, bool* taken) {
  const Context::LastChoice& last = ctx.last_choice[static_cast<int>(a.coll)];
  const std::size_t bytes = query_bytes(a, ctx.size());
  // What plan_collective would choose, known without the rule table: the
  // cached choice for this size under the current rules (host memory).
  *taken = last.now && last.bytes == bytes && !last.device &&
           last.generation == Runtime::ready()->rules_generation() && !log::enabled(log::Level::info, log::Subsys::coll);
  if (!*taken) return Status::ok();
  const std::uint32_t seq = ctx.next_seq();  // numbered as plan_collective numbers calls
  ++g_small_calls;
  Spinner sp(TaskInfo{a.call, last.name, bytes, ctx.cid}, ctx.yield, &ctx);
  Status st = last.now(ctx, a, seq, sp);
  if (!st) fail_context(ctx, st);
  return st;
}

Status set_rules(const std::string& rules) {
  Runtime* rt = nullptr;
  DUCT_TRY(Runtime::get(&rt));
  return rt->set_rules(rules);
}

}  // namespace duct::coll
