// duct-threads [THREADS [ITERATIONS [STAGGER_MS [MODE]]]]: MPI_THREAD_MULTIPLE.
//
// MODE "calls" (the default): one communicator
// per thread. Each thread makes the first duct call on its own
// communicator, and the ranks start their threads in opposite orders (even
// ranks thread 0 first, odd ranks the last thread first), so one rank sets
// up communicator A while its peer sets up B. Before duct set contexts up
// without holding its progress lock across the waits, this deadlocked
// (MPICH's test/mpi/threads/coll/allred did too): each rank's setup held
// the lock while it waited for the peer, whose other thread held its lock.
// Then every thread runs allreduce, bcast (every root) and iallreduce on
// its communicator, each checked against the MPI library's own collective
// (or the root's known data) on the same communicator.
//
// MODE "create": every thread makes communicators while the others make
// their first duct calls on theirs, as MPICH's
// threads/comm/comm_create_group_threads and ...2 do. Each thread has a
// parent, a duplicate of MPI_COMM_WORLD. Each iteration, the ranks of the
// lower half create a communicator from it with MPI_Comm_create_group (the
// thread number is the tag), call DUCT_Allreduce on it and free it; then
// every rank does the same with all ranks, and with a duplicate of
// MPI_COMM_SELF (made under a lock: it is one communicator for every
// thread). Each result is checked against MPI_Allreduce. When duct's setup
// made a communicator of its own (MPI_Comm_idup), it deadlocked here: Open
// MPI lets a creation proceed only while no creation from a parent with a
// lower id is under way on the process, so the setup's waited for the
// other threads' creations from their parents, whose peers were waiting
// in their setups. (The parents are not MPI_COMM_WORLD itself: with it,
// the program hung with every thread inside Open MPI 4.1.4's
// MPI_Comm_create_group and none in duct; there the duplicates of
// MPI_COMM_SELF, whose parent has the higher id, can wait for the
// creations from MPI_COMM_WORLD the same way. MPICH's test uses
// duplicates too.)
//
// Exit 0: every rank passed; 1: a wrong result; 77: the MPI library does
// not provide MPI_THREAD_MULTIPLE.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "duct/duct.h"

