#include "capi/small.hpp"

#include "capi/checks.hpp"
#include "capi/errors.hpp"
#include "coll/collectives.hpp"
#include "coll/context.hpp"
#include "core/config.hpp"
#include "core/dtype.hpp"

namespace duct::capi::small {

namespace {

using select::Coll;

// The communicator's context when a call on it may end here: the one of
// the previous duct call, healthy, no DUCT_CHECK, not threaded. A call that
// moves nothing needs no more (the general path would not look at the
// engine or at pending calls either).
coll::Context* known(MPI_Comm comm) {
  coll::Runtime* rt = coll::Runtime::ready();
  if (!rt || rt->threaded()) return nullptr;
  coll::Context* c = rt->last_context(comm);
  if (!c || !c->failed.is_ok()) return nullptr;
  return config::get().check ? nullptr : c;
}

// The communicator's context when the small-call path may take a call that
// moves data on it: also no device engine, no nonblocking call pending.
coll::Context* context_of(MPI_Comm comm) {
  coll::Context* c = known(comm);
  return c && !c->engine && c->size() >= 2 && c->queue.empty() ? c : nullptr;
}

bool predefined(MPI_Datatype dt) {
  DType d;
  return lookup_dtype(dt, &d);
}

// A call with nothing to move at this rank (every count that matters here
// 0, every datatype that matters predefined, MPI_IN_PLACE only where MPI
// allows it, the root in range): the general path checks the same and then
// returns from Entry::nothing() without a message (MPI lets such a call
// complete locally; DUCT_CHECK's comparison, the one thing it would still
// do, keeps such calls off this path). Open MPI returns from them in 3-6 ns
// on the build VM; through the general path duct took 50-70 ns, here 14-25
// (docs/benchmarks/2026-11-26-small-2rank.md).
bool done(int* rc) {
  *rc = MPI_SUCCESS;
  return true;
}

bool root_in(const coll::Context* c, int root) { return root >= 0 && root < c->size(); }

// Gather and scatter: `mine` is this rank's block (gather: what it sends,
// scatter: what it receives; MPI_IN_PLACE at the root), `all` the root's n
// blocks (gather: received, scatter: sent).
bool rooted_nothing(MPI_Comm comm, int root, const void* mine, MPI_Count mine_count, MPI_Datatype mine_type,
                    const void* all, MPI_Count all_count, MPI_Datatype all_type, int* rc) {
  if (mine_count != 0 && mine != MPI_IN_PLACE) return false;
  const coll::Context* k = known(comm);
  if (!k || !root_in(k, root)) return false;
  const bool mine_nothing = mine != MPI_IN_PLACE && predefined(mine_type);
  if (k->rank() != root) return mine_nothing && done(rc);
  return all_count == 0 && all != MPI_IN_PLACE && predefined(all_type) && (mine == MPI_IN_PLACE || mine_nothing) &&
         done(rc);
}

// `count` elements of `dt` when it is a predefined datatype of duct's table
// whose elements are all data (not the pair types with padding, which the
// general path packs or stages) and count > 0: their bytes, else 0.
std::size_t bytes_of(MPI_Count count, MPI_Datatype dt) {
  DType d;
  std::size_t bytes = 0;
  if (count <= 0 || !lookup_dtype(dt, &d) || elem_data_size(d.elem) != elem_size(d.elem) ||
      __builtin_mul_overflow(static_cast<std::size_t>(count), elem_size(d.elem), &bytes) || bytes > kMaxSpan)
    return 0;
  return bytes;
}

// n blocks of `bytes` each; 0 when that is beyond an address space.
std::size_t times(std::size_t bytes, int n) {
  std::size_t total = 0;
  return __builtin_mul_overflow(bytes, static_cast<std::size_t>(n), &total) || total > kMaxSpan ? 0 : total;
}

// A reduction duct computes itself (the general path's classify() says the
// same, or raises an error the general path will raise).
bool native(MPI_Datatype dt, MPI_Op op, DType* d, RedOp* o) {
  if (!lookup_dtype(dt, d) || !lookup_op(op, o)) return false;
  if (d->cat == Category::f_integer && (*o == RedOp::land || *o == RedOp::lor || *o == RedOp::lxor)) return false;
  return op_valid_for(*o, d->cat);
}

// Host memory, not NULL (with a device, a query: device and managed memory
// take the general path).
bool host(const void* p, std::size_t bytes) {
  if (!p || p == MPI_IN_PLACE) return false;
  // Without a device every pointer is host memory (buffer_kind's probe of
  // unmapped pointers runs only under DUCT_CHECK, which keeps calls off this
  // path). Whether there is one is probed once per process.
  static const bool device = memory::cuda::available();
  if (!device) return true;
  memory::MemKind k;
  return buffer_kind(p, "buffer", bytes, &k).is_ok() && k == memory::MemKind::host;
}

bool run(coll::Context& ctx, const coll::CollArgs& a, MPI_Comm comm, int* rc) {
  bool taken = false;
  Status st = coll::run_small(ctx, a, &taken);
  if (!taken) return false;
  *rc = st ? MPI_SUCCESS : raise(comm, a.call, st);
  return true;
}

coll::CollArgs args(Coll c, const char* call) {
  coll::CollArgs a;
  a.coll = c;
  a.call = call;
  return a;
}

}  // namespace

bool allreduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm, int* rc) {
  coll::CollArgs a = args(Coll::allreduce, call);
  if (count == 0) return known(comm) && recvbuf != MPI_IN_PLACE && native(dt, op, &a.dt, &a.op) && done(rc);
  coll::Context* ctx = context_of(comm);
  const std::size_t bytes = bytes_of(count, dt);
  if (!ctx || bytes == 0 || !native(dt, op, &a.dt, &a.op) || !host(recvbuf, bytes)) return false;
  a.in_place = sendbuf == MPI_IN_PLACE;
  if (!a.in_place && (!host(sendbuf, bytes) || overlaps(sendbuf, bytes, recvbuf, bytes))) return false;
  a.sendbuf = a.in_place ? recvbuf : sendbuf;
  a.recvbuf = recvbuf;
  a.count = static_cast<std::size_t>(count);
  return run(*ctx, a, comm, rc);
}

