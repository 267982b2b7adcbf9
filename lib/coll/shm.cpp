#include "coll/shm.hpp"

#include <cstring>

#include "coll/shm_rounds.hpp"
#include "core/comm.hpp"
#include "core/log.hpp"

namespace duct::coll {

namespace {
constexpr std::size_t kLine = 64;
// Region layout: the done line, then kSlots slots, each [ready sequence
// number (8 bytes) | data], starting on a cache line.
constexpr std::size_t kSlotStride = (8 + ShmArea::kSlotBytes + kLine - 1) / kLine * kLine;
constexpr std::size_t kDoneLine = kLine;
constexpr std::size_t kEngineAt = kDoneLine + ShmArea::kSlots * kSlotStride;
constexpr std::size_t kRegion = kEngineAt + 2 * kLine + ShmArea::kEngineBytes;
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free, "shared-memory flags need lock-free atomics");
}  // namespace

Status ShmArea::create(MPI_Comm comm, int rank, int size, std::unique_ptr<ShmArea>* out, const MpiWait& wait) {
  auto a = std::unique_ptr<ShmArea>(new ShmArea());
  a->size_ = size;
  // Each rank's region on its own pages (a hint: without it the regions are
  // merely contiguous).
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Info_create(&info) != MPI_SUCCESS) info = MPI_INFO_NULL;
  if (info != MPI_INFO_NULL && MPI_Info_set(info, "alloc_shared_noncontig", "true") != MPI_SUCCESS)
    DUCT_DEBUG(coll, "MPI_Info_set(alloc_shared_noncontig) failed; using contiguous regions");
  char* mine = nullptr;
  int rc = MPI_SUCCESS;
  {
    SetupLock::Released unlocked;  // blocking and collective (see SetupLock)
    rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(kRegion), 1, info, comm, &mine, &a->win_);
  }
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  auto ok = std::make_shared<int>(rc == MPI_SUCCESS);
  MPI_Request req;
  DUCT_MPI_CHECK(PMPI_Iallreduce(MPI_IN_PLACE, ok.get(), 1, MPI_INT, MPI_LAND, comm, &req));
  // A wait that gives up leaves the window allocated: freeing it is
  // collective and would block on the rank that did not come.
  auto give_up = [&](Status st) {
    (void)a.release();
    return st;
  };
  if (Status st = wait(&req, "MPI_Iallreduce of the shared-memory window's success", ok); !st) return give_up(st);
  if (!*ok) {
    SetupLock::Released unlocked;
    if (a->win_ != MPI_WIN_NULL) MPI_Win_free(&a->win_);
    return rc != MPI_SUCCESS ? mpi_error(rc, "MPI_Win_allocate_shared")
                             : make_error(Errc::mpi, "MPI_Win_allocate_shared failed on another rank");
  }
  std::memset(mine, 0, 8);
  for (int i = 0; i < kSlots; ++i) std::memset(mine + kDoneLine + static_cast<std::size_t>(i) * kSlotStride, 0, 8);
  std::memset(mine + kEngineAt, 0, 8);
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
  DUCT_MPI_CHECK(PMPI_Ibarrier(comm, &req));
  if (Status st = wait(&req, "MPI_Ibarrier after zeroing the shared-memory flags", nullptr); !st) return give_up(st);
  DUCT_DEBUG(coll, "shared-memory area: %d ranks, %zu bytes each (rank %d)", size, kRegion, rank);
  *out = std::move(a);
  return Status::ok();
}

ShmArea::~ShmArea() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (win_ != MPI_WIN_NULL && !fin) MPI_Win_free(&win_);
}

std::uint64_t* ShmArea::ready(int r, int idx) const {
  return reinterpret_cast<std::uint64_t*>(base_[static_cast<std::size_t>(r)] + kDoneLine +
                                          static_cast<std::size_t>(idx) * kSlotStride);
}

void* ShmArea::slot(int r, int idx) const {
  return base_[static_cast<std::size_t>(r)] + kDoneLine + static_cast<std::size_t>(idx) * kSlotStride + 8;
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

void ShmArea::finish(int me, std::uint64_t k) const {
  word_store(done(me), k);
}

}  // namespace duct::coll

namespace duct::coll {

namespace {

// Wait until a shared sequence number reaches a value. Polls a few times
// before giving control back, so a value that is about to arrive is seen at
// once.
class WaitCounter final : public Waitable {
 public:
  WaitCounter(std::uint64_t* c, std::uint64_t at_least, int rank, const char* what)
      : c_(c), v_(at_least), rank_(rank), what_(what) {}
  void poll(bool* ready) override {
    for (int i = 0; i < 64; ++i) {
      if (word_load(c_) >= v_) {
        *ready = true;
        return;
      }
    }
    *ready = false;
  }
  std::string describe() const override {
    return strprintf("rank %d's shared-memory %s to reach sequence %llu (it is at %llu)", rank_, what_,
                     static_cast<unsigned long long>(v_),
                     static_cast<unsigned long long>(word_load(c_)));
  }

 private:
  std::uint64_t* c_;
  std::uint64_t v_;
  int rank_;
  const char* what_;
};

}  // namespace

Sched shm_claim(ShmArea& s, std::uint64_t k, int me, int n) {
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    DUCT_CO_TRY(co_await WaitAwaiter<WaitCounter>{WaitCounter(s.done(q), k - ShmArea::kSlots, q, "done count")});
  }
  s.every_rank_done(k - ShmArea::kSlots);
  co_return Status::ok();
}

