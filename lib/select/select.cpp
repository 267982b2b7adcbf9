#include "select/select.hpp"

#include <cstdint>
#include <string_view>

#include "core/arith.hpp"
#include "core/config.hpp"

namespace duct::select {

namespace {

bool any(const Query&, std::string*) { return true; }

bool power_of_two(const Query& q, std::string* why) {
  if (is_pow2(q.comm_size)) return true;
  *why = strprintf("needs a power-of-two communicator (this one has %d ranks)", q.comm_size);
  return false;
}

bool shm_area(const Query& q, std::string* why) {
  if (q.num_nodes != 1) return (*why = "the communicator spans nodes"), false;
  if (q.shm_bytes == 0) return (*why = "no shared-memory area on this communicator"), false;
  return true;
}

// The single-copy forms (coll/cma.hpp): one node, and every rank of it may
// read every other's memory (process_vm_readv, tried when the area was set
// up).
bool cma_area(const Query& q, std::string* why) {
  if (!shm_area(q, why)) return false;
  if (!q.cma) return (*why = "cross-memory attach (process_vm_readv) is refused between these ranks (DUCT_LOG=info says why)"), false;
  return true;
}

// The device engine decides with the other ranks whether every rank's
// buffers qualify (coll/engine.hpp); here only what this rank knows.
bool engine(const Query& q, std::string* why) {
  if (!q.engine) return (*why = "no device engine on this communicator (see DUCT_LOG=info at its creation)"), false;
  if (!q.device) return (*why = "this rank's buffers are host memory"), false;
  return true;
}

bool several_nodes(const Query& q, std::string* why) {
  if (q.num_nodes > 1) return true;
  *why = "the communicator is on one node";
  return false;
}

// Split-rail forms: several nodes with the same number of ranks, more than one.
bool rails(const Query& q, std::string* why) {
  if (!several_nodes(q, why)) return false;
  if (q.ranks_per_node == 0) return (*why = "the nodes have different numbers of ranks"), false;
  if (q.ranks_per_node == 1) return (*why = "one rank per node (no node level to split)"), false;
  return true;
}

// The pipelined hierarchical Rabenseifner allreduce and the pipelined
// halving reduce-scatter: halving (and doubling) at both levels, so nodes
// and ranks per node in powers of two.
bool rails_pow2(const Query& q, std::string* why) {
  if (!rails(q, why)) return false;
  if (is_pow2(q.num_nodes) && is_pow2(q.ranks_per_node)) return true;
  *why = "the nodes or the ranks per node are not a power of two";
  return false;
}

// The split-rail alltoall names a block's node (or local index) in a
// message's step: up to 2047 nodes and 2047 ranks per node.
bool rails_alltoall(const Query& q, std::string* why) {
  if (!rails(q, why)) return false;
  if (q.num_nodes < 2048 && q.ranks_per_node < 2048) return true;
  *why = "more than 2047 nodes or ranks per node";
  return false;
}

// The built-in rules. Across nodes with the same number of ranks on each,
// the split-rail forms from 16 KiB: on the emulated cluster (2 nodes x 2
// ranks, 2 rails at 1 Gbit/s, docs/benchmarks/2026-11-23-cluster-2x2-rails.md)
// they beat the flat and node-aware algorithms from 32 KiB (allreduce 230
// against 408 us, bcast 137 against 275 us) and lose at 4 KiB and below,
// where a message's latency, not a link's bandwidth, decides. The split-rail
// alltoall from 32 KiB (2026-11-24: 138 against 180 us at 32 KiB, 6.7 against
// 9.5 ms at 1 MiB; pairwise 124 against 151 us at 16 KiB). Below 16 KiB the
// allgather across nodes is the node-aware one (gather at each node's
// leader, allgather among the leaders, broadcast in the node): one rank per
// node on the network. 3 nodes x 2 ranks, 48 B-3 KiB: 67-79 us against
// Bruck's 91-95 us (coll/han 73-82); 2 nodes x 2 ranks, 1 and 2 rails, four
// runs of 64 B-4 KiB: 20-42 us against recursive doubling's 26-40 us (sum
// of the twelve rows 347 against 388 us), where recursive doubling trailed
// coll/han by 0.69-0.89x in the full runs
// (docs/benchmarks/2026-11-24-cluster-eager-tcp.md). The reduce-scatter
// below 16 KiB across nodes is node-aware too (reduce in the node,
// recursive doubling among the leaders, each leader sends its node's ranks
// their blocks): 3 nodes x 2 ranks, 48 B-3 KiB, 50-70 us against the
// pairwise exchange's 122-127 (coll/han 66-108); 2 nodes x 2 ranks,
// 64 B-4 KiB, 19-34 us against recursive halving's 27-45 (at 32 KiB the
// leader's single link makes it 275 against 138 us). Gather and scatter
// across nodes: the binomial tree sends fewer network messages (a far
// node's blocks in one, through one rank of it), the linear form sends
// every rank's block at once, each over its own rail; with small blocks
// the first wins, with larger ones the second (2026-11-26, links at
// 1 Gbit/s, two rounds each, -A forced, us). 2 nodes x 2 ranks: gather
// 64 B-1 KiB binomial 7.0-7.7 against linear 7.2-13.4 (13.4 in 2 of 6),
// 2 KiB even, 4 KiB linear 8.7-11.2 against 17.2-17.3; scatter 64 B-2 KiB
// binomial 6.7-7.6 against 12.7-15.6, 4 KiB linear 13.3-13.8 against
// 16.9-17.5, 8 KiB 17.9-20.5 against 34.4, 16 KiB 34.3 against 68.6.
// 3 nodes x 2 ranks: gather 3 KiB binomial 13.7-14.7 against 16.2-16.3,
// 4 KiB linear 15.3-19.6 against 19.5-20.2, 6 KiB 21.1-21.9 against 34.4;
// scatter 5 KiB binomial 22.9-24.9 against 30.0-30.1, 6 KiB linear
// 27.9-31.3 against 34.2-35.0, 12 KiB 39.3-43.6 against 68.6. On 9 to 16
// ranks the crossovers of 2026-11-25 stay (5 nodes x 2 ranks: gather 10 KiB
// 55 against 65 us, scatter 20 KiB 128-164 against 130-135, 40 KiB 170
// against 272).
// Below 16 KiB the allreduce across nodes is the node-aware one (reduce in
// the node, recursive doubling among the node leaders, bcast in the node):
// one rank per node on the network instead of every rank. duct-tune on the
// 2x2 cluster chose it at every size from 8 B to 4 KiB (25-38 us against
// recursive doubling's 38-61 us, MPI 54-96 us), and duct-bench agreed in two
// runs (8 B: 43/54 against 57/61 us; 4 KiB: 52/86 against 73/103 us).
// Below 16 KiB the bcast and reduce across nodes are node-aware too, their
// network level a binomial tree per rank of the root's node (one per rail):
// 3 nodes x 2 ranks, 2 rails, 4 KiB: bcast 33-34 against the binomial
// tree's 68 us (MPI 138), reduce 31-34 against 68 (MPI 36-65), since the
// flat tree moves every network copy through the root's one NIC; 8-512 B
// and 2 nodes x 2 ranks (one remote node, one tree) even with it
// (2026-11-25); from 4 KiB to 32 KiB even with split_rail on 3 nodes.
// The device engine comes first wherever it exists: on
// one node it is one kernel over the peers' buffers, against a message
// schedule (measured on an H100, docs/benchmarks/). Crossovers measured with
// duct-bench -A on 2 and 4 ranks of the 2-core build machine
// (docs/benchmarks/, 2026-11-23-host-small-2core.md for the shared-memory
// limits); the reasoning: on one node, shared memory beats messages up to
// megabytes for bcast, gather, reduce and allreduce, whose chunks pipeline
// through the slots (the reductions only up to 4 ranks, where every rank or
// the root reducing every vector is not yet more work than a ring's), and
// up to a few slots for the others; recursive doubling/halving, Bruck and
// binomial trees need few steps (latency), rings and scatter+allgather move
// the least data per rank (bandwidth); with 2 ranks a binomial broadcast
// and a linear gather or scatter are one message each. The 2-rank
// allgather leaves shm at 256 KiB in all for the ring, one whole-block
// exchange there: 2026-11-25, three rounds beside Open MPI, shm 64 KiB
// 5.0 against 6.3 us for the ring, 128 KiB even (8.0-8.6 us each), 256 KiB
// 16.0 against 13.0, 1 MiB 59 against 50, 4 MiB 232-255 against 204-237.
// From 16 ranks on one node the reduce up to 4 KiB is the 4-ary shm_tree:
// the flat shm reduce's root reads n - 1 slots in turn, the tree's 4. On an
// H100 machine's 16 cores (2026-11-26, docs/benchmarks/2026-11-26-gpu-run9-
// h100.md), 16 ranks one per core, 8 B / 64 B / 512 B / 4 KiB: 1.45 / 1.50
// / 1.85 / 3.81 us against the flat reduce's 1.68 / 2.53 / 3.39 / 9.44
// (Open MPI 0.68-0.70 / 0.88-1.13 / 2.8-3.3 / 12-13). Not measured at 5-15
// ranks, nor above 4 KiB: the range ends at the next power of two above
// the largest size won, as duct-tune writes its rules; the flat reduce
// keeps the rest, and duct-tune measures where it is run.
// The single-copy forms on one node (cma, coll/cma.hpp; 2026-11-28,
// docs/benchmarks/2026-11-28-cma-onenode.md: duct-bench -A, -R 3, host
// buffers, 2 and 4 ranks on the build VM's 2 cores; Open MPI's time /
// duct's) took over from the message forms, which pay a UCX header and
// FIN around their one process_vm_readv: the 2-rank allgather from 128 KiB
// (ring 0.75-0.79 / cma 1.10 at 128 KiB, 512 KiB 0.85-0.87 / 1.04-1.06)
// and the alltoall from 256 KiB (2 ranks: pairwise 0.81-0.82 / cma
// 1.07-1.08; 4 ranks: pairwise 0.79-0.86 / cma 1.16-1.45), the scatter
// from 512 KiB from 3 ranks (linear 0.94-0.97 / 0.99-1.21).
// Then the shm rounds became led (coll/shm_rounds.hpp: every rank fills
// slots ahead of its reads where all write and all read) and large calls'
// slot data 64-byte aligned (ShmArea::slot), and Open MPI's better setting
// on one node joined the comparison: its single copy off
// (btl_vader_single_copy_mechanism none), large messages pipelined through
// its FIFO. 2026-11-28, docs/benchmarks/2026-11-28-led-shm.md: -A forced,
// -R 3, two repetitions, ratio against the better Open MPI setting of the
// same repetition, 256 KiB-64 MiB:
// - shm at every size up to 4 ranks for the allreduce (1.33-2.80 and
//   8.9-22 at 64 MiB, where the ring was 0.73-1.66), the reduce
//   (1.61-5.96; reduce_scatter_gather 0.64-1.69) and the reduce-scatter
//   (shm 24-98x, ring 10-43x of Open MPI's slow one here); their 8 MiB
//   and 128 KiB ends are gone;
// - shm for the 2-rank bcast (1.06-1.44; cma 0.25-1.07, as Open MPI's FIFO
//   beat cma's single copy at every size) and scatter (1.14-1.66 up to 4
//   MiB, 0.73-1.18 at 16-64 MiB; cma 0.59-1.25);
// - shm from 8 MiB for the 2-rank allgather (64 MiB 1.15-1.17 against
//   cma's 0.66-0.85; 16 MiB 0.72-0.97 against 0.60-0.78) and alltoall
//   (64 MiB 0.91-1.04 against 0.72-0.76); cma keeps 128 KiB-8 MiB (the
//   two within 20% of each other, each ahead in one repetition);
// - the 3-4 rank alltoall: shm below 512 KiB (256 KiB 1.40-1.44 against
//   cma's 0.87-0.96), cma to 32 MiB, shm from there (64 MiB 0.91-0.94
//   against 0.84-0.92); 5 ranks and more keep the earlier split.
// On 2026-11-29 the same VM measured the other way round (-A forced, -R 3,
// two repetitions, against Open MPI's better setting; docs/benchmarks/
// 2026-11-29-sim-regret.md, section 4): the led shm rounds 0.62-0.92 and
// cma 0.93-1.74 for the 2-rank allgather at 8-32 MiB, the 2-rank scatter
// at 256 KiB-4 MiB and the 2-4 rank alltoall at 256 KiB-128 MiB. Each day
// the cma forms ran at 0.84-1.09x Open MPI's single copy, the shm rounds
// anywhere from 0.62 to 1.66x: the VM's two cores share its caches well on
// some days and not on others, and the slots' pipeline depends on that. So
// single copy at every size above a crossover (the 2-rank allgather and
// alltoall from 32 KiB in all: at 32-128 KiB cma 1.08-1.21, shm 0.53-1.15,
// below 32 KiB shm ahead, 8 KiB 1.6-2.0 against 1.2-1.4; the 2-rank
// scatter from 128 KiB; the 3-4 rank alltoall from 256 KiB), as Open MPI
// and MPICH copy large messages once; duct-tune measures the machine it
// runs on. These rows are the first guess only: at 16 KiB-8 MiB the
// allgather, alltoall, bcast, gather and scatter time shm against cma on
// their first blocking calls of each size and keep the faster
// (DUCT_MEASURE, select/trial.hpp, coll/dispatch.cpp), since which one
// wins changes with the machine's state (2026-12-03: the 2-rank allgather
// of 32 KiB 2.0 us by shm, 4.0 by cma).
// gather and, from 3 ranks, bcast and allgather were shm at every size
// already (4 ranks: 1.7-3.3x). The 2-rank bcast through shm was 0.8x of
// the binomial tree's time on 2026-11-27 while the VM's cores sat far
// apart (2026-11-27-medium-one-node.md); duct-tune measures the machine
// it runs on.
// One rank per node on 9 or more nodes, allreduce: recursive doubling below
// 64 KiB, then Rabenseifner's reduce-scatter + allgather, where the rules
// above took hierarchical, whose leader level is the ring (split_rail has no
// node level there): its 2(N-1) steps cost 2(N-1) latencies. Simulated
// (SimGrid SMPI, one rank per host, 25 GBps and 1 us links, one switch;
// docs/benchmarks/2026-11-27-sim-scale.md), 16 nodes, us, recursive
// doubling / Rabenseifner / ring: 4 KiB 8.7 / 16.3 / 60.4, 32 KiB 13.5 /
// 18.6 / 62.6, 256 KiB 52.1 / 36.7 / 80.7, 2 MiB 360 / 181 / 225, 16 MiB
// 2827 / 1337 / 1382; at 64 nodes the ring was 0.08-0.46x SMPI's best
// selector at 32 KiB-2 MiB. Not measured on a real cluster of that size.
// The same platform for bcast and allgather at one rank per node, 9 or more
// nodes (where split_rail is a plain ring or binomial tree): bcast by
// binomial tree below 128 KiB, then scatter + allgather (recursive doubling
// for a power of two), 16 nodes, us, binomial / scatter_allgather / SMPI's
// ompi: 64 KiB 24.4 / 22.9 / 18.5, 128 KiB 42.7 / 27.4 / 29.0, 256 KiB 79.4
// / 36.8 / 50.0, 16 MiB 4704 / 1306 / 1306; 12 nodes 64 KiB 18.8 / 34.2, 256
// KiB 62.0 / 51.7. Allgather by Bruck at every size instead of the ring
// (n-1 latencies), 12 nodes, Bruck / ring / ompi: 4 KiB 9.2 / 23.2 / 10.2,
// 256 KiB 19.1 / 33.1 / 27.1, 16 MiB 655 / 669 / 1103; 16 nodes 256 KiB
// 18.3 / 40.4 / 18.3.
// Allgather on 64 or more ranks over several nodes (measured at 8 ranks
// per node on the rails platform: one 50 GBps NIC per rank, NVLink-class
// links inside a node; SimGrid SMPI 3.32, factors neutralised; docs/
// benchmarks/2026-11-27-sim-allgather-scale.md): split_rail's network level
// is a ring per rail, N - 1 steps of a NIC's latency, so it loses below
// megabytes where the node count is large; recursive doubling (a power of
// two of ranks) and Bruck (any count) take log2(n) steps. Total size, us,
// hierarchical / recursive doubling / Bruck / split_rail: 8 x 8, 16 KiB 13.5
// / 12.3 / 15.4 / 18.2, 64 KiB 15.1 / 13.2 / 16.4 / 18.3, 256 KiB 21.4 /
// 16.9 / 20.4 / 19.2, 1 MiB 46.5 / 31.6 / 36.6 / 22.6; 16 x 8, 16 KiB 15.6
// / 14.3 / 17.4 / 34.3, 64 KiB 17.2 / 15.3 / 18.4 / 34.4, 256 KiB 23.7 /
// 19.2 / 22.5 / 35.2, 1 MiB 49.8 / 34.8 / 38.8 / 38.8, 4 MiB 154 / 97.1 /
// 104 / 53.0; 64 x 8, 16 KiB 19.6 / 18.4 / 21.4 / -, 64 KiB 21.3 / 19.4 /
// 22.4 / -, 256 KiB 27.9 / 23.4 / 26.5 / -. split_rail at 64 x 8 did not
// finish in 15 minutes of SMPI's real time; where it overtakes there is
// not known (at 16 nodes: between 1 and 4 MiB). Below 64 KiB the rules
// kept the hierarchical form although recursive doubling was 1-2 us faster
// in the model, until the small-size runs below.
// The reduce-scatter's split_rail has the same ring per rail; recursive
// halving (a power of two of ranks) takes its place from 16 KiB. Since
// 2026-11-27 (evening) recursive halving and doubling run in node-aware
// order from 128 KiB (coll/common.hpp: the halving's biggest steps inside
// the nodes, each NIC carrying 1/L of rank order's bytes), which made them
// even with SMPI's ompi table and ahead of split_rail to 4 MiB at every
// node count simulated (docs/benchmarks/2026-11-27-sim-node-aware.md).
// Input vector, us, recursive halving / split_rail (SMPI ompi, whose
// reductions are not charged, duct's are at 10 GiB/s): 8 x 8, 16 KiB 12.3
// / 18.2 (14.1), 256 KiB 15.2 / 19.2 (15.2), 1 MiB 18.9 / 22.6 (18.9), 4 MiB
// 33.6 / 36.3 (33.6), 16 MiB 92.3 / 90.9 (92.3); 16 x 8, 256 KiB 17.2 /
// 35.2 (17.2), 1 MiB 20.9 / 38.8 (20.9), 4 MiB 35.6 / 53.0 (35.6), 16 MiB
// 94.3 / 109.7 (94.3); 64 x 8, 256 KiB 21.2 / - (21.2), 4 MiB 39.6 / -
// (39.6). So split_rail keeps 16 MiB and up on 64-127 ranks only. The
// allgather by recursive doubling mirrors it to the microsecond (8 x 8, 4
// MiB 33.6 / 36.3 for split_rail; 16 MiB 92.3 / 90.9; 16 x 8, 16 MiB 94.3
// / 109.7): the same ranges from 64 KiB. Not a power of two: split_rail
// still (pairwise's n - 1 steps at 128 ranks did not finish in the
// session's time).
// The pipelined pairwise reduce-scatter (2026-11-28) on 64-127 ranks:
// from 4 MiB on a power of two, 1-16 MiB otherwise (split_rail's ring
// before). Its levels overlap and every message is one step, but it sends
// about n messages per rank (L - 1 per segment in the node, N - 1 over the
// NIC), so the rules take it only where it won at both per-message CPU
// costs simulated, none and 0.3 us (smpi/os, ois, or). Input vector, 8 x
// 8, us, pipelined pairwise / recursive halving (SMPI ompi), reductions
// free, cost 0 | 0.3 us: 1 MiB 10.3 / 18.9 (18.9) | 39.0 / 21.9 (21.9), 4
// MiB 20.0 / 33.6 (33.6) | 24.8 / 35.7 (35.7), 16 MiB 48.9 / 92.3 (92.3) |
// 81.0 / 94.4 (94.4); 12 x 8, pipelined pairwise / split_rail: 1 MiB
// 10.2 / 30.7 (28.1) | 57.3 / 81.8 (31.2), 4 MiB 20.4 / 44.8 (64.3) | 61.8
// / 89.8 (66.7), 16 MiB 50.3 / 100.8 (211) | 175 / 125 (213); 16 x 8 at
// 0.3 us it lost (1 MiB 76.6 / 24.5, 4 MiB 80.3 / 38.6), so 128 ranks and
// up keep recursive halving (docs/benchmarks/2026-11-28-sim-rs-pipelined.md).
// Below 16 KiB on 128 ranks or more, recursive halving too (the
// hierarchical form's three levels before 2026-11-29): 64 x 8, 4 KiB in
// all, us, cost 0 | 0.3 us, recursive halving / hierarchical / the best
// SMPI table: 15.1 / 16.6 / 15.1 (mvapich2) | 20.5 / 24.4 / 20.5 (mvapich2)
// (docs/benchmarks/2026-11-29-sim-scorecard.md).
// The allreduce on 128 or more ranks across nodes (64-127: a power of two
// of them, where it was measured) takes recursive doubling from 16 KiB to
// 128 KiB, where split_rail's node rings (L - 1 steps each
// way) and rail level cost more steps than log2(n) whole-vector exchanges,
// and Rabenseifner's algorithm from 128 KiB on a power of two of ranks (in
// node-aware order it sends each NIC 2 (n-1)/n of the vector over L).
// Same platform, us, recursive doubling / Rabenseifner / split_rail (SMPI
// ompi): 8 x 8, 16 KiB 13.2 / 21.2 / 23.2 (13.2), 64 KiB 16.6 / 21.6 /
// 23.8 (16.6), 128 KiB 21.2 / - / - (21.2), 256 KiB 30.4 / 23.3 / 26.2
// (23.3), 1 MiB - / 30.1 / 35.6
// (30.1), 4 MiB - / 57.4 / 73.2 (57.4), 16 MiB - / 167 / 190 (167); 16 x 8,
// 16 KiB 15.5 / 25.2 / 25.3 (247), 64 KiB 20.0 / 25.6 / 26.0 (379), 128 KiB
// 26.0 / - / 26.9 (25.9), 256 KiB 37.9 / 27.4 / 28.8 (27.4), 1 MiB - / 34.5
// / 40.3 (34.5), 4 MiB - / 62.8 / 86.2 (62.8), 16 MiB - / 176 / 235 (176);
// 64 x 8, 16 KiB 20.2 / 33.2 / 29.3 (33.2), 64 KiB 26.7 / 33.6 / 30.3
// (33.6), 128 KiB 35.5 / - / 31.6 (34.2), 256 KiB 52.9 / 35.5 / 34.2
// (35.4), 1 MiB - / 42.7 / 49.8 (42.7), 4 MiB - / 71.8 / - (71.8).
// From 4 MiB on a power of two of 64 or more ranks, where every node holds
// as many, the pipelined two-level Rabenseifner (its segments keep the
// node links and the NICs busy at once); us, reductions free, pipelined /
// Rabenseifner (SMPI ompi): 8 x 8, 4 MiB 44.0 / 57.4 (57.4), 16 MiB 102.0
// / 166.6 (166.6); 16 x 8, 4 MiB 48.6 / 62.8 (62.8), 16 MiB 110.7 / 176.1
// (176.1) (docs/benchmarks/2026-11-27-sim-pipelined.md). At 1 MiB its
// segments all start at once, and it is Rabenseifner's time.
// Below 16 KiB (the allreduce) and 64 KiB (the allgather), on a power of
// two of 64 or more ranks, recursive doubling too: it crosses the same
// log2(N) network steps as the hierarchical form's leaders with half its
// node steps (log2(L) against a tree in and a tree out), and was even
// with every SMPI table to 0.01 us where the hierarchical form was
// 0.83-0.94x (64 x 8, 8 B-4 KiB allreduce, 4-32 KiB allgather, us, RD /
// hierarchical (table): ompi run 18.0 / 21.0 (26.0), mpich 18.0 / 21.0
// (18.0), mvapich2 15.0 / 18.0 (15.0); allgather 16 KiB, mpich 18.4 / 19.6
// (18.4), mvapich2 15.4 / 16.6 (15.4)). Other counts keep the hierarchical
// form, as do fewer ranks, whose rules the emulated cluster measured.
// The alltoall across nodes on 16 ranks or more. 16 x 8, us, forced,
// SMPI's ompi table in the same run (Bruck below 200 B a block, then every
// message posted at once below 3000 B, as Open MPI's fixed decision); no
// per-message cost | 0.3 us per send and receive: pairwise 35.2-35.4
// (14.0-16.4) | -, its n - 1 steps cost n/8 round trips; Bruck 14.1-16.4
// (the table's time) | 18.3-20.6 (the same); split_rail with every block a
// message of its own 6.4-7.0 | 140.0 (18.2-20.6); split_rail packed (one
// node-level message per local rank, one rail message per peer node:
// alltoall/split_rail.cpp) 6.0-6.7 | 15.5 (18.2-20.6), 512 B-32 KiB. On
// 64 x 8 its 2 (N-1) rail messages cost more than Bruck's log2 n steps:
// 44.4 against 23.6 at 2 KiB with 0.3 us. So: split_rail on up to 128
// ranks of 8 or more per node, Bruck below 64 KiB above that (and on fewer
// ranks per node); split_rail from 64 KiB
// (docs/benchmarks/2026-11-28-sim-large-alltoall.md).
// On 128 x 8 (1024 ranks, 2026-11-29-sim-trees.md) the node-aware scatter
// down its leaders' tree, us, no cost | 0.3 us, tree / binomial / linear:
// 4 KiB 5.1 / - / 3.0 | 19.4 / 23.1 / -, 32 KiB 5.7 / - / 3.0 | 19.5 /
// 23.7 / -, 256 KiB 10.7 / - / 7.5 | 21.8 / 32.1 / - (2 MiB, flat: see
// the doc): worst ratio 0.53-0.71, where the rules before (binomial, then
// linear, which pays 0.3 us 1023 times at the root) had 0.1-0.2; so the
// rule below reaches 1024 ranks.
// The scatter on 64-512 ranks of 8 or more per node: the node-aware form
// (N - 1 + L - 1 messages from the root, one intra-node hop more) in place
// of the binomial tree and linear. 64 x 8, us, SMPI's mvapich2 table
// (the best of the three here) in the same run, no per-message cost | 0.3
// us per send and receive: 4 KiB hierarchical 3.1 / binomial 15.2 (15.2) |
// 26.8 / 20.5 (31.3), 32 KiB 3.7 / 16.2 (2.8: the table sends every block
// straight from the root) | 26.8 / 21.1 (155.6). It loses to the tree with
// the cost and wins without it by more; its worst ratio to the table is
// the better one (1.17 against 1.00 at 4 KiB, 0.76 against 0.17 at 32 KiB).
// From 64 KiB too: linear took 7.3 and 43.5 at 256 KiB and 2 MiB against
// the node-aware 8.2 and 44.4 with no cost (mvapich2's table, linear
// there, 7.3 and 43.5), but 156 against 27 and 49 with 0.3 us, where
// mpich's table took 42.6 and 126.9 (linear 0.27x and 0.80x of it; the
// node-aware form's worst, 0.89x, is the better one). More nodes: N - 1
// root messages at 0.3 us outgrow the tree's log2 n levels.
// The bcast and reduce on 64 or more ranks of 8 or more per node: the
// node-aware (k-nomial) forms below 64 KiB, split_rail from there, where
// the rules of the 2 x 2 cluster (links at 1 Gbit/s) took split_rail from
// 16 KiB. On 50 GBps NICs a 16-64 KiB message is latency, and the
// k-nomial trees take fewer steps. split_rail's node levels became one
// step each the same day (every rank sends its block to every other at
// once, where a ring took L - 1 steps per segment: 2 MiB at 8 x 8, bcast
// 137 -> 57 us, reduce 138 -> 56). Rails platform, SimGrid SMPI 3.32,
// factors neutralised, reductions free, no per-message cost, us,
// hierarchical / split_rail (docs/benchmarks/2026-11-28-sim-regret.md):
// bcast 8 x 8, 32 KiB 9.7 / 11.6, 64 KiB 13.2 / 12.3; 16 x 8, 32 KiB 10.3
// / 14.0, 64 KiB 16.5 / 14.9; 32 x 8, 32 KiB 7.8 / 7.3, 64 KiB 19.9 / 8.6;
// 64 x 8, 32 KiB 16.3 / 18.9, 64 KiB 23.1 / 20.7; reduce 8 x 8, 32 KiB 7.3
// / 10.3, 64 KiB 11.2 / 10.6; 16 x 8, 32 KiB 7.9 / 12.4, 64 KiB 14.5 /
// 12.8; 32 x 8, 32 KiB 21.3 / 25.6, 64 KiB 27.8 / 26.1; 64 x 8, 32 KiB
// 11.9 / 16.6, 64 KiB 21.1 / 17.1. 4 x 8 (32 ranks) keeps 16 KiB:
// split_rail 6.3 against 7.3 for the reduce at 32 KiB.
// The allreduce's split_rail took the same one-step node levels, which
// brought it ahead of recursive doubling and Rabenseifner's algorithm on
// 8 x 8 (a power of two of 64-127 ranks, 8 or more per node) from 16 KiB
// to 4 MiB, where the pipelined two-level Rabenseifner takes over. Same
// platform, us, split_rail (ring node levels before) / recursive doubling /
// Rabenseifner, no per-message cost | 0.3 us per send and receive: 16 KiB
// 11.2 (23.2) / 13.2 / 21.2 | 18.7 / 16.8 / 28.4, 64 KiB 11.8 (23.8) / 16.6
// / 21.6 | 19.1 / 18.4 / 28.8, 256 KiB 14.2 (26.2) / 30.4 / 23.3 | 21.0 /
// 32.2 / 29.3, 1 MiB 23.6 (35.6) / 85.4 / 30.1 | 27.2 / 87.2 / 34.9, 4 MiB
// 61.2 (73.2) / - / 57.4 (pipelined 44.5). Below 64 KiB with the cost,
// recursive doubling was ahead (0.90x and 0.96x for split_rail); without
// it split_rail by more (recursive doubling 0.85x and 0.71x), so
// split_rail's worst ratio is the better one. On 16, 32 and 64 nodes of 8
// (2026-11-29, duct-bench's timed calls now starting on every rank at one
// simulated instant; docs/benchmarks/2026-11-29-sim-trees.md), us,
// split_rail / recursive doubling / Rabenseifner, no cost | 0.3 us:
// 16 x 8, 32 KiB 10.5 / 14.0 / 22.3 | 20.3 / 18.2 / 30.7, 256 KiB 13.9 /
// 34.9 / 24.4 | 23.1 / 37.0 / 31.6, 2 MiB 40.6 / - / 40.9 | 45.9 / - / 46.3;
// 32 x 8, 32 KiB 12.6 / 16.7 / 26.3 | 23.0 / 21.5 / 35.9, 256 KiB 16.6 /
// 42.4 / 28.4 | 26.4 / 44.8 / 36.8, 2 MiB 48.2 / - / 45.3 | 53.8 / - /
// 51.9; 64 x 8, 32 KiB 17.7 / 22.4 / 33.3 | 26.9 / 27.8 / -, 256 KiB 22.2 /
// 52.9 / 35.5 | 30.9 / 55.6 / 45.1, 1 MiB 37.9 / - / 42.7, 2 MiB 58.6 / - /
// 52.4 | 63.3 / - / 60.2. So split_rail from 16 KiB to 4 MiB on 64 and 128
// ranks, to 2 MiB on 256 and 512; below 16 KiB recursive doubling keeps
// the better worst ratio (0.91-0.94 without the cost against split_rail's
// 0.77-0.93 with it, 8 B-4 KiB). 1024 ranks and more keep their rules.
// Since split_rail's rail level halves its block (1ceecd0), 256 and 512
// ranks too to 4 MiB (2026-11-29, docs/benchmarks/2026-11-29-sim-regret.md
// section 2, no cost, us, split_rail / the Rabenseifner the rules took
// before): 32 x 8, 2 MiB 41.3 / 45.3; 64 x 8, 2 MiB 45.5 / 49.4, 3 MiB
// 55.2 / 59.1; at 4 MiB the pipelined Rabenseifner stays ahead (32 x 8
// 60.5 / 48.4, 64 x 8 64.9 / 52.6).
// The gather on 64-512 ranks of 8 or more per node: the node-aware form
// (each node's leader sends its node's blocks in one message; the mirror
// of the scatter's above) at every size, where the binomial tree (below 64
// KiB) and linear took turns. 64 x 8, us, no per-message cost | 0.3 us,
// hierarchical / binomial / linear: 4 KiB 3.2 / 13.1 / 2.7 | 24.5 / 18.2 /
// 154.8, 32 KiB 3.7 / 13.7 / 3.0 | 25.0 / 18.8 / 154.8, 256 KiB 8.3 / 18.2
// / 7.6 | 29.6 / 22.7 / 156.2, 2 MiB 44.4 / 54.4 / 43.7 | 65.7 / 58.0 /
// 192.4 (docs/benchmarks/2026-11-28-sim-regret.md). No form wins at both
// costs; the node-aware one's worst ratio to the better of the other two
// (0.74-0.88) is the best (the rules before: 0.15-0.30). From 64 nodes its
// leaders form a two-level k-nomial tree (coll/collectives.hpp,
// node_tree_radix), and on 128 x 8 (1024 ranks) that form, us, no cost |
// 0.3 us, tree / flat / binomial / linear: 4 KiB 5.1 / 3.3 / - / 3.4 | 14.1
// / 44.1 / 23.1 / -, 32 KiB 5.7 / 3.8 / - / 3.2 | 14.7 / 44.6 / 23.7 / -,
// 256 KiB 10.1 / 8.4 / - / 8.0 | 18.9 / 49.2 / 27.6 / -, 2 MiB 45.4 / 44.8
// / - / 44.3 | 50.5 / 85.6 / 63.2 / - (docs/benchmarks/2026-11-29-sim-
// trees.md): worst ratio 0.57-0.98, the rules before (binomial, then
// linear, which pays 0.3 us 1023 times at the root) about 0.2-0.6.
// The reduce-scatter from 512 KiB on 64 ranks and more across nodes of
// 2^j ranks (2^k nodes): the pipelined two-level form (a node level in one
// step, recursive halving over the rails, segments of 2 MiB overlapping the
// two), where node-aware recursive halving crossed the levels one after
// the other. Simulated, us, no per-message cost | 0.3 us a send and a
// receive, pipelined_halving / recursive_halving: 64 x 8, 128 KiB 15.7 /
// 17.6 | 24.1 / 23.3, 512 KiB 17.5 / 19.5 | 23.8 / 24.6, 1 MiB 19.9 /
// 21.9 | 25.9 / 26.7, 4 MiB 34.6 / 36.6 | 37.1 / 40.8, 16 MiB 72.1 / 95.3
// | 81.1 / 98.9 (SMPI's ompi table 95.3); 16 x 8, 1 MiB 15.9 / 17.9 |
// 20.7 / 21.5, 16 MiB 72.4 / 91.3 | 75.5 / 93.7; 8 x 8, 512 KiB 11.5 /
// 13.5 | 16.0 / 16.8, 4 MiB 28.6 / 30.6 | 29.8 / 32.7, where from 4 MiB
// the pipelined pairwise form stays (17.0 | 23.7 at 4 MiB)
// (docs/benchmarks/2026-12-01-sim-rs-pipelined-halving.md). Where the
// nodes or their ranks are not powers of two, recursive halving as before.
constexpr const char* kDefaultRules =
    "allreduce/nodes/ppn=1-1/n=9-inf:0-64k:recursive_doubling,64k-inf:rabenseifner;"
    "bcast/nodes/ppn=1-1/n=9-inf:0-128k:binomial,128k-inf:scatter_allgather;"
    "reduce/nodes/ppn=1-1/n=9-inf:64k-inf:rabenseifner;"
    "allgather/nodes/ppn=1-1/n=9-inf:0-inf:bruck;"
    "alltoall/nodes/ppn=8-inf/n=16-128:0-inf:split_rail;alltoall/nodes/n=16-inf:0-64k:bruck;"
    "allgather/nodes/n=64-127:0-16m:recursive_doubling,0-128k:hierarchical;"
    "allgather/nodes/n=128-inf:0-inf:recursive_doubling,0-64k:hierarchical,64k-1m:bruck;"
    "reduce_scatter_block/nodes/pow2/n=64-127:16k-512k:recursive_halving,512k-4m:pipelined_halving,"
    "512k-4m:recursive_halving,4m-inf:pipelined_pairwise;"
    "reduce_scatter_block/nodes/n=64-127:1m-16m:pipelined_pairwise;"
    "reduce_scatter/nodes/pow2/n=64-127:16k-512k:recursive_halving,512k-4m:pipelined_halving,"
    "512k-4m:recursive_halving,4m-inf:pipelined_pairwise;"
    "reduce_scatter/nodes/n=64-127:1m-16m:pipelined_pairwise;"
    "reduce_scatter_block/nodes/n=64-127:16k-16m:recursive_halving;"
    "reduce_scatter_block/nodes/n=128-inf:512k-inf:pipelined_halving,0-inf:recursive_halving;"
    "reduce_scatter/nodes/n=64-127:16k-16m:recursive_halving;reduce_scatter/nodes/n=128-inf:512k-inf:pipelined_halving,"
    "0-inf:recursive_halving;"
    "allreduce/nodes/pow2/ppn=8-inf/n=64-512:16k-4m:split_rail;"
    "allreduce/nodes/pow2/n=64-inf:0-128k:recursive_doubling,4m-inf:pipelined_rabenseifner,128k-inf:rabenseifner;"
    "allreduce/nodes/n=128-inf:16k-128k:recursive_doubling;"
    "allreduce/nodes:0-16k:hierarchical,16k-inf:split_rail,64k-inf:hierarchical;"
    "bcast/nodes/ppn=8-inf/n=64-inf:0-64k:hierarchical;reduce/nodes/ppn=8-inf/n=64-inf:0-64k:hierarchical;"
    "bcast/nodes:0-16k:hierarchical,16k-inf:split_rail;reduce/nodes:0-16k:hierarchical,16k-inf:split_rail;allgather/nodes:16k-inf:split_rail;"
    "allgather/nodes:0-16k:hierarchical;allgatherv/nodes:16k-inf:split_rail;"
    "reduce_scatter_block/nodes:0-16k:hierarchical,16k-inf:split_rail;"
    "reduce_scatter/nodes:0-16k:hierarchical,16k-inf:split_rail;alltoall/nodes:32k-inf:split_rail;"
    "allreduce:0-inf:engine;allreduce/n=1-4:0-inf:shm;"
    "allreduce:0-16k:shm,0-16k:recursive_doubling,16k-inf:ring;"
    "bcast:0-inf:engine,0-inf:shm;bcast/n=1-2:0-inf:binomial;"
    "bcast:0-64k:binomial,64k-inf:scatter_allgather;"
    "reduce:0-inf:engine;reduce/n=1-4:0-inf:shm;reduce/n=16-inf:0-8k:shm_tree;reduce:0-16k:shm;"
    "reduce:0-64k:binomial,64k-inf:reduce_scatter_gather;"
    "allgather:0-inf:engine;allgather/n=1-2:0-32k:shm,32k-inf:cma,0-128k:shm,128k-8m:ring,8m-inf:shm;"
    "allgather:0-inf:shm,0-64k:bruck,64k-inf:ring;"
    "allgatherv:0-inf:engine,0-64k:bruck,64k-inf:ring;"
    "reduce_scatter_block:0-inf:engine;reduce_scatter_block/n=1-4:0-inf:shm;reduce_scatter_block:0-128k:shm,0-64k:recursive_halving,0-64k:pairwise,64k-inf:ring;"
    "reduce_scatter:0-inf:engine;reduce_scatter/n=1-4:0-inf:shm;reduce_scatter:0-128k:shm,0-64k:recursive_halving,0-64k:pairwise,64k-inf:ring;"
    "alltoall:0-inf:engine;alltoall/n=1-2:0-32k:shm,32k-inf:cma;"
    "alltoall:0-256k:shm,256k-inf:cma,0-4k:bruck,4k-inf:pairwise;"
    "alltoallv:0-inf:pairwise;"
    "gather:0-inf:engine,0-inf:shm;gather/n=1-2:0-inf:linear;gather/nodes/n=1-4:0-2k:binomial,2k-inf:linear;"
    "gather/nodes/n=5-8:4k-inf:linear;gather/nodes/n=9-16:8k-inf:linear;"
    "gather/nodes/ppn=8-inf/n=64-1024:0-inf:hierarchical;"
    "gather:0-64k:binomial,64k-inf:linear;"
    "gatherv:0-inf:linear;"
    "scatter:0-inf:engine;scatter/n=1-2:0-128k:shm,128k-inf:cma,0-inf:shm,0-inf:linear;scatter:0-512k:shm,512k-inf:cma;scatter/nodes/n=1-4:4k-inf:linear;"
    "scatter/nodes/n=5-8:6k-inf:linear;scatter/nodes/n=9-16:32k-inf:linear;"
    "scatter/nodes/ppn=8-inf/n=64-1024:0-inf:hierarchical;"
    "scatter:0-64k:binomial,64k-inf:linear;"
    "scatterv:0-inf:linear;"
"barrier/nodes:0-inf:split_rail;barrier:0-inf:shm,0-inf:dissemination";

const char* kCollNames[] = {"allreduce", "bcast",  "reduce",  "allgather", "allgatherv",
                            "reduce_scatter_block", "reduce_scatter", "alltoall", "alltoallv",
                            "gather",    "gatherv", "scatter", "scatterv",  "barrier"};
static_assert(sizeof kCollNames / sizeof kCollNames[0] == static_cast<size_t>(Coll::count_));

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

Status parse_bound(std::string_view s, std::size_t* out) {
  s = trim(s);
  if (s == "inf") {
    *out = SIZE_MAX;
    return Status::ok();
  }
  std::string t(s);
  Status st = config::parse_size(t.c_str(), out);
  return st ? st : make_error(Errc::config, "'%s' is not a size (use 4096, 64k, 1M or inf)", t.c_str());
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

Status parse_qualifier(std::string_view q, Rule* r) {
  q = trim(q);
  if (q == "host") r->kind = 0;
  else if (q == "cuda") r->kind = 1;
  else if (q == "node") r->nodes = 0;
  else if (q == "nodes") r->nodes = 1;
  else if (q == "pow2") r->pow2 = true;
  else if (q.substr(0, 2) == "n=" || q.substr(0, 4) == "ppn=") {
    const bool ppn = q[0] == 'p';
    std::string_view range = q.substr(ppn ? 4 : 2);
    size_t dash = range.find('-');
    if (dash == std::string_view::npos)
      return make_error(Errc::config, "DUCT_TUNE: '%.*s' is not %s=<lo>-<hi>", static_cast<int>(q.size()), q.data(),
                        ppn ? "ppn" : "n");
    std::size_t lo, hi;
    DUCT_TRY(parse_bound(range.substr(0, dash), &lo));
    DUCT_TRY(parse_bound(range.substr(dash + 1), &hi));
    (ppn ? r->ppn_min : r->nmin) = static_cast<int>(std::min<std::size_t>(lo, INT_MAX));
    (ppn ? r->ppn_max : r->nmax) = static_cast<int>(std::min<std::size_t>(hi, INT_MAX));
  } else {
    return make_error(Errc::config,
                      "DUCT_TUNE: unknown qualifier '%.*s' (host, cuda, node, nodes, n=<lo>-<hi>, ppn=<lo>-<hi>, pow2)",
                      static_cast<int>(q.size()), q.data());
  }
  return Status::ok();
}

bool matches(const Rule& r, const Query& q) {
  if (r.coll != q.coll || q.bytes < r.lo || q.bytes >= r.hi) return false;
  if (r.kind >= 0 && r.kind != (q.device ? 1 : 0)) return false;
  if (r.nodes >= 0 && r.nodes != (q.num_nodes > 1 ? 1 : 0)) return false;
  if (r.pow2 && !is_pow2(q.comm_size)) return false;
  if ((r.ppn_min > 0 || r.ppn_max < INT_MAX) &&
      (q.ranks_per_node == 0 || q.ranks_per_node < r.ppn_min || q.ranks_per_node > r.ppn_max))
    return false;
  return q.comm_size >= r.nmin && q.comm_size <= r.nmax;
}

std::string qualifiers(const Rule& r) {
  std::string s;
  if (r.kind >= 0) s += r.kind ? "/cuda" : "/host";
  if (r.nodes >= 0) s += r.nodes ? "/nodes" : "/node";
  if (r.nmin > 0 || r.nmax < INT_MAX)
    s += strprintf("/n=%d-%s", r.nmin, r.nmax == INT_MAX ? "inf" : std::to_string(r.nmax).c_str());
  if (r.ppn_min > 0 || r.ppn_max < INT_MAX)
    s += strprintf("/ppn=%d-%s", r.ppn_min, r.ppn_max == INT_MAX ? "inf" : std::to_string(r.ppn_max).c_str());
  if (r.pow2) s += "/pow2";
  return s;
}

}  // namespace

const char* coll_name(Coll c) noexcept {
  auto i = static_cast<size_t>(c);
  return i < sizeof kCollNames / sizeof kCollNames[0] ? kCollNames[i] : "?";
}

bool parse_coll(const std::string& name, Coll* out) noexcept {
  for (size_t i = 0; i < sizeof kCollNames / sizeof kCollNames[0]; ++i) {
    if (name == kCollNames[i]) {
      *out = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

const std::vector<AlgoDesc>& algorithms() {
  static const std::vector<AlgoDesc> all = {
      // allreduce
      {Coll::allreduce, "engine",
       "device engine, one node: RSxLD_AGxST, one kernel loads every rank's input through CUDA IPC, folds in rank order and stores to every rank's output (NCCL's symmetric kernels)",
       false, engine},
      {Coll::allreduce, "shm",
       "single node: every rank writes its vector to node shared memory and reduces all of them in rank order "
       "(flat shared-memory collective as in Open MPI coll/sm and UCC tl/shm)",
       false, shm_area},
      {Coll::allreduce, "recursive_doubling",
       "exchange the whole vector with partners at distance 1, 2, 4, ...; non-powers of two fold the extra ranks "
       "in first (Thakur, Rabenseifner, Gropp 2005)",
       false, any},
      {Coll::allreduce, "ring",
       "ring reduce-scatter then ring allgather, segments pipelined across steps (Patarasuk, Yuan 2009)", true, any},
      {Coll::allreduce, "rabenseifner",
       "reduce-scatter by recursive halving then allgather by recursive doubling; non-powers of two fold first "
       "(Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005)",
       false, any},
      {Coll::allreduce, "hierarchical",
       "node-aware: reduce inside each node, allreduce among one leader per node, broadcast inside each node "
       "(as in MVAPICH2 and NCCL's tree/ring split)",
       false, several_nodes},
      {Coll::allreduce, "split_rail",
       "split-rail: reduce-scatter inside each node, one inter-node allreduce per local rank on its 1/L of the "
       "vector over its own rail (NIC), allgather inside each node; every NIC busy (UCC cl/hier split_rail, "
       "MVAPICH2 multi-leader DPML; Kandalla et al., 'Designing multi-leader-based allgather algorithms for "
       "multi-core clusters', IPDPS 2009)",
       false, rails},
      {Coll::allreduce, "pipelined_rabenseifner",
       "two-level Rabenseifner in segments: recursive halving inside the node, then over the rank's rail (NIC), "
       "recursive doubling back over the rail and inside the node; 4 segments at a time in the node level, so "
       "the node links and the NICs carry different segments at once (Rabenseifner, ICCS "
       "2004; segments between levels as in Open MPI coll/han)",
       false, rails_pow2},
      // bcast
      {Coll::bcast, "engine",
       "device engine, one node: the root's buffer copied into every rank's by one copy kernel over CUDA IPC mappings",
       false, engine},
      {Coll::bcast, "shm",
       "single node: the root writes node shared memory, every rank copies it out; larger messages in slot-sized "
       "chunks through consecutive slots, the copies in and out pipelined",
       false, shm_area},
      {Coll::bcast, "cma",
       "single node, single copy: the root publishes its buffer's address in node shared memory, every rank "
       "copies the message straight out of it with process_vm_readv (kernel-assisted intra-node collectives: "
       "Ma, Bosilca et al., ICPP 2011)",
       false, cma_area},
      {Coll::bcast, "binomial",
       "binomial tree from the root, log2(n) steps (Thakur, Rabenseifner, Gropp 2005); across nodes up to 32 KiB "
       "a k-nomial tree of radix DUCT_TREE_RADIX, log_k(n) steps (as MVAPICH2 and UCC), above one level at a time",
       true,
       any},
      {Coll::bcast, "scatter_allgather",
       "binomial scatter of n blocks then ring allgather: 2(n-1)/n of the message per rank (van de Geijn et al.; "
       "Thakur, Rabenseifner, Gropp 2005)",
       false, any},
      {Coll::bcast, "pipelined_chain",
       "the ranks form a chain from the root; the message flows in segments, each forwarded on arrival "
       "(pipelined broadcast, Traff and Ripke 2008)",
       false, any},
      {Coll::bcast, "split_rail",
       "split-rail: the root's node scatters the message over its ranks, each rail carries its 1/L to every node "
       "(binomial), each node allgathers (scatter + allgather, Barnett et al. 1994, one broadcast per rail as in "
       "UCC cl/hier split_rail)",
       false, rails},
      {Coll::bcast, "hierarchical",
       "node-aware: the root broadcasts in its node, each rank of the root's node sends to one rank of its share "
       "of the other nodes over its own rail (a tree per port), each of those broadcasts in its node (MVAPICH2, "
       "Open MPI coll/han); every level a k-nomial tree of radix DUCT_TREE_RADIX (binomial: Thakur, Rabenseifner, "
       "Gropp 2005)",
       false, several_nodes},
      // reduce
      {Coll::reduce, "engine",
       "device engine, one node: RSxLD_ST, one kernel loads every rank's input and stores the result to the root",
       false, engine},
      {Coll::reduce, "shm",
       "single node: every rank writes node shared memory, the root reduces in rank order; larger vectors in "
       "slot-sized chunks through consecutive slots",
       false, shm_area},
      {Coll::reduce, "shm_tree",
       "single node: a 4-ary tree over node shared memory, each rank reduces its children's slots into its own, "
       "the root reads 4 slots, not n-1 (k-ary fan-in as the shared-memory collectives of MPICH and Open MPI); "
       "not in the built-in rules: for duct-tune on many-core nodes",
       false, shm_area},
      {Coll::reduce, "binomial",
       "binomial tree towards the root, log2(n) steps (Thakur, Rabenseifner, Gropp 2005); across nodes up to "
       "32 KiB a k-nomial tree of radix DUCT_TREE_RADIX, a level's children received at once",
       true, any},
      {Coll::reduce, "reduce_scatter_gather",
       "ring reduce-scatter then gather of the reduced blocks at the root (Rabenseifner 2004)", false, any},
      {Coll::reduce, "rabenseifner",
       "reduce-scatter by recursive halving then gather of the reduced blocks at the root: log2(p) steps where the "
       "ring takes p-1; non-powers of two fold first (Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005)",
       false, any},
      {Coll::reduce, "split_rail",
       "split-rail: reduce-scatter inside each node, each rail reduces its 1/L towards the root's node (binomial), "
       "the root's node gathers (Rabenseifner 2004, split into node and rail levels as UCC cl/hier split_rail)",
       false, rails},
      {Coll::reduce, "hierarchical",
       "node-aware: each node reduces to one rank, those reduce over their rails to the ranks of the root's node "
       "(a tree per port), the root's node reduces to the root (MVAPICH2, Open MPI coll/han); every level a "
       "k-nomial tree of radix DUCT_TREE_RADIX (binomial: Thakur, Rabenseifner, Gropp 2005)",
       false, several_nodes},
      // allgather
      {Coll::allgather, "engine",
       "device engine, one node: one copy kernel moves every rank's block into every rank's output over CUDA IPC",
       false, engine},
      {Coll::allgather, "shm", "single node: every rank writes its block to node shared memory, every rank reads all; larger blocks in "
       "slot-sized pieces",
       false, shm_area},
      {Coll::allgather, "cma",
       "single node, single copy: every rank publishes its block's address in node shared memory and copies "
       "every other block straight into its result with process_vm_readv (kernel-assisted intra-node "
       "collectives: Ma, Bosilca et al., ICPP 2011)",
       false, cma_area},
      {Coll::allgather, "bruck", "ceil(log2 n) steps of doubling block counts, any n (Bruck et al. 1997)", false, any},
      {Coll::allgather, "recursive_doubling",
       "exchange the gathered half with partners at distance 1, 2, 4, ... (Thakur, Rabenseifner, Gropp 2005)", false,
       power_of_two},
      {Coll::allgather, "ring", "n-1 steps, each rank forwards the block it received last (Thakur et al. 2005)", true,
       any},
      {Coll::allgather, "split_rail",
       "split-rail: each rail allgathers its ranks' blocks across the nodes (ring), then each node's ranks exchange "
       "them (multi-leader allgather, Kandalla et al., IPDPS 2009)",
       false, rails},
      {Coll::allgather, "hierarchical",
       "node-aware: each node's leader gathers its node's blocks, the leaders allgather the nodes' packs (recursive "
       "doubling, or a ring), each leader broadcasts the result in its node (MVAPICH2, Open MPI coll/han)",
       false, several_nodes},
      // allgatherv
      {Coll::allgatherv, "engine",
       "device engine, one node: one copy kernel moves every rank's block into every rank's output over CUDA IPC",
       false, engine},
      {Coll::allgatherv, "bruck", "Bruck's algorithm over blocks of different sizes (Bruck et al. 1997)", false, any},
      {Coll::allgatherv, "ring", "n-1 steps, each rank forwards the block it received last", true, any},
      {Coll::allgatherv, "split_rail",
       "split-rail: each rail allgathers its ranks' blocks across the nodes (ring), then each node's ranks exchange "
       "them (multi-leader allgather, Kandalla et al., IPDPS 2009)",
       false, rails},
      // reduce_scatter_block
      {Coll::reduce_scatter_block, "engine",
       "device engine, one node: RSxLD, rank j's block loaded from every rank's input and folded into rank j's output",
       false, engine},
      {Coll::reduce_scatter_block, "shm",
       "single node: every rank writes its vector to node shared memory, each rank reduces its block of all in rank "
       "order (as UCC tl/shm)",
       false, shm_area},
      {Coll::reduce_scatter_block, "recursive_halving",
       "exchange half of the remaining vector with partners at distance n/2, n/4, ... (Thakur, Rabenseifner, Gropp "
       "2005)",
       false, power_of_two},
      {Coll::reduce_scatter_block, "pairwise",
       "every rank sends each block straight to its owner and reduces what it receives, in rank order", false, any},
      {Coll::reduce_scatter_block, "ring", "ring reduce-scatter, segments pipelined across steps (Patarasuk, Yuan 2009)",
       true, any},
      {Coll::reduce_scatter_block, "split_rail",
       "split-rail: each rank sums its rail's blocks inside the node, each rail reduce-scatters them across the "
       "nodes (ring; the reduce-scatter half of UCC cl/hier split_rail)",
       false, rails},
      {Coll::reduce_scatter_block, "pipelined_pairwise",
       "split-rail, pipelined by destination node: each rank sums inside the node its slice of the blocks of one "
       "node's rail rank and sends the partial sum straight to it over its own NIC (shifted pairwise exchange), "
       "the node level of later segments beside the network of earlier ones (UCC cl/hier split_rail, coll/han)",
       false, rails_alltoall},
      {Coll::reduce_scatter_block, "pipelined_halving",
       "two levels pipelined by segment: each segment reduce-scattered inside the node in one exchange, then by "
       "recursive halving over each rail, the node level of later segments beside the rails of earlier ones, and "
       "each piece sent to the rank whose block it is (Thakur, Rabenseifner, Gropp 2005; coll/han)",
       false, rails_pow2},
      {Coll::reduce_scatter_block, "hierarchical",
       "node-aware: reduce the vector inside each node, allreduce among one leader per node (recursive doubling), "
       "each leader sends its node's ranks their blocks (the hierarchical allreduce's levels, MVAPICH2, coll/han)",
       false, several_nodes},
      // reduce_scatter
      {Coll::reduce_scatter, "engine",
       "device engine, one node: RSxLD, rank j's block loaded from every rank's input and folded into rank j's output",
       false, engine},
      {Coll::reduce_scatter, "shm",
       "single node: every rank writes its vector to node shared memory, each rank reduces its block of all in rank "
       "order (as UCC tl/shm)",
       false, shm_area},
      {Coll::reduce_scatter, "recursive_halving",
       "recursive halving over blocks of different sizes (Thakur, Rabenseifner, Gropp 2005)", false, power_of_two},
      {Coll::reduce_scatter, "pairwise",
       "every rank sends each block straight to its owner and reduces what it receives, in rank order", false, any},
      {Coll::reduce_scatter, "ring", "ring reduce-scatter over blocks of different sizes (Patarasuk, Yuan 2009)", true,
       any},
      {Coll::reduce_scatter, "split_rail",
       "split-rail: each rank sums its rail's blocks inside the node, each rail reduce-scatters them across the "
       "nodes (ring; the reduce-scatter half of UCC cl/hier split_rail)",
       false, rails},
      {Coll::reduce_scatter, "pipelined_pairwise",
       "split-rail, pipelined by destination node: each rank sums inside the node its slice of the blocks of one "
       "node's rail rank and sends the partial sum straight to it over its own NIC (shifted pairwise exchange), "
       "the node level of later segments beside the network of earlier ones (UCC cl/hier split_rail, coll/han)",
       false, rails_alltoall},
      {Coll::reduce_scatter, "pipelined_halving",
       "two levels pipelined by segment: each segment reduce-scattered inside the node in one exchange, then by "
       "recursive halving over each rail, the node level of later segments beside the rails of earlier ones, and "
       "each piece sent to the rank whose block it is (Thakur, Rabenseifner, Gropp 2005; coll/han)",
       false, rails_pow2},
      {Coll::reduce_scatter, "hierarchical",
       "node-aware: reduce the vector inside each node, allreduce among one leader per node (recursive doubling), "
       "each leader sends its node's ranks their blocks (the hierarchical allreduce's levels, MVAPICH2, coll/han)",
       false, several_nodes},
      // alltoall
      {Coll::alltoall, "engine",
       "device engine, one node: one copy kernel moves block j of every rank to rank j over CUDA IPC",
       false, engine},
      {Coll::alltoall, "shm",
       "single node: every rank writes its blocks to node shared memory, each rank copies its block of every "
       "rank's; in rounds of a piece of every block when they do not fit a slot",
       false, shm_area},
      {Coll::alltoall, "cma",
       "single node, single copy: every rank publishes its send buffer's address in node shared memory and "
       "copies its block of every other rank's with process_vm_readv (kernel-assisted intra-node "
       "collectives: Ma, Bosilca et al., ICPP 2011)",
       false, cma_area},
      {Coll::alltoall, "bruck",
       "ceil(log2 n) steps, each moving the blocks whose index has bit k set (Bruck et al. 1997)", false, any},
      {Coll::alltoall, "pairwise",
       "n-1 steps; at step k every rank sends to rank+k and receives from rank-k (Thakur et al. 2005)", true, any},
      {Coll::alltoall, "split_rail",
       "split-rail: each rank hands its node's ranks their rails' blocks, then sends each peer node over its own rail "
       "the node's blocks for its rail peer; every block crosses on its destination's rail (rail-aligned all-to-all, "
       "NCCL 2.12 PXN)",
       false, rails_alltoall},
      // alltoallv
      {Coll::alltoallv, "pairwise",
       "n-1 steps; at step k every rank sends to rank+k and receives from rank-k (Thakur et al. 2005)", true, any},
      // gather
      {Coll::gather, "engine",
       "device engine, one node: every rank's block copied into the root's buffer by one copy kernel over CUDA IPC",
       false, engine},
      {Coll::gather, "shm", "single node: every rank writes node shared memory, the root copies all blocks; larger blocks in slot-sized "
       "pieces", false,
       shm_area},
      {Coll::gather, "cma",
       "single node, single copy: every rank publishes its block's address in node shared memory, the root "
       "copies each block straight into its result with process_vm_readv (kernel-assisted intra-node "
       "collectives: Ma, Bosilca et al., ICPP 2011)",
       false, cma_area},
      {Coll::gather, "binomial", "binomial tree towards the root, subtrees forward what they gathered", false, any},
      {Coll::gather, "linear", "every rank sends its block straight to the root", true, any},
      {Coll::gather, "hierarchical",
       "node-aware: each node's leader collects its node's blocks; the leaders send them to the root in one message "
       "each (MVAPICH2's two-level gather), from 64 nodes over a two-level k-nomial tree of the leaders, each "
       "forwarding its subtree's blocks in one message", false, any},
      // gatherv
      {Coll::gatherv, "linear", "every rank sends its block straight to the root", true, any},
      // scatter
      {Coll::scatter, "engine",
       "device engine, one node: the root's blocks copied into every rank's buffer by one copy kernel over CUDA IPC",
       false, engine},
      {Coll::scatter, "shm", "single node: the root writes all blocks to node shared memory, each rank copies its own; in rounds of a "
       "piece of every block when they do not fit a slot",
       false, shm_area},
      {Coll::scatter, "cma",
       "single node, single copy: the root publishes its send buffer's address in node shared memory, every "
       "rank copies its block straight out of it with process_vm_readv (kernel-assisted intra-node "
       "collectives: Ma, Bosilca et al., ICPP 2011)",
       false, cma_area},
      {Coll::scatter, "binomial", "binomial tree from the root, each subtree receives its blocks at once", false, any},
      {Coll::scatter, "linear", "the root sends each block straight to its rank", true, any},
      {Coll::scatter, "hierarchical",
       "node-aware: the root sends each other node its ranks' blocks in one message to the node's leader, which "
       "hands them out (MVAPICH2's two-level scatter); from 64 nodes, up to 1 MiB in all, down a two-level "
       "k-nomial tree of the leaders, each receiving its subtree's blocks in one message", false, any},
      // scatterv
      {Coll::scatterv, "linear", "the root sends each block straight to its rank", true, any},
      // barrier
      {Coll::barrier, "shm", "single node: every rank publishes a sequence number and waits for all", false, shm_area},
      {Coll::barrier, "dissemination",
       "ceil(log2 n) rounds, rank r signals r+2^k and waits for r-2^k (Hensgen, Finkel, Manber 1988)", true, any},
      {Coll::barrier, "split_rail",
       "two-level dissemination: ceil(log2 L) rounds inside each node, then ceil(log2 N) rounds over each rail "
       "(the ranks of one local index), every rail at once: node latencies for the node's rounds, where the flat "
       "form crosses a NIC in every round",
       false, rails},
  };
  return all;
}

int find_algo(Coll c, const std::string& name) noexcept {
  const auto& all = algorithms();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].coll == c && name == all[i].name) return static_cast<int>(i);
  return -1;
}

const char* default_rules() noexcept { return kDefaultRules; }

std::vector<std::string> rule_groups(const std::string& raw) {
  // The file form: '#' comments, one rule per line.
  std::string text;
  text.reserve(raw.size());
  bool comment = false;
  for (char ch : raw) {
    if (ch == '\n' || ch == '\r') {
      comment = false;
      text += ';';
    } else if (ch == '#' || comment) {
      comment = true;
    } else {
      text += ch == '\t' ? ' ' : ch;
    }
  }
  std::vector<std::string> out;
  for (std::string_view part : split(text, ';')) {
    part = trim(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

std::vector<std::string> rule_groups(const std::string& text, Coll c) {
  std::vector<std::string> out;
  for (std::string& g : rule_groups(text)) {
    const std::string_view head = std::string_view(g).substr(0, g.find_first_of(":/"));
    Coll gc;
    if (parse_coll(std::string(trim(head)), &gc) && gc == c) out.push_back(std::move(g));
  }
  return out;
}

Status parse_rules(const std::string& raw, std::vector<Rule>* out) {
  std::vector<Rule> rules;
  for (const std::string& group : rule_groups(raw)) {
    const std::string_view part = group;
    size_t colon = part.find(':');
    if (colon == std::string_view::npos)
      return make_error(Errc::config, "DUCT_TUNE: '%.*s' has no ':' after the collective name",
                        static_cast<int>(part.size()), part.data());
    std::vector<std::string_view> head = split(part.substr(0, colon), '/');
    std::string cname(trim(head[0]));
    Coll c;
    if (!parse_coll(cname, &c)) return make_error(Errc::config, "DUCT_TUNE: unknown collective '%s'", cname.c_str());
    Rule proto{c, 0, 0, -1};
    for (size_t i = 1; i < head.size(); ++i) DUCT_TRY(parse_qualifier(head[i], &proto));
    for (std::string_view r : split(part.substr(colon + 1), ',')) {
      r = trim(r);
      size_t dash = r.find('-');
      size_t c2 = r.find(':');
      if (dash == std::string_view::npos || c2 == std::string_view::npos || dash > c2)
        return make_error(Errc::config, "DUCT_TUNE: '%.*s' is not <lo>-<hi>:<algorithm>", static_cast<int>(r.size()),
                          r.data());
      Rule rule = proto;
      DUCT_TRY(parse_bound(r.substr(0, dash), &rule.lo));
      DUCT_TRY(parse_bound(r.substr(dash + 1, c2 - dash - 1), &rule.hi));
      std::string aname(trim(r.substr(c2 + 1)));
      if (!aname.empty() && aname[0] == '@') aname.erase(0, 1);  // UCC's spelling
      rule.algo = find_algo(c, aname);
      if (rule.algo < 0)
        return make_error(Errc::config, "DUCT_TUNE: %s has no algorithm '%s' (duct-info -a lists them)", cname.c_str(),
                          aname.c_str());
      if (rule.lo >= rule.hi)
        return make_error(Errc::config, "DUCT_TUNE: empty size range in '%.*s'", static_cast<int>(r.size()), r.data());
      rules.push_back(rule);
    }
  }
  *out = std::move(rules);
  return Status::ok();
}

Status Table::make(const std::string& tune, Table* out) { return make(tune, "", "", out); }

Status Table::make(const std::string& tune, const std::string& file_text, const std::string& file_name,
                   Table* out) {
  std::vector<Rule> base, file, over;
  DUCT_TRY(parse_rules(kDefaultRules, &base));
  Status st = parse_rules(file_text, &file);
  if (!st) return make_error(Errc::config, "selection rules file %s: %s", file_name.c_str(), st.message().c_str());
  DUCT_TRY(parse_rules(tune, &over));
  for (Rule& r : file) r.source = 1;
  for (Rule& r : over) r.source = 2;
  auto named = [&](Coll c) {
    for (const Rule& o : over)
      if (o.coll == c) return true;
    return false;
  };
  Table t;
  // Rules of DUCT_TUNE come first and replace the others of the
  // collectives they name; the file's rules go before the built-in ones.
  t.rules_ = over;
  for (const Rule& r : file)
    if (!named(r.coll)) t.rules_.push_back(r);
  for (const Rule& r : base)
    if (!named(r.coll)) t.rules_.push_back(r);
  *out = std::move(t);
  return Status::ok();
}

int Table::choose(const Query& q, std::string* why, int* source) const {
  const auto& all = algorithms();
  if (source) *source = 0;
  std::string skipped;
  for (const Rule& r : rules_) {
    if (!matches(r, q)) continue;
    std::string reason;
    if (all[static_cast<size_t>(r.algo)].can_serve(q, &reason)) {
      if (why)
        *why = strprintf("%zu bytes in [%s, %s)%s%s%s", q.bytes, config::format_size(r.lo).c_str(),
                         r.hi == SIZE_MAX ? "inf" : config::format_size(r.hi).c_str(), qualifiers(r).c_str(),
                         r.source == 1   ? " of the rules file"
                         : r.source == 2 ? " of DUCT_TUNE"
                                         : "",
                         skipped.c_str());
      if (source) *source = r.source;
      return r.algo;
    }
    if (why) skipped += strprintf("; %s skipped: %s", all[static_cast<size_t>(r.algo)].name, reason.c_str());
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].coll == q.coll && all[i].fallback) {
      if (why) *why = "no rule matched" + skipped + "; using the fallback";
      return static_cast<int>(i);
    }
  }
  if (why) *why = "no algorithm";
  return -1;
}

std::string Table::describe() const {
  std::string out;
  for (int c = 0; c < static_cast<int>(Coll::count_); ++c) {
    std::string line;
    std::string quals;
    for (const Rule& r : rules_) {
      if (static_cast<int>(r.coll) != c) continue;
      if (!line.empty()) line += ",";
      line += strprintf("%s%s-%s:%s%s", qualifiers(r).empty() ? "" : ("[" + qualifiers(r).substr(1) + "]").c_str(),
                        config::format_size(r.lo).c_str(), r.hi == SIZE_MAX ? "inf" : config::format_size(r.hi).c_str(),
                        algorithms()[static_cast<size_t>(r.algo)].name,
                        r.source == 1 ? "{file}" : r.source == 2 ? "{DUCT_TUNE}" : "");
    }
    out += std::string(coll_name(static_cast<Coll>(c))) + ":" + line + "\n";
  }
  return out;
}

}  // namespace duct::select
