// Built instead of cuda.cpp when duct is configured without CUDA: there is
// never a device, every pointer is host memory, and device operations fail
// with a message that says so.
#include "memory/cuda.hpp"

namespace duct::memory::cuda {

namespace {
Status no_cuda(const char* what) {
  return make_error(Errc::not_supported, "%s: duct was built without CUDA", what);
}
}  // namespace

bool built() noexcept { return false; }
bool available() noexcept { return false; }
const std::string& unavailable_reason() noexcept {
  static const std::string r = "duct was built without CUDA";
  return r;
}
int device_count() noexcept { return 0; }

Status query(const void*, PtrInfo* out) noexcept {
  *out = PtrInfo{};
  return Status::ok();
}

Status current_device(int*) noexcept { return no_cuda("cudaGetDevice"); }
Status pci_bus_id(int, std::string*) noexcept { return no_cuda("cudaDeviceGetPCIBusId"); }
Status device_by_pci_bus_id(const std::string&, int*) noexcept { return no_cuda("cudaDeviceGetByPCIBusId"); }
Status can_access_peer(int, int, bool*) noexcept { return no_cuda("cudaDeviceCanAccessPeer"); }
std::string device_name(int) noexcept { return "none"; }
Status mps_enabled(int, bool*) noexcept { return no_cuda("cudaDeviceGetAttribute"); }
Status stream(void**) noexcept { return no_cuda("cudaStreamCreate"); }
Status stream_sync(void*) noexcept { return no_cuda("cudaStreamSynchronize"); }
Status host_register(void*, std::size_t, void**) noexcept { return no_cuda("cudaHostRegister"); }
void host_unregister(void*) noexcept {}
bool stream_memops() noexcept { return false; }
Status write_value64(void*, void*, std::uint64_t) noexcept { return no_cuda("cuStreamWriteValue64"); }
Status stream_query(void*, bool*) noexcept { return no_cuda("cudaStreamQuery"); }
Status copy_async(void*, const void*, std::size_t, void*) noexcept { return no_cuda("cudaMemcpyAsync"); }
Status copy(void*, const void*, std::size_t) noexcept { return no_cuda("cudaMemcpy"); }
Status alloc_device(std::size_t, void**) noexcept { return no_cuda("cudaMalloc"); }
void free_device(void*) noexcept {}
Status mem_info(std::size_t*, std::size_t*) noexcept { return no_cuda("cudaMemGetInfo"); }
Status alloc_pinned(std::size_t, void**) noexcept { return no_cuda("cudaHostAlloc"); }
void free_pinned(void*) noexcept {}
Status event_create(void**) noexcept { return no_cuda("cudaEventCreate"); }
void event_destroy(void*) noexcept {}
Status event_record(void*, void*) noexcept { return no_cuda("cudaEventRecord"); }
Status event_query(void*, bool*) noexcept { return no_cuda("cudaEventQuery"); }
Status ipc_get_handle(void*, IpcHandle*) noexcept { return no_cuda("cudaIpcGetMemHandle"); }
Status ipc_open(const IpcHandle&, void**, bool* already_mapped) noexcept {
  if (already_mapped) *already_mapped = false;
  return no_cuda("cudaIpcOpenMemHandle");
}
Status ipc_close(void*) noexcept { return no_cuda("cudaIpcCloseMemHandle"); }
Status ipc_event_create(void**, IpcHandle*) noexcept { return no_cuda("cudaEventCreateWithFlags"); }
Status ipc_event_open(const IpcHandle&, void**) noexcept { return no_cuda("cudaIpcOpenEventHandle"); }
void ipc_event_destroy(void*) noexcept {}
Status set_device(int) noexcept { return no_cuda("cudaSetDevice"); }
Status stream_device(void*, int*) noexcept { return no_cuda("cudaStreamGetDevice"); }
Status launch_host_func(void*, void (*)(void*), void*) noexcept { return no_cuda("cudaLaunchHostFunc"); }
Status wait_value64(void*, void*, std::uint64_t) noexcept { return no_cuda("cuStreamWaitValue64"); }
Status stream_wait_event(void*, void*) noexcept { return no_cuda("cudaStreamWaitEvent"); }
Status capture_info(void*, bool*, unsigned long long*, void**) noexcept { return no_cuda("cudaStreamGetCaptureInfo"); }
Status graph_keep(void*, void*, void (*)(void*)) noexcept { return no_cuda("cudaUserObjectCreate"); }
int relax_capture_mode() noexcept { return -1; }
void restore_capture_mode(int) noexcept {}
void shutdown() noexcept {}

}  // namespace duct::memory::cuda
