// Alltoall by Bruck's algorithm.
//
// J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, IEEE TPDS 8(11),
// 1997 (the "index" algorithm). Rank r rotates its blocks so that position i
// holds the block for rank r+i; at step k it sends every block whose
// position has bit k set to rank r+2^k and receives the same positions from
// rank r-2^k; finally position i holds the block from rank r-i. ceil(log2 n)
// messages of about half the data each: for small blocks, where the number
// of messages matters more than the volume.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched alltoall_bruck(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t b = a.bytes, un = static_cast<std::size_t>(n);
  const MemKind kind = a.recv_kind;
  const void* src = a.in_place ? a.recvbuf : a.sendbuf;
  const MemKind skind = a.in_place ? a.recv_kind : a.send_kind;
  void *tmp = nullptr, *pack = nullptr, *unpack = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, un * b, 2, &tmp));
  DUCT_CO_TRY(ctx.scratch(kind, (un / 2 + 1) * b, 3, &pack));
  DUCT_CO_TRY(ctx.scratch(kind, (un / 2 + 1) * b, 4, &unpack));
  for (int i = 0; i < n; ++i)
    DUCT_CO_TRY(copy_local(at(tmp, static_cast<std::size_t>(i) * b), kind,
                           at(src, static_cast<std::size_t>(mod(me + i, n)) * b), skind, b));
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::uint32_t step = 0;
  for (int pow = 1; pow < n; pow <<= 1, ++step) {
    std::vector<int> idx;
    for (int i = 1; i < n; ++i)
      if (i & pow) idx.push_back(i);
    for (std::size_t j = 0; j < idx.size(); ++j)
      DUCT_CO_TRY(copy_local(at(pack, j * b), kind, at(tmp, static_cast<std::size_t>(idx[j]) * b), kind, b));
    Request s, r;
    DUCT_CO_TRY(link.send(mod(me + pow, n), pack, idx.size() * b, kind, step, &s));
    DUCT_CO_TRY(link.recv(mod(me - pow, n), unpack, idx.size() * b, kind, step, &r));
    DUCT_CO_TRY(co_await wait(s, r));
    for (std::size_t j = 0; j < idx.size(); ++j)
      DUCT_CO_TRY(copy_local(at(tmp, static_cast<std::size_t>(idx[j]) * b), kind, at(unpack, j * b), kind, b));
  }
  for (int i = 0; i < n; ++i)
    DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(mod(me - i, n)) * b), kind,
                           at(tmp, static_cast<std::size_t>(i) * b), kind, b));
  co_return Status::ok();
}

}  // namespace duct::coll
