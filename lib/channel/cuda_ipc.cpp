// The intra-node channels, cuda_ipc (both ranks have CUDA) and cma (any two
// ranks on one node): one protocol engine.
//
// Every message starts with a header, sent over UCX, that says how the data
// follows; the receiver learns the sender's memory kind from it, so the two
// sides never need to agree on buffer kinds in advance:
//   inline  messages up to DUCT_EAGER_LIMIT travel inside the header.
//   ipc     (cuda_ipc only) the sender's device buffer is exported
//           (cudaIpcGetMemHandle on the allocation base, cached per buffer
//           id); the receiver opens it through the IPC cache, copies with
//           cudaMemcpyAsync on its stream and answers with a FIN. A receiver
//           that cannot open the handle (no peer access, device not
//           visible) answers NACK instead and both sides fall back to a raw
//           transfer; the pair then skips IPC.
//   cma     a host send buffer: the header carries its address and the
//           sender's pid, the receiver copies straight into its host buffer
//           with process_vm_readv(2) (cross-memory attach, one copy) and
//           answers FIN. UCX does the same with its cma transport, but not
//           with peer failure handling on (UCX 1.13 then drops the cma lane
//           and copies twice through shared memory, 1.3-1.6x slower from
//           512 KiB); duct's own copy keeps the speed and reports a dead
//           sender (ESRCH) as a failed peer. A receiver that may not attach
//           (ptrace restrictions) NACKs and the pair uses raw; a device
//           receive buffer answers "not this time" and takes this one raw.
//   raw     the data follows as ucx-channel messages (device buffers that
//           cannot be exported, e.g. cudaMallocAsync; after a NACK).
// The FIN is a host message: the sender's buffer is reusable only once the
// receiver's copy has finished.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "channel/table.hpp"
#include "channel/ucx_channel.hpp"
#include "core/log.hpp"
#include "memory/buffer.hpp"
#include "memory/cma.hpp"
#include "memory/ipc_cache.hpp"

namespace duct::channel {

namespace {

constexpr std::uint32_t kMagic = 0x64756374;  // "duct"
enum class Proto : std::uint32_t { inline_ = 1, ipc = 2, raw = 3, cma = 4 };

struct Header {
  std::uint32_t magic;
  Proto proto;
  std::uint64_t bytes;
  std::uint64_t offset;  // ipc: of the data in the exported allocation
  std::uint64_t base;    // ipc: the allocation; cma: the send buffer's address
  std::uint64_t size;
  unsigned long long buffer_id;
  std::int64_t pid;      // cma: the sender's process
  memory::IpcHandle handle;
};

// The receiver's answer to an ipc or cma header.
enum FinCode : std::uint32_t {
  kFinNever = 0,    // cannot copy from this sender (now or later): raw data follows, and from now on
  kFinCopied = 1,   // copied: the send buffer is free
  kFinNotNow = 2,   // not this message (e.g. a device receive buffer): raw data follows
};
struct Fin {
  std::uint32_t magic;
  std::uint32_t ok;  // a FinCode
};

class IpcChannel;

class IpcSendOp final : public Op {
 public:
  IpcSendOp(IpcChannel& ch, const void* buf, std::size_t bytes, MemKind kind, Tag tag)
      : ch_(ch), buf_(buf), bytes_(bytes), kind_(kind), tag_(tag) {}
  Status start();
  Status advance(bool* done) override;
  std::string describe() const override;

 private:
  enum class Stage { header, wait_fin, raw } stage_ = Stage::header;
  IpcChannel& ch_;
  const void* buf_;
  std::size_t bytes_;
  MemKind kind_;
  Tag tag_;
  Proto proto_ = Proto::raw;
  std::vector<char> header_;
  Fin fin_{};
  Request header_req_, fin_req_, raw_req_;
};

class IpcRecvOp final : public Op {
 public:
  IpcRecvOp(IpcChannel& ch, void* buf, std::size_t bytes, MemKind kind, Tag tag)
      : ch_(ch), buf_(buf), bytes_(bytes), kind_(kind), tag_(tag) {}
  ~IpcRecvOp() override;
  Status start();
  Status advance(bool* done) override;
  std::string describe() const override;

 private:
  Status on_header(bool* done);
  Status send_fin(std::uint32_t code);  // a FinCode
  enum class Stage { header, copying, fin, raw } stage_ = Stage::header;
  IpcChannel& ch_;
  void* buf_;
  std::size_t bytes_;
  MemKind kind_;
  Tag tag_;
  std::vector<char> header_;
  void* header_ucx_ = nullptr;
  memory::Fence fence_;
  memory::IpcKey key_{};
  bool pinned_ = false;
  Fin fin_{};
  Request fin_req_, raw_req_;
};

class IpcChannel final : public Channel {
 public:
  IpcChannel(const PairSetup& s, bool ipc) : raw_(s), allow_ipc_(ipc) {}
  const char* name() const noexcept override { return allow_ipc_ ? "cuda_ipc" : "cma"; }

