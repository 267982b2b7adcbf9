// Broadcast by binomial scatter followed by an allgather (recursive doubling
// for a power-of-two group, a ring otherwise).
//
// M. Barnett, L. Shuler, R. van de Geijn et al., "Interprocessor collective
// communication library (InterCom)", SHPCC 1994; as used for long messages
// in MPICH (Thakur, Rabenseifner, Gropp 2005, §4.1). The root's message is
// cut into n blocks; a binomial tree scatters them (rank v, counted from the
// root, gets blocks v .. v + lowbit(v) - 1 from its parent and passes the
// upper parts on), then an allgather gives every rank every block: recursive
// doubling (log2(n) steps, Thakur et al. §4.3; MPICH does the same for a
// power of two) or, for other n, a ring (n-1 steps). Each rank moves about
// 2(n-1)/n of the message instead of log2(n) times all of it: the choice for
// long messages.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kScatterStep = 0x10;
constexpr std::uint32_t kAllgatherBase = 0x100;

int lowbit(int v) { return v & -v; }
}  // namespace

Sched bcast_scatter_allgather(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size();
  // Members counted from the root: member v is rank (v + root) mod n.
  std::vector<int> rotated(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) rotated[static_cast<std::size_t>(v)] = mod(v + a.root, n);
  const int vr = mod(ctx.rank() - a.root, n);
  Link link{ctx, seq, Group{rotated.data(), n, vr}};
  const Layout blocks = Layout::even(a.bytes, n);
  auto span = [&](int first, int last) {  // bytes of blocks [first, last)
    std::size_t end = last < n ? blocks.off[static_cast<std::size_t>(last)] : a.bytes;
    return end - blocks.off[static_cast<std::size_t>(first)];
  };
  void* buf = a.recvbuf;

  // Scatter: receive my subtree's blocks, pass the upper parts on.
  int top = 1;
  while (top < n) top <<= 1;
  int reach = vr == 0 ? top : lowbit(vr);
  if (vr != 0) {
    int last = std::min(vr + reach, n);
    Request r;
    DUCT_CO_TRY(link.recv(vr - reach, at(buf, blocks.off[static_cast<std::size_t>(vr)]), span(vr, last), a.recv_kind,
                          kScatterStep, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  // Across nodes one send at a time, the largest subtree first: sends
  // posted together share this rank's link, and the first child, which has
  // the most to pass on, would get its part last (16 simulated nodes, 16
  // MiB: the scatter took 1.4 instead of (n-1)/n of the message's time on
  // one link). On one node the receivers copy in parallel: all at once.
  const bool one_at_a_time = ctx.topo.num_nodes > 1;
  std::vector<Request> sends;
  for (int m = reach >> 1; m > 0; m >>= 1) {
    int child = vr + m;
    if (child >= n) continue;
    int last = std::min(child + m, n);
    sends.emplace_back();
    DUCT_CO_TRY(link.send(child, at(buf, blocks.off[static_cast<std::size_t>(child)]), span(child, last), a.recv_kind,
                          kScatterStep, &sends.back()));
    if (one_at_a_time) DUCT_CO_TRY(co_await wait(sends.back()));
  }
  DUCT_CO_TRY(co_await wait(sends));
  // Allgather: member v holds block v.
  if (is_pow2(n))
    DUCT_CO_TRY(co_await doubling_allgather(ctx, link, buf, a.recv_kind, blocks, kAllgatherBase));
  else
    DUCT_CO_TRY(co_await ring_allgather(ctx, link, buf, a.recv_kind, blocks, 0, kAllgatherBase));
  co_return Status::ok();
}

}  // namespace duct::coll
