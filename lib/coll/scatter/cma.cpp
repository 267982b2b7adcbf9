// Scatter by cross-memory attach (single-node communicators,
// coll/cma.hpp): the root publishes its send buffer's address and every
// other rank copies its block straight out of it; the root returns once
// all have.
#include "coll/cma.hpp"

namespace duct::coll {

namespace {
struct ScatterCma {
  Context& ctx;
  const CollArgs& a;
  int me, n;
  bool root;
  Status source(const void** out) {
    if (!root) return (*out = nullptr), Status::ok();
    return cma_source(ctx, a.sendbuf, a.send_kind, static_cast<std::size_t>(n) * a.bytes, out);
  }
  Status local() {
    if (!root || a.in_place) return Status::ok();
    return copy_local(a.recvbuf, a.recv_kind, at(a.sendbuf, static_cast<std::size_t>(me) * a.bytes), a.send_kind,
                      a.bytes);
  }
  bool reads(int q) const { return !root && q == a.root; }
  Status read(int q, std::uint64_t from) {
    return cma_read_into(ctx, q, from + static_cast<std::uint64_t>(me) * a.bytes, a.recvbuf, a.recv_kind, a.bytes);
  }
  bool read_by(int) const { return root; }
  Status after() { return Status::ok(); }
};
}  // namespace

Sched scatter_cma(Context& ctx, const CollArgs& a, std::uint32_t) {
  return cma_call(ctx, a, ScatterCma{ctx, a, ctx.rank(), ctx.size(), ctx.rank() == a.root});
}

}  // namespace duct::coll
