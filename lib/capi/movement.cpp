// The data-movement collectives (bcast, allgather(v), alltoall(v),
// gather(v), scatter(v)), barrier and DUCT_Tune.
//
// Every rank takes duct's path whatever datatypes it passes: contiguous
// datatypes are used in place, others packed and unpacked with MPI_Pack /
// MPI_Unpack around the transfer (capi/entry.hpp). MPI only requires type
// signatures to match across ranks, so one rank may pass MPI_INT x 4 and
// another a derived type of 4 ints; a per-rank choice between duct and the
// MPI library would then hang. Intercommunicators go to the MPI library
// (host buffers).
#include <climits>
#include <cstdint>
#include <cstring>

#include "capi/api.hpp"
#include "capi/entry.hpp"
#include "capi/small.hpp"
#include "core/log.hpp"
#include "duct/duct.h"

namespace duct::capi {

namespace {

using select::Coll;

Status root_ok(int root, int size) {
  if (root < 0 || root >= size)
    return make_error(Errc::root, "root = %d is not a rank of the communicator (0..%d)", root, size - 1);
  return Status::ok();
}

Status block_bytes(MPI_Count count, const TypeInfo& ti, const char* name, std::size_t* out) {
  DUCT_TRY(check_count(count, name));
  return mul_bytes(count, ti.size, name, out);
}

// (The error is raised as "CALL on rank N: ...": the message names no call.)
Status same_size(std::size_t sbytes, std::size_t rbytes) {
  if (sbytes == rbytes) return Status::ok();
  return make_error(Errc::count, "sendcount x size(sendtype) = %zu bytes but recvcount x size(recvtype) = %zu bytes",
                    sbytes, rbytes);
}

// Intercommunicators: the MPI library, with host buffers.
// `pmpi` is the blocking PMPI call, `ipmpi(MPI_Request*)` the nonblocking one.
template <class F, class G>
int inter(Entry& e, std::initializer_list<const void*> bufs, F&& pmpi, G&& ipmpi) {
  if (Status st = e.not_streamed("an intercommunicator"); !st) return e.fail(st);
  note_fallback(e.call, "intercommunicator");
  for (const void* b : bufs) {
    if (!b || b == MPI_IN_PLACE) continue;
    memory::MemKind k;
    Status st = buffer_kind(b, "buffer", 0, &k);
    if (!st) return e.fail(st);
    if (k == memory::MemKind::device)
      return e.fail(make_error(Errc::not_supported, "device buffers on an intercommunicator: duct passes "
                                                    "intercommunicators to the MPI library, which cannot read them"));
  }
  if (e.nonblocking()) return e.started_mpi(ipmpi);
  return pmpi();
}

bool fits_int(MPI_Count c) { return c <= INT_MAX; }
Status int_only(const char* call) {
  return make_error(Errc::not_supported, "%s: counts above INT_MAX on an intercommunicator (the MPI library here has "
                    "no large-count collectives)", call);
}

// The arguments a call with nothing to move shows DUCT_CHECK.
coll::CollArgs moving_args(Coll c, std::size_t bytes, int root) {
  coll::CollArgs a;
  a.coll = c;
  a.bytes = bytes;
  a.root = root;
  return a;
}

VLayout vlayout(const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs) { return {counts, displs}; }

// The byte ranges of a v-argument's blocks, of a contiguous datatype, at `buf`.
std::vector<Bytes> blocks(const void* buf, const VLayout& v, const TypeInfo& ti) {
  std::vector<Bytes> out(v.counts.size());
  // A null buffer (with counts of 0, or an error found later) has no
  // blocks to offset: pointer arithmetic on it is undefined (UBSan).
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = {buf ? static_cast<const char*>(buf) + v.displs[i] * ti.extent : nullptr,
              static_cast<std::size_t>(v.counts[i]) * ti.size};
  return out;
}

// MPI forbids a send argument to share memory with the receive argument
// (MPI-4.1 section 2.3: an OUT argument is not aliased with any other);
// MPI_IN_PLACE is the way to reuse a buffer. Checked where both datatypes
// are contiguous, byte range against byte range, so that blocks merely
// interleaved with the other argument's are not an error: one range each
// (no allocation on the equal-block calls), or the v-forms' blocks.
Status overlap_error(const void* sendbuf, const void* recvbuf, const char* where) {
  return make_error(Errc::overlap, "sendbuf = %p and recvbuf = %p overlap%s; use MPI_IN_PLACE", sendbuf, recvbuf, where);
}
Status disjoint(const void* sendbuf, std::size_t sbytes, const void* recvbuf, std::size_t rbytes, const char* where) {
  return overlaps(sendbuf, sbytes, recvbuf, rbytes) ? overlap_error(sendbuf, recvbuf, where) : Status::ok();
}
Status disjoint(const void* sendbuf, std::vector<Bytes> s, const void* recvbuf, std::vector<Bytes> r, const char* where) {
  return any_overlap(std::move(s), std::move(r)) ? overlap_error(sendbuf, recvbuf, where) : Status::ok();
}

}  // namespace

// ---- bcast ---------------------------------------------------------------------------

int bcast(const char* call, void* buffer, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    if (int rc; !req && !stream && small::bcast(call, buffer, count, dt, root, comm, &rc)) return rc;
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    TypeInfo ti;
    std::size_t bytes;
    if (!(st = e.type(dt, "datatype", &ti)) || !(st = block_bytes(count, ti, "count", &bytes))) return e.fail(st);
    if (e.inter) {
      if (!fits_int(count)) return e.fail(int_only(call));
      return inter(e, {buffer}, [&] { return PMPI_Bcast(buffer, static_cast<int>(count), dt, root, comm); },
                   [&](MPI_Request* r) { return PMPI_Ibcast(buffer, static_cast<int>(count), dt, root, comm, r); });
    }
    if (!(st = root_ok(root, e.size))) return e.fail(st);
    if (bytes == 0) return e.nothing(moving_args(Coll::bcast, 0, root));
    if (!(st = check_buffer(buffer, "buffer", count, false, ti.true_lb))) return e.fail(st);
    Contig c_local;
    Contig& c = e.hold(c_local);
    st = e.rank == root ? c.send(buffer, count, dt, ti, comm, "buffer") : c.recv(buffer, count, dt, ti, comm, "buffer");
    if (!st) return e.fail(st);
    coll::CollArgs a;
    a.coll = Coll::bcast;
    a.call = call;
    a.sendbuf = a.recvbuf = c.data();
    a.send_kind = a.recv_kind = c.kind();
    a.bytes = bytes;
    a.root = root;
    if (c.needs_finish()) e.then([&c] { return c.finish(); });
    return e.run(a);
  });
}

