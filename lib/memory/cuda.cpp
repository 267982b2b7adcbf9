// CUDA runtime wrappers (built when duct has CUDA).
//
// Pointer queries use the driver's cuPointerGetAttributes, reached through
// the runtime's driver entry point so that libduct never links libcuda (it
// must load on machines without a driver), and so that a query on a host
// pointer creates no CUDA context.
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/log.hpp"
#include "memory/cuda.hpp"

namespace duct::memory::cuda {

namespace {

// Every failure duct handles is also taken off the thread's last-error slot:
// otherwise the next kernel launch, which checks cudaGetLastError, would
// report this old error as its own (a failed IPC open that duct recovered
// from made the next reduction "fail" with "resource already mapped").
// Sticky errors (a faulted context) stay: CUDA reports them on every call.
Status cuda_error(cudaError_t e, const char* call) {
  (void)cudaGetLastError();
  return make_error(Errc::cuda, "%s failed: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define DUCT_CUDA_CHECK(call)                                      \
  do {                                                             \
    cudaError_t duct_cuda_e_ = (call);                             \
    if (duct_cuda_e_ != cudaSuccess) return cuda_error(duct_cuda_e_, #call); \
  } while (0)

using PointerGetAttributes = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);
using StreamValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);

struct State {
  std::atomic<bool> probed{false};
  bool available = false;
  int count = 0;
  std::string reason;
  PointerGetAttributes get_attrs = nullptr;
  StreamValue64 write_value = nullptr;
  StreamValue64 wait_value = nullptr;
  std::mutex mutex;
  std::map<int, cudaStream_t> streams;  // per device
  std::vector<cudaEvent_t> free_events;
};

// A driver API function through the runtime (duct does not link libcuda),
// in its form of CUDA `version` (e.g. 11070); null when the driver lacks it.
void* driver_entry(const char* name, int version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q);
#else
  (void)version;
  cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

State& state() {
  static State s;
  return s;
}

void probe() {
  State& s = state();
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    s.reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    cudaGetLastError();
    return;
  }
  if (n <= 0) {
    s.reason = "no CUDA device is visible";
    return;
  }
  s.available = true;
  s.count = n;
  if (void* fn = driver_entry("cuPointerGetAttributes", 7000))
    s.get_attrs = reinterpret_cast<PointerGetAttributes>(fn);
  else
    DUCT_INFO(memory, "cuPointerGetAttributes not found through the runtime; using cudaPointerGetAttributes");
  // Stream memory operations (CUDA 11.7+ drivers have them on every device).
  if (void* fn = driver_entry("cuStreamWriteValue64", 11070))
    s.write_value = reinterpret_cast<StreamValue64>(fn);
  else
    DUCT_INFO(memory, "stream memory operations (cuStreamWriteValue64) not found; device completion is polled with events");
  if (void* fn = driver_entry("cuStreamWaitValue64", 11070)) s.wait_value = reinterpret_cast<StreamValue64>(fn);
  DUCT_INFO(memory, "%d CUDA device(s) visible", n);
}

State& ready() {
  State& s = state();
  if (s.probed.load(std::memory_order_acquire)) return s;  // fast path: no call_once TLS lookup
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.probed.load(std::memory_order_relaxed)) {
    probe();
    s.probed.store(true, std::memory_order_release);
  }
  return s;
}

}  // namespace

bool built() noexcept { return true; }
bool available() noexcept { return ready().available; }
const std::string& unavailable_reason() noexcept { return ready().reason; }
int device_count() noexcept { return ready().count; }