Status shm_claim_now(ShmArea& s, std::uint64_t k, int me, int n, Spinner& sp) {
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    WaitCounter w(s.done(q), k - ShmArea::kSlots, q, "done count");
    DUCT_TRY(sp.wait(w));
  }
  s.every_rank_done(k - ShmArea::kSlots);
  return Status::ok();
}

bool shm_claimed(ShmArea& s, std::uint64_t k, int me, int n) {
  if (s.writable(k)) return true;
  // Look at every done line; remember the least, so that the next calls
  // need no look until they catch up with it.
  std::uint64_t least = ~std::uint64_t{0};
  for (int q = 0; q < n; ++q)
    if (q != me) least = std::min(least, word_load(s.done(q)));
  s.every_rank_done(least);
  return s.writable(k);
}

void shm_publish(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me) {
  word_store(s.ready(me, idx), ShmArea::word(k, tag));
}

namespace {
using select::Coll;
bool rooted(Coll c) {
  return c == Coll::bcast || c == Coll::reduce || c == Coll::gather || c == Coll::gatherv || c == Coll::scatter ||
         c == Coll::scatterv;
}
std::string call_of(std::uint32_t tag) {
  const auto c = static_cast<Coll>(tag & 0xf);
  if (c >= Coll::count_) return strprintf("an unknown call (tag %u)", tag);
  return rooted(c) ? strprintf("%s with root %u (mod 256)", select::coll_name(c), tag >> 4) : select::coll_name(c);
}
}  // namespace

std::uint32_t shm_tag(const CollArgs& a) noexcept {
  static_assert(static_cast<int>(Coll::count_) <= 16, "the collective takes 4 bits of the tag");
  return static_cast<std::uint32_t>(a.coll) | (rooted(a.coll) ? static_cast<std::uint32_t>(a.root & 0xff) << 4 : 0u);
}

bool WaitShm::arrived(int q) {
  const std::uint64_t w = word_load(s_->ready(q, idx_));
  if (w == ShmArea::word(k_, tag_)) return true;
  const std::uint64_t seq = ShmArea::seq_of(w);
  if (seq < k_) return false;
  // A later word over k's data: a barrier's (ShmArea::word).
  if (seq > k_) return true;
  status = Status(Errc::mismatch,
                  strprintf("rank %d's shared-memory slot holds call %llu of this communicator as %s, where this rank "
                            "is in call %llu as %s: the ranks called different collectives or roots, or one of "
                            "them returned early from a call with an error (DUCT_CHECK=1 compares every call's "
                            "arguments before it starts)",
                            q, static_cast<unsigned long long>(seq), call_of(ShmArea::tag_of(w)).c_str(),
                            static_cast<unsigned long long>(k_), call_of(tag_).c_str()));
  return true;
}

int WaitShm::waiting_for() const {
  auto pending = [&](int q) { return ShmArea::seq_of(word_load(s_->ready(q, idx_))) < k_; };
  if (!all_) return pending(rank_) ? rank_ : -1;
  for (int q = next_; q < s_->size(); ++q)
    if (q != rank_ && pending(q)) return q;
  return -1;
}

void WaitShm::poll(bool* ready) {
  // A few looks before giving control back: a value about to arrive is seen at once.
  for (int i = 0; i < 64; ++i) {
    if (!all_) {
      if (arrived(rank_)) return void(*ready = true);
      continue;
    }
    while (next_ < s_->size() && (next_ == rank_ || arrived(next_))) {
      if (!status.is_ok()) return void(*ready = true);
      ++next_;
    }
    if (next_ == s_->size()) {
      s_->saw_all(k_);  // every rank published k, so every rank had returned from k-1
      return void(*ready = true);
    }
  }
  *ready = false;
}

std::string WaitShm::describe() const {
  const int q = waiting_for();
  if (q < 0) return "shared-memory slots (all published)";
  return strprintf("rank %d's shared-memory slot to reach sequence %llu (it is at %llu)", q,
                   static_cast<unsigned long long>(k_),
                   static_cast<unsigned long long>(ShmArea::seq_of(word_load(s_->ready(q, idx_)))));
}

WaitAwaiter<WaitShm> shm_wait_rank(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int q) {
  return WaitAwaiter<WaitShm>{WaitShm(s, k, tag, idx, q, false)};
}

WaitAwaiter<WaitShm> shm_exchange(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me) {
  shm_publish(s, k, tag, idx, me);
  return WaitAwaiter<WaitShm>{WaitShm(s, k, tag, idx, me, true)};
}

Status shm_reduce_slots(Context& ctx, ShmArea& s, int idx, const DType& dt, RedOp op, std::size_t count, void* dst,
                        MemKind dst_kind, std::span<const int> ranks) {
  const std::size_t bytes = count * elem_size(dt.elem);
  const int m = ranks.empty() ? s.size() : static_cast<int>(ranks.size());
  auto slot = [&](int i) { return s.slot(ranks.empty() ? i : ranks[static_cast<std::size_t>(i)], idx); };
  if (m == 1) return copy_local(dst, dst_kind, slot(0), MemKind::host, bytes);
  void* acc = dst;
  if (dst_kind == MemKind::device) DUCT_TRY(ctx.scratch(MemKind::host, bytes, 1, &acc));
  // (slot 0 op slot 1) op slot 2 ...: no copy of slot 0 first.
  DUCT_TRY(reduce_local(acc, slot(0), slot(1), count, dt, op, MemKind::host, nullptr));
  for (int i = 2; i < m; ++i) DUCT_TRY(reduce_local(acc, acc, slot(i), count, dt, op, MemKind::host, nullptr));
  return acc == dst ? Status::ok() : copy_local(dst, dst_kind, acc, MemKind::host, bytes);
}

}  // namespace duct::coll
