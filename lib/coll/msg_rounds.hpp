// duct coll: message algorithms written once, run two ways.
//
// The small collectives across nodes (binomial and node-aware broadcast and
// reduce, recursive doubling and the node-aware allreduce, linear and
// binomial gather and scatter) are a few rounds of messages: post some
// sends and receives (and local copies), wait for all of them, go on. A
// Spec says what each round posts:
//
//   struct Spec {
//     // Post round r's messages, appending their requests to `reqs`, and do
//     // its local work (copies, reductions); *more = false after the last.
//     Status round(int r, std::vector<Request>* reqs, bool* more);
//     // Optional, for a Spec that reduces device memory (a kernel on
//     // duct's stream): the device work of the last round, or nullptr.
//     memory::Fence* fence();
//   };
//
// Every request of a round (and its fence) completes before the next round
// is posted. The round loop exists twice, as for the shared-memory
// algorithms (coll/shm_rounds.hpp): msg_rounds, a coroutine for the general
// path (a Task, nonblocking calls, and the building blocks other algorithms
// await: binomial_bcast, binomial_reduce, recursive_doubling_allreduce), and
// msg_rounds_now, a plain function that waits in place for the small-call
// path (capi/small.hpp). Across nodes a small call's time is mostly the
// kernel's network path, and the general path's machinery around it (Task,
// coroutine frames, selection) runs with the caches that path left cold:
// 0.3-0.4 us of an 8-byte broadcast's 7.5 us at its root on the emulated
// cluster, where Open MPI's whole user-space share is about 0.15 us. Both
// loops run the same Spec, so the same messages go to the same peers with
// the same tags, and reductions happen in the same order.
#pragma once

#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/wait.hpp"

namespace duct::coll {

// The coroutine loop runs any Spec through this interface: one coroutine,
// compiled once (a coroutine template instantiated in several files, with
// external linkage, is what clang 14 under AddressSanitizer cannot compile:
// "Cannot represent a difference across sections").
class AnySpec {
 public:
  virtual ~AnySpec() = default;
  virtual Status round(int r, std::vector<Request>* reqs, bool* more) = 0;
  virtual memory::Fence* fence() { return nullptr; }
};
template <class Spec>
class SpecOf final : public AnySpec {
 public:
  explicit SpecOf(Spec&& s) : s_(std::move(s)) {}
  Status round(int r, std::vector<Request>* reqs, bool* more) override { return s_.round(r, reqs, more); }
  memory::Fence* fence() override {
    if constexpr (requires { s_.fence(); }) return s_.fence();
    return nullptr;
  }

 private:
  Spec s_;
};
Sched msg_rounds_any(std::unique_ptr<AnySpec> spec);
template <class Spec>
Sched msg_rounds(Spec spec) {
  return msg_rounds_any(std::make_unique<SpecOf<Spec>>(std::move(spec)));
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
    if constexpr (requires { spec.fence(); }) {
      if (memory::Fence* f = spec.fence()) {
        WaitFence w(*f);
        DUCT_TRY(sp.wait(w));
      }
    }
    if (!more) return Status::ok();
  }
}

// The binomial trees of a broadcast that one rank takes part in, in order
// (bcast/binomial.cpp and the binomial_bcast building block: one;
// bcast/hierarchical.cpp: a node level and a network level). The rank
// receives in at most one of them, the first where it is not the tree's
// root; round 0 posts that receive, round 1 the sends to its children in
// every tree (a rank that receives nothing posts them in round 0). Above
// kKnomialMaxBytes the sends go one level per round instead, farthest level
// first: posted together, a binomial root's log2(n) copies shared its link
// and its first child forwarded last (64 simulated nodes x 1, 64-256 KiB:
// 0.43-0.44x SMPI's ompi table, whose k-nomial tree waits for each level;
// docs/benchmarks/2026-11-28-sim-knomial.md).
struct Tree {
  Group g;
  int root;
  std::uint32_t step;
  int radix = 2;  // k of the k-nomial tree (coll/common.hpp, KnomialTree); 2: binomial
};
// The radix of the bcast and reduce trees of a communicator that spans
// nodes (DUCT_TREE_RADIX, default 4) for a message of up to
// kKnomialMaxBytes, else 2 (binomial). A sender's k - 1 copies per level
// cost k - 1 message times where the binomial tree's level costs one: the
// k-nomial tree saves latencies while a message's time on the wire is
// below a latency. On 64 simulated nodes of 8 ranks, 8 B-4 KiB, radix 4
// took the node-aware bcast from 0.86-0.96x to 1.13-1.30x SMPI's best table
// and the reduce from 0.64-0.75x to 1.05-1.15x, with and without a 0.3 us
// cost per message (docs/benchmarks/2026-11-28-sim-knomial.md).
inline constexpr std::size_t kKnomialMaxBytes = 32 << 10;
int net_tree_radix(const Context& ctx, std::size_t bytes);

