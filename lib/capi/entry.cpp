#include "capi/entry.hpp"

#include <climits>
#include <cstring>

#include "capi/requests.hpp"
#include "coll/wait.hpp"
#include "coll/stream.hpp"
#include "memory/cuda.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace duct::capi {

Status Entry::begin() {
  rt = coll::Runtime::ready();  // up: MPI is initialized and not finalized
  // Fast path: the communicator of the last call, known valid (a freed
  // communicator's context is forgotten) and an intracommunicator; its rank
  // and size are the context's. Saves three MPI calls per call. (A context
  // whose setup failed may not know them: the slow path.)
  if (rt && !rt->app_threaded()) {
    if (coll::Context* c = rt->last_context(comm); c && c->failed.is_ok()) {
      ctx_ = c;
      rank = c->rank();
      size = c->size();
      return Status::ok();
    }
  }
  if (!rt) DUCT_TRY(check_mpi_ready(call));
  DUCT_TRY(check_comm(comm, &inter));
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);  // the local group (count arrays are sized by it)
  return Status::ok();
}

int Entry::finish_blocking() {
  for (int i = 0; i < nthen_; ++i) {
    Status st = then_[i]();
    if (!st) return fail(st);
  }
  return MPI_SUCCESS;
}

Status Entry::context(coll::Context** ctx) {
  if (ctx_) {
    *ctx = ctx_;
    return Status::ok();
  }
  if (!rt) DUCT_TRY(coll::Runtime::get(&rt));
  // Hook duct into the MPI library's progress loop (once): see
  // coll::progress_outside.
  (void)mpi_wait_progresses_duct();
  std::unique_lock<std::recursive_mutex> lock;
  if (rt->threaded()) lock = std::unique_lock<std::recursive_mutex>(rt->mutex());
  Status st = rt->context(comm, ctx, &lock);
  return st ? st : st.context("setting up the communicator");
}

int Entry::start(const coll::CollArgs* a, MPI_Request mpi) {
  Status st;
  coll::Context* ctx = nullptr;
  // A call with nothing to move needs the context only for DUCT_CHECK's comparison.
  if (a && (!a->nothing || (size > 1 && config::get().check)) && !(st = context(&ctx))) return fail(st);
  // A request handed to the MPI library may outlive its communicator
  // (MPI_Comm_free before MPI_Wait): watch it (a context's communicator is
  // watched by the context).
  if (!a && !(st = coll::watch_comm(comm))) return fail(st);
  auto* p = new coll::Pending;
  p->call = call;
  p->comm = comm;
  for (int i = 0; i < nthen_; ++i) p->after.push_back(std::move(then_[i]));
  p->keep = std::move(keep_);
  return hand_out(p, req, [&]() -> Status {
    if (!a) {
      coll::start_mpi(p, mpi);
      return Status::ok();
    }
    if (!ctx) {
      coll::start_done(p);
      return Status::ok();
    }
    return coll::start_checked(*ctx, *a, p);
  });
}

Status Entry::not_streamed(const std::string& why) const {
  if (!stream) return Status::ok();
  return make_error(Errc::not_supported,
                    "%s: the stream-ordered forms move contiguous data of predefined datatypes and ops on "
                    "intracommunicators (use the nonblocking form)", why.c_str());
}

Status Entry::type(MPI_Datatype& t, const char* name, TypeInfo* out) {
  DUCT_TRY(type_info(t, name, out));
  if (out->contiguous) return Status::ok();
  DUCT_TRY(not_streamed(std::string(name) + " " + type_text(t) + " is not contiguous"));
  if (!req) return Status::ok();
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  if (int rc = MPI_Type_dup(t, &dup); rc != MPI_SUCCESS)
    return mpi_error(rc, "MPI_Type_dup").context(std::string("keeping ") + name + " for the request");
  keep_.push_back(std::shared_ptr<void>(new MPI_Datatype(dup), [](void* p) {
    auto* held = static_cast<MPI_Datatype*>(p);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Type_free(held);
    delete held;
  }));
  t = dup;
  return Status::ok();
}