  // cma pairs send messages up to the eager limit as plain UCX messages: no
  // header, no operation object (both sides know the size; a device buffer
  // on the one side with CUDA is staged by the ucx channel). Measured on 2
  // ranks, 8-byte alltoall and reduce_scatter: 0.8-1.2 us, against 1.9-2.1
  // us through the header protocol (DUCT_CHANNEL=ipc), same runs.
  Status isend(const void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) override {
    if (!allow_ipc_ && bytes <= raw_.setup().eager)
      return raw_.raw_send(buf, bytes, kind, tag, ucx::MsgType::data, req);
    auto op = std::make_unique<IpcSendOp>(*this, buf, bytes, kind, tag);
    DUCT_TRY(op->start());
    req->set_op(std::move(op));
    return Status::ok();
  }
  Status irecv(void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) override {
    if (!allow_ipc_ && bytes <= raw_.setup().eager)
      return raw_.raw_recv(buf, bytes, kind, tag, ucx::MsgType::data, req);
    auto op = std::make_unique<IpcRecvOp>(*this, buf, bytes, kind, tag);
    DUCT_TRY(op->start());
    req->set_op(std::move(op));
    return Status::ok();
  }

  UcxChannel raw_;
  bool allow_ipc_;                 // cuda_ipc: device buffers by IPC handle
  bool peer_cannot_open_ = false;  // sender side: the peer NACKed our handles
  bool cannot_open_ = false;       // receiver side: opening the peer's handles fails
  bool peer_cannot_cma_ = false;   // sender side: the peer may not attach to us
  bool cannot_cma_ = false;        // receiver side: process_vm_readv is refused
};

Status poll(Request& r, bool* done) { return r.active() ? r.test(done) : (*done = true, Status::ok()); }

// ---- sender -------------------------------------------------------------

Status IpcSendOp::start() {
  const PairSetup& s = ch_.raw_.setup();
  Header h{};
  h.magic = kMagic;
  h.bytes = bytes_;
  memory::PtrInfo info;
  if (kind_ == MemKind::device) DUCT_TRY(memory::cuda::query(buf_, &info));
  if (bytes_ <= s.eager) {
    proto_ = Proto::inline_;
  } else if (kind_ == MemKind::host && !ch_.peer_cannot_cma_) {
    proto_ = Proto::cma;
    h.base = reinterpret_cast<std::uintptr_t>(buf_);
    h.pid = static_cast<std::int64_t>(getpid());
  } else if (kind_ == MemKind::device && ch_.allow_ipc_ && info.buffer_id != 0 && !ch_.peer_cannot_open_) {
    proto_ = Proto::ipc;
    DUCT_TRY(memory::IpcExports::instance().handle_for(info, &h.handle));
    h.base = info.base;
    h.size = info.size;
    h.buffer_id = info.buffer_id;
    h.offset = reinterpret_cast<std::uintptr_t>(buf_) - info.base;
  } else {
    proto_ = Proto::raw;
  }
  h.proto = proto_;
  header_.resize(sizeof(Header) + (proto_ == Proto::inline_ ? bytes_ : 0));
  std::memcpy(header_.data(), &h, sizeof h);
  if (proto_ == Proto::inline_ && bytes_ > 0) {
    if (kind_ == MemKind::device)
      DUCT_TRY(memory::cuda::copy(header_.data() + sizeof h, buf_, bytes_));
    else
      std::memcpy(header_.data() + sizeof h, buf_, bytes_);
  }
  DUCT_TRY(ch_.raw_.raw_send(header_.data(), header_.size(), MemKind::host, tag_, ucx::MsgType::header,
                             &header_req_));
  if (proto_ == Proto::ipc || proto_ == Proto::cma) {
    stage_ = Stage::wait_fin;
    return ch_.raw_.raw_recv(&fin_, sizeof fin_, MemKind::host, tag_, ucx::MsgType::fin, &fin_req_);
  }
  if (proto_ == Proto::raw) {
    stage_ = Stage::raw;
    return ch_.raw_.raw_send(buf_, bytes_, kind_, tag_, ucx::MsgType::data, &raw_req_);
  }
  return Status::ok();
}

Status IpcSendOp::advance(bool* done) {
  *done = false;
  bool hd = false;
  DUCT_TRY(poll(header_req_, &hd));
  if (stage_ == Stage::wait_fin) {
    bool fd = false;
    DUCT_TRY(poll(fin_req_, &fd));
    if (!fd) return Status::ok();
    if (fin_.magic != kMagic) return make_error(Errc::internal, "bad FIN from rank %d", ch_.raw_.setup().peer);
    if (fin_.ok != kFinCopied) {
      // The peer did not copy: send the data raw (and from now on, if it never can).
      if (fin_.ok == kFinNever) {
        const bool cma = proto_ == Proto::cma;
        (cma ? ch_.peer_cannot_cma_ : ch_.peer_cannot_open_) = true;
        DUCT_INFO(channel, "rank %d cannot %s this rank's buffers: sending through UCX", ch_.raw_.setup().peer,
                  cma ? "attach to (process_vm_readv)" : "open IPC handles of");
      }
      stage_ = Stage::raw;
      DUCT_TRY(ch_.raw_.raw_send(buf_, bytes_, kind_, tag_, ucx::MsgType::data, &raw_req_));
    } else {
      stage_ = Stage::header;  // copied: only the header send may be left
    }
  }
  bool rd = true;
  if (stage_ == Stage::raw) DUCT_TRY(poll(raw_req_, &rd));
  *done = hd && rd && stage_ != Stage::wait_fin;
  return Status::ok();
}

std::string IpcSendOp::describe() const {
  static const char* names[] = {"?", "inline", "ipc", "raw", "cma"};
  return strprintf("%s %s send of %zu bytes to rank %d (%s)", ch_.name(), names[static_cast<int>(proto_)], bytes_,
                   ch_.raw_.setup().peer, stage_ == Stage::wait_fin ? "waiting for the receiver's copy" : "sending");
}

// ---- receiver -----------------------------------------------------------

IpcRecvOp::~IpcRecvOp() {
  if (header_ucx_) ucx::abandon(header_ucx_, true);
  if (stage_ == Stage::copying) {
    bool done = true;
    while (fence_.ready(&done) && !done) {}
  }
  if (pinned_) memory::IpcCache::instance().release(key_);
}

Status IpcRecvOp::start() {
  const PairSetup& s = ch_.raw_.setup();
  header_.resize(sizeof(Header) + s.eager);
  std::size_t got = 0;
  DUCT_TRY(ucx::recv(s.worker, header_.data(), header_.size(), MemKind::host,
                     ch_.raw_.tag_from_peer(tag_, ucx::MsgType::header), &header_ucx_, &got));
  if (!header_ucx_) {
    bool done = false;
    header_.resize(got);
    return on_header(&done);
  }
  return Status::ok();
}

Status IpcRecvOp::send_fin(std::uint32_t code) {
  fin_ = Fin{kMagic, code};
  return ch_.raw_.raw_send(&fin_, sizeof fin_, MemKind::host, tag_, ucx::MsgType::fin, &fin_req_);
}

Status IpcRecvOp::on_header(bool* done) {
  const PairSetup& s = ch_.raw_.setup();
  if (header_.size() < sizeof(Header))
    return make_error(Errc::internal, "short cuda_ipc header (%zu bytes) from rank %d", header_.size(), s.peer);
  Header h;
  std::memcpy(&h, header_.data(), sizeof h);
  if (h.magic != kMagic) return make_error(Errc::internal, "bad cuda_ipc header from rank %d", s.peer);
  if (h.bytes != bytes_)
    return make_error(Errc::mismatch, "rank %d sends %llu bytes where %zu are expected (do all ranks pass "
                      "the same count and datatype?)", s.peer, static_cast<unsigned long long>(h.bytes), bytes_);
  switch (h.proto) {
    case Proto::inline_:
      if (header_.size() != sizeof(Header) + bytes_)
        return make_error(Errc::internal, "inline message of wrong length from rank %d", s.peer);
      if (bytes_ > 0) {
        if (kind_ == MemKind::device)
          DUCT_TRY(memory::cuda::copy(buf_, header_.data() + sizeof h, bytes_));
        else
          std::memcpy(buf_, header_.data() + sizeof h, bytes_);
      }
      *done = true;
      stage_ = Stage::fin;
      return Status::ok();
    case Proto::raw:
      stage_ = Stage::raw;
      return ch_.raw_.raw_recv(buf_, bytes_, kind_, tag_, ucx::MsgType::data, &raw_req_);
    case Proto::cma: {
      if (kind_ != MemKind::host || ch_.cannot_cma_) {
        DUCT_TRY(send_fin(ch_.cannot_cma_ ? kFinNever : kFinNotNow));
        stage_ = Stage::raw;
        return ch_.raw_.raw_recv(buf_, bytes_, kind_, tag_, ucx::MsgType::data, &raw_req_);
      }
      // One copy from the sender's memory into ours.
      std::size_t done_bytes = 0;
      const int err = memory::cma_read_all(static_cast<long>(h.pid), buf_, h.base, bytes_, &done_bytes);
      if (err != 0) {
        if (err == ESRCH)
          return make_error(Errc::peer_failed, "rank %d (pid %lld) is gone: its process ended during a transfer "
                            "to this rank", s.peer, static_cast<long long>(h.pid));
        if (done_bytes == 0 && (err == EPERM || err == ENOSYS)) {
          DUCT_INFO(channel, "process_vm_readv from rank %d: %s; this pair sends through UCX (check "
                    "/proc/sys/kernel/yama/ptrace_scope)", s.peer, std::strerror(err));
          ch_.cannot_cma_ = true;
          DUCT_TRY(send_fin(kFinNever));
          stage_ = Stage::raw;
          return ch_.raw_.raw_recv(buf_, bytes_, kind_, tag_, ucx::MsgType::data, &raw_req_);
        }
        return make_error(Errc::internal, "process_vm_readv of %zu bytes from rank %d (pid %lld) at %#llx: %s",
                          bytes_, s.peer, static_cast<long long>(h.pid), static_cast<unsigned long long>(h.base),
                          std::strerror(err));
      }
      DUCT_TRY(send_fin(kFinCopied));
      stage_ = Stage::fin;
      return Status::ok();
    }
    case Proto::ipc: {
      void* mapped = nullptr;
      key_ = memory::IpcKey{s.peer_proc, h.buffer_id, h.base, h.size};
      Status st = ch_.cannot_open_ ? make_error(Errc::cuda, "earlier opens failed")
                                   : memory::IpcCache::instance().acquire(key_, h.handle, &mapped);
      if (!st) {
        if (!ch_.cannot_open_)
          DUCT_INFO(channel, "cannot open rank %d's IPC handle (%s): falling back to staged copies", s.peer,
                    st.message().c_str());
        ch_.cannot_open_ = true;
        DUCT_TRY(send_fin(kFinNever));
        stage_ = Stage::raw;
        return ch_.raw_.raw_recv(buf_, bytes_, kind_, tag_, ucx::MsgType::data, &raw_req_);
      }
      pinned_ = true;
      void* stream = nullptr;
      DUCT_TRY(memory::cuda::stream(&stream));
      DUCT_TRY(memory::cuda::copy_async(buf_, memory::at(mapped, h.offset), bytes_, stream));
      DUCT_TRY(fence_.record(stream));
      stage_ = Stage::copying;
      return Status::ok();
    }
  }
  return make_error(Errc::internal, "unknown cuda_ipc protocol %u from rank %d", static_cast<unsigned>(h.proto),
                    s.peer);
}

Status IpcRecvOp::advance(bool* done) {
  *done = false;
  const PairSetup& s = ch_.raw_.setup();
  if (stage_ == Stage::header) {
    if (!header_ucx_) return Status::ok();
    ucp_tag_recv_info_t info{};
    ucs_status_t st = ucp_tag_recv_request_test(header_ucx_, &info);
    if (st == UCS_INPROGRESS) {
      // The header's sender may have died (see ucx::test).
      ucx::Worker* w = ucx::Worker::existing();
      ucs_status_t why;
      if (w && w->failures() > 0 && w->failed(s.ep, &why)) {
        ucx::abandon(header_ucx_, true);
        header_ucx_ = nullptr;
        return ucx::transfer_error(why, true, s.peer);
      }
      return Status::ok();
    }
    ucp_request_free(header_ucx_);
    header_ucx_ = nullptr;
    if (st != UCS_OK) return ucx::transfer_error(st, true, s.peer).context("receiving a cuda_ipc header");
    header_.resize(info.length);
    bool d = false;
    DUCT_TRY(on_header(&d));
    if (d) {
      *done = true;
      return Status::ok();
    }
  }
  if (stage_ == Stage::copying) {
    bool ready = false;
    DUCT_TRY(fence_.ready(&ready));
    if (!ready) return Status::ok();
    memory::IpcCache::instance().release(key_);
    pinned_ = false;
    DUCT_TRY(send_fin(kFinCopied));
    stage_ = Stage::fin;
  }
  bool fd = false, rd = true;
  DUCT_TRY(poll(fin_req_, &fd));
  if (stage_ == Stage::raw) DUCT_TRY(poll(raw_req_, &rd));
  *done = fd && rd;
  return Status::ok();
}

std::string IpcRecvOp::describe() const {
  static const char* stages[] = {"waiting for the header", "copying", "sending FIN", "receiving raw data"};
  return strprintf("%s receive of %zu bytes from rank %d (%s)", ch_.name(), bytes_, ch_.raw_.setup().peer,
                   stages[static_cast<int>(stage_)]);
}

}  // namespace

std::unique_ptr<Channel> make_cuda_ipc_channel(const PairSetup& s) { return std::make_unique<IpcChannel>(s, true); }
std::unique_ptr<Channel> make_cma_channel(const PairSetup& s) { return std::make_unique<IpcChannel>(s, false); }

}  // namespace duct::channel