class TreesBcast {
 public:
  static constexpr int kMaxTrees = 2;  // a node level and a network level
  TreesBcast(Context& ctx, std::uint32_t seq, void* buf, std::size_t bytes, MemKind kind)
      : link_{ctx, seq, Group{}}, buf_(buf), bytes_(bytes), kind_(kind) {}
  void add(Group g, int root, std::uint32_t step, int radix = 2) { trees_[n_++] = Tree{g, root, step, radix}; }
  Status round(int r, std::vector<Request>* reqs, bool* more);

 private:
  Link link_;
  void* buf_;
  std::size_t bytes_;
  MemKind kind_;
  Tree trees_[kMaxTrees]{};
  int n_ = 0;
  int tree_ = 0, level_ = -1;  // above kKnomialMaxBytes: the next level to send (its place value; -1: not begun)
};

// The binomial reductions that one rank takes part in, in order (the
// reverse of TreesBcast: reduce/binomial.cpp one, reduce/hierarchical.cpp a
// node level and a network level; binomial_reduce, the building block, one).
// In each tree (Thakur, Rabenseifner, Gropp 2005, section 4.2; members
// numbered from the tree's root; k-nomial across nodes, coll/common.hpp) a
// rank receives from its children in order of distance (a round per level:
// receive its children, as many at once as tmp holds, then reduce them into
// `acc` at the start of the next round, lower-numbered subtree first, so
// the order and the bits are fixed), then sends its partial result to its
// parent: its last action. A rank that is the root of a tree carries its
// partial result into the next tree as its input; one that ends as a root
// has its result in `acc`. A leaf sends its input as it is.
class TreesReduce {
 public:
  static constexpr int kMaxTrees = 2;  // a node level and a network level
  // `input` of in_kind; acc and tmp (scratch of the vector's size) of `kind`.
  TreesReduce(Context& ctx, std::uint32_t seq, const void* input, MemKind in_kind, void* acc, void* tmp,
              std::size_t count, DType dt, RedOp op, MemKind kind)
      : link_{ctx, seq, Group{}}, cur_(input), cur_kind_(in_kind), acc_(acc), tmp_(tmp), count_(count), dt_(dt),
        op_(op), kind_(kind) {}
  void add(Group g, int root, std::uint32_t step, int radix = 2) { trees_[n_++] = Tree{g, root, step, radix}; }
  // tmp holds n vectors (default 1): a k-nomial level's children are
  // received n at a time, reduced in order.
  void tmp_vectors(int n) { tmp_n_ = n; }
  // An error of the Spec's setup (scratch), returned by its first round.
  void fail(Status st) { setup_ = std::move(st); }
  Status round(int r, std::vector<Request>* reqs, bool* more);
  memory::Fence* fence() { return fenced_ ? fence_.get() : nullptr; }

 private:
  Link link_;
  Status setup_;
  const void* cur_;  // this rank's partial result: its input until something is reduced
  MemKind cur_kind_;
  void* acc_;
  void* tmp_;
  std::size_t count_;
  DType dt_;
  RedOp op_;
  MemKind kind_;
  Tree trees_[kMaxTrees]{};
  int n_ = 0;
  int tree_ = 0, mask_ = 1, digit_ = 1;  // where this rank is: the next child, at distance digit_ x mask_ in tree_
  int tmp_n_ = 1;            // vectors tmp holds: children received at once (up to radix - 1 per level)
  int received_ = 0;         // children's vectors in tmp, to reduce
  bool fenced_ = false;                  // the last round reduced device memory
  std::unique_ptr<memory::Fence> fence_;  // (made for the first; a Spec is moved into its coroutine)
};

