// Allreduce: selection and dispatch to the algorithms.
#include "coll/allreduce/allreduce.hpp"

#include <cstring>
#include <vector>

#include "coll/shm.hpp"
#include "coll/task.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace duct::coll {

namespace {

using AlgoFn = Sched (*)(Context&, AllreduceArgs, std::uint32_t);

struct Impl {
  const char* name;
  AlgoFn fn;
};

// Implementations by the names select/ uses.
constexpr Impl kImpls[] = {
    {"recursive_doubling", &allreduce_recursive_doubling},
    {"ring", &allreduce_ring},
    {"shm", &allreduce_shm},
};

// select/'s algorithm index -> implementation, resolved by name once.
AlgoFn impl_of(int algo) {
  static const std::vector<AlgoFn> by_index = [] {
    const auto& all = select::algorithms();
    std::vector<AlgoFn> v(all.size(), nullptr);
    for (size_t a = 0; a < all.size(); ++a)
      for (const Impl& i : kImpls)
        if (all[a].coll == select::Coll::allreduce && std::strcmp(i.name, all[a].name) == 0) v[a] = i.fn;
    return v;
  }();
  return algo >= 0 && static_cast<size_t>(algo) < by_index.size() ? by_index[static_cast<size_t>(algo)] : nullptr;
}

}  // namespace

Status allreduce(Context& ctx, const AllreduceArgs& a, int algo) {
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  if (a.count == 0) return Status::ok();
  if (ctx.size() == 1) return copy_local(a.recvbuf, a.recv_kind, a.sendbuf, a.send_kind, bytes);

  Runtime* rt = Runtime::ready();
  if (!rt) DUCT_TRY(Runtime::get(&rt));
  const bool forced = algo >= 0;
  const select::Query q{select::Coll::allreduce, bytes, ctx.size(), ctx.topo.num_nodes,
                        ctx.shm ? ShmArea::kSlotBytes : 0};
  Context::LastChoice& last = ctx.last_choice[static_cast<int>(select::Coll::allreduce)];
  if (!forced) {
    if (last.bytes == bytes) {
      algo = last.algo;
    } else {
      algo = rt->table().choose(q);
      last = {bytes, algo};
    }
  }
  AlgoFn fn = impl_of(algo);
  if (!fn) return make_error(Errc::internal, "allreduce algorithm %d has no implementation", algo);
  const char* name = select::algorithms()[static_cast<size_t>(algo)].name;

  if (log::enabled(log::Level::info, log::Subsys::coll)) {
    std::string sig = strprintf("allreduce %s %s %zu %s->%s", a.dt.name, op_name(a.op), bytes,
                                memory::kind_name(a.send_kind), memory::kind_name(a.recv_kind));
    if (ctx.first_time(sig)) {
      std::string why = "forced";
      if (!forced) rt->table().choose(q, &why);
      DUCT_INFO(coll, "DUCT_Allreduce of %zu x %s (%s), %s: %s on %d ranks, because %s", a.count, a.dt.name,
                config::format_size(bytes).c_str(), op_name(a.op), name, ctx.size(), why.c_str());
    }
  }

  Task task(fn(ctx, a, ctx.next_seq()), TaskInfo{"DUCT_Allreduce", name, bytes, ctx.cid});
  return run(ctx, task);
}

}  // namespace duct::coll
