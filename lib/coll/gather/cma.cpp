// Gather by cross-memory attach (single-node communicators,
// coll/cma.hpp): every other rank publishes its block's address and the
// root copies each block straight into its result; a rank returns once the
// root has read its block.
#include "coll/cma.hpp"

namespace duct::coll {

namespace {
struct GatherCma {
  Context& ctx;
  const CollArgs& a;
  int me;
  bool root;
  Status source(const void** out) {
    if (root) return (*out = nullptr), Status::ok();
    return cma_source(ctx, a.sendbuf, a.send_kind, a.bytes, out);
  }
  Status local() {
    if (!root || a.in_place) return Status::ok();
    return copy_local(at(a.recvbuf, static_cast<std::size_t>(me) * a.bytes), a.recv_kind, a.sendbuf, a.send_kind,
                      a.bytes);
  }
  bool reads(int) const { return root; }
  Status read(int q, std::uint64_t from) {
    return cma_read_into(ctx, q, from, at(a.recvbuf, static_cast<std::size_t>(q) * a.bytes), a.recv_kind, a.bytes);
  }
  bool read_by(int q) const { return q == a.root; }
  Status after() { return Status::ok(); }
};
}  // namespace

Sched gather_cma(Context& ctx, const CollArgs& a, std::uint32_t) {
  return cma_call(ctx, a, GatherCma{ctx, a, ctx.rank(), ctx.rank() == a.root});
}

}  // namespace duct::coll
