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
#include "capi/entry.hpp"
#include "capi/requests.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "memory/cuda.hpp"

namespace {

// Called on every intercepted call: the announcement's flag is read before
// it is exchanged, so that only the first call runs a locked instruction (a
// locked instruction waits for this core's earlier stores to reach the
// cache, and after a small collective those are the shared-memory lines the
// other ranks read: about a line transfer per call while the cores sit far
// apart).
bool on() {
  static std::atomic<int> announced{0};
  const bool enabled = duct::config::get().interpose;
  if (!announced.load(std::memory_order_relaxed) && !announced.exchange(1))
    DUCT_INFO(capi, "libduct-mpi loaded: MPI collectives %s", enabled ? "are served by duct" : "pass through (DUCT_INTERPOSE=0)");
  return enabled;
}

// Nonblocking collectives need MPI_Wait to progress duct (capi/requests.hpp).
bool nonblocking_on() {
  static const bool hook = on() && duct::capi::mpi_wait_progresses_duct();
  return hook && duct::config::get().interpose;
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

// Nonblocking collectives: served by duct when MPI_Wait & co. progress duct
// (Open MPI, whose progress loop duct registers with); otherwise passed to
// the MPI library, so that a program waiting with MPI_Wait never waits on
// a collective nothing advances.
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  if (!nonblocking_on()) return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
  DUCT_NEED_REQUEST("MPI_Iallreduce", comm, request);
  return allreduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on()) return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  DUCT_NEED_REQUEST("MPI_Ireduce", comm, request);
  return reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on()) return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
  DUCT_NEED_REQUEST("MPI_Ireduce_scatter_block", comm, request);
  return reduce_scatter_block("MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on()) return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
  DUCT_NEED_REQUEST("MPI_Ireduce_scatter", comm, request);
  return reduce_scatter_v("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on()) return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
  DUCT_NEED_REQUEST("MPI_Ibcast", comm, request);
  return bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  DUCT_NEED_REQUEST("MPI_Iallgather", comm, request);
  return allgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  DUCT_NEED_REQUEST("MPI_Iallgatherv", comm, request);
  return allgatherv_arrays("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                           request);
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  DUCT_NEED_REQUEST("MPI_Ialltoall", comm, request);
  return alltoall("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  DUCT_NEED_REQUEST("MPI_Ialltoallv", comm, request);
  return alltoallv_arrays("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request);
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  DUCT_NEED_REQUEST("MPI_Igather", comm, request);
  return gather_blocks("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  DUCT_NEED_REQUEST("MPI_Igatherv", comm, request);
  return gatherv_arrays("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                        request);
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  DUCT_NEED_REQUEST("MPI_Iscatter", comm, request);
  return scatter_blocks("MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on())
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  DUCT_NEED_REQUEST("MPI_Iscatterv", comm, request);
  return scatterv_arrays("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, request);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (!nonblocking_on()) return PMPI_Ibarrier(comm, request);
  DUCT_NEED_REQUEST("MPI_Ibarrier", comm, request);
  return barrier("MPI_Ibarrier", comm, request);
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

// ---- Fortran -------------------------------------------------------------------
// Open MPI's Fortran bindings (libmpi_mpifh: mpi_allreduce_ and its other
// spellings; libmpi_usempif08's mpi_allreduce_f08_, which calls
// ompi_allreduce_f) call PMPI_Allreduce directly, so the C definitions above
// never see a Fortran program's calls. These definitions take every
// spelling: gfortran and most compilers (mpi_x_), g77-style (mpi_x__), no
// underscore (mpi_x), upper case (MPI_X), Open MPI's own aliases (MPI_X_f,
// MPI_X_f08) and its internal entry (ompi_x_f, what `use mpi_f08` reaches).
// Each converts the handles (MPI_*_f2c), turns the addresses of Fortran's
// MPI_IN_PLACE and MPI_BOTTOM (the common blocks mpi_fortran_in_place_ and
// mpi_fortran_bottom_, looked up once) into C's, and calls the C function
// above (so DUCT_INTERPOSE=0 passes to PMPI_ too). ierr may be absent
// (null) in the f08 path.
namespace {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed on as int arrays");

struct FortranConstants {
  const void* in_place[4] = {};
  const void* bottom[4] = {};
  FortranConstants() {
    const char* ip[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    const char* bt[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    for (int i = 0; i < 4; ++i) {
      in_place[i] = dlsym(RTLD_DEFAULT, ip[i]);
      bottom[i] = dlsym(RTLD_DEFAULT, bt[i]);
    }
    if (on())  // (also loads the configuration the log level comes from)
      DUCT_INFO(capi, "libduct-mpi: Fortran MPI collectives are served too (Fortran's MPI_IN_PLACE at %p)", in_place[0]);
  }
};

const void* fbuf(const void* p) {
  static const FortranConstants c;
  if (p == nullptr) return p;
  for (const void* q : c.in_place)
    if (q && p == q) return MPI_IN_PLACE;
  for (const void* q : c.bottom)
    if (q && p == q) return MPI_BOTTOM;
  return p;
}
void* fbuf(void* p) { return const_cast<void*>(fbuf(static_cast<const void*>(p))); }

void set(MPI_Fint* ierr, int rc) {
  if (ierr) *ierr = static_cast<MPI_Fint>(rc);
}

using F = MPI_Fint;
MPI_Datatype T(const F* t) { return MPI_Type_f2c(*t); }
MPI_Comm C(const F* c) { return MPI_Comm_f2c(*c); }
MPI_Op O(const F* o) { return MPI_Op_f2c(*o); }

}  // namespace

// One implementation per collective, then its spellings as aliases.
#define DUCT_FORTRAN_NAMES(impl, lower, upper, mixed, params)                    \
  void lower##_ params __attribute__((alias(#impl)));                            \
  void lower##__ params __attribute__((alias(#impl)));                           \
  void lower params __attribute__((alias(#impl)));                               \
  void upper params __attribute__((alias(#impl)));                               \
  void mixed##_f params __attribute__((alias(#impl)));                           \
  void mixed##_f08 params __attribute__((alias(#impl)));                         \
  void o##lower##_f params __attribute__((alias(#impl)));

extern "C" {

#define P_ALLREDUCE (void* sb, void* rb, F* count, F* dt, F* op, F* comm, F* ierr)
void duct_f_allreduce P_ALLREDUCE { set(ierr, MPI_Allreduce(fbuf(sb), fbuf(rb), *count, T(dt), O(op), C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_allreduce, mpi_allreduce, MPI_ALLREDUCE, MPI_Allreduce, P_ALLREDUCE)

#define P_REDUCE (void* sb, void* rb, F* count, F* dt, F* op, F* root, F* comm, F* ierr)
void duct_f_reduce P_REDUCE { set(ierr, MPI_Reduce(fbuf(sb), fbuf(rb), *count, T(dt), O(op), *root, C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_reduce, mpi_reduce, MPI_REDUCE, MPI_Reduce, P_REDUCE)

#define P_RSB (void* sb, void* rb, F* count, F* dt, F* op, F* comm, F* ierr)
void duct_f_reduce_scatter_block P_RSB {
  set(ierr, MPI_Reduce_scatter_block(fbuf(sb), fbuf(rb), *count, T(dt), O(op), C(comm)));
}
DUCT_FORTRAN_NAMES(duct_f_reduce_scatter_block, mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK,
                   MPI_Reduce_scatter_block, P_RSB)

#define P_RS (void* sb, void* rb, F* counts, F* dt, F* op, F* comm, F* ierr)
void duct_f_reduce_scatter P_RS {
  set(ierr, MPI_Reduce_scatter(fbuf(sb), fbuf(rb), counts, T(dt), O(op), C(comm)));
}
DUCT_FORTRAN_NAMES(duct_f_reduce_scatter, mpi_reduce_scatter, MPI_REDUCE_SCATTER, MPI_Reduce_scatter, P_RS)

#define P_BCAST (void* b, F* count, F* dt, F* root, F* comm, F* ierr)
void duct_f_bcast P_BCAST { set(ierr, MPI_Bcast(fbuf(b), *count, T(dt), *root, C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_bcast, mpi_bcast, MPI_BCAST, MPI_Bcast, P_BCAST)

#define P_AG (void* sb, F* sc, F* st, void* rb, F* rc, F* rt, F* comm, F* ierr)
void duct_f_allgather P_AG { set(ierr, MPI_Allgather(fbuf(sb), *sc, T(st), fbuf(rb), *rc, T(rt), C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_allgather, mpi_allgather, MPI_ALLGATHER, MPI_Allgather, P_AG)
void duct_f_alltoall P_AG { set(ierr, MPI_Alltoall(fbuf(sb), *sc, T(st), fbuf(rb), *rc, T(rt), C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_alltoall, mpi_alltoall, MPI_ALLTOALL, MPI_Alltoall, P_AG)

#define P_AGV (void* sb, F* sc, F* st, void* rb, F* rcs, F* displs, F* rt, F* comm, F* ierr)
void duct_f_allgatherv P_AGV {
  set(ierr, MPI_Allgatherv(fbuf(sb), *sc, T(st), fbuf(rb), rcs, displs, T(rt), C(comm)));
}
DUCT_FORTRAN_NAMES(duct_f_allgatherv, mpi_allgatherv, MPI_ALLGATHERV, MPI_Allgatherv, P_AGV)

#define P_A2AV (void* sb, F* scs, F* sd, F* st, void* rb, F* rcs, F* rd, F* rt, F* comm, F* ierr)
void duct_f_alltoallv P_A2AV {
  set(ierr, MPI_Alltoallv(fbuf(sb), scs, sd, T(st), fbuf(rb), rcs, rd, T(rt), C(comm)));
}
DUCT_FORTRAN_NAMES(duct_f_alltoallv, mpi_alltoallv, MPI_ALLTOALLV, MPI_Alltoallv, P_A2AV)

#define P_ROOTED (void* sb, F* sc, F* st, void* rb, F* rc, F* rt, F* root, F* comm, F* ierr)
void duct_f_gather P_ROOTED { set(ierr, MPI_Gather(fbuf(sb), *sc, T(st), fbuf(rb), *rc, T(rt), *root, C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_gather, mpi_gather, MPI_GATHER, MPI_Gather, P_ROOTED)
void duct_f_scatter P_ROOTED { set(ierr, MPI_Scatter(fbuf(sb), *sc, T(st), fbuf(rb), *rc, T(rt), *root, C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_scatter, mpi_scatter, MPI_SCATTER, MPI_Scatter, P_ROOTED)

#define P_GV (void* sb, F* sc, F* st, void* rb, F* rcs, F* displs, F* rt, F* root, F* comm, F* ierr)
void duct_f_gatherv P_GV {
  set(ierr, MPI_Gatherv(fbuf(sb), *sc, T(st), fbuf(rb), rcs, displs, T(rt), *root, C(comm)));
}
DUCT_FORTRAN_NAMES(duct_f_gatherv, mpi_gatherv, MPI_GATHERV, MPI_Gatherv, P_GV)

#define P_SV (void* sb, F* scs, F* displs, F* st, void* rb, F* rc, F* rt, F* root, F* comm, F* ierr)
void duct_f_scatterv P_SV {
  set(ierr, MPI_Scatterv(fbuf(sb), scs, displs, T(st), fbuf(rb), *rc, T(rt), *root, C(comm)));
}
DUCT_FORTRAN_NAMES(duct_f_scatterv, mpi_scatterv, MPI_SCATTERV, MPI_Scatterv, P_SV)

#define P_BARRIER (F* comm, F* ierr)
void duct_f_barrier P_BARRIER { set(ierr, MPI_Barrier(C(comm))); }
DUCT_FORTRAN_NAMES(duct_f_barrier, mpi_barrier, MPI_BARRIER, MPI_Barrier, P_BARRIER)

}  // extern "C"
