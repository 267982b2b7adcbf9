#include "capi/checks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "coll/context.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "memory/probe.hpp"

namespace duct::capi {

std::string op_text(MPI_Op op) {
  struct Row {
    MPI_Op op;
    const char* name;
  };
  const Row rows[] = {{MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},     {MPI_MIN, "MPI_MIN"},
                      {MPI_MAX, "MPI_MAX"},       {MPI_LAND, "MPI_LAND"},     {MPI_LOR, "MPI_LOR"},
                      {MPI_LXOR, "MPI_LXOR"},     {MPI_BAND, "MPI_BAND"},     {MPI_BOR, "MPI_BOR"},
                      {MPI_BXOR, "MPI_BXOR"},     {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
                      {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}, {MPI_OP_NULL, "MPI_OP_NULL"}};
  for (const Row& r : rows)
    if (r.op == op) return r.name;
  return "a user-defined op";
}

std::string type_text(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  DType d;
  if (lookup_dtype(t, &d)) return d.name;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  if (MPI_Type_get_name(t, name, &len) == MPI_SUCCESS && len > 0) return std::string(name, static_cast<size_t>(len));
  return "a derived datatype";
}

Status check_mpi_ready(const char*) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init) return make_error(Errc::arg, "called before MPI_Init");
  if (fin) return make_error(Errc::arg, "called after MPI_Finalize");
  return Status::ok();
}

Status check_comm(MPI_Comm comm, bool* inter) {
  if (comm == MPI_COMM_NULL) return make_error(Errc::comm, "comm = MPI_COMM_NULL");
  int flag = 0;
  if (MPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
    return make_error(Errc::comm, "comm is not a valid communicator");
  *inter = flag != 0;
  return Status::ok();
}

Status check_count(MPI_Count count, const char* name) {
  if (count < 0) return make_error(Errc::count, "%s = %lld is negative", name, static_cast<long long>(count));
  return Status::ok();
}

namespace {
// MPI has no "is this datatype committed?" query, but MPI_Pack of zero
// elements refuses an uncommitted type with MPI_ERR_TYPE (Open MPI, MPICH).
// It needs a communicator whose error handler returns: a private duplicate
// of MPI_COMM_SELF, freed at finalize.
std::mutex g_probe_mutex;
MPI_Comm g_probe_comm = MPI_COMM_NULL;

MPI_Comm probe_comm() {
  std::lock_guard<std::mutex> lock(g_probe_mutex);
  if (g_probe_comm != MPI_COMM_NULL) return g_probe_comm;
  coll::Runtime* rt = nullptr;
  if (!coll::Runtime::get(&rt)) return MPI_COMM_NULL;
  MPI_Comm c = MPI_COMM_NULL;
  if (MPI_Comm_dup(MPI_COMM_SELF, &c) != MPI_SUCCESS) return MPI_COMM_NULL;
  if (MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
    MPI_Comm_free(&c);
    return MPI_COMM_NULL;
  }
  g_probe_comm = c;
  rt->on_finalize([] {
    std::lock_guard<std::mutex> l(g_probe_mutex);
    if (g_probe_comm != MPI_COMM_NULL) MPI_Comm_free(&g_probe_comm);
  });
  return c;
}
}  // namespace

Status check_datatype(MPI_Datatype t, const char* name) {
  if (t == MPI_DATATYPE_NULL) return make_error(Errc::type, "%s = MPI_DATATYPE_NULL", name);
  DType d;
  if (lookup_dtype(t, &d)) return Status::ok();  // predefined: committed by definition
  MPI_Comm c = probe_comm();
  if (c == MPI_COMM_NULL) return Status::ok();  // cannot tell; the MPI library will
  char dummy = 0;
  int pos = 0;
  if (MPI_Pack(&dummy, 0, t, &dummy, 0, &pos, c) != MPI_SUCCESS)
    return make_error(Errc::uncommitted, "%s = %s is not a committed datatype (call MPI_Type_commit first)", name,
                      type_text(t).c_str());
  return Status::ok();
}

Status check_buffer(const void* buf, const char* name, MPI_Count count, bool in_place_allowed, MPI_Aint true_lb) {
  if (buf == MPI_IN_PLACE && !in_place_allowed)
    return make_error(Errc::in_place, "%s = MPI_IN_PLACE, which MPI does not allow for this argument", name);
  // NULL is MPI_BOTTOM where the datatype's data does not start at the
  // buffer (absolute addresses); otherwise no data can be there.
  if (buf == nullptr && count > 0 && true_lb == 0)
    return make_error(Errc::buffer, "%s = NULL with count = %lld", name, static_cast<long long>(count));
  return Status::ok();
}

namespace {
Status unmapped(const void* p, const char* name) {
  return make_error(Errc::unmapped,
                    "%s = %p is neither memory of this process's CUDA context nor mapped host memory (a pointer "
                    "from another process?)", name, p);
}
}  // namespace

Status buffer_kind(const void* buf, const char* name, std::size_t bytes, memory::MemKind* kind, MPI_Aint lb) {
  const void* data = static_cast<const char*>(buf) + lb;  // where the data starts (MPI_BOTTOM + absolute address)
  if (!memory::cuda::available()) {  // no device: every pointer is host memory
    *kind = memory::MemKind::host;
    if (bytes > 0 && config::get().check && memory::probe_host(data) == memory::Probe::unmapped)
      return unmapped(data, name);
    return Status::ok();
  }
  memory::PtrInfo info;
  DUCT_TRY(memory::cuda::query(data, &info));
  *kind = info.kind;
  if (info.kind == memory::MemKind::device) {
    int cur = -1;
    DUCT_TRY(memory::cuda::current_device(&cur));
    if (info.device != cur)
      return make_error(Errc::not_supported,
                        "%s = %p is memory of CUDA device %d but the current device is %d (call cudaSetDevice(%d) "
                        "first)", name, buf, info.device, cur, info.device);
  } else if (bytes > 0 && !info.registered && !info.managed &&
             memory::probe_host(data) == memory::Probe::unmapped) {
    // With a device present, a foreign device pointer looks like unregistered host memory.
    return unmapped(data, name);
  }
  return Status::ok();
}

Status mul_bytes(MPI_Count count, std::size_t size, const char* what, std::size_t* out) {
  unsigned long long r = 0;
  if (count < 0 || __builtin_mul_overflow(static_cast<unsigned long long>(count), size, &r) || r > kMaxSpan)
    return make_error(Errc::overflow, "%s = %lld elements of %zu bytes overflows the address space", what,
                      static_cast<long long>(count), size);
  *out = static_cast<std::size_t>(r);
  return Status::ok();
}

Status blocks_total(MPI_Count ranks, MPI_Count each, std::size_t size, const char* what, MPI_Count* total) {
  std::size_t bytes = 0;
  DUCT_TRY(mul_count(ranks, each, what, total));
  return mul_bytes(*total, size, what, &bytes);
}

Status mul_count(MPI_Count a, MPI_Count b, const char* what, MPI_Count* out) {
  if (__builtin_mul_overflow(a, b, out))
    return make_error(Errc::overflow, "%s = %lld x %lld overflows MPI_Count", what, static_cast<long long>(a),
                      static_cast<long long>(b));
  return Status::ok();
}

bool overlaps(const void* a, std::size_t na, const void* b, std::size_t nb) {
  auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return na > 0 && nb > 0 && pa < pb + nb && pb < pa + na;
}

bool any_overlap(std::vector<Bytes> a, std::vector<Bytes> b) {
  auto lo = [](const Bytes& x) { return reinterpret_cast<std::uintptr_t>(x.at); };
  auto by_lo = [&](const Bytes& x, const Bytes& y) { return lo(x) < lo(y); };
  std::erase_if(a, [](const Bytes& x) { return x.n == 0; });
  std::erase_if(b, [](const Bytes& x) { return x.n == 0; });
  std::sort(a.begin(), a.end(), by_lo);
  std::sort(b.begin(), b.end(), by_lo);
  // The range that ends first cannot overlap anything after the other's
  // current one (those start later still): drop it.
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (overlaps(a[i].at, a[i].n, b[j].at, b[j].n)) return true;
    if (lo(a[i]) + a[i].n <= lo(b[j]) + b[j].n) ++i;
    else ++j;
  }
  return false;
}

