// duct capi: what every public entry point shares.
//
// One path per call: Entry::begin checks MPI and the communicator, the
// collective's own checks follow, CollArgs is filled, Entry::run sets up the
// context and runs it through coll::run_collective; Entry::fail raises an
// error through the communicator's handler. guarded() keeps exceptions out
// of the C API.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capi/api.hpp"
#include "capi/checks.hpp"
#include "capi/errors.hpp"
#include "coll/collectives.hpp"

namespace duct::capi {

struct TypeInfo;

// One call of a collective, blocking, nonblocking (`req` set: the DUCT_I*
// forms) or stream-ordered (`stream` set: the DUCT_*_stream forms). The collective's code is the same for both: what must
// happen after the data arrived (unpacking, staging out) is given to then()
// before run(), and objects it needs are made with hold().
struct Entry {
  Entry(const char* call_, MPI_Comm comm_, MPI_Request* req_ = nullptr, const StreamArg* stream_ = nullptr)
      : call(call_), comm(comm_), req(req_), stream(stream_) {}
  const char* call;
  MPI_Comm comm;
  MPI_Request* req;  // nonblocking: the request handed back
  const StreamArg* stream;  // stream-ordered: enqueued on this stream
  coll::Runtime* rt = nullptr;
  bool inter = false;
  int rank = 0, size = 1;

  // MPI is up, comm is a valid communicator; sets rank, size, inter. A
  // nonblocking call also needs a request pointer.
  Status begin();
  int fail(const Status& st) const { return raise(st.code() == Errc::comm && comm == MPI_COMM_NULL ? MPI_COMM_NULL : comm, call, st); }
  bool nonblocking() const noexcept { return req != nullptr; }
  bool streamed() const noexcept { return stream != nullptr; }
  // A stream-ordered call cannot take a path that reads or writes the
  // caller's data now (packing a derived datatype, staging for the MPI
  // library): the data is ready only when the stream reaches the call.
  // Error (naming `why` the call would take that path) when streamed, else ok.
  Status not_streamed(const std::string& why) const;
  // type_info(), and for a stream-ordered call a refusal of datatypes duct
  // would pack (not contiguous). A nonblocking call keeps a datatype it
  // packs past the call (the receive side is unpacked at completion), and
  // MPI lets the application free it meanwhile (MPI-4.0 §5.1.10: "Any
  // communication that is currently using this datatype will complete
  // normally"): `t` is then replaced by a duplicate (MPI_Type_dup) that
  // lives until the request completes. Contiguous datatypes are used for
  // their size at the call only, and the MPI library keeps what it is given.
  Status type(MPI_Datatype& t, const char* name, TypeInfo* out);
  // `local` for a blocking call; for a nonblocking one a heap object that
  // lives until the request completes.
  template <class T>
  T& hold(T& local) {
    if (!req) return local;
    auto p = std::make_shared<T>();
    keep_.push_back(p);
    return *p;
  }
  // Run `f` after the collective succeeded (blocking: before run returns;
  // nonblocking: when the request completes). At most two per call.
  void then(std::function<Status()> f) { then_[nthen_++] = std::move(f); }
  // The context of comm, then the collective (blocking), or its start.
  int run(const coll::CollArgs& a);
  // A call with nothing to move (count 0) returns at once (a nonblocking
  // one with a complete request), except that under DUCT_CHECK it is still
  // compared across ranks (a count of 0 on one rank and 1000 on another is
  // a mismatch, not a hang).
  int nothing(coll::CollArgs a);
  // Nonblocking, handed to the MPI library: `start(MPI_Request* r)` makes
  // its PMPI_I* call and returns its code (then() work runs when *r
  // completes). The request is read after the call has returned: passing
  // `PMPI_Ixxx(..., &r)` and `r` as two arguments of one call reads `r` in
  // an unspecified order (C++ [expr.call]), and gcc read it first, handing
  // the application MPI_REQUEST_NULL (issue 29).
  template <class F>
  int started_mpi(F&& start) {
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = start(&r);
    return handed_to_mpi(rc, r);
  }

 private:
  int handed_to_mpi(int rc, MPI_Request r);
  int finish_blocking();
  // The context of comm (created collectively on first use), under the
  // runtime lock when the application is threaded.
  Status context(coll::Context** ctx);
  int start(const coll::CollArgs* a, MPI_Request mpi);
  int enqueue(const coll::CollArgs& a);
  coll::Context* ctx_ = nullptr;  // set by begin() when the communicator's context is known
  std::function<Status()> then_[2];
  int nthen_ = 0;
  std::vector<std::shared_ptr<void>> keep_;
};

// A nonblocking call given nowhere to put its request.
inline int null_request(const char* call, MPI_Comm comm) {
  return raise(comm, call, make_error(Errc::arg, "request = NULL"));
}
#define DUCT_NEED_REQUEST(call, comm, request) \
  if (!(request)) return ::duct::capi::null_request(call, comm)

template <class F>
int guarded(const char* call, MPI_Comm comm, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return raise(comm, call, make_error(Errc::no_memory, "out of host memory"));
  } catch (const std::exception& e) {
    return raise(comm, call, make_error(Errc::internal, "unexpected exception: %s", e.what()));
  } catch (...) {
    return raise(comm, call, make_error(Errc::internal, "unexpected exception"));
  }
}

