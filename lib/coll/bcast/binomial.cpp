// Broadcast along a binomial tree.
//
// R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
// Communication Operations in MPICH", IJHPCA 19(1), 2005, §4.1. With ranks
// numbered relative to the root, rank v receives from v minus its lowest set
// bit and forwards to v + 2^k for every 2^k below that bit: ceil(log2 n)
// steps, the whole message each time; the choice for small messages.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {
// The lowest set bit of vr (its parent is vr minus it), or the first power
// of two >= n for the root (vr 0).
int parent_bit(int vr, int n) {
  int mask = 1;
  while (mask < n && !(vr & mask)) mask <<= 1;
  return mask;
}
}  // namespace

Status binomial_sends(Link link, const void* buf, std::size_t bytes, MemKind kind, int root, std::uint32_t step,
                      std::vector<Request>* sends) {
  const int n = link.g.n, me = link.g.me;
  const int vr = mod(me - root, n);
  for (int mask = parent_bit(vr, n) >> 1; mask > 0; mask >>= 1) {
    if (vr + mask < n) {
      sends->emplace_back();
      DUCT_TRY(link.send(mod(me + mask, n), buf, bytes, kind, step, &sends->back()));
    }
  }
  return Status::ok();
}

Sched binomial_bcast(Context& ctx, Link link, void* buf, std::size_t bytes, MemKind kind, int root,
                     std::uint32_t step_base) {
  TreesBcast spec(ctx, link.seq, buf, bytes, kind);
  spec.add(link.g, root, step_base);
  return msg_rounds(std::move(spec));
}

Status TreesBcast::round(int r, std::vector<Request>* reqs, bool* more) {
  int first = 0;  // the tree this rank receives in, if any
  while (first < n_ && trees_[first].g.me == trees_[first].root) ++first;
  if (r == 0 && first < n_) {
    const Tree& t = trees_[first];
    const int vr = mod(t.g.me - t.root, t.g.n);
    reqs->emplace_back();
    *more = true;
    return link_.on(t.g).recv(mod(t.g.me - parent_bit(vr, t.g.n), t.g.n), buf_, bytes_, kind_, t.step, &reqs->back());
  }
  for (int i = 0; i < n_; ++i)
    DUCT_TRY(binomial_sends(link_.on(trees_[i].g), buf_, bytes_, kind_, trees_[i].root, trees_[i].step, reqs));
  return Status::ok();
}

namespace {
TreesBcast binomial_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  TreesBcast spec(ctx, seq, a.recvbuf, a.bytes, a.recv_kind);
  spec.add(Group{nullptr, ctx.size(), ctx.rank()}, a.root, 0);
  return spec;
}
}  // namespace

DUCT_MSG_ALGORITHM(bcast_binomial, binomial_spec)

}  // namespace duct::coll
