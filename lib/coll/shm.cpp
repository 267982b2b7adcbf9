#include "coll/shm.hpp"

#include <cstring>

#include "core/comm.hpp"
#include "core/log.hpp"

namespace duct::coll {

namespace {
constexpr std::size_t kLine = 64;
// Region layout: two slots, each [ready sequence number (8 bytes) | data],
// starting on a cache line.
constexpr std::size_t kSlotStride = (8 + ShmArea::kSlotBytes + kLine - 1) / kLine * kLine;
constexpr std::size_t kRegion = 2 * kSlotStride;
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free, "shared-memory flags need lock-free atomics");
}  // namespace

Status ShmArea::create(MPI_Comm comm, int rank, int size, std::unique_ptr<ShmArea>* out) {
  auto a = std::unique_ptr<ShmArea>(new ShmArea());
  a->size_ = size;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's region on its own pages
  char* mine = nullptr;
  int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(kRegion), 1, info, comm, &mine, &a->win_);
  MPI_Info_free(&info);
  int ok = rc == MPI_SUCCESS, all = 0;
  DUCT_MPI_CHECK(PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm));
  if (!all) {
    if (a->win_ != MPI_WIN_NULL) MPI_Win_free(&a->win_);
    return rc != MPI_SUCCESS ? mpi_error(rc, "MPI_Win_allocate_shared")
                             : make_error(Errc::mpi, "MPI_Win_allocate_shared failed on another rank");
  }
  std::memset(mine, 0, 8);
  std::memset(mine + kSlotStride, 0, 8);
  a->base_.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    MPI_Aint bytes = 0;
    int disp = 0;
    void* p = nullptr;
    DUCT_MPI_CHECK(MPI_Win_shared_query(a->win_, r, &bytes, &disp, &p));
    if (bytes < static_cast<MPI_Aint>(kRegion))
      return make_error(Errc::mpi, "MPI_Win_shared_query: rank %d's region has %ld bytes, need %zu", r,
                        static_cast<long>(bytes), kRegion);
    a->base_[static_cast<std::size_t>(r)] = static_cast<char*>(p);
  }
  // Every region zeroed before anyone reads a flag.
  DUCT_MPI_CHECK(PMPI_Barrier(comm));
  DUCT_DEBUG(coll, "shared-memory area: %d ranks, %zu bytes each (rank %d)", size, kRegion, rank);
  *out = std::move(a);
  return Status::ok();
}

ShmArea::~ShmArea() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (win_ != MPI_WIN_NULL && !fin) MPI_Win_free(&win_);
}

std::uint64_t* ShmArea::ready(int r, int parity) const {
  return reinterpret_cast<std::uint64_t*>(base_[static_cast<std::size_t>(r)] +
                                          static_cast<std::size_t>(parity) * kSlotStride);
}

void* ShmArea::slot(int r, int parity) const {
  return base_[static_cast<std::size_t>(r)] + static_cast<std::size_t>(parity) * kSlotStride + 8;
}

}  // namespace duct::coll