// ---- allgather / alltoall (equal blocks) ----------------------------------------------

int all_blocks(const char* call, Coll coll, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    if (int rc; !req && !stream &&
        small::all_blocks(call, coll == Coll::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &rc))
      return rc;
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    TypeInfo rti, sti;
    std::size_t rbytes, sbytes = 0;
    if (recvbuf == MPI_IN_PLACE) return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be)"));
    if (!(st = e.type(recvtype, "recvtype", &rti)) || !(st = block_bytes(recvcount, rti, "recvcount", &rbytes)))
      return e.fail(st);
    if (!in_place && (!(st = e.type(sendtype, "sendtype", &sti)) || !(st = block_bytes(sendcount, sti, "sendcount", &sbytes))))
      return e.fail(st);
    if (e.inter) {
      if (!fits_int(sendcount) || !fits_int(recvcount)) return e.fail(int_only(call));
      return inter(e, {sendbuf, recvbuf}, [&] {
        return coll == Coll::allgather
                   ? PMPI_Allgather(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, comm)
                   : PMPI_Alltoall(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, comm);
      }, [&](MPI_Request* q) {
        return coll == Coll::allgather
                   ? PMPI_Iallgather(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, comm, q)
                   : PMPI_Ialltoall(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, comm, q);
      });
    }
    if (!in_place && !(st = same_size(sbytes, rbytes))) return e.fail(st);
    if (rbytes == 0) return e.nothing(moving_args(coll, 0, 0));
    const MPI_Count n = e.size;
    MPI_Count rtotal = 0, stotal = sendcount;
    if (!(st = blocks_total(n, recvcount, rti.size, "communicator size x recvcount", &rtotal))) return e.fail(st);
    if (coll == Coll::alltoall && !in_place &&
        !(st = blocks_total(n, sendcount, sti.size, "communicator size x sendcount", &stotal)))
      return e.fail(st);
    if (!(st = check_buffer(recvbuf, "recvbuf", rtotal, false, rti.true_lb))) return e.fail(st);
    if (!in_place && !(st = check_buffer(sendbuf, "sendbuf", stotal, false, sti.true_lb))) return e.fail(st);
    if (!in_place && rti.contiguous && sti.contiguous &&
        !(st = disjoint(sendbuf, static_cast<std::size_t>(stotal) * sti.size, recvbuf,
                        static_cast<std::size_t>(rtotal) * rti.size, "")))
      return e.fail(st);

    Contig r_local, s_local;
    Contig& r = e.hold(r_local);
    Contig& s = e.hold(s_local);
    if (!(st = r.recv(recvbuf, rtotal, recvtype, rti, comm))) return e.fail(st);
    coll::CollArgs a;
    a.coll = coll;
    a.call = call;
    a.recvbuf = r.data();
    a.recv_kind = r.kind();
    a.bytes = rbytes;
    const std::size_t mine = static_cast<std::size_t>(e.rank) * rbytes;
    if (in_place) {
      // The input is in recvbuf: my block (allgather) or everything (alltoall).
      if (rti.contiguous) {
        a.sendbuf = coll == Coll::allgather ? coll::at(r.data(), mine) : r.data();
        a.in_place = true;
      } else {
        // Pack the user's data into the packed receive buffer first.
        Contig whole;
        if (!(st = whole.send(recvbuf, rtotal, recvtype, rti, comm))) return e.fail(st);
        std::memcpy(r.data(), whole.data(), static_cast<std::size_t>(rtotal) * rti.size);
        a.sendbuf = coll == Coll::allgather ? coll::at(r.data(), mine) : r.data();
        a.in_place = true;
      }
      a.send_kind = r.kind();
    } else {
      if (!(st = s.send(sendbuf, stotal, sendtype, sti, comm))) return e.fail(st);
      a.sendbuf = s.data();
      a.send_kind = s.kind();
    }
    if (r.needs_finish()) e.then([&r] { return r.finish(); });
    return e.run(a);
  });
}