int Entry::enqueue(const coll::CollArgs& a) {
  // Nothing may remain to do on the host after the data moved: the callers
  // refuse packed datatypes and staged buffers before getting here.
  if (nthen_ > 0)
    return fail(make_error(Errc::internal, "a stream-ordered call with host work after it (unpacking or staging)"));
  // The communicator's first duct call sets up its context (allocations,
  // registrations), possibly while the stream is being captured.
  struct Relaxed {
    int old = memory::cuda::relax_capture_mode();
    ~Relaxed() { memory::cuda::restore_capture_mode(old); }
  } relaxed;
  coll::Context* ctx = nullptr;
  Status st = context(&ctx);
  if (!st) return fail(st);
  st = coll::start_stream(*ctx, comm, a, stream->stream);
  return st ? MPI_SUCCESS : fail(st);
}

int Entry::run(const coll::CollArgs& a) {
  if (stream) return enqueue(a);
  if (req) return start(&a, MPI_REQUEST_NULL);
  coll::Context* ctx = nullptr;
  Status st = context(&ctx);
  if (!st) return fail(st);
  st = coll::run_collective(*ctx, a);
  if (!st) return fail(st);
  return nthen_ ? finish_blocking() : MPI_SUCCESS;
}

int Entry::nothing(coll::CollArgs a) {
  a.call = call;
  a.nothing = true;
  if (stream) return finish_blocking();  // nothing to order on the stream
  if (req) return start(&a, MPI_REQUEST_NULL);  // compared there under DUCT_CHECK
  if (size == 1 || !config::get().check) return finish_blocking();
  return run(a);
}

int Entry::handed_to_mpi(int rc, MPI_Request r) {
  if (stream) return fail(make_error(Errc::internal, "a stream-ordered call handed to the MPI library"));
  if (rc != MPI_SUCCESS) return rc;
  if (nthen_ == 0 && keep_.empty()) {
    *req = r;  // nothing to do after: the MPI library's own request
    return MPI_SUCCESS;
  }
  return start(nullptr, r);
}

Status type_info(MPI_Datatype t, const char* name, TypeInfo* out) {
  // The predefined types of duct's own table: no MPI call (fast path).
  DType d;
  if (lookup_dtype(t, &d)) {
    // The pair types with padding (MPI_DOUBLE_INT, MPI_SHORT_INT, ...) are
    // not contiguous: their data is less than their extent, as the MPI
    // library's own answers say; they are packed like a derived type with
    // the same type signature would be.
    out->size = elem_data_size(d.elem);
    out->extent = static_cast<MPI_Aint>(elem_size(d.elem));
    out->true_lb = 0;
    out->true_extent = static_cast<MPI_Aint>(elem_true_extent(d.elem));
    out->contiguous = out->size == elem_size(d.elem);
    return Status::ok();
  }
  DUCT_TRY(check_datatype(t, name));  // null or uncommitted
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  if (MPI_Type_size(t, &size) != MPI_SUCCESS || MPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS)
    return make_error(Errc::type, "%s is not a valid datatype", name);
  out->size = static_cast<std::size_t>(size);
  out->extent = extent;
  out->true_lb = tlb;
  out->true_extent = textent;
  out->contiguous = tlb == 0 && textent == size && extent == size;
  return Status::ok();
}

namespace {

// The bytes `count` elements of a datatype touch, from the buffer pointer.
void span_of(MPI_Count count, const TypeInfo& ti, MPI_Aint* lo, std::size_t* len) {
  *lo = ti.true_lb;
  *len = count == 0 ? 0 : static_cast<std::size_t>((count - 1) * ti.extent + ti.true_extent);
}

// MPI_Pack / MPI_Unpack take int counts: go in chunks.
Status pack_loop(const void* in, MPI_Count count, MPI_Datatype t, const TypeInfo& ti, char* out, std::size_t outsize,
                 MPI_Comm comm) {
  int pos = 0;
  MPI_Count done = 0;
  while (done < count) {
    int n = static_cast<int>(std::min<MPI_Count>(count - done, INT_MAX / std::max<std::size_t>(ti.size, 1)));
    std::size_t chunk = static_cast<std::size_t>(n) * ti.size;
    pos = 0;
    int rc = MPI_Pack(static_cast<const char*>(in) + done * ti.extent, n, t, out, static_cast<int>(std::min<std::size_t>(chunk, outsize)), &pos, comm);
    if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Pack").context("packing the datatype");
    out += chunk;
    outsize -= chunk;
    done += n;
  }
  return Status::ok();
}

Status unpack_loop(const char* in, std::size_t insize, void* out, MPI_Count count, MPI_Datatype t, const TypeInfo& ti,
                   MPI_Comm comm) {
  MPI_Count done = 0;
  while (done < count) {
    int n = static_cast<int>(std::min<MPI_Count>(count - done, INT_MAX / std::max<std::size_t>(ti.size, 1)));
    std::size_t chunk = static_cast<std::size_t>(n) * ti.size;
    int pos = 0;
    int rc = MPI_Unpack(in, static_cast<int>(std::min<std::size_t>(chunk, insize)), &pos,
                        static_cast<char*>(out) + done * ti.extent, n, t, comm);
    if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Unpack").context("unpacking the datatype");
    in += chunk;
    insize -= chunk;
    done += n;
  }
  return Status::ok();
}

}  // namespace

