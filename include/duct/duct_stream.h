/* duct: stream-ordered collectives on CUDA streams.
 *
 * #include <duct/duct_stream.h> (it includes <duct/duct.h>) to enqueue any
 * duct collective on a CUDA stream, in the form NCCL users know: the
 * arguments of the blocking call, then the stream. This header needs no
 * CUDA header: `struct CUstream_st *` is what cudaStream_t and CUstream are,
 * so a cudaStream_t (or a torch/CuPy stream's handle) is passed as it is;
 * 0 is the legacy default stream.
 *
 * Semantics.
 *  - The collective starts after every operation enqueued on `stream`
 *    before the call (kernels, copies, events), and every operation
 *    enqueued on `stream` after the call sees its result.
 *  - An eager call (the stream is not being captured) currently completes
 *    in the call: it waits on the host until the GPU has finished the work
 *    enqueued on `stream` before it (at most DUCT_TIMEOUT; then
 *    DUCT_ERRCLASS_TIMEOUT), runs the collective as the blocking form does,
 *    and returns when it is done. Its result is then already visible to
 *    work enqueued later, and it waits for the other ranks as a blocking
 *    collective does. (The asynchronous protocol below, returning at once,
 *    is DUCT_STREAM_ASYNC=1: it hung on a real GPU on 2026-11-26 and is
 *    there for investigation only. DUCT_STREAM_ENGINE=1 returns without
 *    waiting for the GPU where the device engine serves the call: its
 *    kernel is enqueued on `stream`, after every rank's earlier work there
 *    (interprocess events); the call waits on the host only for the other
 *    ranks to make the same call. It passed tests/gpu's stream cases at 2
 *    and 4 ranks on an H200 under MPS on 2026-11-27; an 8-byte allreduce
 *    takes 15-17 us in it against 12 us eager, so it is not yet the
 *    default.)
 *  - A captured call never waits for the GPU nor for the other ranks,
 *    except the first stream-ordered call on a communicator (it sets up the
 *    communicator's stream side, collectively) and DUCT_CHECK=1 (it
 *    compares the call across ranks first).
 *  - Buffers may be device memory (cudaMalloc), host memory (pageable or
 *    pinned) or managed memory, as for the blocking form; host buffers are
 *    read and written in stream order too (after the work before the call,
 *    before the work after it). Pointers, counts and displacement arrays are
 *    copied at call time; buffer contents are used when the stream reaches
 *    the call. Units, roots, MPI_IN_PLACE and the meaning of every argument
 *    are those of the blocking call in duct.h (and of MPI-4.0 chapter 6).
 *  - Every rank must reach a communicator's stream-ordered collectives in
 *    the same order, as with NCCL: issue them on one stream per
 *    communicator, or order your streams. A call on another stream than the
 *    communicator's previous stream-ordered call is made to wait for that
 *    call (cudaStreamWaitEvent): it never overtakes it.
 *  - Stream-ordered collectives of a communicator neither wait behind nor
 *    hold up its blocking and nonblocking collectives (they run on a
 *    duplicate of it). Freeing the communicator waits, on the host, until
 *    the GPU has reached and finished its stream-ordered collectives.
 *  - CUDA graphs: a call made while `stream` is being captured is captured
 *    when the device engine serves the communicator: 2 or more ranks on one
 *    node, device buffers on every rank, CUDA IPC between them. Every
 *    collective is captured except gatherv, scatterv and alltoallv (their
 *    layouts are known at one rank only), in-place alltoall and in-place
 *    reduce_scatter. Elsewhere the call fails with
 *    DUCT_ERRCLASS_NOT_SUPPORTED before anything is captured: the capture
 *    stays valid and the communicator usable. Capture is collective: every
 *    rank captures the same calls in the same order, at about the same
 *    time (the ranks exchange their buffers' IPC handles at capture; under
 *    DUCT_TIMEOUT). Every launch of the graph runs the collective again on
 *    the buffers given at capture, with their contents at replay, and needs
 *    no host step: the GPU waits for the other ranks' replays itself
 *    (device barriers, below). So: launch each rank's graphs so that they
 *    reach the communicator's captured collectives in the same order; keep
 *    the buffers allocated while the graph lives; destroy the graphs
 *    before freeing the communicator. Measured on an H200 (2026-11-27,
 *    docs/benchmarks/2026-11-27-gpu-h200-stream-graphs.md): a replayed
 *    8-byte allreduce at 2 ranks under MPS 8.6-9.2 us against 12.0-12.4
 *    us blocking; at 4 ranks 18.1-18.9 us against 13.5-13.6 (slower).
 *  - How a captured call runs at each launch of its graph (the device
 *    engine, coll/engine.hpp): a barrier kernel of one block in which each
 *    rank adds one to its counter in its own device flag page and waits
 *    for every rank's counter (pages opened by CUDA IPC), the engine's
 *    kernel over the peers' mapped buffers, and a second barrier; a small
 *    allreduce or reduce (64 KiB or less) is one kernel doing all three.
 *    Without MPS the ranks' kernels take turns on a shared GPU, so each
 *    replay waits for the other processes' time slices (about 4.5 ms per
 *    8-byte allreduce at 2 ranks); with MPS they run at once. A barrier
 *    that waits longer than DUCT_TIMEOUT gives up: that replay's collective
 *    and every later one on the communicator do nothing (receive buffers
 *    unchanged), and the next duct call on the communicator returns
 *    DUCT_ERRCLASS_TIMEOUT naming the rank that never came.
 *    DUCT_STREAM_ASYNC=1 captures instead the older protocol (a host
 *    function and a stream memory wait) that hung on an H200 on
 *    2026-11-26: investigation only.
 *
 * What the stream-ordered forms take: contiguous datatypes (duct would pack
 * others on the host at call time, before the data is ready), the
 * predefined reduction ops on the datatypes duct reduces natively, and
 * intracommunicators. Anything else is refused with DUCT_ERRCLASS_NOT_SUPPORTED
 * (use the nonblocking form).
 *
 * Errors. Argument errors are raised by the call on the communicator's
 * error handler, exactly as by the blocking call, and nothing is enqueued.
 * Without a usable CUDA device (no driver, no device, duct built without
 * CUDA) every call fails with DUCT_ERRCLASS_NOT_SUPPORTED saying why. A
 * collective that fails after the call (DUCT_TIMEOUT, a failed peer)
 * releases the stream anyway (the receive buffer is then undefined),
 * prints the error on stderr, and every later stream-ordered call on the
 * communicator returns it.
 */