// A rooted reduce's TreesReduce, without its trees: the input is the send
// buffer, the accumulator the root's receive buffer (scratch elsewhere, of
// the send buffer's kind), tmp scratch (reduce/binomial.cpp and
// reduce/hierarchical.cpp add their trees).
TreesReduce rooted_reduce(Context& ctx, const CollArgs& a, std::uint32_t seq);

// Recursive-doubling allreduce (allreduce/recursive_doubling.cpp) of a host
// vector `acc` over link.g (a rank not in the group, g.me < 0, takes no
// part): a round per exchange, the arrival reduced at the start of the
// next round, lower rank's data first on both partners, so every member
// ends with the same bits. Optionally the vector is copied into acc from
// `in` before the first round and out of it to `out` after the last (a
// device vector staged through host scratch, or a send buffer).
class DoublingAllreduce {
 public:
  DoublingAllreduce(Link link, void* acc, void* tmp, std::size_t count, DType dt, RedOp op, std::uint32_t step_base)
      : link_(link), acc_(acc), tmp_(tmp), count_(count), dt_(dt), op_(op), step_base_(step_base) {}
  void copy_in(const void* src, MemKind kind) { in_ = src, in_kind_ = kind; }
  void copy_out(void* dst, MemKind kind) { out_ = dst, out_kind_ = kind; }
  void fail(Status st) { setup_ = std::move(st); }
  Status round(int r, std::vector<Request>* reqs, bool* more);

 private:
  enum class Phase { start, exchange, unfold, finish };
  Link link_;
  Status setup_;
  void* acc_;
  void* tmp_;
  std::size_t count_;
  DType dt_;
  RedOp op_;
  std::uint32_t step_base_;
  const void* in_ = nullptr;
  MemKind in_kind_ = MemKind::host;
  void* out_ = nullptr;
  MemKind out_kind_ = MemKind::host;
  Phase phase_ = Phase::start;
  int newrank_ = -1, mask_ = 1, p2_ = 1, rem_ = 0;
  enum class Arrival { none, lower, higher } arrival_ = Arrival::none;  // tmp holds a partner's vector
};

// Specs run one after another, each from its round 0 once the previous
// one's last round has completed (the node-aware allreduce: a reduction in
// the node, the leaders' allreduce, a broadcast in the node).
template <class... Specs>
class Chain {
 public:
  explicit Chain(Specs&&... specs) : specs_(std::move(specs)...) {}
  Status round(int r, std::vector<Request>* reqs, bool* more) { return step<0>(r, reqs, more); }
  memory::Fence* fence() { return fence_; }

 private:
  template <std::size_t I>
  Status step(int r, std::vector<Request>* reqs, bool* more) {
    if constexpr (I < sizeof...(Specs)) {
      if (i_ != I) return step<I + 1>(r, reqs, more);
      auto& spec = std::get<I>(specs_);
      bool sub_more = false;
      Status st = spec.round(r - first_, reqs, &sub_more);
      fence_ = nullptr;
      if constexpr (requires { spec.fence(); }) fence_ = spec.fence();
      if (!st) return st;
      if (!sub_more) {  // the next Spec starts at the next round
        ++i_;
        first_ = r + 1;
      }
      *more = i_ < sizeof...(Specs);
      return Status::ok();
    } else {
      return Status::ok();
    }
  }

  std::tuple<Specs...> specs_;
  std::size_t i_ = 0;  // the Spec running
  int first_ = 0;      // the round it started at
  memory::Fence* fence_ = nullptr;
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

// A binomial tree over n ranks numbered from its root (gather and scatter
// binomial): how many ranks the subtree of rank vr holds, itself included
// (vr .. vr + lowbit(vr) - 1, the whole tree for the root).
inline int binomial_subtree(int vr, int n) { return vr == 0 ? n : std::min(vr & -vr, n - vr); }
// Whether some child subtree of the root (its ranks counted from the root)
// runs past rank n - 1 back to 0, so that its blocks are not contiguous in
// a buffer in rank order.
inline bool root_subtrees_wrap(int root, int n) {
  for (int mask = 1; mask < n; mask <<= 1)
    if (mod(root + mask, n) + binomial_subtree(mask, n) > n) return true;
  return false;
}

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
Status reduce_binomial_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status reduce_hierarchical_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status allreduce_hierarchical_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);
Status allreduce_recursive_doubling_now(Context&, const CollArgs&, std::uint32_t seq, Spinner&);

}  // namespace duct::coll
