// Reduce along a binomial tree towards the root.
//
// R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §4.2. With ranks
// numbered relative to the root, rank v receives from v + 2^k for every 2^k
// below its lowest set bit, reduces each arrival into its accumulator, then
// sends the accumulator to v minus that bit. ceil(log2 n) steps of the whole
// vector: the choice for small vectors. The tree is fixed, so the reduction
// order (lower-numbered subtree first) and the bits are the same every run.
// Across nodes the tree may be k-nomial (DUCT_TREE_RADIX; coll/common.hpp,
// KnomialTree), the same fixed order over consecutive members.
#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

Status TreesReduce::round(int, std::vector<Request>* reqs, bool* more) {
  if (!setup_) return setup_;
  const std::size_t bytes = count_ * elem_size(dt_.elem);
  fenced_ = false;
  if (cur_kind_ != kind_) {  // reductions read both operands in one kind
    DUCT_TRY(copy_local(acc_, kind_, cur_, cur_kind_, bytes));
    cur_ = acc_;
    cur_kind_ = kind_;
  }
  if (received_ > 0) {
    if (kind_ == MemKind::device && !fence_) fence_ = std::make_unique<memory::Fence>();
    for (int i = 0; i < received_; ++i) {  // in member order: the bits are fixed
      DUCT_TRY(reduce_local(acc_, cur_, at(tmp_, static_cast<std::size_t>(i) * bytes), count_, dt_, op_, kind_,
                            fence_.get()));
      cur_ = acc_;
    }
    received_ = 0;
    if (kind_ == MemKind::device) {  // tmp is read until the fence: no receive into it before
      fenced_ = true;
      *more = true;
      return Status::ok();
    }
  }
  // The k-nomial tree (coll/common.hpp, KnomialTree) upwards: children
  // nearest level first, in order within a level, so the accumulator grows
  // over consecutive members (numbered from the root).
  for (; tree_ < n_; ++tree_, mask_ = 1, digit_ = 1) {
    const Tree& t = trees_[tree_];
    const int n = t.g.n, me = t.g.me, k = t.radix;
    const int vr = mod(me - t.root, n);
    Link link = link_.on(t.g);
    for (; mask_ < n; mask_ *= k, digit_ = 1) {
      if (const int d = vr / mask_ % k; d != 0) {  // to the parent, and done
        reqs->emplace_back();
        return link.send(mod(me - d * mask_, n), cur_, bytes, cur_kind_, t.step, &reqs->back());
      }
      // This level's children, all at once where tmp holds them.
      while (digit_ < k && vr + digit_ * mask_ < n && received_ < tmp_n_) {
        reqs->emplace_back();
        DUCT_TRY(link.recv(mod(me + digit_ * mask_, n), at(tmp_, static_cast<std::size_t>(received_) * bytes), bytes,
                           kind_, t.step, &reqs->back()));
        ++digit_;
        ++received_;
      }
      if (received_ > 0) {
        *more = true;
        return Status::ok();
      }
    }
  }
  // The root of the last tree: its result must be in acc even without children.
  if (cur_ != acc_) DUCT_TRY(copy_local(acc_, kind_, cur_, cur_kind_, bytes));
  return Status::ok();
}

Sched binomial_reduce(Context& ctx, Link link, const void* input, MemKind in_kind, void* acc, void* tmp,
                      std::size_t count, DType dt, RedOp op, MemKind kind, int root, std::uint32_t step_base) {
  TreesReduce spec(ctx, link.seq, input, in_kind, acc, tmp, count, dt, op, kind);
  spec.add(link.g, root, step_base);
  return msg_rounds(std::move(spec));
}

TreesReduce rooted_reduce(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const bool root = ctx.rank() == a.root;
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  // The accumulator: the root's receive buffer, scratch elsewhere (used only
  // by ranks with children).
  const MemKind kind = root ? a.recv_kind : a.send_kind;
  void* acc = a.recvbuf;
  void* tmp = nullptr;
  // tmp: a k-nomial level's children at once (radix - 1 vectors).
  const int tmp_n = net_tree_radix(ctx, bytes) - 1;
  Status st = root ? Status::ok() : ctx.scratch(kind, bytes, 1, &acc);
  if (st) st = ctx.scratch(kind, bytes * static_cast<std::size_t>(tmp_n), 0, &tmp);
  TreesReduce spec(ctx, seq, a.sendbuf, a.send_kind, acc, tmp, a.count, a.dt, a.op, kind);
  spec.tmp_vectors(tmp_n);
  spec.fail(std::move(st));  // (a scratch that failed: the first round says so)
  return spec;
}

namespace {
TreesReduce binomial_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  TreesReduce spec = rooted_reduce(ctx, a, seq);
  spec.add(Group{nullptr, ctx.size(), ctx.rank()}, a.root, 0, net_tree_radix(ctx, a.count * elem_size(a.dt.elem)));
  return spec;
}
}  // namespace

DUCT_MSG_ALGORITHM(reduce_binomial, binomial_spec)

}  // namespace duct::coll
