#include "capi/errors.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "coll/context.hpp"
#include "core/log.hpp"
#include "duct/duct.h"

namespace duct::capi {

namespace {

static_assert(static_cast<int>(Errc::arg) == DUCT_ERRCLASS_ARG);
static_assert(static_cast<int>(Errc::overlap) == DUCT_ERRCLASS_OVERLAP);
static_assert(static_cast<int>(Errc::unmapped) == DUCT_ERRCLASS_UNMAPPED);
static_assert(static_cast<int>(Errc::config) == DUCT_ERRCLASS_CONFIG);
static_assert(static_cast<int>(Errc::timeout) == DUCT_ERRCLASS_TIMEOUT);
static_assert(static_cast<int>(Errc::peer_failed) == DUCT_ERRCLASS_PEER_FAILED);
static_assert(static_cast<int>(Errc::internal) == DUCT_ERRCLASS_INTERNAL);
static_assert(static_cast<int>(Errc::revoked) == DUCT_ERRCLASS_REVOKED);
static_assert(static_cast<int>(Errc::count_) == DUCT_ERRCLASS_REVOKED + 1);

constexpr std::size_t kMaxCodes = 4096;

struct Registry {
  std::mutex mutex;
  bool registered = false;
  int classes[static_cast<int>(Errc::count_)] = {};
  std::map<std::string, int> codes;  // message -> code
};

Registry& reg() {
  static Registry r;
  return r;
}

bool mpi_usable() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

// With reg().mutex held.
bool register_classes() {
  Registry& r = reg();
  if (r.registered) return true;
  if (!mpi_usable()) return false;
#ifdef DUCT_SIM
  return false;  // SimGrid's SMPI (3.32) has no MPI_Add_error_class: duct's errors are MPI_ERR_OTHER there
#endif
  for (int e = 1; e < static_cast<int>(Errc::count_); ++e) {
    int cls = MPI_ERR_UNKNOWN;
    if (MPI_Add_error_class(&cls) != MPI_SUCCESS) return false;
    std::string text = std::string("duct: ") + errc_name(static_cast<Errc>(e));
    if (MPI_Add_error_string(cls, const_cast<char*>(text.c_str())) != MPI_SUCCESS)
      DUCT_DEBUG(capi, "MPI_Add_error_string for class %d failed: MPI_Error_string will not name it", cls);
    r.classes[e] = cls;
  }
  r.registered = true;
  // MPI forgets the classes at MPI_Finalize; so does duct.
  coll::Runtime* rt = nullptr;
  if (coll::Runtime::get(&rt)) rt->on_finalize([] {
      std::lock_guard<std::mutex> lock(reg().mutex);
      reg().registered = false;
      reg().codes.clear();
    });
  return true;
}

int code_for(Errc e, const std::string& message) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!register_classes()) return MPI_ERR_UNKNOWN;
  int cls = r.classes[static_cast<int>(e)];
  auto it = r.codes.find(message);
  if (it != r.codes.end()) return it->second;
  if (r.codes.size() >= kMaxCodes) return cls;  // bounded: later messages share the class text
  int code = cls;
  if (MPI_Add_error_code(cls, &code) != MPI_SUCCESS) return cls;
  if (MPI_Add_error_string(code, const_cast<char*>(message.c_str())) != MPI_SUCCESS) return cls;  // the class text still explains
  r.codes.emplace(message, code);
  return code;
}

}  // namespace

int error_class(Errc e) noexcept {
  if (e <= Errc::ok || e >= Errc::count_) return MPI_ERR_UNKNOWN;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!register_classes()) return MPI_ERR_UNKNOWN;
  return r.classes[static_cast<int>(e)];
}

namespace {
// "CALL on rank R: MESSAGE", at most MPI_MAX_ERROR_STRING - 1 characters.
std::string describe(MPI_Comm comm, const char* call, const Status& st) {
  int rank = -1;
  if (mpi_usable()) {
    if (comm != MPI_COMM_NULL)
      MPI_Comm_rank(comm, &rank);
    else
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  std::string msg = strprintf("%s on rank %d: %s", call, rank, st.message().c_str());
  if (msg.size() >= MPI_MAX_ERROR_STRING) msg.erase(MPI_MAX_ERROR_STRING - 1);
  return msg;
}

// error_code's work; the message it registered goes to *text when asked.
int code_and_text(MPI_Comm comm, const char* call, const Status& st, std::string* text) noexcept {
  try {
    std::string msg = describe(comm, call, st);
    DUCT_INFO(capi, "%s (%s)", msg.c_str(), errc_name(st.code()));
    int code = MPI_ERR_OTHER;
    if (!mpi_usable())
      std::fprintf(stderr, "duct: %s\n", msg.c_str());
    else
      code = code_for(st.code(), msg);
    if (text != nullptr) *text = std::move(msg);
    return code;
  } catch (...) {
    std::fprintf(stderr, "duct: %s: %s\n", call, st.message().c_str());
    return MPI_ERR_OTHER;
  }
}
}  // namespace

int error_code(MPI_Comm comm, const char* call, const Status& st) noexcept {
  if (st.is_ok()) return MPI_SUCCESS;
  return code_and_text(comm, call, st, nullptr);
}

int raise(MPI_Comm comm, const char* call, const Status& st) noexcept {
  if (st.is_ok()) return MPI_SUCCESS;
  std::string text;  // the message, for the simulation's fatal handler below
  const int code = code_and_text(comm, call, st, &text);
  if (!mpi_usable()) return code;
#if MPI_VERSION >= 4
  MPI_Comm handler_comm = comm != MPI_COMM_NULL ? comm : MPI_COMM_SELF;
#else
  MPI_Comm handler_comm = comm != MPI_COMM_NULL ? comm : MPI_COMM_WORLD;
#endif
#ifdef DUCT_SIM
  // SimGrid's SMPI (3.32) calls a null function for both predefined
  // handlers in MPI_Comm_call_errhandler (the simulation then dies of a
  // segmentation fault): MPI_ERRORS_RETURN returns the code, and
  // MPI_ERRORS_ARE_FATAL is done here as Open MPI does it, the message on
  // stderr and the whole job ended with the code (_exit ends every
  // simulated rank, one process; SMPI's MPI_Abort leaves the simulation
  // deadlocked and exiting 0). Other handlers are called.
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (MPI_Comm_get_errhandler(handler_comm, &eh) != MPI_SUCCESS || eh == MPI_ERRORS_RETURN) return code;
  if (eh == MPI_ERRORS_ARE_FATAL) {
    const int status = code > 0 && code < 256 ? code : 1;
    if (text.empty())
      std::fprintf(stderr, "duct: %s failed\n", call);
    else
      std::fprintf(stderr, "duct: %s\n", text.c_str());
    std::fprintf(stderr, "duct: MPI_ERRORS_ARE_FATAL: the simulated job ends (exit status %d)\n", status);
    std::fflush(nullptr);  // every simulated rank's output is this one process's
    std::_Exit(status);
  }
#endif
  MPI_Comm_call_errhandler(handler_comm, code);
  return code;
}

}  // namespace duct::capi
