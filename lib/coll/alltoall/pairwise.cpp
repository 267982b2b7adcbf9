// Alltoall(v) by pairwise exchange.
//
// R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §4.5: at step k
// every rank sends to rank me+k and receives from rank me-k, so every pair
// meets once and no rank is flooded; a window of steps is kept in flight.
// Serves alltoallv (any counts and displacements; zero-byte pairs send
// nothing) and the in-place forms (the input is copied aside first).
#include <array>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr int kWindow = 8;  // steps in flight
}

Sched alltoall_pairwise(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const bool v = a.coll == select::Coll::alltoallv;
  // Block q's offset and length on each side (alltoall: uniform, no tables).
  const Layout* rl = v ? &a.recv_layout : nullptr;
  const Layout* sl = v ? &a.send_layout : nullptr;
  auto roff = [&](std::size_t q) { return rl ? rl->off[q] : q * a.bytes; };
  auto rlen = [&](std::size_t q) { return rl ? rl->len[q] : a.bytes; };
  const void* src = a.sendbuf;
  MemKind skind = a.send_kind;
  bool send_like_recv = false;
  if (a.in_place) {
    // The input is the receive buffer, laid out like the result.
    std::size_t span = 0;
    for (std::size_t q = 0; q < static_cast<std::size_t>(n); ++q) span = std::max(span, roff(q) + rlen(q));
    DUCT_CO_TRY(copy_aside(ctx, a.recv_kind, a.recvbuf, span, 2, &src));
    skind = a.recv_kind;
    send_like_recv = true;
  }
  auto soff = [&](std::size_t q) { return send_like_recv ? roff(q) : (sl ? sl->off[q] : q * a.bytes); };
  auto slen = [&](std::size_t q) { return send_like_recv ? rlen(q) : (sl ? sl->len[q] : a.bytes); };
  const std::size_t m = static_cast<std::size_t>(me);
  DUCT_CO_TRY(copy_local(at(a.recvbuf, roff(m)), a.recv_kind, at(src, soff(m)), skind, rlen(m)));
  Link link{ctx, seq, Group{nullptr, n, me}};
  // A window of steps in flight, each a send and a receive slot.
  std::array<Request, 2 * kWindow> reqs;
  for (int k = 1; k < n; ++k) {
    const std::size_t dst = static_cast<std::size_t>(mod(me + k, n)), from = static_cast<std::size_t>(mod(me - k, n));
    Request& s = reqs[static_cast<std::size_t>(2 * (k % kWindow))];
    Request& r = reqs[static_cast<std::size_t>(2 * (k % kWindow) + 1)];
    DUCT_CO_TRY(co_await wait(s, r));  // the slots of step k - kWindow
    if (slen(dst) > 0)
      DUCT_CO_TRY(link.send(static_cast<int>(dst), at(src, soff(dst)), slen(dst), skind, static_cast<std::uint32_t>(k), &s));
    if (rlen(from) > 0)
      DUCT_CO_TRY(link.recv(static_cast<int>(from), at(a.recvbuf, roff(from)), rlen(from), a.recv_kind,
                            static_cast<std::uint32_t>(k), &r));
  }
  for (Request& r : reqs) DUCT_CO_TRY(co_await wait(r));
  co_return Status::ok();
}

}  // namespace duct::coll
