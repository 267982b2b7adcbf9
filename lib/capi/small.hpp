// duct capi: the small-call path.
//
// A blocking collective of a few bytes on a single-node communicator is, in
// shared memory, one slot write and one slot read (coll/shm.hpp). The
// general path around it (the Entry, the packing objects, the checks that
// build error messages, selection, a Task and its progress loop) cost
// several times that: about 1350 instructions for an 8-byte bcast at the
// root, where Open MPI's whole call takes 0.07-0.2 us here (issue 27).
// Across nodes a small bcast, reduce, gather or scatter is a message or two
// per rank; there the same machinery runs with the caches that the kernel's
// network path left cold (coll/msg_rounds.hpp).
//
// Each function here takes a blocking call when everything about it is
// plain, and returns false otherwise, having done nothing, so that the
// general path takes it (and raises whatever error it has):
//   - the communicator is the one of the previous duct call (its context
//     cached, an intracommunicator), healthy, with no device engine, no
//     nonblocking collective pending on it, no DUCT_CHECK, and the
//     application not threaded (no lock to take);
//   - datatypes and ops are predefined ones duct reduces or moves natively
//     (contiguous), counts are positive, buffers are host memory, not NULL,
//     not overlapping, MPI_IN_PLACE only where MPI allows it;
//   - the selection cached for this collective and size (same rules
//     generation) has a plain form: a shared-memory algorithm
//     (coll/shm_rounds.hpp) or a message algorithm of bcast, reduce, gather
//     or scatter (coll/msg_rounds.hpp), and DUCT_LOG=info is off (the general
//     path logs each new call signature).
// It then runs that algorithm in place (coll::run_small): the same schedule
// the general path would run, so the same bits, the same DUCT_TIMEOUT and
// SIGUSR1 behaviour, and every rank's sequence numbers advance the same way
// whichever path each rank took. `*rc` is the call's MPI return code
// (errors raised through the communicator's error handler, as always).
//
// A call that moves nothing at this rank (every count that matters here 0)
// ends here once its arguments pass the checks the general path makes
// before its Entry::nothing(), on any known intracommunicator (with a device
// engine or not; not under DUCT_CHECK, whose comparison is a message).
#pragma once

#include <mpi.h>

namespace duct::capi::small {

bool allreduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm, int* rc);
bool reduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
            int root, MPI_Comm comm, int* rc);
bool reduce_scatter_block(const char* call, const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, int* rc);
bool bcast(const char* call, void* buffer, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm, int* rc);
// allgather and alltoall (`alltoall` false: allgather).
bool all_blocks(const char* call, bool alltoall, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, int* rc);
bool gather(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, int* rc);
bool scatter(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, int* rc);
bool barrier(const char* call, MPI_Comm comm, int* rc);

}  // namespace duct::capi::small