Status query(const void* p, PtrInfo* out) noexcept {
  *out = PtrInfo{};
  State& s = ready();
  if (!s.available || p == nullptr) return Status::ok();
  if (s.get_attrs) {
    unsigned int memtype = 0, managed = 0, ipc_capable = 0;
    int ordinal = -1;
    unsigned long long buffer_id = 0;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                   CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
    void* data[] = {&memtype, &managed, &ordinal, &buffer_id, &start, &size, &ipc_capable};
    CUresult r = s.get_attrs(sizeof attrs / sizeof attrs[0], attrs, data, reinterpret_cast<CUdeviceptr>(p));
    if (r != CUDA_SUCCESS) {
      // Not a pointer CUDA knows: ordinary host memory.
      return Status::ok();
    }
    if (managed) {
      out->managed = true;  // host-accessible; treated as host
    } else if (memtype == CU_MEMORYTYPE_DEVICE) {
      out->kind = MemKind::device;
      out->device = ordinal;
      out->base = static_cast<std::uintptr_t>(start);
      out->size = size;
      out->buffer_id = buffer_id;
      if (!ipc_capable) out->buffer_id = 0;  // e.g. cudaMallocAsync pools: not exportable
    } else if (memtype == CU_MEMORYTYPE_HOST) {
      out->registered = true;
    }
    return Status::ok();
  }
  cudaPointerAttributes a{};
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status::ok();
  }
  if (a.type == cudaMemoryTypeDevice) {
    out->kind = MemKind::device;
    out->device = a.device;
    out->base = reinterpret_cast<std::uintptr_t>(p);  // no range information: export p itself
  } else if (a.type == cudaMemoryTypeManaged) {
    out->managed = true;
  } else if (a.type == cudaMemoryTypeHost) {
    out->registered = true;
  }
  return Status::ok();
}

Status current_device(int* dev) noexcept {
  DUCT_CUDA_CHECK(cudaGetDevice(dev));
  return Status::ok();
}

Status pci_bus_id(int dev, std::string* out) noexcept {
  char bus[32] = {};
  DUCT_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
  *out = bus;
  return Status::ok();
}

Status device_by_pci_bus_id(const std::string& bus, int* dev) noexcept {
  DUCT_CUDA_CHECK(cudaDeviceGetByPCIBusId(dev, bus.c_str()));
  return Status::ok();
}

Status can_access_peer(int dev, int peer, bool* out) noexcept {
  if (dev == peer) {
    *out = true;
    return Status::ok();
  }
  int can = 0;
  DUCT_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, dev, peer));
  *out = can != 0;
  return Status::ok();
}

std::string device_name(int dev) noexcept {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return "?";
  return p.name;
}

Status mps_enabled(int dev, bool* out) noexcept {
  int v = 0;
  DUCT_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMpsEnabled, dev));
  *out = v != 0;
  return Status::ok();
}

Status stream(void** out) noexcept {
  State& s = ready();
  int dev = 0;
  DUCT_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.streams.find(dev);
  if (it == s.streams.end()) {
    cudaStream_t st;
    DUCT_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    it = s.streams.emplace(dev, st).first;
  }
  *out = it->second;
  return Status::ok();
}

Status host_register(void* p, std::size_t bytes, void** dev) noexcept {
  DUCT_CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  cudaError_t e = cudaHostGetDevicePointer(dev, p, 0);
  if (e != cudaSuccess) {
    cudaHostUnregister(p);
    return cuda_error(e, "cudaHostGetDevicePointer");
  }
  return Status::ok();
}

void host_unregister(void* p) noexcept {
  if (p && cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
}

bool stream_memops() noexcept { return ready().write_value != nullptr; }

namespace {
Status driver_error(CUresult r, const char* what) {
  return make_error(Errc::cuda, "%s failed: CUresult %d", what, static_cast<int>(r));
}
}  // namespace

Status write_value64(void* st, void* dev, std::uint64_t value) noexcept {
  State& s = ready();
  if (!s.write_value) return make_error(Errc::cuda, "cuStreamWriteValue64 is not available");
  CUresult r = s.write_value(static_cast<CUstream>(st), reinterpret_cast<CUdeviceptr>(dev), value, 0);
  return r == CUDA_SUCCESS ? Status::ok() : driver_error(r, "cuStreamWriteValue64");
}

Status wait_value64(void* st, void* dev, std::uint64_t value) noexcept {
  State& s = ready();
  if (!s.wait_value) return make_error(Errc::not_supported, "cuStreamWaitValue64 is not available (driver older than CUDA 11.7)");
  CUresult r = s.wait_value(static_cast<CUstream>(st), reinterpret_cast<CUdeviceptr>(dev), value, CU_STREAM_WAIT_VALUE_GEQ);
  return r == CUDA_SUCCESS ? Status::ok() : driver_error(r, "cuStreamWaitValue64");
}

Status set_device(int dev) noexcept {
  DUCT_CUDA_CHECK(cudaSetDevice(dev));
  return Status::ok();
}

Status stream_device(void* st, int* dev) noexcept {
#if CUDART_VERSION >= 12080
  if (st) {
    DUCT_CUDA_CHECK(cudaStreamGetDevice(static_cast<cudaStream_t>(st), dev));
    return Status::ok();
  }
#endif
  DUCT_CUDA_CHECK(cudaGetDevice(dev));
  return Status::ok();
}

Status launch_host_func(void* st, void (*fn)(void*), void* arg) noexcept {
  DUCT_CUDA_CHECK(cudaLaunchHostFunc(static_cast<cudaStream_t>(st), fn, arg));
  return Status::ok();
}

Status stream_wait_event(void* st, void* ev) noexcept {
  DUCT_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(st), static_cast<cudaEvent_t>(ev), 0));
  return Status::ok();
}