// ---- allgatherv / alltoallv ---------------------------------------------------------------

int allgatherv(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               const std::vector<MPI_Count>* recvcounts, const std::vector<MPI_Aint>* displs, MPI_Datatype recvtype,
               MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (recvbuf == MPI_IN_PLACE) return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be)"));
    if (!recvcounts) return e.fail(make_error(Errc::arg, "recvcounts = NULL"));
    if (!displs) return e.fail(make_error(Errc::arg, "displs = NULL"));
    TypeInfo rti, sti;
    std::size_t sbytes = 0;
    if (!(st = e.type(recvtype, "recvtype", &rti))) return e.fail(st);
    if (!in_place && (!(st = e.type(sendtype, "sendtype", &sti)) || !(st = block_bytes(sendcount, sti, "sendcount", &sbytes))))
      return e.fail(st);
    VLayout v = vlayout(*recvcounts, *displs);
    if (!(st = check_counts(v, rti, "recvcounts", "displs"))) return e.fail(st);
    if (e.inter) {
      std::vector<int> c_local, d_local;  // MPI reads them until a nonblocking call completes
      std::vector<int>& c = e.hold(c_local);
      std::vector<int>& d = e.hold(d_local);
      c.assign(recvcounts->begin(), recvcounts->end());
      d.assign(displs->begin(), displs->end());
      return inter(e, {sendbuf, recvbuf}, [&] {
        return PMPI_Allgatherv(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, c.data(), d.data(), recvtype, comm);
      }, [&](MPI_Request* q) {
        return PMPI_Iallgatherv(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, c.data(), d.data(), recvtype, comm, q);
      });
    }
    const std::size_t me = static_cast<std::size_t>(e.rank);
    if (!in_place && !(st = same_size(sbytes, static_cast<std::size_t>(v.counts[me]) * rti.size))) return e.fail(st);
    MPI_Count total = 0;
    if (rti.size > 0)
      for (MPI_Count c : v.counts) total += c;  // no overflow: check_counts bounded the bytes
    if (total == 0) {
      coll::CollArgs a = moving_args(Coll::allgatherv, 0, 0);
      a.recv_layout = coll::Layout::uniform(0, e.size);
      return e.nothing(a);
    }
    if (!(st = check_buffer(recvbuf, "recvbuf", total, false, rti.true_lb))) return e.fail(st);
    if (!in_place && !(st = check_buffer(sendbuf, "sendbuf", sendcount, false, sti.true_lb))) return e.fail(st);
    if (!in_place && rti.contiguous && sti.contiguous &&
        !(st = disjoint(sendbuf, {{sendbuf, sbytes}}, recvbuf, blocks(recvbuf, v, rti), "")))
      return e.fail(st);
    VContig r_local;
    Contig s_local;
    VContig& r = e.hold(r_local);
    Contig& s = e.hold(s_local);
    if (!(st = r.recv(recvbuf, v, recvtype, rti, comm, "recvbuf"))) return e.fail(st);
    coll::CollArgs a;
    a.coll = Coll::allgatherv;
    a.call = call;
    a.recvbuf = r.base();
    a.recv_kind = r.kind();
    a.recv_layout = r.layout();
    if (in_place) {
      if (rti.contiguous) {
        a.sendbuf = coll::at(r.base(), r.layout().off[me]);
        a.in_place = true;
        a.send_kind = r.kind();
      } else {
        if (!(st = s.send(static_cast<char*>(recvbuf) + v.displs[me] * rti.extent, v.counts[me], recvtype, rti, comm)))
          return e.fail(st);
        a.sendbuf = s.data();
        a.send_kind = s.kind();
      }
    } else {
      if (!(st = s.send(sendbuf, sendcount, sendtype, sti, comm))) return e.fail(st);
      a.sendbuf = s.data();
      a.send_kind = s.kind();
    }
    if (r.needs_finish()) e.then([&r] { return r.finish(); });
    return e.run(a);
  });
}

