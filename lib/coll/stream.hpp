// duct coll: stream-ordered collectives (the DUCT_*_stream forms).
//
// A stream-ordered collective starts after the work already on the
// caller's CUDA stream and later work on that stream sees its result; the
// call returns without waiting for the GPU. It is built from three stream
// operations enqueued at call time, and duct's stream thread:
//
//   1. cudaLaunchHostFunc(stream, fire, op): when the GPU reaches the call,
//      a CUDA thread hands `op` to duct's stream thread (nothing else: host
//      functions must not call CUDA);
//   2. cuStreamWaitValue64(stream, flag, v): later work on the stream waits
//      until the collective's completion word reaches v;
//   3. duct's stream thread starts the collective as a nonblocking one
//      (coll/nonblocking.hpp) and progresses it; on completion it writes v
//      into the word (host memory registered with CUDA), which releases the
//      stream.
//
// The collective itself is any of duct's: the device engine on one node
// (its kernel on duct's stream, reading peers' buffers through CUDA IPC),
// the channels between nodes, host buffers through shared memory. So every
// collective, memory kind and communicator shape that the blocking form
// takes works in stream order, with the same algorithms.
//
// Ordering. Stream-ordered collectives of a communicator run on a duplicate
// of it (its "stream side": its own context, created collectively by the
// first one), in the order the GPU reaches them, which is their order on
// the stream: they never wait behind, or hold up, the communicator's
// blocking and nonblocking collectives, which run in host order. That order
// must be the same on every rank (as for NCCL): calls on one stream are; a
// call on another stream than the communicator's previous stream-ordered
// call is made to wait for that one (cudaStreamWaitEvent), so they cannot
// overtake each other.
//
// CUDA graphs. Under stream capture the same three operations are
// captured. The op then belongs to the graph (a CUDA user object frees it
// with the graph) and has a completion word of its own: its host function
// clears the word and hands the op over at every replay; the word's wait
// is for 1. Replays of graphs must reach the communicator's stream-ordered
// collectives in the same order on every rank, and one graph must not be
// replayed on two streams at once. Capturing waits for nothing on the GPU,
// so ranks may capture at different times (the host waits for peers only
// when the communicator's stream side is created).
//
// Errors. Arguments are checked at call time, as for the blocking form. A
// collective that fails later (timeout, a failed peer) still releases the
// stream (its data is then undefined), is reported on stderr at once, and
// every later stream-ordered call on the communicator returns the error.
#pragma once

#include <mpi.h>

#include "coll/collectives.hpp"
#include "coll/context.hpp"

namespace duct::coll {

// Enqueue collective `a` of `ctx` (the context of the user's communicator
// `comm`) on `stream` (a cudaStream_t; 0 is the legacy default stream).
// Fails (nothing enqueued) without a CUDA device, without stream memory
// operations, or when an earlier stream-ordered collective of the
// communicator failed. The caller (Entry::enqueue) has relaxed CUDA's
// capture mode: creating the stream side allocates and registers memory.
Status start_stream(Context& ctx, MPI_Comm comm, const CollArgs& a, void* stream);

// The communicator of `ctx` is being freed: wait until the GPU has reached
// and finished its stream-ordered collectives (a freed communicator's
// operations complete, MPI-4.0 §7.4.3), then free its stream side. Graphs
// that still hold its collectives fail them (the stream is released).
void stream_detach(Context& ctx) noexcept;

}  // namespace duct::coll
