// duct coll: every collective goes through one path.
//
// capi packs a call's arguments into CollArgs (after checking them), and
// run_collective() selects an algorithm, builds its schedule and runs the
// task. Algorithms live one per file under lib/coll/<collective>/; the
// building blocks they share (ring phases, binomial trees, ...) are declared
// here too.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "coll/common.hpp"
#include "coll/sched.hpp"
#include "select/select.hpp"

namespace duct::coll {

struct CollArgs {
  select::Coll coll = select::Coll::allreduce;
  const char* call = "";         // "DUCT_Bcast", for logs and hang reports
  const void* sendbuf = nullptr; // never MPI_IN_PLACE: see in_place
  void* recvbuf = nullptr;
  MemKind send_kind = MemKind::host;
  MemKind recv_kind = MemKind::host;
  bool in_place = false;         // MPI_IN_PLACE was passed (sendbuf then points into recvbuf where MPI says)
  int root = 0;
  // Reductions: element type, op and vector length in elements
  // (reduce_scatter_block: one rank's block).
  DType dt{};
  RedOp op{};
  std::size_t count = 0;
  // Data movement, in bytes: bcast: the message; allgather, gather,
  // scatter, alltoall: one rank's block.
  std::size_t bytes = 0;
  // v-variants: the receive layout (allgatherv, gatherv at the root,
  // alltoallv, reduce_scatter in elements) and the send layout (scatterv at
  // the root, alltoallv), in bytes unless said otherwise.
  Layout recv_layout, send_layout;
  // Nothing to move (count 0): only DUCT_CHECK's comparison runs.
  bool nothing = false;
  // A stream-ordered call in the engine form (DUCT_STREAM_ENGINE,
  // coll/stream.cpp): the caller's CUDA stream. The device engine enqueues
  // its work there, ordered between ranks by interprocess events, and the
  // call returns without waiting for the GPU; every other algorithm first
  // waits until the GPU has reached the call on it (after_stream). Null
  // otherwise.
  void* stream = nullptr;
  // A stream-ordered call captured into a CUDA graph (coll/stream.cpp): the
  // graph being built (cudaGraph_t), with `stream` the capturing stream.
  // Only the device engine serves it (engine.hpp, "Captured calls"); null
  // otherwise.
  void* graph = nullptr;
};

// What selection chose for one call: the schedule's maker, whether the
// device engine runs it (fn is then its fallback), names for logs and the
// call's sequence number on the communicator.
using AlgoFn = Sched (*)(Context&, const CollArgs&, std::uint32_t seq);
struct Plan {
  AlgoFn fn = nullptr;
  bool engine = false;
  const char* name = "";
  std::size_t bytes = 0;
  std::uint32_t seq = 0;
  // A timed call of a measured choice (select/trial.hpp): run_collective
  // records its time there.
  select::Trial* trial = nullptr;
};
// What selection sees for a call of collective `c` on ctx's communicator:
// `bytes` as select::Query::bytes defines it, `device`: device buffers
// (duct-tune asks which algorithms can serve a communicator).
select::Query query_of(const Context& ctx, select::Coll c, std::size_t bytes, bool device);
// Select (cached per communicator and collective), log the choice once per
// call signature and number the call. `timed`: a blocking call, whose time
// may count towards a measured choice (select/trial.hpp; out->trial).
Status plan_collective(Context& ctx, const CollArgs& a, Plan* out, bool timed = false);
// The small-call path's run (capi/small.hpp): a blocking call whose
// selection for this size is cached and is a shared-memory algorithm runs
// its plain form (coll/shm_rounds.hpp), numbered as plan_collective numbers
// calls;
// *taken false: nothing done (run_collective takes the call). The caller
// has checked that ctx is healthy, has no pending nonblocking collective,
// no engine and no DUCT_CHECK, and that the buffers are host memory.
Status run_small(Context& ctx, const CollArgs& a, bool* taken);
// How many calls run_small has taken in this process (for tests).
std::uint64_t small_calls() noexcept;
// The schedule of a planned call (built when it is about to run: on an
// engine communicator it numbers the call there).
Sched plan_schedule(Context& ctx, const CollArgs& a, const Plan& p);
// A communicator of one rank: local copies.
Status local_only(const CollArgs& a);

// Select, log once per call signature, build and run (blocking). With
// DUCT_CHECK, compares the call across ranks first (check_call).
Status run_collective(Context& ctx, const CollArgs& a);

// DUCT_CHECK: compare this call with every rank's (one MPI_Iallgather of a
// 64-byte signature; v-collectives add a counts exchange). Errc::mismatch
// naming the ranks that differ and how; nothing is sent on mismatch, so the
// communicator stays usable.
Status check_call(Context& ctx, const CollArgs& a);

// Replace the selection rules at run time (DUCT_Tune); same format as DUCT_TUNE.
Status set_rules(const std::string& rules);

// ---- algorithms (one file each) ---------------------------------------------
Sched allreduce_shm(Context&, const CollArgs&, std::uint32_t);
Sched allreduce_recursive_doubling(Context&, const CollArgs&, std::uint32_t);
Sched allreduce_ring(Context&, const CollArgs&, std::uint32_t);
Sched allreduce_rabenseifner(Context&, const CollArgs&, std::uint32_t);
Sched allreduce_hierarchical(Context&, const CollArgs&, std::uint32_t);
Sched allreduce_split_rail(Context&, const CollArgs&, std::uint32_t);
Sched allreduce_pipelined_rabenseifner(Context&, const CollArgs&, std::uint32_t);
Sched bcast_shm(Context&, const CollArgs&, std::uint32_t);
Sched bcast_cma(Context&, const CollArgs&, std::uint32_t);
Sched bcast_binomial(Context&, const CollArgs&, std::uint32_t);
Sched bcast_scatter_allgather(Context&, const CollArgs&, std::uint32_t);
Sched bcast_pipelined_chain(Context&, const CollArgs&, std::uint32_t);
Sched bcast_split_rail(Context&, const CollArgs&, std::uint32_t);
Sched bcast_hierarchical(Context&, const CollArgs&, std::uint32_t);
Sched reduce_shm(Context&, const CollArgs&, std::uint32_t);
Sched reduce_shm_tree(Context&, const CollArgs&, std::uint32_t);
Sched reduce_binomial(Context&, const CollArgs&, std::uint32_t);
Sched reduce_reduce_scatter_gather(Context&, const CollArgs&, std::uint32_t);
Sched reduce_rabenseifner(Context&, const CollArgs&, std::uint32_t);
Sched reduce_split_rail(Context&, const CollArgs&, std::uint32_t);
Sched reduce_hierarchical(Context&, const CollArgs&, std::uint32_t);
Sched allgather_shm(Context&, const CollArgs&, std::uint32_t);
Sched allgather_cma(Context&, const CollArgs&, std::uint32_t);
Sched allgather_bruck(Context&, const CollArgs&, std::uint32_t);
Sched allgather_recursive_doubling(Context&, const CollArgs&, std::uint32_t);
Sched allgather_ring(Context&, const CollArgs&, std::uint32_t);
Sched allgather_split_rail(Context&, const CollArgs&, std::uint32_t);
Sched allgather_hierarchical(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_shm(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_recursive_halving(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_pairwise(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_ring(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_split_rail(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_pipelined_pairwise(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_pipelined_halving(Context&, const CollArgs&, std::uint32_t);
Sched reduce_scatter_hierarchical(Context&, const CollArgs&, std::uint32_t);
Sched alltoall_shm(Context&, const CollArgs&, std::uint32_t);
Sched alltoall_cma(Context&, const CollArgs&, std::uint32_t);
Sched alltoall_bruck(Context&, const CollArgs&, std::uint32_t);
Sched alltoall_pairwise(Context&, const CollArgs&, std::uint32_t);
Sched alltoall_split_rail(Context&, const CollArgs&, std::uint32_t);
Sched gather_shm(Context&, const CollArgs&, std::uint32_t);
Sched gather_cma(Context&, const CollArgs&, std::uint32_t);
Sched gather_binomial(Context&, const CollArgs&, std::uint32_t);
Sched gather_linear(Context&, const CollArgs&, std::uint32_t);
Sched gather_hierarchical(Context&, const CollArgs&, std::uint32_t);
// The radix of the node leaders' tree of the node-aware gather and scatter
// (coll/node_tree.hpp) for `total` bytes gathered or scattered in all:
// ceil(sqrt(N)) (two levels) on kNodeTreeMinNodes nodes or more up to
// `max_total` bytes, else N (flat: every leader and the root directly);
// DUCT_NODE_TREE_RADIX overrides (1: flat, k >= 2: radix k).
// The tree's root handles 2 (k - 1) messages instead of N - 1, for one more
// hop: on 64 simulated nodes x 8 ranks, with 0.3 us of CPU per message, the
// gather at 4 KiB took 12.0 us over the tree against 24.5 flat, and 5.1
// against 3.2 with no cost per message; on 16 and 32 nodes the flat form
// was the better one at either cost (docs/benchmarks/2026-11-29-sim-trees.md).
// From 2 MiB the scatter's relays cost more than the tree saves (64 x 8:
// 54.0 against 47.4 us, 59.3 against 52.4).
inline constexpr int kNodeTreeMinNodes = 64;
inline constexpr std::size_t kGatherTreeMaxBytes = ~std::size_t{0};
inline constexpr std::size_t kScatterTreeMaxBytes = 1 << 20;
int node_tree_radix(const Context& ctx, std::size_t total, std::size_t max_total);
Sched scatter_shm(Context&, const CollArgs&, std::uint32_t);
Sched scatter_cma(Context&, const CollArgs&, std::uint32_t);
Sched scatter_binomial(Context&, const CollArgs&, std::uint32_t);
Sched scatter_linear(Context&, const CollArgs&, std::uint32_t);
Sched scatter_hierarchical(Context&, const CollArgs&, std::uint32_t);
Sched barrier_shm(Context&, const CollArgs&, std::uint32_t);
Sched barrier_dissemination(Context&, const CollArgs&, std::uint32_t);
Sched barrier_split_rail(Context&, const CollArgs&, std::uint32_t);

// ---- building blocks ------------------------------------------------------------
// Ring reduce-scatter over link.g: `blocks` in elements; src holds this
// rank's full input, dst (full size) receives partial results and, at the
// end, the reduced block (g.me + own_offset) mod n. Its receive window is
// the context's scratch `scratch_slot` (two rings side by side need two).
Sched ring_reduce_scatter(Context& ctx, Link link, const void* src, void* dst, MemKind kind, Layout blocks, DType dt,
                          RedOp op, int own_offset, std::uint32_t step_base, int scratch_slot = 0);
// Ring allgather over link.g: `blocks` in bytes; this rank starts holding
// block (g.me + own_offset) mod n of buf and ends holding all. With
// `own_src`, this rank's block is sent from there (a clean send buffer
// rather than a copy just written, which a peer reads more slowly).
Sched ring_allgather(Context& ctx, Link link, void* buf, MemKind kind, Layout blocks, int own_offset,
                     std::uint32_t step_base, const void* own_src = nullptr, MemKind own_kind = MemKind::host);
// All-at-once forms of the two ring phases above (coll/direct.cpp): every
// member sends each other member its block in one step. direct_allgather:
// `blocks` in bytes, this rank starts holding block g.me of buf and ends
// holding all. direct_reduce_scatter: `blocks` in elements, src holds this
// rank's full input, block g.me of dst receives the sum of every member's
// block g.me, in member order (dst may be src); its receives land in the
// context's scratch slot 0 (n pieces of up to 1 MiB, exchanged one after
// the other; step numbers step to step + 15).
Sched direct_allgather(Link link, void* buf, MemKind kind, Layout blocks, std::uint32_t step);
Sched direct_reduce_scatter(Context& ctx, Link link, const void* src, void* dst, MemKind kind, Layout blocks, DType dt,
                            RedOp op, std::uint32_t step);
// The same in one exchange, into the caller's scratch (several at once
// each with their own, as the pipelined forms' segments): `acc` holds this
// rank's input (`blocks` in elements) and ends with block g.me summed over
// the members, this rank's own first, then the others in member order;
// `tmp` holds n - 1 times block g.me. One step number.
Sched direct_reduce_scatter_in_place(Link link, void* acc, void* tmp, MemKind kind, const Layout& blocks, DType dt,
                                     RedOp op, std::uint32_t step);
// One message of a chain: `bytes` at buf sent to (`send`) or received from
// group member `peer`, awaited (the rail chains of the split-rail bcast and
// reduce).
Sched chain_hop(Link link, int peer, void* buf, std::size_t bytes, MemKind kind, bool send, std::uint32_t step);
// The sends of a k-nomial broadcast (below) from a member that holds the
// message: to each of its children, farthest level first, appended to
// `sends` (not awaited).
Status knomial_sends(Link link, const void* buf, std::size_t bytes, MemKind kind, int root, std::uint32_t step,
                     int radix, std::vector<Request>* sends);
// Binomial broadcast of `bytes` at buf from group member `root`.
Sched binomial_bcast(Context& ctx, Link link, void* buf, std::size_t bytes, MemKind kind, int root,
                     std::uint32_t step_base);
// Binomial reduction of `count` elements towards group member `root`:
// `input` is this rank's contribution (read only, may equal acc); `acc`
// accumulates the subtree's result and at the root holds the result on
// return. A leaf sends its input as it is. `tmp` is scratch of the same size.
// `input` and `acc`/`tmp` are of memory kind `kind` (input may be in_kind).
Sched binomial_reduce(Context& ctx, Link link, const void* input, MemKind in_kind, void* acc, void* tmp,
                      std::size_t count, DType dt, RedOp op, MemKind kind, int root, std::uint32_t step_base);
// Recursive-doubling allreduce of `acc` (host memory) over link.g.
Sched recursive_doubling_allreduce(Context& ctx, Link link, void* acc, void* tmp, std::size_t count, DType dt,
                                   RedOp op, std::uint32_t step_base);
// The same for `acc` of any memory kind: a device vector is staged
// through host scratch (the context's slots 4 and 5; slot 5 always).
Sched staged_doubling_allreduce(Context& ctx, Link link, void* acc, MemKind kind, std::size_t count, DType dt,
                                RedOp op, std::uint32_t step_base);
// The fold before recursive halving or doubling on n = 2^k + rem members
// of link.g: the first 2 rem pair up, the even member of each pair sends
// its vector `acc` (count elements, kind) to the odd one, which reduces it
// into its own (tmp: scratch of the vector's size). *newrank: the member's
// index among the 2^k left (member i is 2i+1 for i < rem, else i + rem), or
// -1 for a member folded away.
Sched fold_pairs(Link link, void* acc, void* tmp, MemKind kind, std::size_t count, DType dt, RedOp op,
                 std::uint32_t step, int* newrank);
// The 2^k members left after fold_pairs on n (2^k <= n < 2^(k+1)), as
// ranks of link.g: member i is 2i+1 for i < rem, else i + rem.
std::vector<int> folded_members(int n);
// Recursive halving over link.g (a power of two members): `acc` holds the
// whole input (`blocks` in elements, consecutive, one per member) and ends
// with block g.me reduced, in place. `tmp` holds at least half of it.
Sched halving_reduce_scatter(Context& ctx, Link link, void* acc, void* tmp, MemKind kind, const Layout& blocks,
                             DType dt, RedOp op, std::uint32_t step_base);
// Rabenseifner's reduce over link.g (fold_pairs, halving_reduce_scatter,
// then each member's piece to `root`, an index of link.g): every member's
// `acc` (count elements of `kind`) is its input and is overwritten; `tmp`
// holds the vector. The root ends with the sum in `dst` (dst_kind), which
// may be its acc. Steps: `step` the fold, step+1.. the halving (log2 of
// the members), `gather_step` the gather.
Sched rabenseifner_reduce(Context& ctx, Link link, void* acc, void* tmp, MemKind kind, std::size_t count, DType dt,
                          RedOp op, int root, void* dst, MemKind dst_kind, std::uint32_t step,
                          std::uint32_t gather_step);
// Recursive doubling allgather over link.g (a power of two members): every
// member holds its block of `buf` (`blocks` in bytes, consecutive) and ends
// with all of them.
Sched doubling_allgather(Context& ctx, Link link, void* buf, MemKind kind, const Layout& blocks, std::uint32_t step_base);

// The shared-memory protocol of the shm algorithms (coll/shm.hpp). Before
// writing its slot of sequence k, in a piped call or not (ShmArea::piped), a
// rank makes sure every rank is done with the slot's previous use
// (ShmArea::claim_need): `shm_claimed` looks without waiting, `shm_claim`
// waits; SHM_CLAIM does both. shm_publish makes this rank's slot of k visible; shm_wait_rank waits
// for rank q's; shm_exchange publishes and waits for every rank's (after it
// every slot of k may be read). Every algorithm ends with
// ShmArea::finish(me, k) once it has read all it reads. `tag` (shm_tag) says
// which call this is: a wait that finds another call's word for sequence k
// returns Errc::mismatch instead of reading it.
class ShmArea;
Sched shm_claim(ShmArea& s, std::uint64_t k, bool piped, int me, int n);
bool shm_claimed(ShmArea& s, std::uint64_t k, bool piped, int me, int n);
void shm_publish(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me);
// The tag of a call: its collective and, for the rooted ones, its root
// (mod 256); equal on every rank of a correct program.
std::uint32_t shm_tag(const CollArgs& a) noexcept;
// The waits are awaitables rather than coroutines: no frame of their own on
// the small-message path.
class WaitShm final : public Waitable {
 public:
  // all: every rank but `rank` published sequence k in slot idx (and the
  // area then knows every rank is done with k - lag: 1 where ranks publish
  // k after they finished k - 1, kLead + 1 in led rounds, coll/shm_rounds.hpp);
  // else rank `rank` did.
  WaitShm(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int rank, bool all, std::uint64_t lag = 1)
      : s_(&s), k_(k), lag_(lag), tag_(tag), idx_(idx), rank_(rank), all_(all) {}
  void poll(bool* ready) override;
  std::string describe() const override;

 private:
  int waiting_for() const;
  // Rank q's slot holds word(k_, tag_) or a later sequence's (true), an
  // older word (false), or another call's of sequence k: then status is
  // the mismatch error (true).
  bool arrived(int q);
  ShmArea* s_;
  std::uint64_t k_, lag_;
  std::uint32_t tag_;
  int idx_, rank_;
  bool all_;
  int next_ = 0;  // all: ranks below it have published
};
WaitAwaiter<WaitShm> shm_wait_rank(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int q);
WaitAwaiter<WaitShm> shm_exchange(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me);
// Every rank but `me` has published k in slot idx (or a later sequence
// number, or another call's word of k, which the wait then reports): a look
// that does not wait. shm_wait_all waits for it (WaitShm's lag).
bool shm_all_published(ShmArea& s, std::uint64_t k, int idx, int me);
WaitAwaiter<WaitShm> shm_wait_all(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me, std::uint64_t lag);
// Until rank q has finished sequence k (ShmArea::finish): a rank whose
// memory others read in call k (coll/cma.hpp) waits for its readers so.
Sched shm_wait_done(ShmArea& s, int q, std::uint64_t k);
#define SHM_CLAIM(s, k, piped, me, n)                                 \
  if (!::duct::coll::shm_claimed((s), (k), (piped), (me), (n))) \
  DUCT_CO_TRY(co_await ::duct::coll::shm_claim((s), (k), (piped), (me), (n)))
// The shm reduce: every rank writes its slot; the root (every rank when
// `everyone`: allreduce) waits for all slots and reduces them in rank order.
// (Their plain forms: coll/shm_rounds.hpp.)
Sched shm_reduce(Context& ctx, const CollArgs& a, bool everyone);
// The shm gather: every rank writes its block; the root (every rank when
// `everyone`: allgather) waits for all slots and copies them out.
Sched shm_gather(Context& ctx, const CollArgs& a, bool everyone);
// After shm_exchange: reduce the first `count` elements of the n slots `idx`
// (holding `used` bytes in this call: ShmArea::slot) in rank order into
// `dst` (staged through host scratch when it is device memory); with
// `ranks`, the slots of those ranks in that order instead (one rank: a
// copy).
Status shm_reduce_slots(Context& ctx, ShmArea& s, int idx, std::size_t used, const DType& dt, RedOp op, std::size_t count,
                        void* dst, MemKind dst_kind, std::span<const int> ranks = {});

}  // namespace duct::coll