bool reduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
            int root, MPI_Comm comm, int* rc) {
  coll::CollArgs a = args(Coll::reduce, call);
  if (count == 0) {
    const coll::Context* k = known(comm);
    if (!k || !root_in(k, root)) return false;
    const bool is_root = k->rank() == root;
    return (is_root ? recvbuf != MPI_IN_PLACE : sendbuf != MPI_IN_PLACE) && native(dt, op, &a.dt, &a.op) && done(rc);
  }
  coll::Context* ctx = context_of(comm);
  const std::size_t bytes = bytes_of(count, dt);
  if (!ctx || bytes == 0 || root < 0 || root >= ctx->size() || !native(dt, op, &a.dt, &a.op)) return false;
  const bool is_root = ctx->rank() == root;
  a.in_place = is_root && sendbuf == MPI_IN_PLACE;
  if (is_root) {
    if (!host(recvbuf, bytes)) return false;
    if (!a.in_place && (!host(sendbuf, bytes) || overlaps(sendbuf, bytes, recvbuf, bytes))) return false;
  } else if (!host(sendbuf, bytes)) {
    return false;
  }
  a.sendbuf = a.in_place ? recvbuf : sendbuf;
  a.recvbuf = is_root ? recvbuf : nullptr;
  a.count = static_cast<std::size_t>(count);
  a.root = root;
  return run(*ctx, a, comm, rc);
}

bool reduce_scatter_block(const char* call, const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, int* rc) {
  coll::CollArgs a = args(Coll::reduce_scatter_block, call);
  if (recvcount == 0) return known(comm) && recvbuf != MPI_IN_PLACE && native(dt, op, &a.dt, &a.op) && done(rc);
  coll::Context* ctx = context_of(comm);
  const std::size_t mine = bytes_of(recvcount, dt), total = ctx ? times(mine, ctx->size()) : 0;
  if (total == 0 || !native(dt, op, &a.dt, &a.op)) return false;
  a.in_place = sendbuf == MPI_IN_PLACE;
  if (!host(recvbuf, a.in_place ? total : mine)) return false;
  if (!a.in_place && (!host(sendbuf, total) || overlaps(sendbuf, total, recvbuf, mine))) return false;
  a.sendbuf = a.in_place ? recvbuf : sendbuf;
  a.recvbuf = recvbuf;
  a.count = static_cast<std::size_t>(recvcount);
  return run(*ctx, a, comm, rc);
}

bool bcast(const char* call, void* buffer, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm, int* rc) {
  if (count == 0) {
    const coll::Context* k = known(comm);
    return k && root_in(k, root) && buffer != MPI_IN_PLACE && predefined(dt) && done(rc);
  }
  coll::Context* ctx = context_of(comm);
  const std::size_t bytes = bytes_of(count, dt);
  if (!ctx || bytes == 0 || root < 0 || root >= ctx->size() || !host(buffer, bytes)) return false;
  coll::CollArgs a = args(Coll::bcast, call);
  a.sendbuf = a.recvbuf = buffer;
  a.bytes = bytes;
  a.root = root;
  return run(*ctx, a, comm, rc);
}