void note_fallback(const char* call, const std::string& reason) {
  static std::mutex m;
  static std::set<std::string> seen;
  std::string key = std::string(call) + ": " + reason;
  std::lock_guard<std::mutex> lock(m);
  if (seen.insert(key).second) DUCT_INFO(capi, "%s is served by the MPI library (%s)", call, reason.c_str());
}

Staged::~Staged() { std::free(storage); }

Status stage_in(const void* buf, MPI_Count count, MPI_Datatype dt, bool copy, Staged* out, bool device) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (MPI_Type_get_extent_x(dt, &lb, &extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent_x(dt, &true_lb, &true_extent) != MPI_SUCCESS)
    return make_error(Errc::type, "cannot get the extent of datatype %s", type_text(dt).c_str());
  if (count == 0) return Status::ok();
  // Bytes touched by `count` elements: from true_lb to (count-1)*extent + true_lb + true_extent.
  MPI_Count span = (count - 1) * extent + true_extent;
  if (extent < 0 || span < 0)
    return make_error(Errc::not_supported, "staging a datatype with negative extent (%s) is not supported",
                      type_text(dt).c_str());
  out->span = static_cast<std::size_t>(span);
  out->lb = static_cast<std::ptrdiff_t>(true_lb);
  // duct's reductions on the copy store whole elements (elem_size), the
  // last one's padding too (MPI_LONG_DOUBLE_INT: 32 bytes, of which the
  // type's data is 20), so the copy holds `count` whole elements; only the
  // span goes to and from the caller's buffer.
  const MPI_Count whole = count * extent - true_lb;
  const std::size_t bytes = std::max(out->span, whole > 0 ? static_cast<std::size_t>(whole) : std::size_t{0});
  out->storage = std::malloc(bytes ? bytes : 1);
  if (!out->storage) return make_error(Errc::no_memory, "host staging buffer of %zu bytes", bytes);
  out->host = static_cast<char*>(out->storage) - out->lb;
  out->device = device;
  if (!copy) return Status::ok();
  if (!device) return std::memcpy(out->storage, static_cast<const char*>(buf) + out->lb, out->span), Status::ok();
  return memory::cuda::copy(out->storage, static_cast<const char*>(buf) + out->lb, out->span);
}

Status stage_out(void* buf, const Staged& s) {
  if (!s.storage) return Status::ok();
  if (!s.device) return std::memcpy(static_cast<char*>(buf) + s.lb, s.storage, s.span), Status::ok();
  return memory::cuda::copy(static_cast<char*>(buf) + s.lb, s.storage, s.span);
}

}  // namespace duct::capi
