// libduct-mpi: duct under unmodified MPI programs.
//
// Defines the MPI collectives duct implements (MPI_Allreduce, MPI_Bcast,
// MPI_Reduce, MPI_Allgather(v), MPI_Reduce_scatter(_block), MPI_Alltoall(v),
// MPI_Gather(v), MPI_Scatter(v), MPI_Barrier) through the MPI profiling
// interface: loaded with LD_PRELOAD (or linked before libmpi), these
// definitions win over the MPI library's, and each hands the call to duct's
// entry point under the MPI name. duct serves what it serves natively (every
// intracommunicator call on host or device memory; derived datatypes of data
// movement are packed) and passes the rest to the PMPI_ function unchanged:
// reductions with derived datatypes, user-defined ops or MINLOC/MAXLOC, and
// intercommunicators (device buffers staged through host memory, so a
// non-CUDA-aware MPI still answers them). MPI_IN_PLACE and MPI_BOTTOM are
// recognised before any pointer is looked at. Every rank must take the same
// path for a collective; these rules depend only on what MPI requires to be
// equal on every rank (datatype and op of a reduction, the communicator).
//
// MPIX_Query_cuda_support() answers 1 when duct was built with CUDA, so
// programs that ask take their device path.
//
// DUCT_INTERPOSE=0 makes every function a pure pass-through to PMPI_ (and
// MPIX_Query_cuda_support the MPI library's own). DUCT_LOG=info shows each
// call signature duct served ("MPI_Allreduce on 4 ranks ...: ring, because
// ...") and each one it passed on.
#include <dlfcn.h>
#include <mpi.h>

#include <atomic>

#include "capi/api.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "memory/cuda.hpp"

namespace {

bool on() {
  static std::atomic<int> announced{0};
  const bool enabled = duct::config::get().interpose;
  if (!announced.exchange(1))
    DUCT_INFO(capi, "libduct-mpi loaded: MPI collectives %s", enabled ? "are served by duct" : "pass through (DUCT_INTERPOSE=0)");
  return enabled;
}

}  // namespace

using namespace duct::capi;

extern "C" {

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (!on()) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  return allreduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  if (!on()) return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
  return reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  if (!on()) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  return reduce_scatter_block("MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
  if (!on()) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  return reduce_scatter_v("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (!on()) return PMPI_Bcast(buffer, count, datatype, root, comm);
  return bcast("MPI_Bcast", buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  if (!on()) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!on()) return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  return allgatherv_arrays("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  if (!on()) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return alltoall("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!on())
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  return alltoallv_arrays("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!on()) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return gather_blocks("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!on()) return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  return gatherv_arrays("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!on()) return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return scatter_blocks("MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!on()) return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return scatterv_arrays("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}

int MPI_Barrier(MPI_Comm comm) {
  if (!on()) return PMPI_Barrier(comm);
  return barrier("MPI_Barrier", comm);
}

// Open MPI's CUDA extension query (mpi-ext.h). Not declared in mpi.h.
int MPIX_Query_cuda_support(void);
int MPIX_Query_cuda_support(void) {
  if (on()) return duct::memory::cuda::built() ? 1 : 0;
  using Fn = int (*)(void);
  static Fn next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "MPIX_Query_cuda_support"));
  return next ? next() : 0;
}

}  // extern "C"
