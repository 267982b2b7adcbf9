// duct capi: the entry points behind the public C API, with the name the
// caller knows the call by ("DUCT_Allreduce", or "MPI_Allreduce" when an
// unmodified program reaches duct through libduct-mpi). With `req` the call
// is nonblocking (the DUCT_I* / MPI_I* forms) and the request goes there;
// with `stream` it is stream-ordered (the DUCT_*_stream forms).
// Messages, error
// strings and logs use that name. Count and displacement arrays come as the
// caller passed them (int or MPI_Count / MPI_Aint); NULL stays NULL and is
// reported by the checks.
#pragma once

#include <mpi.h>

namespace duct::capi {

// The stream of a stream-ordered call (the DUCT_*_stream forms): a
// cudaStream_t, which may be 0 (the legacy default stream). Null where the
// call is not stream-ordered.
struct StreamArg {
  void* stream;
};

int allreduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
              MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int reduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op, int root,
           MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int reduce_scatter_block(const char* call, const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
template <class C>
int reduce_scatter_v(const char* call, const void* sendbuf, void* recvbuf, const C* recvcounts, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;

int bcast(const char* call, void* buffer, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int allgather(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int alltoall(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
template <class C, class D>
int allgatherv_arrays(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const C* recvcounts, const D* displs, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
template <class C, class D>
int alltoallv_arrays(const char* call, const void* sendbuf, const C* sendcounts, const D* sdispls,
                     MPI_Datatype sendtype, void* recvbuf, const C* recvcounts, const D* rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int gather_blocks(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
template <class C, class D>
int gatherv_arrays(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const C* recvcounts, const D* displs, MPI_Datatype recvtype, int root, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int scatter_blocks(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
template <class C, class D>
int scatterv_arrays(const char* call, const void* sendbuf, const C* sendcounts, const D* displs,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                    MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;
int barrier(const char* call, MPI_Comm comm,
    MPI_Request* req = nullptr, const StreamArg* stream = nullptr) noexcept;

}  // namespace duct::capi
