// The ucx channel: direct UCX tag messages, chunked and staged through
// pinned host bounce buffers where UCX cannot reach device memory.
#include "channel/ucx_channel.hpp"

#include <memory>

#include "core/log.hpp"
#include "memory/buffer.hpp"

namespace duct::channel {

namespace {

// A message split into chunks, at most `depth` in flight. Chunk sends are
// issued and chunk receives posted in chunk order, and whole messages in
// the order they were posted on the pair (UcxChannel::Order), so UCX's
// in-order matching pairs them up on the two sides.
class ChunkedOp final : public Op {
 public:
  ChunkedOp(const PairSetup& s, UcxChannel::Order* order, bool is_send, void* buf, std::size_t bytes, MemKind kind,
            std::uint64_t tag, bool staged)
      : s_(s), order_(order), ticket_(order->next++), send_(is_send), buf_(buf), bytes_(bytes), kind_(kind),
        tag_(tag), staged_(staged) {
    chunk_ = s.chunk ? s.chunk : bytes;
    nchunks_ = bytes == 0 ? 1 : (bytes + chunk_ - 1) / chunk_;
    depth_ = static_cast<std::size_t>(s.depth < 1 ? 1 : s.depth);
    slots_ = std::make_unique<Slot[]>(depth_);
  }

  ~ChunkedOp() override {
    // Abandoned before its last chunk went to UCX (an error): let the
    // messages behind it go on.
    if (order_->turn == ticket_) ++order_->turn;
    for (std::size_t i = 0; i < depth_; ++i) {
      Slot& sl = slots_[i];
      if (sl.ucx) ucx::abandon(sl.ucx, !send_);
      if (sl.bounce) {
        bool done = true;
        // A copy may still run into/out of the bounce buffer: wait for it.
        while (sl.fence.ready(&done) && !done) {}
        memory::BouncePool::instance().release(sl.bounce, send_);
      }
    }
  }

  Status advance(bool* done) override {
    if (staged_ && !stream_) DUCT_TRY(memory::cuda::stream(&stream_));
    for (std::size_t i = first_; i < next_; ++i) DUCT_TRY(step(slot(i), i));
    while (first_ < next_ && slot(first_).stage == Stage::idle) ++first_;
    while (next_ < nchunks_ && next_ - first_ < depth_) {
      Slot& sl = slot(next_);
      sl.stage = Stage::start;
      ++next_;
      DUCT_TRY(step(sl, next_ - 1));
      if (sl.stage == Stage::start) break;  // no bounce buffer free yet
    }
    while (first_ < next_ && slot(first_).stage == Stage::idle) ++first_;
    *done = first_ == nchunks_;
    return Status::ok();
  }

  std::string describe() const override {
    const char* where = "";
    if (first_ < next_) {
      const Slot& sl = slots_[first_ % depth_];
      switch (sl.stage) {
        case Stage::start:
          where = !sl.bounce && staged_ && first_ == issued_ && my_turn(first_)
                      ? ", waiting for a free bounce buffer"
                      : ", waiting for the messages before it on this pair";
          break;
        case Stage::copying: where = ", copying into its bounce buffer"; break;
        case Stage::transfer: where = ", in UCX"; break;
        case Stage::unstaging: where = ", copying out of its bounce buffer"; break;
        case Stage::idle: break;
      }
    }
    return strprintf("ucx %s %s of %zu bytes %s rank %d (chunk %zu of %zu in flight%s; bounce buffers: %s)",
                     staged_ ? "staged" : "chunked", send_ ? "send" : "receive", bytes_,
                     send_ ? "to" : "from", s_.peer, first_, nchunks_, where,
                     memory::BouncePool::instance().describe().c_str());
  }

 private:
  enum class Stage { idle, start, copying, transfer, unstaging };
  struct Slot {
    Stage stage = Stage::idle;
    void* bounce = nullptr;
    void* ucx = nullptr;
    memory::Fence fence;
  };

  Slot& slot(std::size_t i) { return slots_[i % depth_]; }
  std::size_t len(std::size_t i) const { return i + 1 < nchunks_ ? chunk_ : bytes_ - i * chunk_; }
  void* at(std::size_t i) const { return memory::at(buf_, i * chunk_); }

  // Chunk i may go to UCX: the first chunk waits for this message's turn.
  bool my_turn(std::size_t i) const { return i > 0 || order_->turn == ticket_; }

  Status post_transfer(Slot& sl, std::size_t i, void* data, MemKind k) {
    if (i + 1 == nchunks_) ++order_->turn;  // the last chunk: the next message may follow
    std::size_t got = 0;
    if (send_) {
      DUCT_TRY(ucx::send(s_.ep, data, len(i), k, tag_, &sl.ucx));
    } else {
      DUCT_TRY(ucx::recv(s_.worker, data, len(i), k, tag_, &sl.ucx, &got));
      if (!sl.ucx) DUCT_TRY(ucx::check_length(got, len(i), s_.peer));
    }
    sl.stage = Stage::transfer;
    return Status::ok();
  }