namespace {

std::atomic<int> g_wrong{0};

void report(int rank, int t, int it, const char* call, const char* what) {
  std::fprintf(stderr, "duct-threads: rank %d thread %d iteration %d: %s: %s\n", rank, t, it, call, what);
  g_wrong.fetch_add(1);
}

void worker(MPI_Comm comm, int t, int iterations, int world_rank, int delay_ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int it = 0; it < iterations; ++it) {
    const int count = 1 + (it * 131 + t * 17) % 3000;
    std::vector<int> in(static_cast<size_t>(count)), out(in.size(), -1), ref(in.size(), -2);
    for (int i = 0; i < count; ++i) in[static_cast<size_t>(i)] = rank * 7 + i + it + t;

    if (DUCT_Allreduce(in.data(), out.data(), count, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS)
      report(world_rank, t, it, "DUCT_Allreduce", "returned an error");
    MPI_Allreduce(in.data(), ref.data(), count, MPI_INT, MPI_SUM, comm);
    if (out != ref) report(world_rank, t, it, "DUCT_Allreduce", "differs from MPI_Allreduce");

    const int root = (it + t) % size;
    std::vector<int> b(in.size());
    for (int i = 0; i < count; ++i) b[static_cast<size_t>(i)] = rank == root ? root * 1000 + i + it : -1;
    if (DUCT_Bcast(b.data(), count, MPI_INT, root, comm) != MPI_SUCCESS)
      report(world_rank, t, it, "DUCT_Bcast", "returned an error");
    for (int i = 0; i < count; ++i)
      if (b[static_cast<size_t>(i)] != root * 1000 + i + it) {
        report(world_rank, t, it, "DUCT_Bcast", "an element differs from the root's");
        break;
      }

    std::fill(out.begin(), out.end(), -1);
    MPI_Request req = MPI_REQUEST_NULL;
    if (DUCT_Iallreduce(in.data(), out.data(), count, MPI_INT, MPI_MAX, comm, &req) != MPI_SUCCESS ||
        MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      report(world_rank, t, it, "DUCT_Iallreduce", "returned an error");
    MPI_Allreduce(in.data(), ref.data(), count, MPI_INT, MPI_MAX, comm);
    if (out != ref) report(world_rank, t, it, "DUCT_Iallreduce", "differs from MPI_Allreduce");
  }
}

std::mutex g_self_lock;

// One communicator made from `parent`'s `group` (tag: the thread), its
// first duct call checked against the MPI library, then freed.
void create_and_call(MPI_Comm parent, MPI_Group group, int t, int it, int world_rank) {
  MPI_Comm c = MPI_COMM_NULL;
  if (MPI_Comm_create_group(parent, group, t, &c) != MPI_SUCCESS) {
    report(world_rank, t, it, "MPI_Comm_create_group", "returned an error");
    return;
  }
  int rank = 0;
  MPI_Comm_rank(c, &rank);
  const int count = 1 + (it * 37 + t * 11) % 700;
  // in, out, ref: one allocation (GCC 12 warns falsely about three here).
  std::vector<long> buf(3 * static_cast<size_t>(count), -1);
  long* in = buf.data();
  long* out = in + count;
  long* ref = out + count;
  for (int i = 0; i < count; ++i) in[i] = rank * 5 + i + it * 3 + t;
  if (DUCT_Allreduce(in, out, count, MPI_LONG, MPI_SUM, c) != MPI_SUCCESS)
    report(world_rank, t, it, "DUCT_Allreduce on a new communicator", "returned an error");
  MPI_Allreduce(in, ref, count, MPI_LONG, MPI_SUM, c);
  if (!std::equal(out, out + count, ref))
    report(world_rank, t, it, "DUCT_Allreduce on a new communicator", "differs from MPI_Allreduce");
  MPI_Comm_free(&c);
}

void worker_create(MPI_Comm parent, int t, int iterations, int world_rank, int world_size) {
  MPI_Group all = MPI_GROUP_NULL, half = MPI_GROUP_NULL;
  MPI_Comm_group(parent, &all);
  int range[1][3] = {{0, world_size / 2, 1}};
  MPI_Group_range_incl(all, 1, range, &half);
  for (int it = 0; it < iterations; ++it) {
    if (world_rank <= world_size / 2) create_and_call(parent, half, t, it, world_rank);
    create_and_call(parent, all, t, it, world_rank);
    MPI_Comm self = MPI_COMM_NULL;
    {
      std::lock_guard<std::mutex> lock(g_self_lock);
      MPI_Comm_dup(MPI_COMM_SELF, &self);
    }
    long v = world_rank * 100 + t + it, got = -1;
    if (DUCT_Allreduce(&v, &got, 1, MPI_LONG, MPI_SUM, self) != MPI_SUCCESS || got != v)
      report(world_rank, t, it, "DUCT_Allreduce on a duplicate of MPI_COMM_SELF", "wrong result or an error");
    MPI_Comm_free(&self);
  }
  MPI_Group_free(&half);
  MPI_Group_free(&all);
}

// Every rank's count of wrong results, summed; rank 0 prints the verdict.
// Finalizes MPI and returns the exit status.
int finish(const char* label, int rank, int size, int nthreads, int iterations) {
  int wrong = g_wrong.load(), any = 0;
  MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: %d ranks x %d threads x %d iterations: %s (%d wrong)\n", label, size, nthreads, iterations,
                any ? "FAILED" : "passed", any);
  MPI_Finalize();
  return any ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::printf("duct-threads: skipped: the MPI library provides thread level %d\n", provided);
    MPI_Finalize();
    return 77;
  }
  const int nthreads = argc > 1 ? std::atoi(argv[1]) : 3;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  // 0: every thread starts at once (the setups' cid agreements overlap).
  const int stagger_ms = argc > 3 ? std::atoi(argv[3]) : 50;
  const std::string mode = argc > 4 ? argv[4] : "calls";

  if (mode == "create") {
    std::vector<MPI_Comm> parents(static_cast<size_t>(nthreads));
    for (MPI_Comm& p : parents) MPI_Comm_dup(MPI_COMM_WORLD, &p);
    std::vector<std::thread> threads;
    for (int t = 0; t < nthreads; ++t)
      threads.emplace_back(worker_create, parents[static_cast<size_t>(t)], t, iterations, rank, size);
    for (std::thread& th : threads) th.join();
    for (MPI_Comm& p : parents) MPI_Comm_free(&p);
    return finish("duct-threads create", rank, size, nthreads, iterations);
  }
  if (mode != "calls") {
    if (rank == 0) std::fprintf(stderr, "duct-threads: MODE is calls or create, not %s\n", mode.c_str());
    MPI_Finalize();
    return 2;
  }

  // Created by the main thread, in the same order on every rank (MPI
  // communicator creation is collective). Odd-numbered ones reverse the
  // rank order, so roots and neighbours differ between threads.
  std::vector<MPI_Comm> comms(static_cast<size_t>(nthreads));
  for (int t = 0; t < nthreads; ++t) {
    if (t % 2) MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[static_cast<size_t>(t)]);
    else MPI_Comm_dup(MPI_COMM_WORLD, &comms[static_cast<size_t>(t)]);
  }

  // Opposite start orders on even and odd ranks, STAGGER_MS apart: each rank's
  // first setup is on a communicator its peer reaches last.
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) {
    const int order = rank % 2 ? nthreads - 1 - t : t;
    threads.emplace_back(worker, comms[static_cast<size_t>(t)], t, iterations, rank, stagger_ms * order);
  }
  for (std::thread& th : threads) th.join();

  for (MPI_Comm& c : comms) MPI_Comm_free(&c);
  return finish("duct-threads", rank, size, nthreads, iterations);
}