bool all_blocks(const char* call, bool alltoall, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, int* rc) {
  if (recvcount == 0)
    return known(comm) && recvbuf != MPI_IN_PLACE && predefined(recvtype) &&
           (sendbuf == MPI_IN_PLACE || (sendcount == 0 && predefined(sendtype))) && done(rc);
  coll::Context* ctx = context_of(comm);
  const std::size_t rbytes = bytes_of(recvcount, recvtype), rtotal = ctx ? times(rbytes, ctx->size()) : 0;
  if (rtotal == 0 || !host(recvbuf, rtotal)) return false;
  coll::CollArgs a = args(alltoall ? Coll::alltoall : Coll::allgather, call);
  a.in_place = sendbuf == MPI_IN_PLACE;
  if (!a.in_place) {
    const std::size_t stotal = alltoall ? rtotal : rbytes;
    if (bytes_of(sendcount, sendtype) != rbytes || !host(sendbuf, stotal) || overlaps(sendbuf, stotal, recvbuf, rtotal))
      return false;
  }
  const std::size_t mine = alltoall ? 0 : static_cast<std::size_t>(ctx->rank()) * rbytes;
  a.sendbuf = a.in_place ? coll::at(recvbuf, mine) : sendbuf;
  a.recvbuf = recvbuf;
  a.bytes = rbytes;
  return run(*ctx, a, comm, rc);
}

bool gather(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, int* rc) {
  if (rooted_nothing(comm, root, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, rc)) return true;
  coll::Context* ctx = context_of(comm);
  if (!ctx || root < 0 || root >= ctx->size()) return false;
  const bool is_root = ctx->rank() == root;
  coll::CollArgs a = args(Coll::gather, call);
  a.root = root;
  a.in_place = is_root && sendbuf == MPI_IN_PLACE;
  if (!a.in_place && ((a.bytes = bytes_of(sendcount, sendtype)) == 0 || !host(sendbuf, a.bytes))) return false;
  if (is_root) {
    const bool same = !a.in_place && recvtype == sendtype && recvcount == sendcount;
    const std::size_t rbytes = same ? a.bytes : bytes_of(recvcount, recvtype), rtotal = times(rbytes, ctx->size());
    if (rtotal == 0 || (!a.in_place && rbytes != a.bytes) || !host(recvbuf, rtotal) ||
        (!a.in_place && overlaps(sendbuf, rbytes, recvbuf, rtotal)))
      return false;
    a.bytes = rbytes;
    a.recvbuf = recvbuf;
  }
  a.sendbuf = a.in_place ? coll::at(recvbuf, static_cast<std::size_t>(root) * a.bytes) : sendbuf;
  return run(*ctx, a, comm, rc);
}

bool scatter(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, int* rc) {
  if (rooted_nothing(comm, root, recvbuf, recvcount, recvtype, sendbuf, sendcount, sendtype, rc)) return true;
  coll::Context* ctx = context_of(comm);
  if (!ctx || root < 0 || root >= ctx->size()) return false;
  const bool is_root = ctx->rank() == root;
  coll::CollArgs a = args(Coll::scatter, call);
  a.root = root;
  a.in_place = is_root && recvbuf == MPI_IN_PLACE;
  if (!a.in_place && ((a.bytes = bytes_of(recvcount, recvtype)) == 0 || !host(recvbuf, a.bytes))) return false;
  if (is_root) {
    const bool same = !a.in_place && recvtype == sendtype && recvcount == sendcount;
    const std::size_t sbytes = same ? a.bytes : bytes_of(sendcount, sendtype), stotal = times(sbytes, ctx->size());
    if (stotal == 0 || (!a.in_place && sbytes != a.bytes) || !host(sendbuf, stotal) ||
        (!a.in_place && overlaps(sendbuf, stotal, recvbuf, sbytes)))
      return false;
    a.bytes = sbytes;
    a.sendbuf = sendbuf;
  }
  a.recvbuf = a.in_place ? const_cast<void*>(coll::at(sendbuf, static_cast<std::size_t>(root) * a.bytes)) : recvbuf;
  return run(*ctx, a, comm, rc);
}

bool barrier(const char* call, MPI_Comm comm, int* rc) {
  coll::Context* ctx = context_of(comm);
  return ctx && run(*ctx, args(Coll::barrier, call), comm, rc);
}

}  // namespace duct::capi::small
