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

// Two rounds (coll/msg_rounds.hpp): the receives from the children, then
// the send to the parent (the root: the copy out, in rank order).
class GatherBinomial : CommSpec {
 public:
  using CommSpec::CommSpec;

  Status round(int r, std::vector<Request>* reqs, bool* more) {
    const int n = link.g.n, me = link.g.me;
    const int vr = mod(me - a.root, n);
    const std::size_t b = a.bytes;
    const int subtree = vr == 0 ? n : std::min(vr & -vr, n - vr);
    const MemKind kind = me == a.root ? a.recv_kind : a.send_kind;
    int mask = 1;  // ends at vr's lowest set bit: its parent is vr - mask
    if (r == 0) {
      DUCT_TRY(ctx.scratch(kind, static_cast<std::size_t>(subtree) * b, 2, &tmp_));
      DUCT_TRY(copy_local(tmp_, kind, a.sendbuf, a.send_kind, b));
      for (; mask < n && !(vr & mask); mask <<= 1) {
        const int child = vr + mask;
        if (child >= n) continue;
        const int cnt = std::min(mask, n - child);
        reqs->emplace_back();
        DUCT_TRY(link.recv(mod(me + mask, n), at(tmp_, static_cast<std::size_t>(mask) * b),
                            static_cast<std::size_t>(cnt) * b, kind, 0, &reqs->back()));
      }
      *more = true;
      return Status::ok();
    }
    if (vr != 0) {
      while (!(vr & mask)) mask <<= 1;
      reqs->emplace_back();
      return link.send(mod(me - mask, n), tmp_, static_cast<std::size_t>(subtree) * b, kind, 0, &reqs->back());
    }
    for (int v = 0; v < n; ++v)
      DUCT_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(mod(v + a.root, n)) * b), a.recv_kind,
                          at(tmp_, static_cast<std::size_t>(v) * b), kind, b));
    return Status::ok();
  }

 private:
  void* tmp_ = nullptr;  // my subtree's blocks, counted from me
};

}  // namespace

DUCT_MSG_ALGORITHM(gather_binomial, GatherBinomial)

}  // namespace duct::coll
