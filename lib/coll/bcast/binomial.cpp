// Broadcast along a binomial tree.
//
// R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
// Communication Operations in MPICH", IJHPCA 19(1), 2005, §4.1. With ranks
// numbered relative to the root, rank v receives from v minus its lowest set
// bit and forwards to v + 2^k for every 2^k below that bit: ceil(log2 n)
// steps, the whole message each time; the choice for small messages.
// Across nodes the tree may be k-nomial (DUCT_TREE_RADIX; coll/common.hpp,
// KnomialTree): fewer levels, k - 1 sends per level from each sender.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

int net_tree_radix(const Context& ctx, std::size_t bytes) {
  return ctx.topo.num_nodes > 1 && bytes <= kKnomialMaxBytes ? static_cast<int>(config::get().tree_radix) : 2;
}

Status knomial_sends(Link link, const void* buf, std::size_t bytes, MemKind kind, int root, std::uint32_t step,
                     int radix, std::vector<Request>* sends) {
  const int n = link.g.n, me = link.g.me;
  const KnomialTree tree{n, radix};
  const int vr = mod(me - root, n);
  for (int m = tree.place(vr) / radix; m > 0; m /= radix) {
    for (int j = radix - 1; j >= 1; --j) {
      if (vr + j * m >= n) continue;
      sends->emplace_back();
      DUCT_TRY(link.send(mod(me + j * m, n), buf, bytes, kind, step, &sends->back()));
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
    const int parent = KnomialTree{t.g.n, t.radix}.parent(vr);
    reqs->emplace_back();
    *more = true;
    return link_.on(t.g).recv(mod(t.root + parent, t.g.n), buf_, bytes_, kind_, t.step, &reqs->back());
  }
  if (bytes_ <= kKnomialMaxBytes) {  // every send at once: their per-message costs overlap
    for (int i = 0; i < n_; ++i) {
      const Tree& t = trees_[i];
      DUCT_TRY(knomial_sends(link_.on(t.g), buf_, bytes_, kind_, t.root, t.step, t.radix, reqs));
    }
    return Status::ok();
  }
  // Larger: one level per round, farthest first, so that the sends of a
  // level do not share the sender's link with the later levels' and the
  // children with the deepest subtrees forward the message soonest.
  for (; tree_ < n_; ++tree_, level_ = -1) {
    const Tree& t = trees_[tree_];
    const int n = t.g.n, k = t.radix;
    const int vr = mod(t.g.me - t.root, n);
    if (level_ < 0) level_ = KnomialTree{n, k}.place(vr) / k;
    Link link = link_.on(t.g);
    while (level_ > 0) {
      const int m = level_;
      level_ /= k;
      const std::size_t before = reqs->size();
      for (int j = k - 1; j >= 1; --j) {
        if (vr + j * m >= n) continue;
        reqs->emplace_back();
        DUCT_TRY(link.send(mod(t.g.me + j * m, n), buf_, bytes_, kind_, t.step, &reqs->back()));
      }
      if (reqs->size() > before) {
        *more = true;
        return Status::ok();
      }
    }
  }
  return Status::ok();
}

namespace {
TreesBcast binomial_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  TreesBcast spec(ctx, seq, a.recvbuf, a.bytes, a.recv_kind);
  spec.add(Group{nullptr, ctx.size(), ctx.rank()}, a.root, 0, net_tree_radix(ctx, a.bytes));
  return spec;
}
}  // namespace

DUCT_MSG_ALGORITHM(bcast_binomial, binomial_spec)

}  // namespace duct::coll