// The small-call path (capi/small.hpp) under guarded()'s rules: `try_small(int* rc)`
// returns whether it took the call. True when it did (*rc: its result) or
// threw (*rc: the error guarded() raised); false: the general path runs.
template <class F>
bool small_taken(const char* call, MPI_Comm comm, int* rc, F&& try_small) noexcept {
  bool taken = true;
  *rc = guarded(call, comm, [&] {
    int out = MPI_SUCCESS;
    taken = try_small(&out);
    return out;
  });
  return taken;
}

// What duct needs to know of a datatype used to move data.
struct TypeInfo {
  std::size_t size = 0;     // bytes of data per element (MPI_Type_size)
  MPI_Aint extent = 0;      // stride between elements
  MPI_Aint true_lb = 0, true_extent = 0;
  bool contiguous = false;  // the data of n elements is n*size bytes at the buffer
};
Status type_info(MPI_Datatype t, const char* name, TypeInfo* out);

// A data-movement argument made contiguous: `count` elements of a datatype
// at `buf` (host or device). Contiguous datatypes are used where they are;
// others are packed into (and unpacked from) host memory with MPI_Pack /
// MPI_Unpack, so that every rank takes duct's path whatever datatypes the
// ranks combine (MPI only asks that type signatures match).
class Contig {
 public:
  // A send side: `data()` holds the bytes to send after this.
  // `name` is the argument's name in messages.
  Status send(const void* buf, MPI_Count count, MPI_Datatype t, const TypeInfo& ti, MPI_Comm comm,
              const char* name = "sendbuf");
  // A receive side of `count` elements: receive into data(), then finish().
  Status recv(void* buf, MPI_Count count, MPI_Datatype t, const TypeInfo& ti, MPI_Comm comm,
              const char* name = "recvbuf");
  // Unpack a receive side into the user's buffer (no-op when contiguous).
  Status finish();
  // Whether finish() has anything to do (a packed receive side).
  bool needs_finish() const noexcept { return packed_ && user_; }
  const void* data() const { return ptr_; }
  void* data() { return ptr_; }
  memory::MemKind kind() const { return kind_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  memory::MemKind kind_ = memory::MemKind::host;
  std::size_t bytes_ = 0;
  bool packed_ = false;
  std::vector<char> packed_buf_;
  // for unpacking
  void* user_ = nullptr;
  MPI_Count count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;  // alive until finish(): Entry::type
  TypeInfo ti_;
  const char* name_ = "recvbuf";
};

// A v-argument (counts and displacements in elements / extents) as a byte
// layout over a contiguous base. Negative displacements are allowed: the
// base moves down to the lowest block.
struct VLayout {
  std::vector<MPI_Count> counts;
  std::vector<MPI_Aint> displs;
  // Sum of the counts, saturating (checked counts are >= 0).
  MPI_Count total() const {
    MPI_Count t = 0;
    for (MPI_Count c : counts)
      if (__builtin_add_overflow(t, c, &t)) return INT64_MAX;
    return t;
  }
};
// Counts >= 0 (Errc::count); every block's bytes and byte range, and their
// total, within the address space (Errc::overflow).
Status check_counts(const VLayout& v, const TypeInfo& ti, const char* counts_name, const char* displs_name);

// A v-argument made contiguous: a base pointer and a byte layout of the n
// blocks over it. Contiguous datatypes: the user's buffer, rebased to the
// lowest block (negative displacements are legal). Others: a packed host
// buffer with the blocks one after the other.
class VContig {
 public:
  Status send(const void* buf, const VLayout& v, MPI_Datatype t, const TypeInfo& ti, MPI_Comm comm, const char* name);
  Status recv(void* buf, const VLayout& v, MPI_Datatype t, const TypeInfo& ti, MPI_Comm comm, const char* name);
  Status finish();  // unpack a receive side (no-op when contiguous)
  bool needs_finish() const noexcept { return packed_ && user_; }
  void* base() const { return base_; }
  memory::MemKind kind() const { return kind_; }
  const coll::Layout& layout() const { return layout_; }

 private:
  Status setup(void* buf, const VLayout& v, const TypeInfo& ti, const char* name);
  void* base_ = nullptr;
  memory::MemKind kind_ = memory::MemKind::host;
  coll::Layout layout_;
  bool packed_ = false;
  std::vector<char> packed_buf_;
  Contig staging_;  // unused when contiguous
  // for unpacking
  void* user_ = nullptr;
  VLayout v_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;  // alive until finish(): Entry::type
  TypeInfo ti_;
};

}  // namespace duct::capi