int alltoallv(const char* call, const void* sendbuf, const std::vector<MPI_Count>* sendcounts,
              const std::vector<MPI_Aint>* sdispls, MPI_Datatype sendtype, void* recvbuf,
              const std::vector<MPI_Count>* recvcounts, const std::vector<MPI_Aint>* rdispls, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (recvbuf == MPI_IN_PLACE) return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be)"));
    if (!recvcounts) return e.fail(make_error(Errc::arg, "recvcounts = NULL"));
    if (!rdispls) return e.fail(make_error(Errc::arg, "rdispls = NULL"));
    if (!in_place && !sendcounts) return e.fail(make_error(Errc::arg, "sendcounts = NULL"));
    if (!in_place && !sdispls) return e.fail(make_error(Errc::arg, "sdispls = NULL"));
    TypeInfo rti, sti;
    if (!(st = e.type(recvtype, "recvtype", &rti))) return e.fail(st);
    if (!in_place && !(st = e.type(sendtype, "sendtype", &sti))) return e.fail(st);
    VLayout rv = vlayout(*recvcounts, *rdispls), sv;
    if (!(st = check_counts(rv, rti, "recvcounts", "rdispls"))) return e.fail(st);
    if (!in_place) {
      sv = vlayout(*sendcounts, *sdispls);
      if (!(st = check_counts(sv, sti, "sendcounts", "sdispls"))) return e.fail(st);
    }
    if (e.inter) {
      std::vector<int> l1, l2, l3, l4;  // MPI reads them until a nonblocking call completes
      std::vector<int>& rc_ = e.hold(l1);
      std::vector<int>& rd = e.hold(l2);
      std::vector<int>& sc = e.hold(l3);
      std::vector<int>& sd = e.hold(l4);
      rc_.assign(recvcounts->begin(), recvcounts->end());
      rd.assign(rdispls->begin(), rdispls->end());
      if (!in_place) {
        sc.assign(sendcounts->begin(), sendcounts->end());
        sd.assign(sdispls->begin(), sdispls->end());
      }
      return inter(e, {sendbuf, recvbuf}, [&] {
        return PMPI_Alltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc_.data(), rd.data(), recvtype, comm);
      }, [&](MPI_Request* q) {
        return PMPI_Ialltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc_.data(), rd.data(), recvtype, comm, q);
      });
    }
    if (!(st = check_buffer(recvbuf, "recvbuf", rv.total(), false, rti.true_lb))) return e.fail(st);
    if (!in_place && !(st = check_buffer(sendbuf, "sendbuf", sv.total(), false, sti.true_lb))) return e.fail(st);
    if (!in_place && rti.contiguous && sti.contiguous &&
        !(st = disjoint(sendbuf, blocks(sendbuf, sv, sti), recvbuf, blocks(recvbuf, rv, rti), "")))
      return e.fail(st);
    VContig r_local, s_local;
    VContig& r = e.hold(r_local);
    VContig& s = e.hold(s_local);
    if (!(st = r.recv(recvbuf, rv, recvtype, rti, comm, "recvbuf"))) return e.fail(st);
    coll::CollArgs a;
    a.coll = Coll::alltoallv;
    a.call = call;
    a.recvbuf = r.base();
    a.recv_kind = r.kind();
    a.recv_layout = r.layout();
    if (in_place) {
      if (!rti.contiguous) {  // bring the user's data into the packed buffer first
        if (!(st = s.send(recvbuf, rv, recvtype, rti, comm, "recvbuf"))) return e.fail(st);
        if (r.layout().total() > 0) std::memcpy(r.base(), s.base(), r.layout().total());
      }
      a.sendbuf = r.base();
      a.send_kind = r.kind();
      a.send_layout = r.layout();
      a.in_place = true;
    } else {
      if (!(st = s.send(sendbuf, sv, sendtype, sti, comm, "sendbuf"))) return e.fail(st);
      a.sendbuf = s.base();
      a.send_kind = s.kind();
      a.send_layout = s.layout();
    }
    if (r.needs_finish()) e.then([&r] { return r.finish(); });
    return e.run(a);
  });
}

// ---- gather(v) ------------------------------------------------------------------------------

