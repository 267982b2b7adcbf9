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

// Rounds (coll/msg_rounds.hpp): a non-root receives its subtree's blocks,
// then every rank sends the upper parts to its children and copies its
// own block out (the root: all in its first round).
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
    const int subtree = vr == 0 ? n : std::min(reach, n - vr);
    const MemKind kind = me == a.root ? a.send_kind : a.recv_kind;
    if (r == 0) {
      DUCT_TRY(ctx.scratch(kind, static_cast<std::size_t>(subtree) * b, 2, &tmp_));
      if (vr != 0) {
        reqs->emplace_back();
        *more = true;
        return link.recv(mod(me - reach, n), tmp_, static_cast<std::size_t>(subtree) * b, kind, 0, &reqs->back());
      }
      for (int v = 0; v < n; ++v)
        DUCT_TRY(copy_local(at(tmp_, static_cast<std::size_t>(v) * b), kind,
                            at(a.sendbuf, static_cast<std::size_t>(mod(v + a.root, n)) * b), a.send_kind, b));
    }
    for (int m = reach >> 1; m > 0; m >>= 1) {
      if (vr + m >= n) continue;
      const int cnt = std::min(m, n - vr - m);
      reqs->emplace_back();
      DUCT_TRY(link.send(mod(me + m, n), at(tmp_, static_cast<std::size_t>(m) * b), static_cast<std::size_t>(cnt) * b,
                          kind, 0, &reqs->back()));
    }
    if (!a.in_place) DUCT_TRY(copy_local(a.recvbuf, a.recv_kind, tmp_, kind, b));  // in place: it is already there
    return Status::ok();
  }

 private:
  void* tmp_ = nullptr;  // my subtree's blocks, counted from me
};

}  // namespace

DUCT_MSG_ALGORITHM(scatter_binomial, ScatterBinomial)

}  // namespace duct::coll
