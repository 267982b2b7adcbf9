// The reducing collectives: DUCT_Allreduce, DUCT_Reduce,
// DUCT_Reduce_scatter_block, DUCT_Reduce_scatter (and their _c forms).
//
// Datatypes and ops duct reduces natively go through coll; others (derived
// datatypes, user ops, intercommunicators) go to the PMPI collective on host
// copies, so MPI itself answers or raises the error. MPI
// requires the same datatype and op on every rank for a reduction, so every
// rank takes the same path.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "capi/api.hpp"
#include "capi/entry.hpp"
#include "capi/small.hpp"
#include "core/log.hpp"
#include "duct/duct.h"

namespace duct::capi {

namespace {

using select::Coll;

// A reduction's datatype and op, natively or not; errors for invalid ones.
struct Red {
  bool native = false;
  DType dt{};
  RedOp op{};
  std::string why;  // why not native
};

Status classify(MPI_Datatype dt, MPI_Op op, bool inter, Red* out) {
  // A datatype of duct's table is predefined (committed, valid): one lookup.
  const bool known = lookup_dtype(dt, &out->dt);
  if (!known) DUCT_TRY(check_datatype(dt, "datatype"));
  if (op == MPI_OP_NULL) return make_error(Errc::op, "op = MPI_OP_NULL");
  if (inter) return (out->why = "intercommunicator"), Status::ok();
  if (!known) return (out->why = "datatype " + type_text(dt)), Status::ok();
  if (!lookup_op(op, &out->op)) return (out->why = op_text(op)), Status::ok();
  if (out->dt.cat == Category::f_integer && (out->op == RedOp::land || out->op == RedOp::lor || out->op == RedOp::lxor))
    return (out->why = op_text(op) + " on Fortran integer " + out->dt.name + " (MPI answers)"), Status::ok();
  if (!op_valid_for(out->op, out->dt.cat))
    return make_error(Errc::op_type, "op = %s is not defined for datatype %s (MPI-4.0 §6.9.2)", op_text(op).c_str(),
                      out->dt.name);
  out->native = true;
  return Status::ok();
}

Status count_bytes(MPI_Count count, const DType& d, const char* name, std::size_t* bytes) {
  return mul_bytes(count, elem_size(d.elem), name, bytes);
}

// The bytes that `bytes` worth of whole elements span in a caller's
// buffer: the last element's trailing padding (tail_padded types) is not
// the caller's, so two buffers may meet inside it.
std::size_t span_bytes(std::size_t bytes, const DType& d) {
  return bytes ? bytes - (elem_size(d.elem) - elem_true_extent(d.elem)) : 0;
}

// Host copies of a reduction's buffers: of device ones around a PMPI call or
// duct's own collective, and with `host_too` of host ones (whole elements).
struct Fallback {
  Staged send, recv;
  const void* s = nullptr;
  void* r = nullptr;
  bool r_staged = false;
  void* r_user = nullptr;
  // Device buffers get host copies; with `host_too`, host buffers as well.
  Status stage(const void* sendbuf, MPI_Count scount, void* recvbuf, MPI_Count rcount, MPI_Datatype dt,
               bool host_too = false) {
    s = sendbuf;
    r = recvbuf;
    memory::MemKind k;
    // Where the data starts (the pointer checks look there).
    MPI_Aint tlb = 0, textent = 0;
    if (MPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
      return make_error(Errc::type, "cannot get the extent of datatype %s", type_text(dt).c_str());
    if (sendbuf && sendbuf != MPI_IN_PLACE) {
      DUCT_TRY(buffer_kind(sendbuf, "sendbuf", scount > 0 ? 1 : 0, &k, tlb));
      if (k == memory::MemKind::device || host_too) {
        DUCT_TRY(stage_in(sendbuf, scount, dt, true, &send, k == memory::MemKind::device));
        s = send.host;
      }
    }
    if (recvbuf && recvbuf != MPI_IN_PLACE) {
      DUCT_TRY(buffer_kind(recvbuf, "recvbuf", rcount > 0 ? 1 : 0, &k, tlb));
      if (k == memory::MemKind::device || host_too) {
        DUCT_TRY(stage_in(recvbuf, rcount, dt, true, &recv, k == memory::MemKind::device));
        r = recv.host;
        r_staged = true;
        r_user = recvbuf;
      }
    }
    return Status::ok();
  }
  Status done() { return r_staged ? stage_out(r_user, recv) : Status::ok(); }
};

bool int_count(MPI_Count c) { return c <= INT_MAX; }

// duct has no device kernel for long double (host_only()): a native
// reduction of it on device buffers runs on host copies, so every rank stays
// on duct's path whatever memory each one passes. The pair types whose
// elements end in padding (MPI_DOUBLE_INT, MPI_LONG_INT,
// MPI_LONG_DOUBLE_INT: tail_padded()) run on copies of whole elements, host
// buffers too: duct's reductions load and store whole elements, and the
// last one's padding lies past the caller's buffer. Other elements: nothing
// to do. `local` is the caller's (the Entry holds a heap copy for a
// nonblocking call).
Status host_copies(Entry& e, Fallback& local, const Red& red, const void** sendbuf, MPI_Count scount, void** recvbuf,
                   MPI_Count rcount, MPI_Datatype dt) {
  const bool padded = tail_padded(red.dt.elem);
  if (!host_only(red.dt.elem) && !padded) return Status::ok();
  if (padded) DUCT_TRY(e.not_streamed(std::string(red.dt.name) + " ends in padding (reduced on copies of whole elements)"));
  if (e.streamed()) {
    // Host buffers reduce natively; device ones would be staged now.
    memory::MemKind k1 = memory::MemKind::host, k2 = memory::MemKind::host;
    if (*sendbuf && *sendbuf != MPI_IN_PLACE) DUCT_TRY(buffer_kind(*sendbuf, "sendbuf", scount > 0 ? 1 : 0, &k1));
    if (*recvbuf && *recvbuf != MPI_IN_PLACE) DUCT_TRY(buffer_kind(*recvbuf, "recvbuf", rcount > 0 ? 1 : 0, &k2));
    if (k1 == memory::MemKind::device || k2 == memory::MemKind::device)
      return e.not_streamed(std::string(red.dt.name) + " on device buffers (no device kernel; staged through host copies)");
    return Status::ok();
  }
  Fallback& f = e.hold(local);
  DUCT_TRY(f.stage(*sendbuf, scount, *recvbuf, rcount, dt, padded));
  *sendbuf = f.s;
  *recvbuf = f.r;
  if (f.r_staged) e.then([&f] { return f.done(); });
  return Status::ok();
}

// The arguments a call with nothing to move shows DUCT_CHECK.
coll::CollArgs reduction_args(Coll c, const Red& red, std::size_t count, int root) {
  coll::CollArgs a;
  a.coll = c;
  a.dt = red.dt;
  a.op = red.op;
  a.count = count;
  a.root = root;
  return a;
}

Status too_large(const char* what) {
  return make_error(Errc::not_supported,
                    "%s: a count above INT_MAX with a datatype or op duct cannot reduce natively (the MPI library "
                    "here has no large-count collectives)",
                    what);
}

// What duct checks before handing a reduction to the MPI library too: sizes
// that fit an address space and no NULL buffer where data is (MPI libraries
// do not check either, and would read or write wild memory).
Status fallback_checks(const void* sendbuf, MPI_Count scount, const void* recvbuf, MPI_Count rcount,
                       MPI_Datatype dt, bool recv_significant) {
  TypeInfo ti;
  DUCT_TRY(type_info(dt, "datatype", &ti));
  const std::size_t unit = static_cast<std::size_t>(std::max<MPI_Aint>({ti.extent, ti.true_extent, 1}));
  std::size_t bytes;
  DUCT_TRY(mul_bytes(std::max(scount, rcount), unit, "count", &bytes));
  DUCT_TRY(check_buffer(sendbuf, "sendbuf", scount, true, ti.true_lb));
  if (recv_significant) DUCT_TRY(check_buffer(recvbuf, "recvbuf", rcount, false, ti.true_lb));
  return Status::ok();
}

}  // namespace

// ---- allreduce ------------------------------------------------------------------

int allreduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
              MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    if (int rc; !req && !stream && small::allreduce(call, sendbuf, recvbuf, count, dt, op, comm, &rc)) return rc;
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    Red red;
    if (!(st = check_count(count, "count")) || !(st = classify(dt, op, e.inter, &red))) return e.fail(st);
    if (recvbuf == MPI_IN_PLACE)
      return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be)"));
    if (!red.native) {
      // MPI's answer; counts beyond INT_MAX in slices (allreduce is element-wise).
      if (!(st = e.not_streamed(red.why))) return e.fail(st);
      note_fallback(call, red.why);
      if (!(st = fallback_checks(sendbuf, count, recvbuf, count, dt, true))) return e.fail(st);
      Fallback local;
      Fallback& f = e.hold(local);
      if (!(st = f.stage(sendbuf, count, recvbuf, count, dt))) return e.fail(st);
      if (e.nonblocking()) {
        if (!int_count(count)) return e.fail(too_large(call));
        e.then([&f] { return f.done(); });
        return e.started_mpi(
            [&](MPI_Request* r) { return PMPI_Iallreduce(f.s, f.r, static_cast<int>(count), dt, op, comm, r); });
      }
      MPI_Aint lb = 0, extent = 0;
      if (MPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS)
        return e.fail(make_error(Errc::type, "cannot get the extent of datatype %s", type_text(dt).c_str()));
      MPI_Count done = 0;
      int rc = MPI_SUCCESS;
      do {
        MPI_Count k = std::min<MPI_Count>(count - done, INT_MAX);
        const void* s = f.s == MPI_IN_PLACE ? MPI_IN_PLACE : static_cast<const char*>(f.s) + done * extent;
        rc = PMPI_Allreduce(s, static_cast<char*>(f.r) + done * extent, static_cast<int>(k), dt, op, comm);
        done += k;
      } while (rc == MPI_SUCCESS && done < count);
      if (rc != MPI_SUCCESS) return rc;
      return (st = f.done()) ? MPI_SUCCESS : e.fail(st);
    }
    std::size_t bytes;
    if (!(st = count_bytes(count, red.dt, "count", &bytes))) return e.fail(st);
    if (count == 0) return e.nothing(reduction_args(Coll::allreduce, red, 0, 0));
    if (!(st = check_buffer(recvbuf, "recvbuf", count, false)) || !(st = check_buffer(sendbuf, "sendbuf", count, true)))
      return e.fail(st);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place && overlaps(sendbuf, span_bytes(bytes, red.dt), recvbuf, span_bytes(bytes, red.dt)))
      return e.fail(make_error(Errc::overlap, "sendbuf = %p and recvbuf = %p overlap (%zu bytes each); use MPI_IN_PLACE",
                               sendbuf, recvbuf, bytes));
    Fallback staged_local;
    if (!(st = host_copies(e, staged_local, red, &sendbuf, count, &recvbuf, count, dt))) return e.fail(st);
    coll::CollArgs a;
    a.coll = Coll::allreduce;
    a.call = call;
    a.sendbuf = in_place ? recvbuf : sendbuf;
    a.recvbuf = recvbuf;
    a.in_place = in_place;
    a.count = static_cast<std::size_t>(count);
    a.dt = red.dt;
    a.op = red.op;
    if (!(st = buffer_kind(recvbuf, "recvbuf", bytes, &a.recv_kind))) return e.fail(st);
    a.send_kind = a.recv_kind;
    if (!in_place && !(st = buffer_kind(sendbuf, "sendbuf", bytes, &a.send_kind))) return e.fail(st);
    return e.run(a);
  });
}

