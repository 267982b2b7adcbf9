// Allgather by cross-memory attach (single-node communicators,
// coll/cma.hpp): every rank publishes its block's address and copies every
// other rank's block straight into its result, starting with the rank after
// it; it returns once every rank has read its block.
#include "coll/cma.hpp"

namespace duct::coll {

namespace {
struct AllgatherCma {
  Context& ctx;
  const CollArgs& a;
  int me;
  Status source(const void** out) { return cma_source(ctx, a.sendbuf, a.send_kind, a.bytes, out); }
  Status local() {
    if (a.in_place) return Status::ok();
    return copy_local(at(a.recvbuf, static_cast<std::size_t>(me) * a.bytes), a.recv_kind, a.sendbuf, a.send_kind,
                      a.bytes);
  }
  bool reads(int) const { return true; }
  Status read(int q, std::uint64_t from) {
    return cma_read_into(ctx, q, from, at(a.recvbuf, static_cast<std::size_t>(q) * a.bytes), a.recv_kind, a.bytes);
  }
  bool read_by(int) const { return true; }
  Status after() { return Status::ok(); }
};
}  // namespace

Sched allgather_cma(Context& ctx, const CollArgs& a, std::uint32_t) {
  return cma_call(ctx, a, AllgatherCma{ctx, a, ctx.rank()});
}

}  // namespace duct::coll
