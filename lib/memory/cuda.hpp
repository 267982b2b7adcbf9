// duct memory: everything duct asks of CUDA, behind duct's own types.
//
// lib/channel and lib/coll use these wrappers and never call cuda* directly.
// Built from cuda.cpp with CUDA, from cuda_stub.cpp without it; the stub
// reports "no device" and every pointer as host memory.
//
// "No device" is a normal condition: available() is false when there is no
// driver, no device, or duct was built without CUDA, and unavailable_reason()
// says which. Host-only use never creates a CUDA context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.hpp"

namespace duct::memory {

enum class MemKind : std::uint8_t { host = 0, device = 1 };

inline const char* kind_name(MemKind k) { return k == MemKind::device ? "device" : "host"; }

// What cuPointerGetAttributes says of a pointer.
struct PtrInfo {
  MemKind kind = MemKind::host;
  bool managed = false;          // CUDA managed memory (treated as host: the CPU can touch it)
  bool registered = false;       // pinned / cudaHostRegister'ed host memory
  int device = -1;               // device ordinal of device memory
  std::uintptr_t base = 0;       // allocation start (device memory)
  std::size_t size = 0;          // allocation size (device memory)
  unsigned long long buffer_id = 0;  // CU_POINTER_ATTRIBUTE_BUFFER_ID (device memory)
};

// An opaque cudaIpcMemHandle_t (64 bytes).
struct IpcHandle {
  unsigned char bytes[64];
};

namespace cuda {

bool built() noexcept;
bool available() noexcept;
const std::string& unavailable_reason() noexcept;
int device_count() noexcept;

// Memory kind and allocation of `p` (host when CUDA is unavailable).
Status query(const void* p, PtrInfo* out) noexcept;

// The calling thread's current device, and a device's PCI bus id.
Status current_device(int* dev) noexcept;
Status pci_bus_id(int dev, std::string* out) noexcept;
Status device_by_pci_bus_id(const std::string& bus, int* dev) noexcept;
Status can_access_peer(int dev, int peer, bool* out) noexcept;
std::string device_name(int dev) noexcept;
// Whether contexts on `dev` are shared through an MPS server (the MPS control
// daemon runs and this process is its client): cudaDevAttrMpsEnabled.
Status mps_enabled(int dev, bool* out) noexcept;

// duct's stream on the current device (created on first use, non-blocking).
Status stream(void** out) noexcept;
Status stream_sync(void* stream) noexcept;

// Copies between any two kinds (cudaMemcpyDefault; UVA).
Status copy_async(void* dst, const void* src, std::size_t bytes, void* stream) noexcept;
Status copy(void* dst, const void* src, std::size_t bytes) noexcept;

// Allocation. Pinned host memory is page-locked and portable.
Status alloc_device(std::size_t bytes, void** out) noexcept;
void free_device(void* p) noexcept;
// Free and total bytes of the current device (cudaMemGetInfo).
Status mem_info(std::size_t* free_bytes, std::size_t* total_bytes) noexcept;
Status alloc_pinned(std::size_t bytes, void** out) noexcept;
void free_pinned(void* p) noexcept;

// Events: a completion marker recorded on a stream.
Status event_create(void** ev) noexcept;
void event_destroy(void* ev) noexcept;
Status event_record(void* ev, void* stream) noexcept;
// *done is true once everything before the record has finished.
Status event_query(void* ev, bool* done) noexcept;

// CUDA IPC (same node): export the allocation starting at `base`, open a
// peer's export, and close a mapping.
Status ipc_get_handle(void* base, IpcHandle* out) noexcept;
// *already_mapped (may be null) tells a failure because this process still
// maps an old allocation in that range (cudaErrorAlreadyMapped).
Status ipc_open(const IpcHandle& h, void** mapped, bool* already_mapped) noexcept;
Status ipc_close(void* mapped) noexcept;
// Interprocess events (cudaEventInterprocess | cudaEventDisableTiming): one
// process records, another waits for the record with cudaStreamWaitEvent
// (stream_wait_event). A wait is for the record last made before it.
Status ipc_event_create(void** ev, IpcHandle* handle) noexcept;
Status ipc_event_open(const IpcHandle& handle, void** ev) noexcept;
void ipc_event_destroy(void* ev) noexcept;

// Host memory the GPU writes and reads: page-lock [p, p+bytes) and map it
// into the device's address space (cudaHostRegister, mapped and portable;
// shared-memory segments of other processes work too). *dev is the address
// kernels and stream memory operations use.
Status host_register(void* p, std::size_t bytes, void** dev) noexcept;
void host_unregister(void* p) noexcept;

// A stream memory operation (cuStreamWriteValue64): after everything before
// it on `stream`, write `value` to `dev` (a device address, or registered
// host memory's device address) with a memory fence first, so a process that
// sees the value sees every write before it. stream_memops() says whether
// the driver offers it.
bool stream_memops() noexcept;
Status write_value64(void* stream, void* dev, std::uint64_t value) noexcept;
// Whether everything on `stream` has finished (*done); an error of work on
// the stream is returned.
Status stream_query(void* stream, bool* done) noexcept;

// ---- stream-ordered collectives (coll/stream.cpp) ----
// Make the calling thread's current device `dev` (cudaSetDevice).
Status set_device(int dev) noexcept;
// The device a stream belongs to (cudaStreamGetDevice; the current device
// for the legacy default stream).
Status stream_device(void* stream, int* dev) noexcept;
// After everything before it on `stream`, run fn(arg) on a CUDA thread
// (cudaLaunchHostFunc). fn must not call CUDA.
Status launch_host_func(void* stream, void (*fn)(void*), void* arg) noexcept;
// Later work on `stream` waits until the 64-bit word at `dev` (registered
// host memory's device address) is >= value, compared as a signed
// difference (cuStreamWaitValue64, CU_STREAM_WAIT_VALUE_GEQ).
Status wait_value64(void* stream, void* dev, std::uint64_t value) noexcept;
// Later work on `stream` waits for the work before `ev`'s record.
Status stream_wait_event(void* stream, void* ev) noexcept;
// Whether `stream` is being captured into a graph: *graph is the graph
// under construction and *id the capture's id (0 when not capturing).
Status capture_info(void* stream, bool* capturing, unsigned long long* id, void** graph) noexcept;
// Keep `obj` as long as `graph` (or any graph instantiated from it) lives:
// destroy(obj) runs on a CUDA thread afterwards (cudaUserObjectCreate +
// cudaGraphRetainUserObject). destroy must not call CUDA.
Status graph_keep(void* graph, void* obj, void (*destroy)(void*)) noexcept;

// While a stream is captured, CUDA refuses calls that might synchronize
// (cudaMalloc, cudaHostRegister, ...) on the capturing thread, and, in
// the global capture mode, on every other thread. duct's own setup calls
// are none of the captured work: relax_capture_mode() lets the calling
// thread make them (cudaThreadExchangeStreamCaptureMode, Relaxed) and
// returns the thread's previous mode for restore_capture_mode().
int relax_capture_mode() noexcept;
void restore_capture_mode(int mode) noexcept;

// Release duct's streams and events (at finalize).
void shutdown() noexcept;

}  // namespace cuda
}  // namespace duct::memory
