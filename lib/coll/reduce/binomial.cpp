// Reduce along a binomial tree towards the root.
//
// R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §4.2. With ranks
// numbered relative to the root, rank v receives from v + 2^k for every 2^k
// below its lowest set bit, reduces each arrival into its accumulator, then
// sends the accumulator to v minus that bit. ceil(log2 n) steps of the whole
// vector: the choice for small vectors. The tree is fixed, so the reduction
// order (lower-numbered subtree first) and the bits are the same every run.
#include "coll/collectives.hpp"

namespace duct::coll {

Sched binomial_reduce(Context&, Link link, const void* input, MemKind in_kind, void* acc, void* tmp, std::size_t count,
                      DType dt, RedOp op, MemKind kind, int root, std::uint32_t step_base) {
  const int n = link.g.n, me = link.g.me;
  const int vr = mod(me - root, n);
  const std::size_t bytes = count * elem_size(dt.elem);
  memory::Fence fence;
  // The subtree's result so far: my input until a child's data arrives
  // (a leaf sends its input as it is; no copy).
  const void* cur = input;
  MemKind cur_kind = in_kind;
  if (in_kind != kind) {  // reductions read both operands in one kind
    DUCT_CO_TRY(copy_local(acc, kind, input, in_kind, bytes));
    cur = acc;
    cur_kind = kind;
  }
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask) {
      Request r;
      DUCT_CO_TRY(link.send(mod(me - mask, n), cur, bytes, cur_kind, step_base, &r));
      DUCT_CO_TRY(co_await wait(r));
      co_return Status::ok();
    }
    if (vr + mask < n) {
      Request r;
      DUCT_CO_TRY(link.recv(mod(me + mask, n), tmp, bytes, kind, step_base, &r));
      DUCT_CO_TRY(co_await wait(r));
      DUCT_CO_TRY(reduce_local(acc, cur, tmp, count, dt, op, kind, &fence));
      if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
      cur = acc;
      cur_kind = kind;
    }
  }
  // The root: its result must be in acc even without children.
  if (cur != acc) DUCT_CO_TRY(copy_local(acc, kind, cur, cur_kind, bytes));
  co_return Status::ok();
}

Sched reduce_binomial(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const bool root = ctx.rank() == a.root;
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  // The accumulator: the root's receive buffer, scratch elsewhere (used only
  // by ranks with children).
  const MemKind kind = root ? a.recv_kind : a.send_kind;
  void* acc = a.recvbuf;
  if (!root) DUCT_CO_TRY(ctx.scratch(kind, bytes, 1, &acc));
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 0, &tmp));
  Link link{ctx, seq, Group{nullptr, ctx.size(), ctx.rank()}};
  DUCT_CO_TRY(co_await binomial_reduce(ctx, link, a.sendbuf, a.send_kind, acc, tmp, a.count, a.dt, a.op, kind, a.root, 0));
  co_return Status::ok();
}

}  // namespace duct::coll
