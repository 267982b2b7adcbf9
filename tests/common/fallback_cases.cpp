// What duct does not serve natively still gets MPI's answer: derived
// datatypes, user-defined ops and intercommunicators
// go to the MPI library (staged through host when buffers are device
// memory); results must equal MPI_Allreduce on host copies.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "duct/duct.h"
#include "testutil.hpp"

using namespace duct::test;

namespace {

void user_max_abs(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = std::abs(a[i]) > std::abs(b[i]) ? a[i] : b[i];
}

// DUCT_Allreduce on the suite's memory kind vs MPI_Allreduce on host copies.
// The receive buffer starts as -7 everywhere (input, in place) for MPI and
// duct alike, so bytes a datatype skips must come out unchanged on both.
void compare(const std::vector<int>& input, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, const char* what,
             bool in_place = false) {
  INFO(what << (in_place ? " (in place)" : ""));
  std::vector<int> init(input.size(), -7);
  if (in_place) init = input;
  std::vector<int> ref = init;
  MPI_Allreduce(in_place ? MPI_IN_PLACE : input.data(), ref.data(), count, dt, op, comm);
  const std::size_t bytes = input.size() * sizeof(int);
  Buf send(bytes, suite_kind()), recv(bytes, suite_kind());
  send.upload(input.data());
  recv.upload(init.data());
  int rc;
  {
    Pending p(std::string("DUCT_Allreduce fallback: ") + what);
    rc = DUCT_Allreduce(in_place ? MPI_IN_PLACE : send.data(), recv.data(), count, dt, op, comm);
  }
  CHECK(rc == MPI_SUCCESS);
  std::vector<unsigned char> out = recv.download();
  std::vector<int> got(input.size());
  std::memcpy(got.data(), out.data(), bytes);
  CHECK(got == ref);
}

std::vector<int> inputs(std::size_t n, int salt) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>((i * 31 + static_cast<std::size_t>(rank() * 7 + salt)) % 23) - 11;
  return v;
}

}  // namespace

// User ops for the two derived types below (Open MPI refuses predefined ops
// on derived datatypes; applications write user ops for them).
void sum_triples(void* in, void* inout, int* len, MPI_Datatype*) {  // contiguous(3, MPI_INT)
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < 3 * *len; ++i) b[i] += a[i];
}
void max_abs_strided(void* in, void* inout, int* len, MPI_Datatype*) {  // vector(2, 1, 2, MPI_INT)
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i)
    for (int k : {0, 2}) {
      int j = 3 * i + k;
      b[j] = std::abs(a[j]) > std::abs(b[j]) ? a[j] : b[j];
    }
}

TEST_CASE("derived datatypes are served by the MPI library with its result", "[fallback]") {
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  MPI_Op sum;
  MPI_Op_create(sum_triples, 1, &sum);
  for (bool ip : {false, true})
    compare(inputs(3 * 1001, 1), 1001, triple, sum, MPI_COMM_WORLD, "contiguous(3, MPI_INT) with a user op", ip);
  MPI_Op_free(&sum);
  MPI_Type_free(&triple);
}

TEST_CASE("a derived datatype with gaps keeps the gaps", "[fallback]") {
  // vector(2 blocks of 1 int, stride 2): elements 0 and 2 of each 3-int span
  // are reduced, element 1 must not change in the receive buffer.
  MPI_Datatype gappy;
  MPI_Type_vector(2, 1, 2, MPI_INT, &gappy);
  MPI_Type_commit(&gappy);
  MPI_Op op;
  MPI_Op_create(max_abs_strided, 1, &op);
  for (bool ip : {false, true})
    compare(inputs(3 * 5, 2), 5, gappy, op, MPI_COMM_WORLD, "vector(2,1,2, MPI_INT) with a user op", ip);
  MPI_Op_free(&op);
  MPI_Type_free(&gappy);
}

TEST_CASE("what the MPI library refuses, duct refuses with the same error class", "[fallback]") {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  std::vector<int> in(30, 1), out(30, 0);
  int mpi_rc, duct_rc;
  {
    Pending p("MPI_SUM on a derived datatype through MPI and duct");
    mpi_rc = MPI_Allreduce(in.data(), out.data(), 10, triple, MPI_SUM, c);
    duct_rc = DUCT_Allreduce(in.data(), out.data(), 10, triple, MPI_SUM, c);
  }
  int mpi_cls = MPI_SUCCESS, duct_cls = MPI_SUCCESS;
  if (mpi_rc != MPI_SUCCESS) MPI_Error_class(mpi_rc, &mpi_cls);
  if (duct_rc != MPI_SUCCESS) MPI_Error_class(duct_rc, &duct_cls);
  CHECK(duct_cls == mpi_cls);
  MPI_Type_free(&triple);
  MPI_Comm_free(&c);
}

TEST_CASE("user-defined ops are served by the MPI library", "[fallback]") {
  MPI_Op op;
  MPI_Op_create(user_max_abs, 1, &op);
  compare(inputs(777, 3), 777, MPI_INT, op, MPI_COMM_WORLD, "user op max |x|");
  compare(inputs(777, 4), 777, MPI_INT, op, MPI_COMM_WORLD, "user op max |x|", true);
  MPI_Op_free(&op);
}

TEST_CASE("intercommunicators are served by the MPI library", "[fallback]") {
  if (size() < 2) return;  // an intercommunicator needs two groups
  MPI_Comm local, inter;
  int color = rank() % 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank(), &local);
  // The other group's leader is world rank 1 (for evens) or 0 (for odds).
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &inter);
  compare(inputs(50, 5), 50, MPI_INT, MPI_SUM, inter, "MPI_SUM on an intercommunicator");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}
