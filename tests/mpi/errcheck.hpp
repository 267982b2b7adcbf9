// Helpers for the error tests: classify a return code and check its class
// and message.
#pragma once

#include <catch2/catch.hpp>
#include <mpi.h>

#include <string>
#include <vector>

#include "duct/duct.h"
#include "testutil.hpp"

namespace duct::test {

struct Result {
  int rc = MPI_SUCCESS;
  int cls = MPI_SUCCESS;
  std::string text;
};

inline Result classify(int rc) {
  Result r{rc, MPI_SUCCESS, ""};
  if (rc == MPI_SUCCESS) return r;
  MPI_Error_class(rc, &r.cls);
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, buf, &len);
  r.text.assign(buf, static_cast<size_t>(len));
  return r;
}

// The call failed with duct class `cls`, and the message reads
// "<call> on rank <r>: ..." (r: the rank in the call's communicator, by
// default the world's) and contains every word.
inline void expect(const Result& r, DUCT_Errclass cls, const std::vector<std::string>& words,
                   const std::string& call = "DUCT_Allreduce", int comm_rank = rank()) {
  INFO("message: " << r.text);
  CHECK(r.rc != MPI_SUCCESS);
  CHECK(r.cls == DUCT_Error_class(cls));
  CHECK(r.text.find(call + " on rank " + std::to_string(comm_rank) + ": ") != std::string::npos);
  for (const std::string& w : words) CHECK(r.text.find(w) != std::string::npos);
}

// A private duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN.
struct ReturnComm {
  MPI_Comm comm;
  explicit ReturnComm(MPI_Comm of = MPI_COMM_WORLD) {
    MPI_Comm_dup(of, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  ~ReturnComm() { MPI_Comm_free(&comm); }
  ReturnComm(const ReturnComm&) = delete;
  ReturnComm& operator=(const ReturnComm&) = delete;
};

}  // namespace duct::test
