// Alltoall(v) by pairwise exchange.
//
// R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §4.5: at step k
// every rank sends to rank me+k and receives from rank me-k, so every pair
// meets once and no rank is flooded; a window of steps is kept in flight.
// Serves alltoallv (any counts and displacements; zero-byte pairs send
// nothing) and the in-place forms (the input is copied aside first).
#include <deque>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr int kWindow = 8;  // steps in flight
}

Sched alltoall_pairwise(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const bool v = a.coll == select::Coll::alltoallv;
  const Layout recv = v ? a.recv_layout : Layout::uniform(a.bytes, n);
  Layout send = v ? a.send_layout : Layout::uniform(a.bytes, n);
  const void* src = a.sendbuf;
  MemKind skind = a.send_kind;
  if (a.in_place) {
    // The input is the receive buffer, laid out like the result.
    std::size_t span = 0;
    for (int q = 0; q < n; ++q)
      span = std::max(span, recv.off[static_cast<std::size_t>(q)] + recv.len[static_cast<std::size_t>(q)]);
    void* copy = nullptr;
    DUCT_CO_TRY(ctx.scratch(a.recv_kind, span, 2, &copy));
    DUCT_CO_TRY(copy_local(copy, a.recv_kind, a.recvbuf, a.recv_kind, span));
    src = copy;
    skind = a.recv_kind;
    send = recv;
  }
  const std::size_t m = static_cast<std::size_t>(me);
  DUCT_CO_TRY(copy_local(at(a.recvbuf, recv.off[m]), a.recv_kind, at(src, send.off[m]), skind, recv.len[m]));
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::deque<std::vector<Request>> window;
  for (int k = 1; k < n; ++k) {
    const std::size_t dst = static_cast<std::size_t>(mod(me + k, n)), from = static_cast<std::size_t>(mod(me - k, n));
    std::vector<Request> step;
    if (send.len[dst] > 0) {
      step.emplace_back();
      DUCT_CO_TRY(link.send(static_cast<int>(dst), at(src, send.off[dst]), send.len[dst], skind,
                            static_cast<std::uint32_t>(k), &step.back()));
    }
    if (recv.len[from] > 0) {
      step.emplace_back();
      DUCT_CO_TRY(link.recv(static_cast<int>(from), at(a.recvbuf, recv.off[from]), recv.len[from], a.recv_kind,
                            static_cast<std::uint32_t>(k), &step.back()));
    }
    window.push_back(std::move(step));
    if (static_cast<int>(window.size()) >= kWindow) {
      DUCT_CO_TRY(co_await wait(pointers(window.front())));
      window.pop_front();
    }
  }
  while (!window.empty()) {
    DUCT_CO_TRY(co_await wait(pointers(window.front())));
    window.pop_front();
  }
  co_return Status::ok();
}

}  // namespace duct::coll