Status capture_info(void* st, bool* capturing, unsigned long long* id, void** graph) noexcept {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaGraph_t g = nullptr;
  unsigned long long cid = 0;
#if CUDART_VERSION >= 13000
  DUCT_CUDA_CHECK(cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(st), &cs, &cid, &g));
#elif CUDART_VERSION >= 11030
  DUCT_CUDA_CHECK(cudaStreamGetCaptureInfo_v2(static_cast<cudaStream_t>(st), &cs, &cid, &g, nullptr, nullptr));
#else
  DUCT_CUDA_CHECK(cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(st), &cs, &cid));
#endif
  if (cs == cudaStreamCaptureStatusInvalidated)
    return make_error(Errc::cuda, "the stream's graph capture has been invalidated (an earlier error in the capture)");
  *capturing = cs == cudaStreamCaptureStatusActive;
  *id = *capturing ? cid : 0;
  *graph = *capturing ? static_cast<void*>(g) : nullptr;
  return Status::ok();
}

Status graph_keep(void* graph, void* obj, void (*destroy)(void*)) noexcept {
  if (!graph) return make_error(Errc::internal, "graph_keep without a graph");
  cudaUserObject_t u = nullptr;
  DUCT_CUDA_CHECK(cudaUserObjectCreate(&u, obj, destroy, 1, cudaUserObjectNoDestructorSync));
  cudaError_t e = cudaGraphRetainUserObject(static_cast<cudaGraph_t>(graph), u, 1, cudaGraphUserObjectMove);
  if (e != cudaSuccess) {
    (void)cudaUserObjectRelease(u, 1);  // runs destroy(obj)
    return cuda_error(e, "cudaGraphRetainUserObject");
  }
  return Status::ok();
}

int relax_capture_mode() noexcept {
  if (!ready().available) return -1;
  cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return static_cast<int>(m);
}

void restore_capture_mode(int mode) noexcept {
  if (mode < 0) return;
  cudaStreamCaptureMode m = static_cast<cudaStreamCaptureMode>(mode);
  if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) (void)cudaGetLastError();
}

Status stream_query(void* st, bool* done) noexcept {
  cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(st));
  if (e == cudaErrorNotReady) {
    *done = false;
    return Status::ok();
  }
  *done = true;
  DUCT_CUDA_CHECK(e);
  return Status::ok();
}

Status stream_sync(void* st) noexcept {
  DUCT_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(st)));
  return Status::ok();
}

Status copy_async(void* dst, const void* src, std::size_t bytes, void* st) noexcept {
  if (bytes == 0) return Status::ok();
  DUCT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(st)));
  return Status::ok();
}

Status copy(void* dst, const void* src, std::size_t bytes) noexcept {
  if (bytes == 0) return Status::ok();
  void* st = nullptr;
  DUCT_TRY(stream(&st));
  DUCT_TRY(copy_async(dst, src, bytes, st));
  return stream_sync(st);
}

Status alloc_device(std::size_t bytes, void** out) noexcept {
  DUCT_CUDA_CHECK(cudaMalloc(out, bytes ? bytes : 1));
  return Status::ok();
}

void free_device(void* p) noexcept {
  if (!p) return;
  cudaError_t e = cudaFree(p);
  if (e != cudaSuccess) DUCT_WARN(memory, "cudaFree(%p): %s", p, cudaGetErrorString(e));
}

Status mem_info(std::size_t* free_bytes, std::size_t* total_bytes) noexcept {
  DUCT_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  return Status::ok();
}

