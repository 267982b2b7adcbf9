// Broadcast by cross-memory attach (single-node communicators,
// coll/cma.hpp): the root publishes its buffer's address and every other
// rank copies the message straight out of it; the root returns once all
// have. One copy per rank, done by the readers side by side.
#include "coll/cma.hpp"

namespace duct::coll {

namespace {
struct BcastCma {
  Context& ctx;
  const CollArgs& a;
  bool root;
  Status source(const void** out) {
    if (!root) return (*out = nullptr), Status::ok();
    return cma_source(ctx, a.recvbuf, a.recv_kind, a.bytes, out);
  }
  Status local() { return Status::ok(); }
  bool reads(int q) const { return !root && q == a.root; }
  Status read(int q, std::uint64_t from) { return cma_read_into(ctx, q, from, a.recvbuf, a.recv_kind, a.bytes); }
  bool read_by(int) const { return root; }
  Status after() { return Status::ok(); }
};
}  // namespace

Sched bcast_cma(Context& ctx, const CollArgs& a, std::uint32_t) {
  return cma_call(ctx, a, BcastCma{ctx, a, ctx.rank() == a.root});
}

}  // namespace duct::coll
