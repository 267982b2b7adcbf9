// Allgather(v) by Bruck's algorithm.
//
// J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient
// algorithms for all-to-all communications in multiport message-passing
// systems", IEEE TPDS 8(11), 1997. Rank r keeps the blocks in rotated order
// (block of rank r+i at position i). At step k it sends its first
// min(2^k, n-2^k) blocks to rank r-2^k and receives as many from r+2^k
// behind its own: ceil(log2 n) steps for any n, one message each. Blocks of
// different sizes (allgatherv) are packed by their sizes, known on every
// rank. The choice for small messages.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched allgather_bruck(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const Layout blocks = a.coll == select::Coll::allgatherv ? a.recv_layout : Layout::uniform(a.bytes, n);
  // Rotated packing: position i holds the block of rank (me + i) mod n.
  std::vector<std::size_t> pos(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i)
    pos[static_cast<std::size_t>(i) + 1] = pos[static_cast<std::size_t>(i)] + blocks.len[static_cast<std::size_t>(mod(me + i, n))];
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(a.recv_kind, pos.back(), 0, &tmp));
  DUCT_CO_TRY(copy_local(tmp, a.recv_kind, a.sendbuf, a.send_kind, blocks.len[static_cast<std::size_t>(me)]));
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::uint32_t step = 0;
  for (int pow = 1; pow < n; pow <<= 1, ++step) {
    const int cnt = std::min(pow, n - pow);
    // What I send is positions [0, cnt) of my packing; what I receive is
    // positions [0, cnt) of rank me+pow's packing, i.e. my [pow, pow+cnt).
    Request s, r;
    // Step 0 sends only my block: from the clean send buffer.
    const void* from = pow == 1 ? a.sendbuf : tmp;
    const MemKind fk = pow == 1 ? a.send_kind : a.recv_kind;
    DUCT_CO_TRY(link.send(mod(me - pow, n), from, pos[static_cast<std::size_t>(cnt)], fk, step, &s));
    DUCT_CO_TRY(link.recv(mod(me + pow, n), at(tmp, pos[static_cast<std::size_t>(pow)]),
                          pos[static_cast<std::size_t>(pow + cnt)] - pos[static_cast<std::size_t>(pow)], a.recv_kind,
                          step, &r));
    DUCT_CO_TRY(co_await wait(s, r));
  }
  for (int i = 0; i < n; ++i) {
    const std::size_t b = static_cast<std::size_t>(mod(me + i, n));
    if (i == 0 && a.in_place) continue;  // my own block is already in place
    DUCT_CO_TRY(copy_local(at(a.recvbuf, blocks.off[b]), a.recv_kind, at(tmp, pos[static_cast<std::size_t>(i)]),
                           a.recv_kind, blocks.len[b]));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
