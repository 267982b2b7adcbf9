#include "coll/shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "core/comm.hpp"
#include "core/log.hpp"
#include "memory/cma.hpp"

namespace duct::coll {

namespace {
constexpr std::size_t kLine = 64;
// Region layout: the done line, then kSlots slots, each [ready sequence
// number (8 bytes) | data], starting on a cache line.
constexpr std::size_t kSlotStride = (8 + ShmArea::kSlotBytes + kLine - 1) / kLine * kLine;
constexpr std::size_t kDoneLine = kLine;
// In the done line, after the done word: the rank's process id and the
// address of its probe word (create(), step 3).
constexpr std::size_t kPidAt = 8;
constexpr std::uint64_t kProbe = 0x0064756374636d61ull;  // "ductcma"
constexpr std::size_t kEngineAt = kDoneLine + ShmArea::kSlots * kSlotStride;
constexpr std::size_t kRegion = kEngineAt + 2 * kLine + ShmArea::kEngineBytes;
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free, "shared-memory flags need lock-free atomics");
}  // namespace

Status ShmArea::create(MPI_Comm comm, int rank, int size, std::unique_ptr<ShmArea>* out, const MpiWait& wait) {
  auto a = std::unique_ptr<ShmArea>(new ShmArea());
  a->size_ = size;
  // Each rank's region on pages of its own.
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t stride = (kRegion + page - 1) / page * page;
  const std::size_t total = stride * static_cast<std::size_t>(size);

  // 1. Rank 0 creates the segment, sized but not yet backed, and
  //    broadcasts its name, or why it could not.
  struct Made {
    int ok = 0;
    char name[64] = {};
    char why[192] = {};
  };
  auto made = std::make_shared<Made>();
  int fd = -1;
  auto failed = [](Made& m, const char* call) {
    std::snprintf(m.why, sizeof m.why, "%s: %s", call, std::strerror(errno));
  };
  auto discard = [&] {  // rank 0's segment, when the setup does not go on
    close(fd);
    fd = -1;
    shm_unlink(made->name);
  };
  if (rank == 0) {
    // Process id, a serial number and a random part: processes in other
    // PID namespaces (containers) may share /dev/shm and a process id. A
    // name that exists is someone else's: draw another, never remove it.
    static std::atomic<unsigned> serial{0};
    std::random_device rd;
    for (int attempt = 0; attempt < 4 && fd < 0; ++attempt) {
      std::snprintf(made->name, sizeof made->name, "/duct-shm.%ld.%u.%08x", static_cast<long>(getpid()),
                    serial.fetch_add(1, std::memory_order_relaxed), static_cast<unsigned>(rd()));
      fd = shm_open(made->name, O_RDWR | O_CREAT | O_EXCL, 0600);
      if (fd < 0 && errno != EEXIST) break;
    }
    struct statvfs fs {};
    if (fd < 0) {
      failed(*made, "shm_open");
    } else if (fstatvfs(fd, &fs) == 0 && static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize < total) {
      // Pages are backed when first touched; a segment larger than what is
      // free could fail with SIGBUS later.
      std::snprintf(made->why, sizeof made->why, "%llu bytes free in its file system, %zu needed",
                    static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize, total);
      discard();
    } else if (ftruncate(fd, static_cast<off_t>(total)) != 0) {
      failed(*made, "ftruncate");
      discard();
    } else {
      made->ok = 1;
    }
  }
  MPI_Request req;
  const int rc = PMPI_Ibcast(made.get(), sizeof(Made), MPI_BYTE, 0, comm, &req);
  Status st = rc == MPI_SUCCESS ? wait(&req, "MPI_Ibcast of the shared-memory segment's name", made)
                                : mpi_error(rc, "MPI_Ibcast(shared-memory segment's name)");
  if (!st || !made->ok) {
    if (rank == 0 && made->ok) discard();
    if (!st) return st;
    return rank == 0 ? make_error(Errc::mpi, "shared-memory segment %s: %s", made->name, made->why)
                     : make_error(Errc::mpi, "rank 0 could not create the shared-memory segment: %s", made->why);
  }

  // 2. Every rank maps it. Pages are backed where first touched: a rank's
  //    slots by the rank that writes them, so on its NUMA node, and only
  //    as far as messages reach. (posix_fallocate of every region made
  //    setting a context up cost 500 instead of 100 us on 2 ranks here.)
  std::string why;
  if (rank != 0) fd = shm_open(made->name, O_RDWR, 0);
  if (fd < 0) {
    why = strprintf("shm_open(%s): %s", made->name, std::strerror(errno));
  } else {
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      why = strprintf("mmap of %zu bytes of %s: %s", total, made->name, std::strerror(errno));
    } else {
      a->map_ = static_cast<char*>(p);
      a->map_bytes_ = total;
    }
    close(fd);
  }
  if (a->map_) {
    // Fresh pages read as zero; the flags are set explicitly all the same.
    char* mine = a->map_ + stride * static_cast<std::size_t>(rank);
    std::memset(mine, 0, 8);
    for (int i = 0; i < kSlots; ++i) std::memset(mine + kDoneLine + static_cast<std::size_t>(i) * kSlotStride, 0, 8);
    std::memset(mine + kEngineAt, 0, 8);
    // Beside the done word, what the others need to try cross-memory
    // attach (step 3): this process's id and the address of a word of it.
    a->probe_ = kProbe;
    const auto pid = static_cast<std::uint64_t>(getpid());
    const auto addr = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&a->probe_));
    std::memcpy(mine + kPidAt, &pid, 8);
    std::memcpy(mine + kPidAt + 8, &addr, 8);
  }
  // Every rank has mapped the segment and zeroed its flags before anyone
  // reads a flag; then the name goes (the mappings stay until munmap).
  auto ok = std::make_shared<int>(a->map_ != nullptr);
  const int rc2 = PMPI_Iallreduce(MPI_IN_PLACE, ok.get(), 1, MPI_INT, MPI_LAND, comm, &req);
  st = rc2 == MPI_SUCCESS ? wait(&req, "MPI_Iallreduce of every rank's shared-memory mapping", ok)
                          : mpi_error(rc2, "MPI_Iallreduce(shared-memory mapping)");
  if (rank == 0) shm_unlink(made->name);
  if (!st) return st;
  if (!*ok)
    return why.empty() ? make_error(Errc::mpi, "another rank could not map the shared-memory segment")
                       : make_error(Errc::mpi, "%s", why.c_str());
  a->base_.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) a->base_[static_cast<std::size_t>(r)] = a->map_ + stride * static_cast<std::size_t>(r);

  // 3. Cross-memory attach (coll/cma.hpp): every rank reads a word of every
  //    other rank's process with process_vm_readv, and the ranks agree
  //    whether all of them could. Kernels and containers refuse it for
  //    their own reasons (Yama's ptrace_scope, seccomp, PID namespaces),
  //    which only trying tells.
  a->pids_.assign(static_cast<std::size_t>(size), 0);
  auto cma_ok = std::make_shared<int>(1);
  std::string cma_why;
  for (int r = 0; r < size; ++r) {
    std::uint64_t pid = 0, addr = 0;
    std::memcpy(&pid, a->base_[static_cast<std::size_t>(r)] + kPidAt, 8);
    std::memcpy(&addr, a->base_[static_cast<std::size_t>(r)] + kPidAt + 8, 8);
    a->pids_[static_cast<std::size_t>(r)] = static_cast<long>(pid);
    if (r == rank || !*cma_ok) continue;
    std::uint64_t got = 0;
    std::size_t done = 0;
    const int err = memory::cma_read_all(static_cast<long>(pid), &got, addr, sizeof got, &done);
    if (err != 0 || got != kProbe) {
      *cma_ok = 0;
      cma_why = strprintf("process_vm_readv from rank %d (pid %llu): %s", r, static_cast<unsigned long long>(pid),
                          err != 0 ? std::strerror(err) : "read another value (another PID namespace?)");
    }
  }
  const int rc3 = PMPI_Iallreduce(MPI_IN_PLACE, cma_ok.get(), 1, MPI_INT, MPI_LAND, comm, &req);
  st = rc3 == MPI_SUCCESS ? wait(&req, "MPI_Iallreduce of every rank's cross-memory attach probe", cma_ok)
                          : mpi_error(rc3, "MPI_Iallreduce(cross-memory attach probe)");
  if (!st) return st;
  a->cma_ = *cma_ok != 0;
  if (!cma_why.empty())
    DUCT_INFO(coll, "no single-copy (cma) algorithms on this communicator: %s (see /proc/sys/kernel/yama/ptrace_scope)",
              cma_why.c_str());
  else if (!a->cma_)
    DUCT_INFO(coll, "no single-copy (cma) algorithms on this communicator: another rank could not attach");
  DUCT_DEBUG(coll, "shared-memory area: %d ranks, %zu bytes each (rank %d)", size, stride, rank);
  *out = std::move(a);
  return Status::ok();
}

