// Gather along a binomial tree (Thakur, Rabenseifner, Gropp 2005, §4.6).
// With ranks counted from the root, rank v collects the blocks of its
// subtree (v .. v + lowbit(v) - 1) from its children, then sends them to its
// parent in one message: ceil(log2 n) steps instead of n-1 messages at the
// root; for small blocks.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched gather_binomial(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const int vr = mod(me - a.root, n);
  const std::size_t b = a.bytes;
  const int subtree = vr == 0 ? n : std::min(vr & -vr, n - vr);
  const MemKind kind = me == a.root ? a.recv_kind : a.send_kind;
  void* tmp = nullptr;  // my subtree's blocks, counted from me
  DUCT_CO_TRY(ctx.scratch(kind, static_cast<std::size_t>(subtree) * b, 2, &tmp));
  DUCT_CO_TRY(copy_local(tmp, kind, a.sendbuf, a.send_kind, b));
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::vector<Request> recvs;
  int mask = 1;
  for (; mask < n && !(vr & mask); mask <<= 1) {
    const int child = vr + mask;
    if (child >= n) continue;
    const int cnt = std::min(mask, n - child);
    recvs.emplace_back();
    DUCT_CO_TRY(link.recv(mod(me + mask, n), at(tmp, static_cast<std::size_t>(mask) * b),
                          static_cast<std::size_t>(cnt) * b, kind, 0, &recvs.back()));
  }
  DUCT_CO_TRY(co_await wait(recvs));
  if (vr != 0) {
    Request r;
    DUCT_CO_TRY(link.send(mod(me - mask, n), tmp, static_cast<std::size_t>(subtree) * b, kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  for (int v = 0; v < n; ++v)
    DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(mod(v + a.root, n)) * b), a.recv_kind,
                           at(tmp, static_cast<std::size_t>(v) * b), kind, b));
  co_return Status::ok();
}

}  // namespace duct::coll
