// The stream-ordered forms (include/duct/duct_stream.h): the checks and
// the paths of the blocking forms (capi/reductions.cpp, capi/movement.cpp),
// enqueued on the caller's stream by coll/stream.cpp.
#include "capi/api.hpp"
#include "capi/entry.hpp"
#include "duct/duct_stream.h"

using namespace duct::capi;

extern "C" int DUCT_Allreduce_stream(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return allreduce("DUCT_Allreduce_stream", sendbuf, recvbuf, count, datatype, op, comm, nullptr, &s);
}
extern "C" int DUCT_Allreduce_stream_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return allreduce("DUCT_Allreduce_stream_c", sendbuf, recvbuf, count, datatype, op, comm, nullptr, &s);
}
extern "C" int DUCT_Reduce_stream(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return reduce("DUCT_Reduce_stream", sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, &s);
}
extern "C" int DUCT_Reduce_stream_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return reduce("DUCT_Reduce_stream_c", sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, &s);
}
extern "C" int DUCT_Reduce_scatter_block_stream(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return reduce_scatter_block("DUCT_Reduce_scatter_block_stream", sendbuf, recvbuf, recvcount, datatype, op, comm, nullptr, &s);
}
extern "C" int DUCT_Reduce_scatter_block_stream_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return reduce_scatter_block("DUCT_Reduce_scatter_block_stream_c", sendbuf, recvbuf, recvcount, datatype, op, comm,
                              nullptr, &s);
}
extern "C" int DUCT_Reduce_scatter_stream(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return reduce_scatter_v("DUCT_Reduce_scatter_stream", sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr, &s);
}
extern "C" int DUCT_Reduce_scatter_stream_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return reduce_scatter_v("DUCT_Reduce_scatter_stream_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr, &s);
}
extern "C" int DUCT_Bcast_stream(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return bcast("DUCT_Bcast_stream", buffer, count, datatype, root, comm, nullptr, &s);
}
extern "C" int DUCT_Bcast_stream_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return bcast("DUCT_Bcast_stream_c", buffer, count, datatype, root, comm, nullptr, &s);
}
extern "C" int DUCT_Allgather_stream(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return allgather("DUCT_Allgather_stream", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, &s);
}
extern "C" int DUCT_Allgather_stream_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return allgather("DUCT_Allgather_stream_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, &s);
}
extern "C" int DUCT_Alltoall_stream(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return alltoall("DUCT_Alltoall_stream", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, &s);
}
extern "C" int DUCT_Alltoall_stream_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return alltoall("DUCT_Alltoall_stream_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, &s);
}
extern "C" int DUCT_Allgatherv_stream(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return allgatherv_arrays("DUCT_Allgatherv_stream", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, nullptr, &s);
}
extern "C" int DUCT_Allgatherv_stream_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return allgatherv_arrays("DUCT_Allgatherv_stream_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, nullptr, &s);
}
extern "C" int DUCT_Alltoallv_stream(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return alltoallv_arrays("DUCT_Alltoallv_stream", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, nullptr, &s);
}
extern "C" int DUCT_Alltoallv_stream_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return alltoallv_arrays("DUCT_Alltoallv_stream_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, nullptr, &s);
}
extern "C" int DUCT_Gather_stream(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return gather_blocks("DUCT_Gather_stream", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr, &s);
}
extern "C" int DUCT_Gather_stream_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return gather_blocks("DUCT_Gather_stream_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       nullptr, &s);
}
extern "C" int DUCT_Gatherv_stream(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return gatherv_arrays("DUCT_Gatherv_stream", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, nullptr, &s);
}
extern "C" int DUCT_Gatherv_stream_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return gatherv_arrays("DUCT_Gatherv_stream_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, nullptr, &s);
}
extern "C" int DUCT_Scatter_stream(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return scatter_blocks("DUCT_Scatter_stream", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        nullptr, &s);
}
extern "C" int DUCT_Scatter_stream_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return scatter_blocks("DUCT_Scatter_stream_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        nullptr, &s);
}
extern "C" int DUCT_Scatterv_stream(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return scatterv_arrays("DUCT_Scatterv_stream", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, nullptr, &s);
}
extern "C" int DUCT_Scatterv_stream_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return scatterv_arrays("DUCT_Scatterv_stream_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, nullptr, &s);
}
extern "C" int DUCT_Barrier_stream(MPI_Comm comm, struct CUstream_st* stream) {
  const StreamArg s{stream};
  return barrier("DUCT_Barrier_stream", comm, nullptr, &s);
}
