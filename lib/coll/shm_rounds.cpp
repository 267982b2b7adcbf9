// The shared-memory protocol of the shm algorithms (coll/shm_rounds.hpp,
// coll/collectives.hpp): claims, waits for ready words and done counts,
// publication, call tags, and the reduction of slots in rank order. The
// area itself (its segment, layout and words) is coll/shm.cpp.
#include "coll/shm_rounds.hpp"

#include <string>

#include "core/log.hpp"

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

Sched shm_claim(ShmArea& s, std::uint64_t k, bool piped, int me, int n) {
  const std::uint64_t need = s.claim_need(k, piped);
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    DUCT_CO_TRY(co_await WaitAwaiter<WaitCounter>{WaitCounter(s.done(q), need, q, "done count")});
  }
  s.every_rank_done(need);
  co_return Status::ok();
}

Sched shm_wait_done(ShmArea& s, int q, std::uint64_t k) {
  if (word_load(s.done(q)) >= k) co_return Status::ok();
  co_return co_await WaitAwaiter<WaitCounter>{WaitCounter(s.done(q), k, q, "done count")};
}

Status shm_claim_now(ShmArea& s, std::uint64_t k, bool piped, int me, int n, Spinner& sp) {
  const std::uint64_t need = s.claim_need(k, piped);
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    WaitCounter w(s.done(q), need, q, "done count");
    DUCT_TRY(sp.wait(w));
  }
  s.every_rank_done(need);
  return Status::ok();
}

bool shm_claimed(ShmArea& s, std::uint64_t k, bool piped, int me, int n) {
  const std::uint64_t need = s.claim_need(k, piped);
  if (s.writable(need)) return true;
  // Look at every done line; remember the least, so that the next calls
  // need no look until they catch up with it.
  std::uint64_t least = ~std::uint64_t{0};
  for (int q = 0; q < n; ++q)
    if (q != me) least = std::min(least, word_load(s.done(q)));
  s.every_rank_done(least);
  return s.writable(need);
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
      if (k_ > lag_) s_->every_rank_done(k_ - lag_);  // every rank published k, so every rank had finished k - lag
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

bool shm_all_published(ShmArea& s, std::uint64_t k, int idx, int me) {
  for (int q = 0; q < s.size(); ++q)
    if (q != me && ShmArea::seq_of(word_load(s.ready(q, idx))) < k) return false;
  return true;
}

WaitAwaiter<WaitShm> shm_wait_all(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me, std::uint64_t lag) {
  return WaitAwaiter<WaitShm>{WaitShm(s, k, tag, idx, me, true, lag)};
}

WaitAwaiter<WaitShm> shm_exchange(ShmArea& s, std::uint64_t k, std::uint32_t tag, int idx, int me) {
  shm_publish(s, k, tag, idx, me);
  return WaitAwaiter<WaitShm>{WaitShm(s, k, tag, idx, me, true)};
}

Status shm_reduce_slots(Context& ctx, ShmArea& s, int idx, std::size_t used, const DType& dt, RedOp op, std::size_t count,
                        void* dst, MemKind dst_kind, std::span<const int> ranks) {
  const std::size_t bytes = count * elem_size(dt.elem);
  const int m = ranks.empty() ? s.size() : static_cast<int>(ranks.size());
  auto slot = [&](int i) { return s.slot(ranks.empty() ? i : ranks[static_cast<std::size_t>(i)], idx, used); };
  if (m == 1) return copy_local(dst, dst_kind, slot(0), MemKind::host, bytes);
  void* acc = dst;
  if (dst_kind == MemKind::device) DUCT_TRY(ctx.scratch(MemKind::host, bytes, 1, &acc));
  // (slot 0 op slot 1) op slot 2 ...: no copy of slot 0 first.
  DUCT_TRY(reduce_local(acc, slot(0), slot(1), count, dt, op, MemKind::host, nullptr));
  for (int i = 2; i < m; ++i) DUCT_TRY(reduce_local(acc, acc, slot(i), count, dt, op, MemKind::host, nullptr));
  return acc == dst ? Status::ok() : copy_local(dst, dst_kind, acc, MemKind::host, bytes);
}

}  // namespace duct::coll