int gather(const char* call, bool v, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
           MPI_Count recvcount, const std::vector<MPI_Count>* recvcounts, const std::vector<MPI_Aint>* displs,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    if (e.inter) {
      std::vector<int> c_local, d_local;  // MPI reads them until a nonblocking call completes
      std::vector<int>& c = e.hold(c_local);
      std::vector<int>& d = e.hold(d_local);
      if (recvcounts) c.assign(recvcounts->begin(), recvcounts->end());
      if (displs) d.assign(displs->begin(), displs->end());
      if (!fits_int(sendcount) || !fits_int(recvcount)) return e.fail(int_only(call));
      return inter(e, {sendbuf, recvbuf}, [&] {
        return v ? PMPI_Gatherv(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, c.data(), d.data(), recvtype, root, comm)
                 : PMPI_Gather(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, root, comm);
      }, [&](MPI_Request* q) {
        return v ? PMPI_Igatherv(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, c.data(), d.data(), recvtype, root, comm, q)
                 : PMPI_Igather(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, root, comm, q);
      });
    }
    if (!(st = root_ok(root, e.size))) return e.fail(st);
    const bool is_root = e.rank == root, in_place = sendbuf == MPI_IN_PLACE;
    if (!is_root && in_place)
      return e.fail(make_error(Errc::in_place, "sendbuf = MPI_IN_PLACE on rank %d, which is not the root %d", e.rank, root));
    if (is_root && recvbuf == MPI_IN_PLACE)
      return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE (only sendbuf may be, at the root)"));
    TypeInfo sti, rti;
    std::size_t sbytes = 0, rbytes = 0;
    if (!in_place && (!(st = e.type(sendtype, "sendtype", &sti)) || !(st = block_bytes(sendcount, sti, "sendcount", &sbytes))))
      return e.fail(st);
    VLayout rv;
    if (is_root) {
      if (!(st = e.type(recvtype, "recvtype", &rti))) return e.fail(st);
      if (v) {
        if (!recvcounts) return e.fail(make_error(Errc::arg, "recvcounts = NULL at the root"));
        if (!displs) return e.fail(make_error(Errc::arg, "displs = NULL at the root"));
        rv = vlayout(*recvcounts, *displs);
        if (!(st = check_counts(rv, rti, "recvcounts", "displs"))) return e.fail(st);
        rbytes = static_cast<std::size_t>(rv.counts[static_cast<std::size_t>(root)]) * rti.size;
      } else if (!(st = block_bytes(recvcount, rti, "recvcount", &rbytes))) {
        return e.fail(st);
      }
      if (!in_place && !(st = same_size(sbytes, rbytes))) return e.fail(st);
    }
    // Every rank knows the size of its own block (equal at every rank for gather).
    const std::size_t bytes = is_root ? rbytes : sbytes;
    if (!v && bytes == 0) return e.nothing(moving_args(Coll::gather, 0, root));
    if (!in_place && !(st = check_buffer(sendbuf, "sendbuf", sendcount, false, sti.true_lb))) return e.fail(st);
    MPI_Count rtotal = 0;
    if (is_root && !v && !(st = blocks_total(e.size, recvcount, rti.size, "communicator size x recvcount", &rtotal)))
      return e.fail(st);
    if (is_root && !(st = check_buffer(recvbuf, "recvbuf", v ? rv.total() : recvcount, false, rti.true_lb)))
      return e.fail(st);
    if (is_root && !in_place && rti.contiguous && sti.contiguous &&
        !(st = v ? disjoint(sendbuf, {{sendbuf, sbytes}}, recvbuf, blocks(recvbuf, rv, rti), " at the root")
                 : disjoint(sendbuf, sbytes, recvbuf, static_cast<std::size_t>(rtotal) * rti.size, " at the root")))
      return e.fail(st);

    coll::CollArgs a;
    a.coll = v ? Coll::gatherv : Coll::gather;
    a.call = call;
    a.root = root;
    a.bytes = bytes;
    Contig s_local, r_local;
    VContig rvc_local;
    Contig& s = e.hold(s_local);
    Contig& r = e.hold(r_local);
    VContig& rvc = e.hold(rvc_local);
    if (is_root) {
      if (v) {
        if (!(st = rvc.recv(recvbuf, rv, recvtype, rti, comm, "recvbuf"))) return e.fail(st);
        a.recvbuf = rvc.base();
        a.recv_kind = rvc.kind();
        a.recv_layout = rvc.layout();
      } else {
        if (!(st = r.recv(recvbuf, rtotal, recvtype, rti, comm))) return e.fail(st);
        a.recvbuf = r.data();
        a.recv_kind = r.kind();
      }
      const std::size_t mine = v ? a.recv_layout.off[static_cast<std::size_t>(root)] : static_cast<std::size_t>(root) * rbytes;
      if (in_place && rti.contiguous) {
        a.sendbuf = coll::at(a.recvbuf, mine);
        a.send_kind = a.recv_kind;
        a.in_place = true;
      } else if (in_place) {
        MPI_Count c = v ? rv.counts[static_cast<std::size_t>(root)] : recvcount;
        MPI_Aint d = v ? rv.displs[static_cast<std::size_t>(root)] : static_cast<MPI_Aint>(root) * recvcount;
        if (!(st = s.send(static_cast<char*>(recvbuf) + d * rti.extent, c, recvtype, rti, comm))) return e.fail(st);
        a.sendbuf = s.data();
        a.send_kind = s.kind();
      }
    }
    if (!in_place) {
      if (!(st = s.send(sendbuf, sendcount, sendtype, sti, comm))) return e.fail(st);
      a.sendbuf = s.data();
      a.send_kind = s.kind();
    }
    if (!is_root) a.recv_kind = a.send_kind;
    if (is_root) {
      if (v && rvc.needs_finish()) e.then([&rvc] { return rvc.finish(); });
      if (!v && r.needs_finish()) e.then([&r] { return r.finish(); });
    }
    return e.run(a);
  });
}

// ---- scatter(v) --------------------------------------------------------------------------------