#ifndef DUCT_DUCT_STREAM_H
#define DUCT_DUCT_STREAM_H

#include <duct/duct.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st; /* cudaStream_t is struct CUstream_st * */

int DUCT_Allreduce_stream(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm
                          comm, struct CUstream_st *stream);
int DUCT_Allreduce_stream_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Reduce_stream(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Reduce_stream_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int
                         root, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Reduce_scatter_block_stream(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op
                                     op, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Reduce_scatter_block_stream_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Reduce_scatter_stream(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Reduce_scatter_stream_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype
                                 datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Bcast_stream(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, struct CUstream_st
                      *stream);
int DUCT_Bcast_stream_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, struct
                        CUstream_st *stream);
int DUCT_Allgather_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Allgather_stream_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count
                            recvcount, MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Alltoall_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Alltoall_stream_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count
                           recvcount, MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Allgatherv_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
                           recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st
                           *stream);
int DUCT_Allgatherv_stream_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const
                             MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             struct CUstream_st *stream);
int DUCT_Alltoallv_stream(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm
                          comm, struct CUstream_st *stream);
int DUCT_Alltoallv_stream_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype
                            sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Gather_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Gather_stream_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count
                         recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Gatherv_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
                        recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, struct
                        CUstream_st *stream);
int DUCT_Gatherv_stream_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const
                          MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm
                          comm, struct CUstream_st *stream);
int DUCT_Scatter_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Scatter_stream_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count
                          recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st *stream);
int DUCT_Scatterv_stream(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void
                         *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st
                         *stream);
int DUCT_Scatterv_stream_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype
                           sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm
                           comm, struct CUstream_st *stream);
int DUCT_Barrier_stream(MPI_Comm comm, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif

#endif /* DUCT_DUCT_STREAM_H */