Status alloc_pinned(std::size_t bytes, void** out) noexcept {
  DUCT_CUDA_CHECK(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable));
  return Status::ok();
}

void free_pinned(void* p) noexcept {
  if (!p) return;
  cudaError_t e = cudaFreeHost(p);
  if (e != cudaSuccess) DUCT_WARN(memory, "cudaFreeHost(%p): %s", p, cudaGetErrorString(e));
}

Status event_create(void** ev) noexcept {
  State& s = ready();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.free_events.empty()) {
      *ev = s.free_events.back();
      s.free_events.pop_back();
      return Status::ok();
    }
  }
  cudaEvent_t e;
  DUCT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  *ev = e;
  return Status::ok();
}

void event_destroy(void* ev) noexcept {
  if (!ev) return;
  State& s = ready();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.free_events.push_back(static_cast<cudaEvent_t>(ev));
}

Status event_record(void* ev, void* st) noexcept {
  DUCT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(ev), static_cast<cudaStream_t>(st)));
  return Status::ok();
}

Status event_query(void* ev, bool* done) noexcept {
  cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(ev));
  if (e == cudaErrorNotReady) {
    *done = false;
    return Status::ok();
  }
  if (e != cudaSuccess) return cuda_error(e, "cudaEventQuery");
  *done = true;
  return Status::ok();
}

Status ipc_get_handle(void* base, IpcHandle* out) noexcept {
  static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(IpcHandle));
  cudaIpcMemHandle_t h;
  DUCT_CUDA_CHECK(cudaIpcGetMemHandle(&h, base));
  std::memcpy(out->bytes, &h, sizeof h);
  return Status::ok();
}

Status ipc_event_create(void** ev, IpcHandle* handle) noexcept {
  static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(IpcHandle));
  cudaEvent_t e = nullptr;
  DUCT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
  cudaIpcEventHandle_t h;
  cudaError_t r = cudaIpcGetEventHandle(&h, e);
  if (r != cudaSuccess) {
    cudaEventDestroy(e);
    return cuda_error(r, "cudaIpcGetEventHandle");
  }
  std::memcpy(handle->bytes, &h, sizeof h);
  *ev = e;
  return Status::ok();
}

Status ipc_event_open(const IpcHandle& handle, void** ev) noexcept {
  cudaIpcEventHandle_t h;
  std::memcpy(&h, handle.bytes, sizeof h);
  cudaEvent_t e = nullptr;
  DUCT_CUDA_CHECK(cudaIpcOpenEventHandle(&e, h));
  *ev = e;
  return Status::ok();
}

void ipc_event_destroy(void* ev) noexcept {
  if (ev && cudaEventDestroy(static_cast<cudaEvent_t>(ev)) != cudaSuccess) (void)cudaGetLastError();
}

Status ipc_open(const IpcHandle& in, void** mapped, bool* already_mapped) noexcept {
  cudaIpcMemHandle_t h;
  std::memcpy(&h, in.bytes, sizeof h);
  cudaError_t e = cudaIpcOpenMemHandle(mapped, h, cudaIpcMemLazyEnablePeerAccess);
  if (already_mapped) *already_mapped = e == cudaErrorAlreadyMapped;
  if (e != cudaSuccess) return cuda_error(e, "cudaIpcOpenMemHandle");
  return Status::ok();
}

Status ipc_close(void* mapped) noexcept {
  DUCT_CUDA_CHECK(cudaIpcCloseMemHandle(mapped));
  return Status::ok();
}

void shutdown() noexcept {
  State& s = state();
  if (!s.available) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  // Teardown: report failures, go on releasing the rest.
  auto note = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) DUCT_WARN(memory, "%s at finalize: %s", what, cudaGetErrorString(e));
  };
  for (auto& [dev, st] : s.streams) {
    int cur = 0;
    note(cudaGetDevice(&cur), "cudaGetDevice");
    note(cudaSetDevice(dev), "cudaSetDevice");
    note(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    note(cudaStreamDestroy(st), "cudaStreamDestroy");
    note(cudaSetDevice(cur), "cudaSetDevice");
  }
  s.streams.clear();
  for (cudaEvent_t e : s.free_events) note(cudaEventDestroy(e), "cudaEventDestroy");
  s.free_events.clear();
}

}  // namespace duct::memory::cuda