int scatter(const char* call, bool v, const void* sendbuf, MPI_Count sendcount, const std::vector<MPI_Count>* sendcounts,
            const std::vector<MPI_Aint>* displs, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    if (e.inter) {
      std::vector<int> c_local, d_local;  // MPI reads them until a nonblocking call completes
      std::vector<int>& c = e.hold(c_local);
      std::vector<int>& d = e.hold(d_local);
      if (sendcounts) c.assign(sendcounts->begin(), sendcounts->end());
      if (displs) d.assign(displs->begin(), displs->end());
      if (!fits_int(sendcount) || !fits_int(recvcount)) return e.fail(int_only(call));
      return inter(e, {sendbuf, recvbuf}, [&] {
        return v ? PMPI_Scatterv(sendbuf, c.data(), d.data(), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, root, comm)
                 : PMPI_Scatter(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, root, comm);
      }, [&](MPI_Request* q) {
        return v ? PMPI_Iscatterv(sendbuf, c.data(), d.data(), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, root, comm, q)
                 : PMPI_Iscatter(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype, root, comm, q);
      });
    }
    if (!(st = root_ok(root, e.size))) return e.fail(st);
    const bool is_root = e.rank == root, in_place = recvbuf == MPI_IN_PLACE;
    if (!is_root && in_place)
      return e.fail(make_error(Errc::in_place, "recvbuf = MPI_IN_PLACE on rank %d, which is not the root %d", e.rank, root));
    if (is_root && sendbuf == MPI_IN_PLACE)
      return e.fail(make_error(Errc::in_place, "sendbuf = MPI_IN_PLACE (only recvbuf may be, at the root)"));
    TypeInfo sti, rti;
    std::size_t sbytes = 0, rbytes = 0;
    if (!in_place && (!(st = e.type(recvtype, "recvtype", &rti)) || !(st = block_bytes(recvcount, rti, "recvcount", &rbytes))))
      return e.fail(st);
    VLayout sv;
    if (is_root) {
      if (!(st = e.type(sendtype, "sendtype", &sti))) return e.fail(st);
      if (v) {
        if (!sendcounts) return e.fail(make_error(Errc::arg, "sendcounts = NULL at the root"));
        if (!displs) return e.fail(make_error(Errc::arg, "displs = NULL at the root"));
        sv = vlayout(*sendcounts, *displs);
        if (!(st = check_counts(sv, sti, "sendcounts", "displs"))) return e.fail(st);
        sbytes = static_cast<std::size_t>(sv.counts[static_cast<std::size_t>(root)]) * sti.size;
      } else if (!(st = block_bytes(sendcount, sti, "sendcount", &sbytes))) {
        return e.fail(st);
      }
      if (!in_place && !(st = same_size(sbytes, rbytes))) return e.fail(st);
    }
    const std::size_t bytes = is_root ? sbytes : rbytes;
    if (!v && bytes == 0) return e.nothing(moving_args(Coll::scatter, 0, root));
    MPI_Count stotal = 0;
    if (is_root && !v && !(st = blocks_total(e.size, sendcount, sti.size, "communicator size x sendcount", &stotal)))
      return e.fail(st);
    if (is_root && !(st = check_buffer(sendbuf, "sendbuf", v ? sv.total() : sendcount, false, sti.true_lb)))
      return e.fail(st);
    if (!in_place && !(st = check_buffer(recvbuf, "recvbuf", recvcount, false, rti.true_lb))) return e.fail(st);
    if (is_root && !in_place && rti.contiguous && sti.contiguous &&
        !(st = v ? disjoint(sendbuf, blocks(sendbuf, sv, sti), recvbuf, {{recvbuf, rbytes}}, " at the root")
                 : disjoint(sendbuf, static_cast<std::size_t>(stotal) * sti.size, recvbuf, rbytes, " at the root")))
      return e.fail(st);

    coll::CollArgs a;
    a.coll = v ? Coll::scatterv : Coll::scatter;
    a.call = call;
    a.root = root;
    a.bytes = bytes;
    Contig s_local, r_local;
    VContig svc_local;
    Contig& s = e.hold(s_local);
    Contig& r = e.hold(r_local);
    VContig& svc = e.hold(svc_local);
    if (is_root) {
      if (v) {
        if (!(st = svc.send(sendbuf, sv, sendtype, sti, comm, "sendbuf"))) return e.fail(st);
        a.sendbuf = svc.base();
        a.send_kind = svc.kind();
        a.send_layout = svc.layout();
      } else {
        if (!(st = s.send(sendbuf, stotal, sendtype, sti, comm))) return e.fail(st);
        a.sendbuf = s.data();
        a.send_kind = s.kind();
      }
      if (in_place) {  // my block stays where it is: "receive" it from itself
        const std::size_t mine = v ? a.send_layout.off[static_cast<std::size_t>(root)] : static_cast<std::size_t>(root) * sbytes;
        a.recvbuf = const_cast<void*>(coll::at(a.sendbuf, mine));
        a.recv_kind = a.send_kind;
        a.in_place = true;
      }
    }
    if (!in_place) {
      if (!(st = r.recv(recvbuf, recvcount, recvtype, rti, comm))) return e.fail(st);
      a.recvbuf = r.data();
      a.recv_kind = r.kind();
    }
    if (!is_root) a.send_kind = a.recv_kind;
    if (r.needs_finish()) e.then([&r] { return r.finish(); });
    return e.run(a);
  });
}

// ---- barrier ---------------------------------------------------------------------------------