// ---- reduce -----------------------------------------------------------------------

int reduce(const char* call, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op, int root,
           MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    if (int rc; !req && !stream && small::reduce(call, sendbuf, recvbuf, count, dt, op, root, comm, &rc)) return rc;
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    Red red;
    if (!(st = check_count(count, "count")) || !(st = classify(dt, op, e.inter, &red))) return e.fail(st);
    if (e.inter) {
      if (!(st = e.not_streamed(red.why))) return e.fail(st);
      note_fallback(call, red.why);
      if (!int_count(count)) return e.fail(too_large(call));
      if (e.nonblocking())
        return e.started_mpi([&](MPI_Request* r) {
          return PMPI_Ireduce(sendbuf, recvbuf, static_cast<int>(count), dt, op, root, comm, r);
        });
      return PMPI_Reduce(sendbuf, recvbuf, static_cast<int>(count), dt, op, root, comm);
    }
    if (root < 0 || root >= e.size)
      return e.fail(make_error(Errc::root, "root = %d is not a rank of the communicator (0..%d)", root, e.size - 1));
    const bool is_root = e.rank == root;
    if (is_root && recvbuf == MPI_IN_PLACE)
      return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE at the root (only sendbuf may be)"));
    if (!is_root && sendbuf == MPI_IN_PLACE)
      return e.fail(make_error(Errc::in_place, "sendbuf = MPI_IN_PLACE on rank %d, which is not the root %d", e.rank, root));
    if (!red.native) {
      if (!(st = e.not_streamed(red.why))) return e.fail(st);
      note_fallback(call, red.why);
      if (!(st = fallback_checks(sendbuf, count, recvbuf, count, dt, is_root))) return e.fail(st);
      if (!int_count(count)) return e.fail(too_large(call));
      Fallback local;
      Fallback& f = e.hold(local);
      if (!(st = f.stage(sendbuf, count, is_root ? recvbuf : nullptr, count, dt))) return e.fail(st);
      if (e.nonblocking()) {
        e.then([&f] { return f.done(); });
        return e.started_mpi([&](MPI_Request* r) {
          return PMPI_Ireduce(f.s, is_root ? f.r : recvbuf, static_cast<int>(count), dt, op, root, comm, r);
        });
      }
      int rc = PMPI_Reduce(f.s, is_root ? f.r : recvbuf, static_cast<int>(count), dt, op, root, comm);
      if (rc != MPI_SUCCESS) return rc;
      return (st = f.done()) ? MPI_SUCCESS : e.fail(st);
    }
    std::size_t bytes;
    if (!(st = count_bytes(count, red.dt, "count", &bytes))) return e.fail(st);
    if (count == 0) return e.nothing(reduction_args(Coll::reduce, red, 0, root));
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!(st = check_buffer(sendbuf, "sendbuf", count, true))) return e.fail(st);
    if (is_root && !(st = check_buffer(recvbuf, "recvbuf", count, false))) return e.fail(st);
    if (is_root && !in_place && overlaps(sendbuf, span_bytes(bytes, red.dt), recvbuf, span_bytes(bytes, red.dt)))
      return e.fail(make_error(Errc::overlap, "sendbuf = %p and recvbuf = %p overlap at the root; use MPI_IN_PLACE",
                               sendbuf, recvbuf));
    Fallback staged_local;
    void* root_recv = is_root ? recvbuf : nullptr;
    if (!(st = host_copies(e, staged_local, red, &sendbuf, count, &root_recv, count, dt))) return e.fail(st);
    if (is_root) recvbuf = root_recv;
    coll::CollArgs a;
    a.coll = Coll::reduce;
    a.call = call;
    a.sendbuf = in_place ? recvbuf : sendbuf;
    a.recvbuf = is_root ? recvbuf : nullptr;
    a.in_place = in_place;
    a.count = static_cast<std::size_t>(count);
    a.dt = red.dt;
    a.op = red.op;
    a.root = root;
    if (!(st = buffer_kind(a.sendbuf, "sendbuf", bytes, &a.send_kind))) return e.fail(st);
    a.recv_kind = a.send_kind;
    if (is_root && !(st = buffer_kind(recvbuf, "recvbuf", bytes, &a.recv_kind))) return e.fail(st);
    return e.run(a);
  });
}

