// The fault-tolerance entry points (DUCT_FT=1): DUCT_Comm_revoke,
// DUCT_Comm_is_revoked, DUCT_Comm_get_failed, DUCT_Comm_agree,
// DUCT_Comm_shrink. The protocol is coll/ft.hpp's.
#include <mutex>
#include <vector>

#include "capi/checks.hpp"
#include "capi/errors.hpp"
#include "coll/context.hpp"
#include "coll/ft.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "duct/duct.h"

namespace duct::capi {
namespace {

// The context of `comm` for a fault-tolerance call. `create`: set it up
// (collective) when duct has none there yet; otherwise null stays null.
// `*single`: a communicator of one rank (nothing can fail but itself).
Status ft_context(const char* call, MPI_Comm comm, bool create, coll::Context** out, bool* single) {
  *out = nullptr;
  DUCT_TRY(check_mpi_ready(call));
  bool inter = false;
  DUCT_TRY(check_comm(comm, &inter));
  if (inter) return make_error(Errc::not_supported, "an intercommunicator: duct's fault tolerance serves intracommunicators");
  int size = 1;
  PMPI_Comm_size(comm, &size);
  *single = size == 1;
  if (*single) return Status::ok();
  if (!config::get().ft)
    return make_error(Errc::not_supported, "fault tolerance is off: set DUCT_FT=1 for every rank before its first duct "
                      "call (duct-run --ft also keeps the survivors alive under mpirun)");
  coll::Runtime* rt = nullptr;
  DUCT_TRY(coll::Runtime::get(&rt));
  std::unique_lock<std::recursive_mutex> lock;
  if (rt->threaded()) lock = std::unique_lock<std::recursive_mutex>(rt->mutex());
  DUCT_TRY(create ? rt->context(comm, out, lock.owns_lock() ? &lock : nullptr) : rt->find_context(comm, out));
  if (*out && !(*out)->ft)
    return make_error(Errc::not_supported,
                      "duct's context on this communicator has no fault-tolerance state: DUCT_FT was 0 when it was "
                      "set up, or a rank failed during the start of that setup (duct's first call on this "
                      "communicator), before the ranks had exchanged what fault tolerance needs; duct cannot shrink "
                      "it");
  return Status::ok();
}

}  // namespace
}  // namespace duct::capi

using duct::Errc;
using duct::Status;
namespace capi = duct::capi;
namespace ft = duct::coll::ft;

extern "C" int DUCT_Comm_revoke(MPI_Comm comm) {
  const char* call = "DUCT_Comm_revoke";
  duct::coll::Context* c = nullptr;
  bool single = false;
  Status st = capi::ft_context(call, comm, false, &c, &single);
  if (!st) return capi::raise(comm, call, st);
  // No context yet: no duct call ran on it, nothing of duct's to stop. The
  // context made by a later first call would not know; say so.
  if (!c && !single)
    return capi::raise(comm, call, duct::make_error(Errc::comm, "no duct call has run on this communicator yet: "
                                                                "there is nothing of duct's to revoke"));
  if (c) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    ft::revoke(*c->ft, duct::strprintf("rank %d called DUCT_Comm_revoke", rank));
    if (c->failed.is_ok()) c->failed = ft::look(*c->ft);
  }
  return MPI_SUCCESS;
}

extern "C" int DUCT_Comm_is_revoked(MPI_Comm comm, int* flag) {
  const char* call = "DUCT_Comm_is_revoked";
  if (!flag) return capi::raise(comm, call, duct::make_error(Errc::arg, "flag = NULL"));
  *flag = 0;
  duct::coll::Context* c = nullptr;
  bool single = false;
  Status st = capi::ft_context(call, comm, false, &c, &single);
  if (!st) return capi::raise(comm, call, st);
  if (c) {
    *flag = ft::is_revoked(*c->ft) ? 1 : 0;
    if (*flag && c->failed.is_ok()) c->failed = ft::look(*c->ft);
  }
  return MPI_SUCCESS;
}

extern "C" int DUCT_Comm_get_failed(MPI_Comm comm, MPI_Group* failed) {
  const char* call = "DUCT_Comm_get_failed";
  if (!failed) return capi::raise(comm, call, duct::make_error(Errc::arg, "failed = NULL"));
  *failed = MPI_GROUP_EMPTY;
  duct::coll::Context* c = nullptr;
  bool single = false;
  Status st = capi::ft_context(call, comm, false, &c, &single);
  if (!st) return capi::raise(comm, call, st);
  if (!c) return MPI_SUCCESS;
  const std::vector<int> ranks = ft::failed_ranks(*c->ft);
  if (ranks.empty()) return MPI_SUCCESS;
  MPI_Group all = MPI_GROUP_NULL;
  int rc = PMPI_Comm_group(comm, &all);
  if (rc == MPI_SUCCESS) rc = PMPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), failed);
  if (all != MPI_GROUP_NULL) (void)PMPI_Group_free(&all);
  if (rc != MPI_SUCCESS) return capi::raise(comm, call, duct::mpi_error(rc, "MPI_Group_incl of the failed ranks"));
  return MPI_SUCCESS;
}

extern "C" int DUCT_Comm_agree(MPI_Comm comm, int* flag) {
  const char* call = "DUCT_Comm_agree";
  if (!flag) return capi::raise(comm, call, duct::make_error(Errc::arg, "flag = NULL"));
  duct::coll::Context* c = nullptr;
  bool single = false;
  Status st = capi::ft_context(call, comm, true, &c, &single);
  if (!st) return capi::raise(comm, call, st);
  if (single) return MPI_SUCCESS;
  std::vector<int> failed;
  st = ft::agree(*c->ft, flag, &failed);
  return st ? MPI_SUCCESS : capi::raise(comm, call, st);
}

extern "C" int DUCT_Comm_shrink(MPI_Comm comm, MPI_Comm* newcomm) {
  const char* call = "DUCT_Comm_shrink";
  if (!newcomm) return capi::raise(comm, call, duct::make_error(Errc::arg, "newcomm = NULL"));
  *newcomm = MPI_COMM_NULL;
  duct::coll::Context* c = nullptr;
  bool single = false;
  Status st = capi::ft_context(call, comm, true, &c, &single);
  if (!st) return capi::raise(comm, call, st);
  if (single) {
    const int rc = PMPI_Comm_dup(comm, newcomm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : capi::raise(comm, call, duct::mpi_error(rc, "MPI_Comm_dup"));
  }
  st = ft::shrink(*c->ft, comm, newcomm);
  if (st) {
    // duct's context on the survivors' communicator, set up now (collective
    // over them), so that its first collective does not wait for it.
    duct::coll::Runtime* rt = nullptr;
    st = duct::coll::Runtime::get(&rt);
    duct::coll::Context* nc = nullptr;
    if (st) st = rt->context(*newcomm, &nc);
    if (st && !nc->failed.is_ok()) st = nc->failed;
    if (!st) st.context("setting up duct on the shrunk communicator");
  }
  return st ? MPI_SUCCESS : capi::raise(comm, call, st);
}
