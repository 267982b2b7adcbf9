// duct coll: message algorithms written once, run two ways.
//
// The small rooted collectives across nodes (binomial and node-aware
// broadcast, linear and binomial gather and scatter) are a few rounds of
// messages: post some sends and receives (and local copies), wait for all of
// them, go on. A Spec says what each round posts:
//
//   struct Spec {
//     // Post round r's messages, appending their requests to `reqs`, and do
//     // its local work (copies); *more = false after the last round.
//     Status round(int r, std::vector<Request>* reqs, bool* more);
//   };
//
// Every request of a round completes before the next round is posted. The
// round loop exists twice, as for the shared-memory algorithms
// (coll/shm_rounds.hpp): msg_rounds, a coroutine for the general path (a
// Task, nonblocking calls), and msg_rounds_now, a plain function that waits
// in place for the small-call path (capi/small.hpp). Across nodes a small
// call's time is mostly the kernel's network path, and the general path's
// machinery around it (Task, coroutine frames, selection) runs with the
// caches that path left cold: 0.3-0.4 us of an 8-byte broadcast's 7.5 us at
// its root on the emulated cluster, where Open MPI's whole user-space share
// is about 0.15 us. Both loops run the same Spec, so the same messages go
// to the same peers with the same tags.
#pragma once

#include <vector>

#include "coll/collectives.hpp"
#include "coll/task.hpp"

namespace duct::coll {

template <class Spec>
Sched msg_rounds(Spec spec) {
  std::vector<Request> reqs;
  for (int r = 0;; ++r) {
    bool more = false;
    DUCT_CO_TRY(spec.round(r, &reqs, &more));
    if (!reqs.empty()) {
      DUCT_CO_TRY(co_await wait(reqs));
      reqs.clear();
    }
    if (!more) co_return Status::ok();
  }
}

// `reqs`: ctx.small_reqs (empty; left empty, its capacity kept).
template <class Spec>
Status msg_rounds_now(Spec&& spec, std::vector<Request>& reqs, Spinner& sp) {
  struct Clear {
    std::vector<Request>& v;
    ~Clear() { v.clear(); }  // on errors too: a request given up is abandoned by its destructor
  } clear{reqs};
  for (int r = 0;; ++r) {
    bool more = false;
    DUCT_TRY(spec.round(r, &reqs, &more));
    if (!reqs.empty()) {
      WaitRequests w{std::span<Request>(reqs)};
      DUCT_TRY(sp.wait(w));
      reqs.clear();
    }
    if (!more) return Status::ok();
  }
}

// The binomial trees of a broadcast that one rank takes part in, in order
// (bcast/binomial.cpp: one; bcast/hierarchical.cpp: a node level and a
// network level). The rank receives in at most one of them, the first where
// it is not the tree's root; round 0 posts that receive, round 1 the sends
// to its children in every tree (a rank that receives nothing posts them
// in round 0).
struct Tree {
  Group g;
  int root;
  std::uint32_t step;
};
class TreesBcast {
 public:
  static constexpr int kMaxTrees = 2;  // a node level and a network level
  TreesBcast(Context& ctx, std::uint32_t seq, void* buf, std::size_t bytes, MemKind kind)
      : link_{ctx, seq, Group{}}, buf_(buf), bytes_(bytes), kind_(kind) {}
  void add(Group g, int root, std::uint32_t step) { trees_[n_++] = Tree{g, root, step}; }
  Status round(int r, std::vector<Request>* reqs, bool* more);

 private:
  Link link_;
  void* buf_;
  std::size_t bytes_;
  MemKind kind_;
  Tree trees_[kMaxTrees]{};
  int n_ = 0;
};

// What a Spec over the whole communicator holds: the context, the call's
// arguments and the link its messages go over (members: ranks).
struct CommSpec {
  CommSpec(Context& c, const CollArgs& args, std::uint32_t seq)
      : ctx(c), a(args), link{c, seq, Group{nullptr, c.size(), c.rank()}} {}
  Context& ctx;
  const CollArgs& a;
  Link link;
};

// The blocks of a rooted call's buffer at the root, in bytes: those of
// `layout` (gatherv, scatterv) or, without one, `each` bytes per rank in
// rank order.
struct RootBlocks {
  const Layout* layout;
  std::size_t each;
  std::size_t off(int q) const {
    return layout ? layout->off[static_cast<std::size_t>(q)] : static_cast<std::size_t>(q) * each;
  }
  std::size_t len(int q) const { return layout ? layout->len[static_cast<std::size_t>(q)] : each; }
};

// Both forms of message algorithm `name`, whose Spec `make(ctx, a, seq)`
// builds (a constructor or a function): `name` for the general path and
// `name##_now` for the small-call path.
#define DUCT_MSG_ALGORITHM(name, make)                                                    \
  Sched name(Context& ctx, const CollArgs& a, std::uint32_t seq) {                         \
    return msg_rounds(make(ctx, a, seq));                                                 \
  }                                                                                       \
  Status name##_now(Context& ctx, const CollArgs& a, std::uint32_t seq, Spinner& sp) {    \
    return msg_rounds_now(make(ctx, a, seq), ctx.small_reqs, sp);                         \
  }

// The plain forms of the message algorithms (the Specs of their files).
Status bcast_binomial_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status bcast_hierarchical_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status gather_linear_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status gather_binomial_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status scatter_linear_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status scatter_binomial_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);

}  // namespace duct::coll