Status Contig::send(const void* buf, MPI_Count count, MPI_Datatype t, const TypeInfo& ti, MPI_Comm comm,
                    const char* name) {
  bytes_ = static_cast<std::size_t>(count) * ti.size;
  if (ti.contiguous || count == 0) {
    ptr_ = const_cast<void*>(buf);
    DUCT_TRY(buffer_kind(buf, name, bytes_, &kind_));
    return Status::ok();
  }
  memory::MemKind k;
  DUCT_TRY(buffer_kind(buf, name, bytes_, &k, ti.true_lb));
  packed_ = true;
  packed_buf_.resize(bytes_);
  MPI_Aint lo;
  std::size_t len;
  span_of(count, ti, &lo, &len);
  const void* src = buf;
  std::vector<char> staged;
  if (k == memory::MemKind::device) {  // stage the datatype's span to host, pack from there
    staged.resize(len);
    DUCT_TRY(memory::cuda::copy(staged.data(), static_cast<const char*>(buf) + lo, len));
    src = staged.data() - lo;
  }
  DUCT_TRY(pack_loop(src, count, t, ti, packed_buf_.data(), bytes_, comm));
  ptr_ = packed_buf_.data();
  kind_ = memory::MemKind::host;
  return Status::ok();
}

Status Contig::recv(void* buf, MPI_Count count, MPI_Datatype t, const TypeInfo& ti, [[maybe_unused]] MPI_Comm comm,
                    const char* name) {
  name_ = name;
  bytes_ = static_cast<std::size_t>(count) * ti.size;
  if (ti.contiguous || count == 0) {
    ptr_ = buf;
    return buffer_kind(buf, name, bytes_, &kind_);
  }
  packed_ = true;
  packed_buf_.resize(bytes_);
  ptr_ = packed_buf_.data();
  kind_ = memory::MemKind::host;
  user_ = buf;
  count_ = count;
  type_ = t;
  ti_ = ti;
  return Status::ok();
}

// Receive sides unpack on MPI_COMM_SELF: the user's communicator may be
// freed before a nonblocking call completes (MPI allows it), and duct's
// packed bytes are this machine's representation whatever the
// communicator (duct moves them between ranks as bytes: homogeneous only).
Status Contig::finish() {
  if (!packed_ || !user_) return Status::ok();
  memory::MemKind k;
  DUCT_TRY(buffer_kind(user_, name_, bytes_, &k, ti_.true_lb));
  if (k == memory::MemKind::host) return unpack_loop(packed_buf_.data(), bytes_, user_, count_, type_, ti_, MPI_COMM_SELF);
  // Device: stage the span (copy in, so bytes the datatype skips survive),
  // unpack on host, copy back.
  MPI_Aint lo;
  std::size_t len;
  span_of(count_, ti_, &lo, &len);
  std::vector<char> staged(len);
  DUCT_TRY(memory::cuda::copy(staged.data(), static_cast<char*>(user_) + lo, len));
  DUCT_TRY(unpack_loop(packed_buf_.data(), bytes_, staged.data() - lo, count_, type_, ti_, MPI_COMM_SELF));
  return memory::cuda::copy(static_cast<char*>(user_) + lo, staged.data(), len);
}

