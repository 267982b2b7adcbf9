// duct core: one status type for every layer.
//
// A Status is either ok (no allocation) or an error code plus a message that
// names the object and the real cause ("rank 3: cudaIpcOpenMemHandle of peer
// 1's buffer failed: invalid argument"). The function that first sees an
// error builds the Status; callers may prepend a short trail with
// Status::context(). Status never throws.
#pragma once

#include <memory>
#include <string>
#include <utility>

namespace duct {

// Error kinds. Each maps to one duct MPI error class (lib/capi/errors.cpp);
// the order here is the order of the public DUCT_ERRCLASS_* values.
enum class Errc : int {
  ok = 0,
  arg,            // an argument that fits no narrower class
  buffer,         // null or unusable buffer
  count,          // negative or inconsistent count
  type,           // datatype null, unsupported
  op,             // MPI_OP_NULL
  comm,           // communicator null or unsupported
  root,           // root out of range
  in_place,       // MPI_IN_PLACE where MPI forbids it
  overlap,        // send and receive buffers overlap
  overflow,       // counts or displacements overflow (bytes beyond the address space)
  op_type,        // an op MPI does not define for the datatype
  uncommitted,    // a derived datatype that was not committed
  unmapped,       // a pointer that is not memory of this process
  config,         // invalid DUCT_* environment variable
  not_supported,  // valid MPI, but a case duct cannot serve (named in the message)
  cuda,           // a CUDA call failed
  ucx,            // a UCX call failed
  mpi,            // an MPI call failed
  hwloc,          // an hwloc call failed
  no_memory,      // allocation failed
  truncate,       // a message longer than the receive buffer
  timeout,        // no progress within DUCT_TIMEOUT
  mismatch,       // ranks called with different arguments
  peer_failed,    // a peer process failed
  internal,       // a bug in duct
  revoked,        // the communicator was revoked (fault tolerance, coll/ft.hpp)
  count_
};

const char* errc_name(Errc e) noexcept;

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(Errc code, std::string message)
      : code_(code), msg_(code == Errc::ok ? nullptr : std::make_unique<std::string>(std::move(message))) {}
  Status(const Status& o) : code_(o.code_), msg_(o.msg_ ? std::make_unique<std::string>(*o.msg_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok() noexcept { return Status(); }

  bool is_ok() const noexcept { return code_ == Errc::ok; }
  explicit operator bool() const noexcept { return is_ok(); }
  Errc code() const noexcept { return code_; }
  const std::string& message() const noexcept {
    static const std::string empty;
    return msg_ ? *msg_ : empty;
  }

  // Prepend a trail: "allreduce ring step 2: <original message>".
  Status& context(const std::string& where) {
    if (msg_) *msg_ = where + ": " + *msg_;
    return *this;
  }

 private:
  // An ok status is one integer and a null pointer: cheap on every fast path.
  Errc code_ = Errc::ok;
  std::unique_ptr<std::string> msg_;
};

// printf-style message formatting for statuses and logs.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

template <class... Args>
Status make_error(Errc code, const char* fmt, Args&&... args) {
  if constexpr (sizeof...(Args) == 0)
    return Status(code, fmt);  // a plain message: no formatting
  else
    return Status(code, strprintf(fmt, std::forward<Args>(args)...));
}

}  // namespace duct

// Return early from a function returning Status.
#define DUCT_TRY(expr)                         \
  do {                                         \
    ::duct::Status duct_try_st_ = (expr);      \
    if (!duct_try_st_.is_ok()) return duct_try_st_; \
  } while (0)

// The same inside a coroutine schedule (lib/coll).
#define DUCT_CO_TRY(expr)                      \
  do {                                         \
    ::duct::Status duct_try_st_ = (expr);      \
    if (!duct_try_st_.is_ok()) co_return duct_try_st_; \
  } while (0)
