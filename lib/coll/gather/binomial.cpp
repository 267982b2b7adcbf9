// Gather along a binomial tree (Thakur, Rabenseifner, Gropp 2005, §4.6).
// With ranks counted from the root, rank v collects the blocks of its
// subtree (v .. v + lowbit(v) - 1) from its children, then sends them to its
// parent in one message: ceil(log2 n) steps instead of n-1 messages at the
// root; for small blocks.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {

// Rounds (coll/msg_rounds.hpp): a leaf sends its block straight from its
// send buffer; a rank with children receives their blocks (round 0), then
// sends its subtree's to its parent (round 1). The root receives straight
// into its receive buffer where no child's range of ranks wraps past the
// last rank (always with root 0), else into scratch that it copies out in
// rank order (round 1).
class GatherBinomial : CommSpec {
 public:
  using CommSpec::CommSpec;

  Status round(int r, std::vector<Request>* reqs, bool* more) {
    const int n = link.g.n, me = link.g.me;
    const int vr = mod(me - a.root, n);
    const std::size_t b = a.bytes;
    const int subtree = binomial_subtree(vr, n);
    const MemKind kind = me == a.root ? a.recv_kind : a.send_kind;
    const int parent_mask = vr & -vr;  // its parent is vr - parent_mask (vr > 0)
    if (subtree == 1) {                // a leaf (n > 1, so not the root)
      reqs->emplace_back();
      return link.send(mod(me - parent_mask, n), a.sendbuf, b, a.send_kind, 0, &reqs->back());
    }
    if (r == 0) {
      direct_ = vr == 0 && !root_subtrees_wrap(a.root, n);
      if (direct_) {
        if (!a.in_place) DUCT_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(me) * b), a.recv_kind, a.sendbuf,
                                             a.send_kind, b));
      } else {
        DUCT_TRY(ctx.scratch(kind, static_cast<std::size_t>(subtree) * b, 2, &tmp_));
        DUCT_TRY(copy_local(tmp_, kind, a.sendbuf, a.send_kind, b));
      }
      for (int mask = 1; mask < n && !(vr & mask); mask <<= 1) {
        const int child = vr + mask;
        if (child >= n) continue;
        const std::size_t cnt = static_cast<std::size_t>(std::min(mask, n - child));
        void* dst = direct_ ? at(a.recvbuf, static_cast<std::size_t>(mod(me + mask, n)) * b)
                            : at(tmp_, static_cast<std::size_t>(mask) * b);
        reqs->emplace_back();
        DUCT_TRY(link.recv(mod(me + mask, n), dst, cnt * b, kind, 0, &reqs->back()));
      }
      *more = vr != 0 || !direct_;
      return Status::ok();
    }
    if (vr != 0) {
      reqs->emplace_back();
      return link.send(mod(me - parent_mask, n), tmp_, static_cast<std::size_t>(subtree) * b, kind, 0,
                       &reqs->back());
    }
    for (int v = 0; v < n; ++v)
      DUCT_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(mod(v + a.root, n)) * b), a.recv_kind,
                          at(tmp_, static_cast<std::size_t>(v) * b), kind, b));
    return Status::ok();
  }

 private:
  bool direct_ = false;  // the root receives into its receive buffer
  void* tmp_ = nullptr;  // else: my subtree's blocks, counted from me
};

}  // namespace

DUCT_MSG_ALGORITHM(gather_binomial, GatherBinomial)

}  // namespace duct::coll