  Status step(Slot& sl, std::size_t i) {
    bool ready = false;
    switch (sl.stage) {
      case Stage::idle:
        return Status::ok();
      case Stage::start:
        if (i != issued_) return Status::ok();  // keep chunk order
        if (!send_ && !my_turn(i)) return Status::ok();  // receives posted in message order
        if (!staged_) {
          if (!my_turn(i)) return Status::ok();
          ++issued_;
          return post_transfer(sl, i, at(i), kind_);
        }
        // A staged send copies into its bounce buffer ahead of its turn,
        // but only within the pool's limit for that (a ring posts a whole
        // block's segment sends at once: had each taken a buffer, none
        // would be left for the receives; BouncePool::acquire).
        DUCT_TRY(memory::BouncePool::instance().acquire(&sl.bounce, send_, my_turn(i)));
        if (!sl.bounce) return Status::ok();
        if (send_) {
          DUCT_TRY(memory::cuda::copy_async(sl.bounce, at(i), len(i), stream_));
          DUCT_TRY(sl.fence.record(stream_));
          sl.stage = Stage::copying;
          ++issued_;
          return Status::ok();
        }
        ++issued_;
        return post_transfer(sl, i, sl.bounce, MemKind::host);
      case Stage::copying:  // send: device -> bounce
        DUCT_TRY(sl.fence.ready(&ready));
        if (!ready || i != sent_ || !my_turn(i)) return Status::ok();
        ++sent_;
        return post_transfer(sl, i, sl.bounce, MemKind::host);
      case Stage::transfer:
        if (sl.ucx) {
          bool d = false;
          Status st = ucx::test(sl.ucx, !send_, len(i), s_.peer, s_.ep, &d);
          if (!d) return Status::ok();
          sl.ucx = nullptr;
          DUCT_TRY(st);
        }
        if (staged_ && !send_) {  // bounce -> device
          DUCT_TRY(memory::cuda::copy_async(at(i), sl.bounce, len(i), stream_));
          DUCT_TRY(sl.fence.record(stream_));
          sl.stage = Stage::unstaging;
          return Status::ok();
        }
        return finish(sl);
      case Stage::unstaging:
        DUCT_TRY(sl.fence.ready(&ready));
        return ready ? finish(sl) : Status::ok();
    }
    return Status::ok();
  }

  Status finish(Slot& sl) {
    if (sl.bounce) memory::BouncePool::instance().release(sl.bounce, send_);
    sl.bounce = nullptr;
    sl.stage = Stage::idle;
    return Status::ok();
  }

  PairSetup s_;
  UcxChannel::Order* order_;
  std::uint64_t ticket_;
  bool send_;
  void* buf_;
  std::size_t bytes_;
  MemKind kind_;
  std::uint64_t tag_;
  bool staged_;
  std::size_t chunk_ = 0, nchunks_ = 0, depth_ = 1;
  std::size_t first_ = 0, next_ = 0;  // chunks [first_, next_) occupy slots
  std::size_t issued_ = 0;            // chunks whose copy/receive was started, in order
  std::size_t sent_ = 0;              // staged sends handed to UCX, in order
  void* stream_ = nullptr;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace

Status UcxChannel::raw_send(const void* buf, std::size_t bytes, MemKind kind, Tag tag,
                            ucx::MsgType type, Request* req) {
  bool staged = kind == MemKind::device && !s_.direct_device;
  std::uint64_t t = tag_to_peer(tag, type);
  if (!staged && (s_.chunk == 0 || bytes <= s_.chunk) && send_order_.idle()) {
    void* r = nullptr;
    DUCT_TRY(ucx::send(s_.ep, buf, bytes, kind, t, &r));
    if (r)
      req->set_ucx(r, false, bytes, s_.peer, s_.ep);
    else
      req->set_done(Status::ok());
    return Status::ok();
  }
  if (staged && s_.chunk == 0)
    return make_error(Errc::internal, "device buffer to rank %d on a pair set up without chunking", s_.peer);
  req->set_op(std::make_unique<ChunkedOp>(s_, &send_order_, true, const_cast<void*>(buf), bytes, kind, t, staged));
  return Status::ok();
}

Status UcxChannel::raw_recv(void* buf, std::size_t bytes, MemKind kind, Tag tag, ucx::MsgType type,
                            Request* req) {
  bool staged = kind == MemKind::device && !s_.direct_device;
  std::uint64_t t = tag_from_peer(tag, type);
  if (!staged && (s_.chunk == 0 || bytes <= s_.chunk) && recv_order_.idle()) {
    void* r = nullptr;
    std::size_t got = 0;
    DUCT_TRY(ucx::recv(s_.worker, buf, bytes, kind, t, &r, &got));
    if (r)
      req->set_ucx(r, true, bytes, s_.peer, s_.ep);
    else
      req->set_done(ucx::check_length(got, bytes, s_.peer));
    return Status::ok();
  }
  if (staged && s_.chunk == 0)
    return make_error(Errc::internal, "device buffer from rank %d on a pair set up without chunking", s_.peer);
  req->set_op(std::make_unique<ChunkedOp>(s_, &recv_order_, false, buf, bytes, kind, t, staged));
  return Status::ok();
}

}  // namespace duct::channel