Status check_counts(const VLayout& v, const TypeInfo& ti, const char* counts_name, const char* displs_name) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < v.counts.size(); ++i) {
    const MPI_Count c = v.counts[i];
    if (c < 0) return make_error(Errc::count, "%s[%zu] = %lld is negative", counts_name, i, static_cast<long long>(c));
    if (c == 0) continue;
    // The block's bytes, where it starts (displs[i] x extent) and where its
    // data ends must all be addresses: no wrap-around.
    std::size_t b = 0;
    MPI_Aint start = 0, reach = 0, last = 0;
    if (!mul_bytes(c, ti.size, counts_name, &b) || __builtin_add_overflow(total, b, &total) || total > kMaxSpan)
      return make_error(Errc::overflow, "%s[%zu] = %lld: the blocks' total bytes overflow the address space",
                        counts_name, i, static_cast<long long>(c));
    auto beyond = [](MPI_Aint x) { return x > static_cast<MPI_Aint>(kMaxSpan) || x < -static_cast<MPI_Aint>(kMaxSpan); };
    if (__builtin_mul_overflow(v.displs[i], ti.extent, &start) || __builtin_mul_overflow(c - 1, ti.extent, &reach) ||
        __builtin_add_overflow(start, reach, &last) || __builtin_add_overflow(last, ti.true_lb + ti.true_extent, &last) ||
        beyond(start) || beyond(last))
      return make_error(Errc::overflow,
                        "%s[%zu] = %lld with %s[%zu] = %lld (extent %ld bytes) overflows the address space",
                        displs_name, i, static_cast<long long>(v.displs[i]), counts_name, i,
                        static_cast<long long>(c), static_cast<long>(ti.extent));
  }
  return Status::ok();
}

Status VContig::setup(void* buf, const VLayout& v, const TypeInfo& ti, const char* name) {
  const std::size_t n = v.counts.size();
  layout_.off.assign(n, 0);
  layout_.len.assign(n, 0);
  if (ti.contiguous) {
    // Byte offsets relative to the lowest block start (0 when none is negative).
    MPI_Aint lowest = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (v.counts[i] > 0) lowest = std::min(lowest, v.displs[i] * ti.extent);
    for (std::size_t i = 0; i < n; ++i) {
      layout_.len[i] = static_cast<std::size_t>(v.counts[i]) * ti.size;
      // (Empty blocks may carry any displacement: they are never addressed.)
      layout_.off[i] = v.counts[i] > 0 ? static_cast<std::size_t>(v.displs[i] * ti.extent - lowest) : 0;
    }
    base_ = static_cast<char*>(buf) + lowest;
    return buffer_kind(base_, name, layout_.total(), &kind_);
  }
  std::size_t pos = 0;
  for (std::size_t i = 0; i < n; ++i) {
    layout_.off[i] = pos;
    layout_.len[i] = static_cast<std::size_t>(v.counts[i]) * ti.size;
    pos += layout_.len[i];
  }
  packed_ = true;
  packed_buf_.resize(pos);
  base_ = packed_buf_.data();
  kind_ = memory::MemKind::host;
  return Status::ok();
}

Status VContig::send(const void* buf, const VLayout& v, MPI_Datatype t, const TypeInfo& ti, MPI_Comm comm,
                     const char* name) {
  DUCT_TRY(setup(const_cast<void*>(buf), v, ti, name));
  if (!packed_) return Status::ok();
  for (std::size_t i = 0; i < v.counts.size(); ++i) {
    if (v.counts[i] == 0) continue;
    Contig block;
    DUCT_TRY(block.send(static_cast<const char*>(buf) + v.displs[i] * ti.extent, v.counts[i], t, ti, comm));
    DUCT_TRY(coll::copy_local(packed_buf_.data() + layout_.off[i], memory::MemKind::host, block.data(), block.kind(),
                              layout_.len[i]));
  }
  return Status::ok();
}

Status VContig::recv(void* buf, const VLayout& v, MPI_Datatype t, const TypeInfo& ti, [[maybe_unused]] MPI_Comm comm,
                      const char* name) {
  DUCT_TRY(setup(buf, v, ti, name));
  if (packed_) {
    user_ = buf;
    v_ = v;
    type_ = t;
    ti_ = ti;
  }
  return Status::ok();
}

Status VContig::finish() {
  if (!packed_ || !user_) return Status::ok();
  for (std::size_t i = 0; i < v_.counts.size(); ++i) {
    if (v_.counts[i] == 0) continue;
    Contig block;
    DUCT_TRY(block.recv(static_cast<char*>(user_) + v_.displs[i] * ti_.extent, v_.counts[i], type_, ti_, MPI_COMM_SELF));
    std::memcpy(block.data(), packed_buf_.data() + layout_.off[i], layout_.len[i]);
    DUCT_TRY(block.finish());
  }
  return Status::ok();
}

}  // namespace duct::capi
