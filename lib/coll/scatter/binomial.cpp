// Scatter along a binomial tree (Thakur, Rabenseifner, Gropp 2005, §4.6):
// the reverse of the binomial gather. The root holds the blocks in order
// counted from itself; rank v receives its subtree's blocks
// (v .. v + lowbit(v) - 1) from its parent in one message and passes the
// upper parts to its children: ceil(log2 n) steps; for small blocks.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {

// Rounds (coll/msg_rounds.hpp): a non-root receives its subtree's blocks
// (round 0: a leaf straight into its receive buffer, and is done), then
// sends the upper parts to its children and copies its own block out. The
// root sends straight from its send buffer where no child's range of ranks
// wraps past the last rank (always with root 0), else it first copies the
// blocks into scratch in order counted from itself; all in its round 0.
class ScatterBinomial : CommSpec {
 public:
  using CommSpec::CommSpec;

  Status round(int r, std::vector<Request>* reqs, bool* more) {
    const int n = link.g.n, me = link.g.me;
    const int vr = mod(me - a.root, n);
    const std::size_t b = a.bytes;
    int top = 1;
    while (top < n) top <<= 1;
    const int reach = vr == 0 ? top : (vr & -vr);
    const int subtree = binomial_subtree(vr, n);
    const MemKind kind = me == a.root ? a.send_kind : a.recv_kind;
    const void* src = tmp_;  // the subtree's blocks, counted from me
    if (r == 0) {
      if (vr != 0 && subtree == 1) {  // a leaf
        reqs->emplace_back();
        return link.recv(mod(me - reach, n), a.recvbuf, b, a.recv_kind, 0, &reqs->back());
      }
      if (vr != 0 || root_subtrees_wrap(a.root, n)) DUCT_TRY(ctx.scratch(kind, static_cast<std::size_t>(subtree) * b, 2, &tmp_));
      if (vr != 0) {
        reqs->emplace_back();
        *more = true;
        return link.recv(mod(me - reach, n), tmp_, static_cast<std::size_t>(subtree) * b, kind, 0, &reqs->back());
      }
      if (tmp_) {
        for (int v = 0; v < n; ++v)
          DUCT_TRY(copy_local(at(tmp_, static_cast<std::size_t>(v) * b), kind,
                              at(a.sendbuf, static_cast<std::size_t>(mod(v + a.root, n)) * b), a.send_kind, b));
      }
      src = tmp_;
    }
    for (int m = reach >> 1; m > 0; m >>= 1) {
      if (vr + m >= n) continue;
      const std::size_t cnt = static_cast<std::size_t>(std::min(m, n - vr - m));
      const void* from = src ? at(src, static_cast<std::size_t>(m) * b)
                             : at(a.sendbuf, static_cast<std::size_t>(mod(me + m, n)) * b);
      reqs->emplace_back();
      DUCT_TRY(link.send(mod(me + m, n), from, cnt * b, kind, 0, &reqs->back()));
    }
    // My own block (in place: it is already there).
    const void* mine = src ? src : at(a.sendbuf, static_cast<std::size_t>(me) * b);
    if (!a.in_place) DUCT_TRY(copy_local(a.recvbuf, a.recv_kind, mine, kind, b));
    return Status::ok();
  }

 private:
  void* tmp_ = nullptr;  // the subtree's blocks, counted from me (the root: only where a range wraps)
};

}  // namespace

DUCT_MSG_ALGORITHM(scatter_binomial, ScatterBinomial)

}  // namespace duct::coll
