// Requests of nonblocking collectives: generalized requests, Open MPI's
// progress hook, DUCT_Wait / DUCT_Test / DUCT_Waitall / DUCT_Testall.
#include "capi/requests.hpp"

#include <dlfcn.h>

#include <mutex>
#include <unordered_map>

#include "capi/errors.hpp"
#include "core/log.hpp"
#include "duct/duct.h"

namespace duct::capi {

namespace {

// A duct request as MPI knows it (the generalized request's extra_state).
struct Handle {
  coll::Pending* p = nullptr;
  MPI_Request req = MPI_REQUEST_NULL;
  bool quiet = false;  // completed through DUCT_Wait & co., which report the error themselves
};

struct Registry {
  std::mutex m;
  std::unordered_map<MPI_Request, Handle*> live;
};
Registry& registry() {
  static Registry* r = new Registry;  // outlives static destruction (MPI may free requests late)
  return *r;
}

Handle* find(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return nullptr;
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.m);
  auto it = reg.live.find(r);
  return it == reg.live.end() ? nullptr : it->second;
}

int query_fn(void* extra, MPI_Status* status) {
  auto* h = static_cast<Handle*>(extra);
  MPI_Status_set_elements_x(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  const Status& st = h->p->result();
  if (st.is_ok() || h->quiet) return MPI_SUCCESS;
  return error_code(h->p->comm, h->p->call, st);
}

int free_fn(void* extra) {
  auto* h = static_cast<Handle*>(extra);
  // Open MPI calls this from MPI_Grequest_complete when the application
  // freed the request before (MPI_Request_free); an MPI that called it at
  // the free itself has destroyed the request: do not complete it then.
  if (!h->p->done()) h->p->on_complete = nullptr;
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.m);
    reg.live.erase(h->req);
  }
  coll::release(h->p);
  delete h;
  return MPI_SUCCESS;
}

// A collective cannot be cancelled (MPI-4.0 §6.12): nothing to do.
int cancel_fn(void*, int) { return MPI_SUCCESS; }

// ---- Open MPI's progress loop -------------------------------------------------------
int opal_hook() { return static_cast<int>(coll::progress_outside()); }

bool g_hooked = false;

void install_progress_hook() {
  static std::once_flag once;
  std::call_once(once, [] {
    using Register = int (*)(int (*)());
    auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
    if (reg && reg(&opal_hook) == 0) {
      g_hooked = true;
      DUCT_INFO(capi, "registered with Open MPI's progress loop: MPI_Wait/MPI_Test progress duct's nonblocking "
                      "collectives, and a rank waiting in the MPI library still sends what its completed "
                      "collectives left in UCX's TCP buffers");
    } else {
      DUCT_INFO(capi, "this MPI library has no progress hook duct knows: complete duct's requests with "
                      "DUCT_Wait/DUCT_Test/DUCT_Waitall/DUCT_Testall, and over TCP the tail of a rank's last "
                      "message of a collective moves on at its next duct call");
    }
  });
}

}  // namespace

bool mpi_wait_progresses_duct() {
  install_progress_hook();
  return g_hooked;
}

int hand_out(coll::Pending* p, MPI_Request* req, const std::function<Status()>& start) {
  install_progress_hook();
  auto* h = new Handle{p};
  int rc = PMPI_Grequest_start(&query_fn, &free_fn, &cancel_fn, h, req);
  if (rc != MPI_SUCCESS) {
    MPI_Comm comm = p->comm;
    const char* call = p->call;
    delete h;
    delete p;
    return raise(comm, call, mpi_error(rc, "MPI_Grequest_start"));
  }
  h->req = *req;
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.m);
    reg.live[*req] = h;
  }
  const MPI_Request grequest = *req;
  p->on_complete = [grequest](coll::Pending&) { PMPI_Grequest_complete(grequest); };
  Status st = start();
  if (!st) {
    // Not started: complete the request quietly and free it (free_fn deletes p).
    h->quiet = true;
    if (!p->done()) coll::start_done(p);
    MPI_Comm comm = p->comm;
    const char* call = p->call;
    PMPI_Request_free(req);
    *req = MPI_REQUEST_NULL;
    return raise(comm, call, st);
  }
  return MPI_SUCCESS;
}

