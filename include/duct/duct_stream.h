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
 *    ranks to make the same call. Not yet run on a GPU.)
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
 *  - CUDA graphs: for now a call made while `stream` is being captured
 *    fails with DUCT_ERRCLASS_NOT_SUPPORTED, before anything is captured
 *    (the capture stays valid), because the protocol below hung on an H200
 *    on 2026-11-26. With DUCT_STREAM_ASYNC=1 (investigation only) it is
 *    captured; every launch of the graph runs
 *    the collective again, on the buffers given at capture. Capturing waits
 *    for nothing on the GPU, so ranks may capture at different times. Every
 *    rank must launch its graphs so that they reach the communicator's
 *    stream-ordered collectives in the same order, and one graph must not be
 *    launched twice at once (CUDA user objects free duct's part of a graph
 *    with it).
 *  - How a captured call runs at each launch of its graph: duct's
 *    nonblocking collective on the same data, started by duct's stream
 *    thread when the GPU reaches the call (cudaLaunchHostFunc) and released
 *    to later work by a stream memory operation (cuStreamWaitValue64 on host
 *    memory that duct writes). Device buffers on one node use the device
 *    engine (CUDA IPC, one kernel); between nodes, the channels (UCX). So
 *    the algorithms are those of the blocking form (see duct.h for their
 *    sources). Not yet run on a GPU since the capture fix of 2026-11-26.
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
