// Scatter along a binomial tree (Thakur, Rabenseifner, Gropp 2005, §4.6):
// the reverse of the binomial gather. The root holds the blocks in order
// counted from itself; rank v receives its subtree's blocks
// (v .. v + lowbit(v) - 1) from its parent in one message and passes the
// upper parts to its children: ceil(log2 n) steps; for small blocks.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched scatter_binomial(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const int vr = mod(me - a.root, n);
  const std::size_t b = a.bytes;
  int top = 1;
  while (top < n) top <<= 1;
  const int reach = vr == 0 ? top : (vr & -vr);
  const int subtree = vr == 0 ? n : std::min(reach, n - vr);
  const MemKind kind = me == a.root ? a.send_kind : a.recv_kind;
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, static_cast<std::size_t>(subtree) * b, 2, &tmp));
  Link link{ctx, seq, Group{nullptr, n, me}};
  if (vr == 0) {
    for (int v = 0; v < n; ++v)
      DUCT_CO_TRY(copy_local(at(tmp, static_cast<std::size_t>(v) * b), kind,
                             at(a.sendbuf, static_cast<std::size_t>(mod(v + a.root, n)) * b), a.send_kind, b));
  } else {
    Request r;
    DUCT_CO_TRY(link.recv(mod(me - reach, n), tmp, static_cast<std::size_t>(subtree) * b, kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  std::vector<Request> sends;
  for (int m = reach >> 1; m > 0; m >>= 1) {
    if (vr + m >= n) continue;
    const int cnt = std::min(m, n - vr - m);
    sends.emplace_back();
    DUCT_CO_TRY(link.send(mod(me + m, n), at(tmp, static_cast<std::size_t>(m) * b), static_cast<std::size_t>(cnt) * b,
                          kind, 0, &sends.back()));
  }
  if (!a.in_place) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, tmp, kind, b));  // in place: it is already there
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

}  // namespace duct::coll