namespace {

// Hand a finished duct request back to MPI (`complete`: PMPI_Wait or
// PMPI_Test, which frees it, and the Pending with it) and raise `st`, its
// collective's outcome (a copy: the Pending goes), on its communicator.
template <class F>
int complete_ours(Handle* h, Status st, F&& complete) {
  h->quiet = true;
  const MPI_Comm comm = h->p->comm;
  const char* call = h->p->call;
  int rc = complete();
  if (rc != MPI_SUCCESS) return rc;
  return st ? MPI_SUCCESS : raise(comm, call, st);
}

// One test of one request; duct's requests report their own errors.
// *flag when complete (the request is then freed by MPI, as MPI_Test does).
int test_one(MPI_Request* r, int* flag, MPI_Status* status) {
  coll::progress_pending();
  Handle* h = find(*r);
  if (!h) return PMPI_Test(r, flag, status);
  if (!h->p->done()) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return complete_ours(h, h->p->result(), [&] { return PMPI_Test(r, flag, status); });
}

int bad_arg(const char* call, const char* what) {
  return raise(MPI_COMM_NULL, call, make_error(Errc::arg, "%s", what));
}

}  // namespace

}  // namespace duct::capi

using namespace duct;
using namespace duct::capi;

extern "C" int DUCT_Wait(MPI_Request* request, MPI_Status* status) {
  if (!request) return bad_arg("DUCT_Wait", "request = NULL");
  Handle* h = find(*request);
  if (!h) {
    // Someone else's request: wait for it, keeping duct's collectives moving.
    for (;;) {
      int flag = 0;
      int rc = PMPI_Test(request, &flag, status);
      if (rc != MPI_SUCCESS || flag) return rc;
      coll::progress_pending();
    }
  }
  // Quiet from before the wait, as it always was (complete_ours sets it
  // again): DUCT_Wait raises the collective's error itself.
  h->quiet = true;
  return complete_ours(h, coll::wait_pending(h->p), [&] { return PMPI_Wait(request, status); });  // complete already
}

extern "C" int DUCT_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!request) return bad_arg("DUCT_Test", "request = NULL");
  if (!flag) return bad_arg("DUCT_Test", "flag = NULL");
  return test_one(request, flag, status);
}

extern "C" int DUCT_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (count < 0) return bad_arg("DUCT_Testall", "count is negative");
  if (count > 0 && !requests) return bad_arg("DUCT_Testall", "requests = NULL");
  if (!flag) return bad_arg("DUCT_Testall", "flag = NULL");
  // MPI_Testall completes none unless all are complete: look first.
  coll::progress_pending();
  std::vector<Handle*> ours;
  for (int i = 0; i < count; ++i) {
    Handle* h = find(requests[i]);
    if (!h) continue;
    if (!h->p->done()) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    ours.push_back(h);
  }
  // Every duct request is complete: quiet them, let MPI complete the lot.
  std::vector<std::pair<MPI_Comm, std::pair<const char*, Status>>> errors;
  for (Handle* h : ours) {
    h->quiet = true;
    if (!h->p->result()) errors.push_back({h->p->comm, {h->p->call, h->p->result()}});
  }
  int rc = PMPI_Testall(count, requests, flag, statuses);
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
  for (auto& e : errors) rc = raise(e.first, e.second.first, e.second.second);
  return rc;
}

extern "C" int DUCT_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (count < 0) return bad_arg("DUCT_Waitall", "count is negative");
  if (count > 0 && !requests) return bad_arg("DUCT_Waitall", "requests = NULL");
  for (;;) {
    int flag = 0;
    int rc = DUCT_Testall(count, requests, &flag, statuses);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}