ShmArea::~ShmArea() {
  if (map_) munmap(map_, map_bytes_);
}

std::uint64_t* ShmArea::ready(int r, int idx) const {
  return reinterpret_cast<std::uint64_t*>(base_[static_cast<std::size_t>(r)] + kDoneLine +
                                          static_cast<std::size_t>(idx) * kSlotStride);
}

static_assert(kSlotStride >= kLine + ShmArea::kSlotBytes, "a slot holds kSlotBytes from its second line");
void* ShmArea::slot(int r, int idx, std::size_t used) const {
  return base_[static_cast<std::size_t>(r)] + kDoneLine + static_cast<std::size_t>(idx) * kSlotStride + data_at(used);
}

std::uint64_t* ShmArea::done(int r) const {
  return reinterpret_cast<std::uint64_t*>(base_[static_cast<std::size_t>(r)]);
}

std::uint64_t* ShmArea::engine_word(int r) const {
  return reinterpret_cast<std::uint64_t*>(base_[static_cast<std::size_t>(r)] + kEngineAt);
}

std::uint64_t* ShmArea::engine_done(int r) const {
  return reinterpret_cast<std::uint64_t*>(base_[static_cast<std::size_t>(r)] + kEngineAt + kLine);
}

void* ShmArea::engine_desc(int r) const { return base_[static_cast<std::size_t>(r)] + kEngineAt + 2 * kLine; }

static_assert(ShmArea::kEngineGraphAt % kLine == 0 && ShmArea::kEngineGraphAt + kLine <= ShmArea::kEngineBytes);
std::uint64_t* ShmArea::engine_graph(int r) const {
  return reinterpret_cast<std::uint64_t*>(static_cast<char*>(engine_desc(r)) + kEngineGraphAt);
}

void ShmArea::engine_pages(int r, void** start, std::size_t* bytes) const {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<std::uintptr_t>(base_[static_cast<std::size_t>(r)] + kEngineAt) / page * page;
  const auto hi = (reinterpret_cast<std::uintptr_t>(base_[static_cast<std::size_t>(r)] + kRegion) + page - 1) / page * page;
  *start = reinterpret_cast<void*>(lo);
  *bytes = static_cast<std::size_t>(hi - lo);
}

void ShmArea::finish(int me, std::uint64_t k) const {
  word_store(done(me), k);
}

}  // namespace duct::coll
