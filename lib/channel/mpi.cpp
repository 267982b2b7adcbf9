// duct channel `mpi`: byte ranges over the MPI library's own point-to-point
// calls (PMPI_Isend / PMPI_Irecv / PMPI_Testall), for every rank pair.
//
// Where UCX is absent or is not the fabric's transport (MPICH or Cray MPICH
// over libfabric, an Open MPI without UCX), and under a simulator that
// times only MPI messages (SimGrid's SMPI), duct's own algorithms still run
// over this channel (DUCT_CHANNEL=mpi).
//
// Messages travel on a duplicate of the user's communicator made once when
// the context is created (so no message of the application can match one of
// duct's, whatever tags and MPI_ANY_TAG it uses), with the tag
//   ((seq mod 2^14) * 2^12 + step) mod (MPI_TAG_UB + 1)
// so that a pair's concurrent collectives (nonblocking calls) match by
// sequence number and step, as over UCX. MPI's non-overtaking rule keeps the
// order of messages with equal tags, which the algorithms rely on (several
// segments under one tag). A message above 1 GiB goes as several messages
// of at most 1 GiB under the same tag (MPI counts are int).
//
// Device memory: where the MPI library is CUDA-aware
// (MPIX_Query_cuda_support() answers 1 at run time), device pointers are
// handed to it directly; otherwise a send copies the range to a host buffer
// first and a receive copies it to the device after the message arrived
// (one copy each way, not pipelined: this channel is for reach, the ucx and
// cuda_ipc channels for speed).
#include "channel/mpi_channel.hpp"

#include <mpi.h>

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/log.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace duct::channel {

namespace {

constexpr std::size_t kMaxPiece = std::size_t{1} << 30;
constexpr double kCancelSeconds = 0.1;  // an abandoned receive's cancellation, at most

std::string mpi_message(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS) return strprintf("MPI error %d", rc);
  return std::string(text, static_cast<std::size_t>(len));
}

// One send or receive: its MPI requests (one per piece), and for device
// memory without a CUDA-aware MPI the host copy that stages it.
class MpiOp final : public Op {
 public:
  MpiOp(bool recv, void* user, std::size_t bytes, int peer, int tag)
      : recv_(recv), user_(user), bytes_(bytes), peer_(peer), tag_(tag) {}
  ~MpiOp() override {
    // Abandoned (an error or a timeout elsewhere in the collective): a
    // pending receive is cancelled; a pending send is left to the library
    // (MPI_Request_free), and its staging buffer, which the library may
    // still read, is left allocated. A receive that has already matched a
    // message (a rendezvous whose sender died, say) cannot be cancelled and
    // may never complete: after kCancelSeconds it is left to the library
    // too, with its staging buffer (waiting for it hung a survivor of a
    // killed rank in Open MPI 4.1, ft-np12-mpi).
    bool pending = false, left = false;
    for (MPI_Request& r : reqs_) {
      if (r == MPI_REQUEST_NULL) continue;
      pending = true;
      if (recv_) {
        (void)PMPI_Cancel(&r);
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kCancelSeconds);
        int done = 0;
        while (!done && PMPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && std::chrono::steady_clock::now() < until)
          sched_yield();
        if (!done && r != MPI_REQUEST_NULL) {
          (void)PMPI_Request_free(&r);
          left = true;
        }
      } else {
        (void)PMPI_Request_free(&r);
      }
    }
    if (((pending && !recv_) || left) && !staged_.empty()) (void)new std::vector<char>(std::move(staged_));
  }

  Status post(MPI_Comm comm, bool staged_device) {
    char* p = static_cast<char*>(user_);
    if (staged_device) {
      staged_.resize(bytes_);
      if (!recv_ && bytes_) DUCT_TRY(memory::cuda::copy(staged_.data(), user_, bytes_).context("staging a device send"));
      p = staged_.data();
    }
    std::size_t off = 0;
    do {
      const int n = static_cast<int>(std::min(kMaxPiece, bytes_ - off));
      MPI_Request r = MPI_REQUEST_NULL;
      const int rc = recv_ ? PMPI_Irecv(p + off, n, MPI_BYTE, peer_, tag_, comm, &r)
                           : PMPI_Isend(p + off, n, MPI_BYTE, peer_, tag_, comm, &r);
      if (rc != MPI_SUCCESS)
        return make_error(Errc::mpi, "%s of %d bytes %s rank %d: %s", recv_ ? "MPI_Irecv" : "MPI_Isend", n,
                          recv_ ? "from" : "to", peer_, mpi_message(rc).c_str());
      reqs_.push_back(r);
      expect_.push_back(n);
      off += static_cast<std::size_t>(n);
    } while (off < bytes_);
    statuses_.resize(reqs_.size());
    return Status::ok();
  }

  Status advance(bool* done) override {
    *done = false;
    int flag = 0;
    const int rc = PMPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, statuses_.data());
    if (rc != MPI_SUCCESS)
      return make_error(Errc::mpi, "%s: %s", describe().c_str(), mpi_message(rc).c_str());
    if (!flag) return Status::ok();
    if (recv_) {
      for (std::size_t i = 0; i < statuses_.size(); ++i) {
        int got = 0;
        // A request completed by wait_for_any_message() is null here (its
        // status, empty from PMPI_Testall, was kept aside).
        const bool elsewhere = i < waited_.size() && waited_[i];
        (void)PMPI_Get_count(elsewhere ? &*waited_[i] : &statuses_[i], MPI_BYTE, &got);
        if (got != expect_[i])
          return make_error(Errc::mismatch, "%s: rank %d sent %d bytes where %d were expected", describe().c_str(),
                            peer_, got, expect_[i]);
      }
      if (!staged_.empty() && bytes_)
        DUCT_TRY(memory::cuda::copy(user_, staged_.data(), bytes_).context("unstaging a device receive"));
    }
    *done = true;
    return Status::ok();
  }

  std::string describe() const override {
    return strprintf("mpi %s of %zu bytes %s rank %d (tag %d)", recv_ ? "receive" : "send", bytes_,
                     recv_ ? "from" : "to", peer_, tag_);
  }

  // wait_for_any_message(): the pending requests, and the completion of one.
  std::vector<MPI_Request>& requests() noexcept { return reqs_; }
  void completed(std::size_t i, const MPI_Status& st) {
    reqs_[i] = MPI_REQUEST_NULL;
    if (waited_.size() < reqs_.size()) waited_.resize(reqs_.size());
    waited_[i] = st;
  }

 private:
  bool recv_;
  void* user_;
  std::size_t bytes_;
  int peer_, tag_;
  std::vector<MPI_Request> reqs_;
  std::vector<int> expect_;
  std::vector<MPI_Status> statuses_;  // PMPI_Testall's, kept so that a poll allocates nothing
  std::vector<char> staged_;
  // The statuses of requests that wait_for_any_message() completed (empty
  // for the others).
  std::vector<std::optional<MPI_Status>> waited_;
};

}  // namespace