// ---- reduce_scatter_block / reduce_scatter ----------------------------------------

int reduce_scatter(const char* call, const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                   const std::vector<MPI_Count>* recvcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                   MPI_Request* req, const StreamArg* stream) noexcept {
  const bool v = recvcounts != nullptr;
  return guarded(call, comm, [&]() -> int {
    if (int rc; !v && !req && !stream && small::reduce_scatter_block(call, sendbuf, recvbuf, recvcount, dt, op, comm, &rc))
      return rc;
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    Red red;
    if (!v && !(st = check_count(recvcount, "recvcount"))) return e.fail(st);
    if (!(st = classify(dt, op, e.inter, &red))) return e.fail(st);
    if (v && static_cast<int>(recvcounts->size()) != e.size)
      return e.fail(make_error(Errc::arg, "recvcounts = NULL with %d ranks", e.size));
    MPI_Count total = 0, mine = v ? 0 : recvcount;
    if (!v && !(st = mul_count(recvcount, e.size, "recvcount x communicator size", &total))) return e.fail(st);
    if (v) {
      for (int i = 0; i < e.size; ++i) {
        MPI_Count c = (*recvcounts)[static_cast<std::size_t>(i)];
        if (c < 0) return e.fail(make_error(Errc::count, "recvcounts[%d] = %lld is negative", i, static_cast<long long>(c)));
        if (__builtin_add_overflow(total, c, &total))
          return e.fail(make_error(Errc::overflow, "recvcounts[%d] = %lld: the sum of recvcounts overflows MPI_Count", i,
                                   static_cast<long long>(c)));
      }
      mine = (*recvcounts)[static_cast<std::size_t>(e.rank)];
    }
    if (recvbuf == MPI_IN_PLACE)
      return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be)"));
    if (!red.native) {
      if (!(st = e.not_streamed(red.why))) return e.fail(st);
      note_fallback(call, red.why);
      const bool in_place = sendbuf == MPI_IN_PLACE;
      if (!(st = fallback_checks(sendbuf, total, recvbuf, in_place ? total : mine, dt, true))) return e.fail(st);
      if (!int_count(total)) return e.fail(too_large(call));
      Fallback local;
      Fallback& f = e.hold(local);
      if (!(st = f.stage(sendbuf, total, recvbuf, in_place ? total : mine, dt))) return e.fail(st);
      int rc;
      if (e.nonblocking()) {
        e.then([&f] { return f.done(); });
        if (v) {
          std::vector<int> counts_local;
          std::vector<int>& counts = e.hold(counts_local);  // MPI reads it until completion
          counts.assign(recvcounts->begin(), recvcounts->end());
          return e.started_mpi(
              [&](MPI_Request* r) { return PMPI_Ireduce_scatter(f.s, f.r, counts.data(), dt, op, comm, r); });
        }
        return e.started_mpi([&](MPI_Request* r) {
          return PMPI_Ireduce_scatter_block(f.s, f.r, static_cast<int>(recvcount), dt, op, comm, r);
        });
      }
      if (v) {
        std::vector<int> counts(recvcounts->begin(), recvcounts->end());
        rc = PMPI_Reduce_scatter(f.s, f.r, counts.data(), dt, op, comm);
      } else {
        rc = PMPI_Reduce_scatter_block(f.s, f.r, static_cast<int>(recvcount), dt, op, comm);
      }
      if (rc != MPI_SUCCESS) return rc;
      return (st = f.done()) ? MPI_SUCCESS : e.fail(st);
    }
    std::size_t bytes, mine_bytes;
    if (!(st = count_bytes(total, red.dt, "the total count", &bytes)) ||
        !(st = count_bytes(mine, red.dt, "recvcount", &mine_bytes)))
      return e.fail(st);
    if (total == 0) {
      coll::CollArgs a = reduction_args(v ? Coll::reduce_scatter : Coll::reduce_scatter_block, red, 0, 0);
      if (v) a.recv_layout = coll::Layout::uniform(0, e.size);
      return e.nothing(a);
    }
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!(st = check_buffer(sendbuf, "sendbuf", total, true))) return e.fail(st);
    if (!(st = check_buffer(recvbuf, "recvbuf", in_place ? total : mine, false))) return e.fail(st);
    if (!in_place && overlaps(sendbuf, span_bytes(bytes, red.dt), recvbuf, span_bytes(mine_bytes, red.dt)))
      return e.fail(make_error(Errc::overlap, "sendbuf = %p and recvbuf = %p overlap; use MPI_IN_PLACE", sendbuf, recvbuf));
    Fallback staged_local;
    if (!(st = host_copies(e, staged_local, red, &sendbuf, total, &recvbuf, in_place ? total : mine, dt)))
      return e.fail(st);
    coll::CollArgs a;
    a.coll = v ? Coll::reduce_scatter : Coll::reduce_scatter_block;
    a.call = call;
    a.sendbuf = in_place ? recvbuf : sendbuf;
    a.recvbuf = recvbuf;
    a.in_place = in_place;
    a.count = static_cast<std::size_t>(recvcount);
    a.dt = red.dt;
    a.op = red.op;
    if (v) {
      a.recv_layout.off.resize(static_cast<std::size_t>(e.size));
      a.recv_layout.len.resize(static_cast<std::size_t>(e.size));
      std::size_t pos = 0;
      for (int i = 0; i < e.size; ++i) {
        a.recv_layout.off[static_cast<std::size_t>(i)] = pos;
        a.recv_layout.len[static_cast<std::size_t>(i)] = static_cast<std::size_t>((*recvcounts)[static_cast<std::size_t>(i)]);
        pos += a.recv_layout.len[static_cast<std::size_t>(i)];
      }
    }
    if (!(st = buffer_kind(recvbuf, "recvbuf", in_place ? bytes : mine_bytes, &a.recv_kind))) return e.fail(st);
    a.send_kind = a.recv_kind;
    if (!in_place && !(st = buffer_kind(sendbuf, "sendbuf", bytes, &a.send_kind))) return e.fail(st);
    return e.run(a);
  });
}

