// DUCT_Allreduce and DUCT_Allreduce_c: validate, dispatch, map errors.
#include <climits>
#include <cstdint>
#include <new>

#include "capi/checks.hpp"
#include "capi/errors.hpp"
#include "coll/allreduce/allreduce.hpp"
#include "core/log.hpp"
#include "duct/duct.h"

namespace duct::capi {

namespace {

// MPI_Allreduce through the MPI library, for what duct does not serve
// natively. Device buffers are staged through host copies; counts beyond
// INT_MAX are split (allreduce is element-wise).
int fallback(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
             MPI_Comm comm, const std::string& reason) {
  note_fallback(call, reason);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  memory::MemKind sk = memory::MemKind::host, rk = memory::MemKind::host;
  Status st = buffer_kind(recvbuf, "recvbuf", &rk);
  if (st && !in_place) st = buffer_kind(sendbuf, "sendbuf", &sk);
  if (!st) return raise(comm, call, st);

  Staged s_send, s_recv;
  const void* hs = sendbuf;
  void* hr = recvbuf;
  if (sk == memory::MemKind::device) {
    if (!(st = stage_in(sendbuf, count, dt, true, &s_send))) return raise(comm, call, st);
    hs = s_send.host;
  }
  if (rk == memory::MemKind::device) {
    if (!(st = stage_in(recvbuf, count, dt, true, &s_recv))) return raise(comm, call, st);
    hr = s_recv.host;
  }
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(dt, &lb, &extent);
  int rc = MPI_SUCCESS;
  MPI_Count done = 0;
  do {
    MPI_Count n = std::min<MPI_Count>(count - done, INT_MAX);
    const void* s = in_place ? MPI_IN_PLACE : static_cast<const char*>(hs) + done * extent;
    rc = PMPI_Allreduce(s, static_cast<char*>(hr) + done * extent, static_cast<int>(n), dt, op, comm);
    done += n;
  } while (rc == MPI_SUCCESS && done < count);
  if (rc != MPI_SUCCESS) return rc;  // MPI raised it through the communicator's handler
  if (rk == memory::MemKind::device && !(st = stage_out(recvbuf, s_recv))) return raise(comm, call, st);
  return MPI_SUCCESS;
}

int allreduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
              MPI_Comm comm) noexcept {
  try {
    // A running duct runtime implies MPI is initialized and not finalized.
    coll::Runtime* rt = coll::Runtime::ready();
    Status st;
    if (!rt && !(st = check_mpi_ready(call))) return raise(MPI_COMM_NULL, call, st);
    bool inter = false;
    if (!(st = check_comm(comm, &inter))) return raise(MPI_COMM_NULL, call, st);
    if (!(st = check_count(count, "count"))) return raise(comm, call, st);
    if (!(st = check_datatype(dt, "datatype"))) return raise(comm, call, st);
    if (op == MPI_OP_NULL) return raise(comm, call, make_error(Errc::op, "op = MPI_OP_NULL"));
    if (recvbuf == MPI_IN_PLACE)
      return raise(comm, call, make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be)"));

    // What duct does not serve goes to MPI before the pointer checks: with
    // derived datatypes MPI_BOTTOM (NULL) is a valid buffer.
    DType d;
    RedOp r;
    if (inter) return fallback(call, sendbuf, recvbuf, count, dt, op, comm, "intercommunicator");
    if (!lookup_dtype(dt, &d))
      return fallback(call, sendbuf, recvbuf, count, dt, op, comm, "datatype " + type_text(dt));
    if (!lookup_op(op, &r)) return fallback(call, sendbuf, recvbuf, count, dt, op, comm, op_text(op));
    if (!op_valid_for(r, d.cat))
      return raise(comm, call, make_error(Errc::op, "op = %s is not defined for datatype %s (MPI-4.0 §6.9.2)",
                                          op_text(op).c_str(), d.name));
    if (!(st = check_buffer(recvbuf, "recvbuf", count, false))) return raise(comm, call, st);
    if (!(st = check_buffer(sendbuf, "sendbuf", count, true))) return raise(comm, call, st);
    const std::size_t esz = elem_size(d.elem);
    if (static_cast<unsigned long long>(count) > SIZE_MAX / esz)
      return raise(comm, call, make_error(Errc::count, "count = %lld elements of %s overflows the address space",
                                          static_cast<long long>(count), d.name));
    if (count == 0) return MPI_SUCCESS;

    const bool in_place = sendbuf == MPI_IN_PLACE;
    const std::size_t bytes = static_cast<std::size_t>(count) * esz;
    if (!in_place && overlaps(sendbuf, bytes, recvbuf, bytes))
      return raise(comm, call, make_error(Errc::overlap, "sendbuf = %p and recvbuf = %p overlap (%zu bytes each); "
                                          "use MPI_IN_PLACE", sendbuf, recvbuf, bytes));

    coll::AllreduceArgs a{};
    a.sendbuf = in_place ? recvbuf : sendbuf;
    a.recvbuf = recvbuf;
    a.count = static_cast<std::size_t>(count);
    a.dt = d;
    a.op = r;
    if (!(st = buffer_kind(recvbuf, "recvbuf", &a.recv_kind))) return raise(comm, call, st);
    a.send_kind = a.recv_kind;
    if (!in_place && !(st = buffer_kind(sendbuf, "sendbuf", &a.send_kind))) return raise(comm, call, st);

    if (!rt && !(st = coll::Runtime::get(&rt))) return raise(comm, call, st);
    coll::Context* ctx = nullptr;
    if (rt->threaded()) {
      std::lock_guard<std::recursive_mutex> lock(rt->mutex());
      st = rt->context(comm, &ctx);
    } else {
      st = rt->context(comm, &ctx);
    }
    if (!st) return raise(comm, call, st.context("setting up the communicator"));
    st = coll::allreduce(*ctx, a);
    return st ? MPI_SUCCESS : raise(comm, call, st);
  } catch (const std::bad_alloc&) {
    return raise(comm, call, make_error(Errc::no_memory, "out of host memory"));
  } catch (const std::exception& e) {
    return raise(comm, call, make_error(Errc::internal, "unexpected exception: %s", e.what()));
  } catch (...) {
    return raise(comm, call, make_error(Errc::internal, "unexpected exception"));
  }
}

}  // namespace

}  // namespace duct::capi

extern "C" int DUCT_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  return duct::capi::allreduce("DUCT_Allreduce", sendbuf, recvbuf, count, datatype, op, comm);
}

extern "C" int DUCT_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm) {
  return duct::capi::allreduce("DUCT_Allreduce_c", sendbuf, recvbuf, count, datatype, op, comm);
}
