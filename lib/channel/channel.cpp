// Requests and the progress engine.
#include "channel/channel.hpp"

#include <algorithm>
#include <vector>

#include "channel/ucx.hpp"

namespace duct::channel {

namespace {
std::vector<Op*> g_active;  // multi-stage operations to advance
}

void activate(Op* op) {
  if (op->registered) return;
  op->registered = true;
  g_active.push_back(op);
}

void deactivate(Op* op) noexcept {
  if (!op->registered) return;
  op->registered = false;
  auto it = std::find(g_active.begin(), g_active.end(), op);
  if (it != g_active.end()) g_active.erase(it);
}

const std::vector<Op*>& active_ops() noexcept { return g_active; }

unsigned progress() {
  // UCX events are not counted: keepalive traffic would look like progress.
  unsigned events = 0;
  if (ucx::Worker* w = ucx::Worker::existing()) w->progress();
  if (g_active.empty()) return events;
  // Advance multi-stage operations. An advance may start or destroy nested
  // operations, so walk a snapshot and skip those no longer registered.
  thread_local std::vector<Op*> snapshot;
  snapshot.assign(g_active.begin(), g_active.end());
  for (Op* op : snapshot) {
    if (std::find(g_active.begin(), g_active.end(), op) == g_active.end()) continue;
    bool done = false;
    Status st = op->advance(&done);
    if (!st || done) {
      deactivate(op);
      op->finished = true;
      op->result = std::move(st);
      ++events;
    }
  }
  return events;
}

bool sends_may_linger() noexcept {
  ucx::Worker* w = ucx::Worker::existing();
  return w && w->tcp_sent();
}

std::string describe_active() {
  std::string out;
  for (Op* op : g_active) out += "  " + op->describe() + "\n";
  return out;
}

Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    reset();
    ucx_ = o.ucx_;
    is_recv_ = o.is_recv_;
    expect_ = o.expect_;
    peer_ = o.peer_;
    ep_ = o.ep_;
    op_ = std::move(o.op_);
    status_ = std::move(o.status_);
    o.ucx_ = nullptr;
  }
  return *this;
}

void Request::set_ucx(void* ucx_req, bool is_recv, std::size_t expect, int peer, void* ep) {
  reset();
  ucx_ = ucx_req;
  is_recv_ = is_recv;
  expect_ = expect;
  peer_ = peer;
  ep_ = ep;
}

void Request::set_op(std::unique_ptr<Op> op) {
  reset();
  op_ = std::move(op);
  if (!op_->finished) activate(op_.get());
}

void Request::reset() noexcept {
  if (ucx_) {
    ucx::abandon(ucx_, is_recv_);
    ucx_ = nullptr;
  }
  if (op_) {
    deactivate(op_.get());
    op_.reset();
  }
  status_ = Status::ok();
}

Status Request::test(bool* done) {
  if (ucx_) {
    bool d = false;
    Status st = ucx::test(ucx_, is_recv_, expect_, peer_, static_cast<ucp_ep_h>(ep_), &d);
    if (d) {
      ucx_ = nullptr;
      status_ = std::move(st);
    }
    *done = d;
    return d ? status_ : Status::ok();
  }
  if (op_) {
    if (!op_->finished) {
      *done = false;
      return Status::ok();
    }
    status_ = std::move(op_->result);
    op_.reset();
  }
  *done = true;
  return status_;
}

std::string Request::describe() const {
  if (ucx_) return strprintf("ucx %s of %zu bytes %s rank %d", is_recv_ ? "receive" : "send", expect_,
                             is_recv_ ? "from" : "to", peer_);
  if (op_) return op_->describe();
  return "complete";
}

}  // namespace duct::channel