bool wait_for_any_message() {
  thread_local std::vector<MPI_Request> all;
  thread_local std::vector<std::pair<MpiOp*, std::size_t>> where;
  all.clear();
  where.clear();
  for (Op* op : active_ops()) {
    auto* m = dynamic_cast<MpiOp*>(op);
    if (!m) continue;
    std::vector<MPI_Request>& r = m->requests();
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (r[i] == MPI_REQUEST_NULL) continue;
      all.push_back(r[i]);
      where.emplace_back(m, i);
    }
  }
  if (all.empty()) return false;
  int index = MPI_UNDEFINED;
  MPI_Status st;
  if (PMPI_Waitany(static_cast<int>(all.size()), all.data(), &index, &st) != MPI_SUCCESS) return false;
  if (index == MPI_UNDEFINED) return false;
  where[static_cast<std::size_t>(index)].first->completed(where[static_cast<std::size_t>(index)].second, st);
  return true;
}

bool mpi_cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

int MpiChannel::tag(Tag t) const noexcept {
  const long long raw = (static_cast<long long>(t.seq & 0x3fffu) << 12) | (t.step & 0xfffu);
  return static_cast<int>(raw % (static_cast<long long>(tag_ub_) + 1));
}

Status MpiChannel::start(bool recv, void* buf, std::size_t bytes, MemKind kind, Tag t, Request* req) {
  auto op = std::make_unique<MpiOp>(recv, buf, bytes, peer_, tag(t));
  DUCT_TRY(op->post(comm_, kind == MemKind::device && !cuda_aware_));
  bool done = false;
  Status st = op->advance(&done);  // often complete at once (eager sends, self-matched receives)
  if (!st) return st;
  if (done) {
    req->set_done(Status::ok());
    return Status::ok();
  }
  req->set_op(std::move(op));
  return Status::ok();
}

}  // namespace duct::channel