int reduce_scatter_block(const char* call, const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return reduce_scatter(call, sendbuf, recvbuf, recvcount, nullptr, dt, op, comm, req, stream);
}

template <class C>
int reduce_scatter_v(const char* call, const void* sendbuf, void* recvbuf, const C* recvcounts, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&] {
    // One count per rank of the (local) group; NULL stays empty and is reported as such.
    int n = 0;
    if (comm != MPI_COMM_NULL && MPI_Comm_size(comm, &n) != MPI_SUCCESS) n = 0;
    std::vector<MPI_Count> counts;
    if (recvcounts) counts.assign(recvcounts, recvcounts + n);
    return reduce_scatter(call, sendbuf, recvbuf, 0, &counts, dt, op, comm, req, stream);
  });
}
template int reduce_scatter_v<int>(const char*, const void*, void*, const int*, MPI_Datatype, MPI_Op,
                                   MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int reduce_scatter_v<MPI_Count>(const char*, const void*, void*, const MPI_Count*, MPI_Datatype, MPI_Op,
                                         MPI_Comm, MPI_Request*, const StreamArg*) noexcept;

}  // namespace duct::capi

using namespace duct::capi;

extern "C" int DUCT_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  return allreduce("DUCT_Allreduce", sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int DUCT_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm) {
  return allreduce("DUCT_Allreduce_c", sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int DUCT_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm) {
  return reduce("DUCT_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int DUCT_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                             int root, MPI_Comm comm) {
  return reduce("DUCT_Reduce_c", sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int DUCT_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block("DUCT_Reduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm);
}
extern "C" int DUCT_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block("DUCT_Reduce_scatter_block_c", sendbuf, recvbuf, recvcount, datatype, op, comm);
}
extern "C" int DUCT_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_v("DUCT_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
extern "C" int DUCT_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_v("DUCT_Reduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

// ---- nonblocking forms ----------------------------------------------------------------

extern "C" int DUCT_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iallreduce", comm, request);
  return allreduce("DUCT_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, request);
}
extern "C" int DUCT_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iallreduce_c", comm, request);
  return allreduce("DUCT_Iallreduce_c", sendbuf, recvbuf, count, datatype, op, comm, request);
}
extern "C" int DUCT_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ireduce", comm, request);
  return reduce("DUCT_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
extern "C" int DUCT_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ireduce_c", comm, request);
  return reduce("DUCT_Ireduce_c", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
extern "C" int DUCT_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ireduce_scatter_block", comm, request);
  return reduce_scatter_block("DUCT_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}
extern "C" int DUCT_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ireduce_scatter_block_c", comm, request);
  return reduce_scatter_block("DUCT_Ireduce_scatter_block_c", sendbuf, recvbuf, recvcount, datatype, op, comm,
                              request);
}
extern "C" int DUCT_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ireduce_scatter", comm, request);
  return reduce_scatter_v("DUCT_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
extern "C" int DUCT_Ireduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ireduce_scatter_c", comm, request);
  return reduce_scatter_v("DUCT_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