int barrier(const char* call, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&]() -> int {
    if (int rc; !req && !stream && small::barrier(call, comm, &rc)) return rc;
    Entry e{call, comm, req, stream};
    Status st = e.begin();
    if (!st) return e.fail(st);
    if (e.inter) {
      if (!(st = e.not_streamed("an intercommunicator"))) return e.fail(st);
      note_fallback(call, "intercommunicator");
      if (e.nonblocking()) return e.started_mpi([&](MPI_Request* r) { return PMPI_Ibarrier(comm, r); });
      return PMPI_Barrier(comm);
    }
    coll::CollArgs a;
    a.coll = Coll::barrier;
    a.call = call;
    return e.run(a);
  });
}

}  // namespace duct::capi

// ---- entry points by name (api.hpp) and the C entry points ---------------------------------

namespace duct::capi {

namespace {
// Entries in a count or displacement array: the group the data goes to or
// comes from (the remote group of an intercommunicator).
int array_len(MPI_Comm comm) {
  int n = 0, inter = 0;
  if (comm == MPI_COMM_NULL) return 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  if (inter ? MPI_Comm_remote_size(comm, &n) : MPI_Comm_size(comm, &n)) return 0;
  return n;
}
template <class T>
std::vector<MPI_Count> counts_of(const T* a, MPI_Comm comm) {
  return a ? std::vector<MPI_Count>(a, a + array_len(comm)) : std::vector<MPI_Count>();
}
template <class T>
std::vector<MPI_Aint> displs_of(const T* a, MPI_Comm comm) {
  return a ? std::vector<MPI_Aint>(a, a + array_len(comm)) : std::vector<MPI_Aint>();
}
// NULL arrays stay NULL (reported as such by the checks).
template <class V, class T>
const V* opt(const T* a, const V& v) {
  return a ? &v : nullptr;
}
}  // namespace

int allgather(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return all_blocks(call, Coll::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req, stream);
}
int alltoall(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return all_blocks(call, Coll::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req, stream);
}
template <class C, class D>
int allgatherv_arrays(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const C* recvcounts, const D* displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&] {
    auto c = counts_of(recvcounts, comm);
    auto d = displs_of(displs, comm);
    return allgatherv(call, sendbuf, sendcount, sendtype, recvbuf, opt(recvcounts, c), opt(displs, d), recvtype, comm, req, stream);
  });
}
template <class C, class D>
int alltoallv_arrays(const char* call, const void* sendbuf, const C* sendcounts, const D* sdispls,
                     MPI_Datatype sendtype, void* recvbuf, const C* recvcounts, const D* rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&] {
    auto sc = counts_of(sendcounts, comm);
    auto sd = displs_of(sdispls, comm);
    auto rc = counts_of(recvcounts, comm);
    auto rd = displs_of(rdispls, comm);
    return alltoallv(call, sendbuf, opt(sendcounts, sc), opt(sdispls, sd), sendtype, recvbuf, opt(recvcounts, rc),
                     opt(rdispls, rd), recvtype, comm, req, stream);
  });
}
// Gather and scatter of equal blocks try the small-call path here, before
// the general function's arguments for the v-forms are laid out (about 70
// instructions of a 2-rank 8-byte scatter, docs/benchmarks/2026-11-26-rooted-small.md).
int gather_blocks(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  if (int rc; !req && !stream && small_taken(call, comm, &rc, [&](int* r) {
        return small::gather(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
      }))
    return rc;
  return gather(call, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root, comm, req, stream);
}
template <class C, class D>
int gatherv_arrays(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const C* recvcounts, const D* displs, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&] {
    auto c = counts_of(recvcounts, comm);
    auto d = displs_of(displs, comm);
    return gather(call, true, sendbuf, sendcount, sendtype, recvbuf, 0, opt(recvcounts, c), opt(displs, d), recvtype,
                  root, comm, req, stream);
  });
}
int scatter_blocks(const char* call, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  if (int rc; !req && !stream && small_taken(call, comm, &rc, [&](int* r) {
        return small::scatter(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
      }))
    return rc;
  return scatter(call, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm, req, stream);
}
template <class C, class D>
int scatterv_arrays(const char* call, const void* sendbuf, const C* sendcounts, const D* displs,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request* req, const StreamArg* stream) noexcept {
  return guarded(call, comm, [&] {
    auto c = counts_of(sendcounts, comm);
    auto d = displs_of(displs, comm);
    return scatter(call, true, sendbuf, 0, opt(sendcounts, c), opt(displs, d), sendtype, recvbuf, recvcount, recvtype,
                   root, comm, req, stream);
  });
}

// The int and the large-count array forms.
template int allgatherv_arrays<int, int>(const char*, const void*, MPI_Count, MPI_Datatype, void*, const int*,
                                         const int*, MPI_Datatype, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int allgatherv_arrays<MPI_Count, MPI_Aint>(const char*, const void*, MPI_Count, MPI_Datatype, void*,
                                                    const MPI_Count*, const MPI_Aint*, MPI_Datatype, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int alltoallv_arrays<int, int>(const char*, const void*, const int*, const int*, MPI_Datatype, void*,
                                        const int*, const int*, MPI_Datatype, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int alltoallv_arrays<MPI_Count, MPI_Aint>(const char*, const void*, const MPI_Count*, const MPI_Aint*,
                                                   MPI_Datatype, void*, const MPI_Count*, const MPI_Aint*,
                                                   MPI_Datatype, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int gatherv_arrays<int, int>(const char*, const void*, MPI_Count, MPI_Datatype, void*, const int*, const int*,
                                      MPI_Datatype, int, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int gatherv_arrays<MPI_Count, MPI_Aint>(const char*, const void*, MPI_Count, MPI_Datatype, void*,
                                                 const MPI_Count*, const MPI_Aint*, MPI_Datatype, int, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int scatterv_arrays<int, int>(const char*, const void*, const int*, const int*, MPI_Datatype, void*,
                                       MPI_Count, MPI_Datatype, int, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;
template int scatterv_arrays<MPI_Count, MPI_Aint>(const char*, const void*, const MPI_Count*, const MPI_Aint*,
                                                  MPI_Datatype, void*, MPI_Count, MPI_Datatype, int, MPI_Comm, MPI_Request*, const StreamArg*) noexcept;

}  // namespace duct::capi

using namespace duct::capi;

extern "C" int DUCT_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast("DUCT_Bcast", buffer, count, datatype, root, comm);
}
extern "C" int DUCT_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast("DUCT_Bcast_c", buffer, count, datatype, root, comm);
}
extern "C" int DUCT_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather("DUCT_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int DUCT_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather("DUCT_Allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int DUCT_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall("DUCT_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int DUCT_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall("DUCT_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int DUCT_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv_arrays("DUCT_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
}
extern "C" int DUCT_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                 MPI_Comm comm) {
  return allgatherv_arrays("DUCT_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
}
extern "C" int DUCT_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return alltoallv_arrays("DUCT_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
}
extern "C" int DUCT_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv_arrays("DUCT_Alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
}
extern "C" int DUCT_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gather_blocks("DUCT_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int DUCT_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gather_blocks("DUCT_Gather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int DUCT_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gatherv_arrays("DUCT_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}
extern "C" int DUCT_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                              MPI_Comm comm) {
  return gatherv_arrays("DUCT_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm);
}
extern "C" int DUCT_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatter_blocks("DUCT_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int DUCT_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatter_blocks("DUCT_Scatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int DUCT_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatterv_arrays("DUCT_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}
extern "C" int DUCT_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                               MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               int root, MPI_Comm comm) {
  return scatterv_arrays("DUCT_Scatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}
extern "C" int DUCT_Barrier(MPI_Comm comm) { return barrier("DUCT_Barrier", comm); }

extern "C" int DUCT_Tune(const char* rules) {
  duct::Status st = duct::capi::check_mpi_ready("DUCT_Tune");
  if (st) st = duct::coll::set_rules(rules ? rules : "");
  return st ? MPI_SUCCESS : duct::capi::raise(MPI_COMM_NULL, "DUCT_Tune", st);
}

// ---- nonblocking forms ----------------------------------------------------------------
extern "C" int DUCT_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ibcast", comm, request);
  return bcast("DUCT_Ibcast", buffer, count, datatype, root, comm, request);
}
extern "C" int DUCT_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ibcast_c", comm, request);
  return bcast("DUCT_Ibcast_c", buffer, count, datatype, root, comm, request);
}
extern "C" int DUCT_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iallgather", comm, request);
  return allgather("DUCT_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
extern "C" int DUCT_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iallgather_c", comm, request);
  return allgather("DUCT_Iallgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
extern "C" int DUCT_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ialltoall", comm, request);
  return alltoall("DUCT_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
extern "C" int DUCT_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ialltoall_c", comm, request);
  return alltoall("DUCT_Ialltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
extern "C" int DUCT_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iallgatherv", comm, request);
  return allgatherv_arrays("DUCT_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, request);
}
extern "C" int DUCT_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iallgatherv_c", comm, request);
  return allgatherv_arrays("DUCT_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, request);
}
extern "C" int DUCT_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ialltoallv", comm, request);
  return alltoallv_arrays("DUCT_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request);
}
extern "C" int DUCT_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ialltoallv_c", comm, request);
  return alltoallv_arrays("DUCT_Ialltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, request);
}
extern "C" int DUCT_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Igather", comm, request);
  return gather_blocks("DUCT_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
extern "C" int DUCT_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Igather_c", comm, request);
  return gather_blocks("DUCT_Igather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       request);
}
extern "C" int DUCT_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Igatherv", comm, request);
  return gatherv_arrays("DUCT_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, request);
}
extern "C" int DUCT_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Igatherv_c", comm, request);
  return gatherv_arrays("DUCT_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, request);
}
extern "C" int DUCT_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iscatter", comm, request);
  return scatter_blocks("DUCT_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
}
extern "C" int DUCT_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iscatter_c", comm, request);
  return scatter_blocks("DUCT_Iscatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
}
extern "C" int DUCT_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iscatterv", comm, request);
  return scatterv_arrays("DUCT_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, request);
}
extern "C" int DUCT_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Iscatterv_c", comm, request);
  return scatterv_arrays("DUCT_Iscatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, request);
}
extern "C" int DUCT_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  DUCT_NEED_REQUEST("DUCT_Ibarrier", comm, request);
  return barrier("DUCT_Ibarrier", comm, request);
}
