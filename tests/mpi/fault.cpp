// duct-fault: mismatched calls, hangs and dead peers, one scenario per run
// (tests/mpi/fault.sh starts them under mpirun with the environment each
// needs and checks the output). Every rank prints one line
//   "rank R: <scenario>: <outcome> after T s: <message>"
// and the process exits 0 when what it saw is what the scenario expects.
//
//   mismatch   DUCT_CHECK=1: ranks disagree (count, root, op, collective,
//              alltoallv and gatherv counts, count 0 against count > 0); every
//              rank gets DUCT_ERRCLASS_MISMATCH naming the ranks, in < 5 s,
//              and the communicator still works afterwards.
//   hang       DUCT_TIMEOUT set, DUCT_CHECK off: rank 0 calls with count 0
//              (returns at once), the others wait for it: they get
//              DUCT_ERRCLASS_TIMEOUT naming what they wait for, the
//              communicator then refuses further calls at once, and every
//              rank finalizes cleanly.
//   dump       like hang, and rank 1 sends itself SIGUSR1 while it waits: it
//              prints its pending operation (fault.sh checks stderr).
//   hang-small, dump-small  the same with an 8-byte allreduce, made once by
//              every rank before: the waiting ranks take the small-call path
//              (lib/capi/small.hpp), which must time out and dump alike.
//   hang-small-bcast  hang-small with an 8-byte bcast from rank 0: across
//              nodes the waiting ranks take the small-call path's message
//              forms (coll/msg_rounds.hpp; tests/cluster/netns_cluster.sh).
//   first      DUCT_TIMEOUT set: the last rank skips the first duct call of
//              the process (on MPI_COMM_WORLD), then the first duct call on a
//              fresh communicator, and goes on to MPI_Allreduce on
//              MPI_COMM_WORLD. The others, still creating duct's context,
//              get DUCT_ERRCLASS_TIMEOUT naming the context creation and the
//              ranks it waits for, within DUCT_TIMEOUT + 2 s; the MPI calls
//              after it and the communicators work for MPI; later duct calls
//              on those communicators fail at once; a new communicator works
//              with duct; every rank finalizes. Rank 1 sends itself SIGUSR1
//              while it waits (fault.sh checks the dump).
//   first-check  the same with DUCT_CHECK=1, then a first call on a fresh
//              communicator with mismatched counts: DUCT_ERRCLASS_MISMATCH.
//   kill       the last rank kills itself (SIGKILL) during a loop of large
//              allreduces; the survivors get DUCT_ERRCLASS_PEER_FAILED or
//              DUCT_ERRCLASS_TIMEOUT within DUCT_TIMEOUT (+ slack) and exit.
//   kill-node  every rank on the last rank's node (MPI_Comm_split_type
//              shared) kills itself at once, as when a node dies: the ranks
//              of the other nodes get the same errors in the same time
//              (tests/cluster/netns_cluster.sh runs it on real namespaces).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "duct/duct.h"

namespace {

int g_rank = 0, g_size = 1;
bool g_ok = true;
using clock_t_ = std::chrono::steady_clock;

struct Outcome {
  int rc = MPI_SUCCESS;
  int cls = MPI_SUCCESS;
  std::string text;
  double seconds = 0;
};

template <class F>
Outcome timed(F&& f) {
  Outcome o;
  auto t0 = clock_t_::now();
  o.rc = f();
  o.seconds = std::chrono::duration<double>(clock_t_::now() - t0).count();
  if (o.rc != MPI_SUCCESS) {
    MPI_Error_class(o.rc, &o.cls);
    char buf[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(o.rc, buf, &len);
    o.text.assign(buf, static_cast<std::size_t>(len));
  }
  return o;
}

const char* class_name(int cls) {
  struct Row {
    DUCT_Errclass c;
    const char* name;
  };
  static const Row rows[] = {{DUCT_ERRCLASS_MISMATCH, "MISMATCH"}, {DUCT_ERRCLASS_TIMEOUT, "TIMEOUT"},
                             {DUCT_ERRCLASS_PEER_FAILED, "PEER_FAILED"}, {DUCT_ERRCLASS_UCX, "UCX"},
                             {DUCT_ERRCLASS_TRUNCATE, "TRUNCATE"}};
  if (cls == MPI_SUCCESS) return "SUCCESS";
  for (const Row& r : rows)
    if (DUCT_Error_class(r.c) == cls) return r.name;
  return "OTHER";
}

void report(const char* what, const Outcome& o) {
  std::printf("rank %d: %s: %s after %.2f s: %s\n", g_rank, what, class_name(o.cls), o.seconds,
              o.text.empty() ? "-" : o.text.c_str());
  std::fflush(stdout);
}

void expect(bool cond, const char* what) {
  if (!cond) {
    std::printf("rank %d: FAILED: %s\n", g_rank, what);
    std::fflush(stdout);
    g_ok = false;
  }
}

bool has(const Outcome& o, const char* word) { return o.text.find(word) != std::string::npos; }

// ---- mismatch -----------------------------------------------------------------------

void mismatch_case(MPI_Comm c, const char* name, const std::vector<const char*>& words, int (*fn)(MPI_Comm)) {
  Outcome o = timed([&] { return fn(c); });
  report(name, o);
  expect(o.cls == DUCT_Error_class(DUCT_ERRCLASS_MISMATCH), name);
  expect(o.seconds < 5.0, "mismatch reported in under 5 s");
  for (const char* w : words) expect(has(o, w), w);
}

std::vector<float> g_a(4096, 1.0f), g_b(4096, 0.0f);

int run_mismatch() {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  const int last = g_size - 1;
  mismatch_case(c, "allreduce count 999 on rank 0, 1000 elsewhere",
                {"rank 1 called DUCT_Allreduce with count 1000, rank 0 with count 999"}, [](MPI_Comm k) {
                  return DUCT_Allreduce(g_a.data(), g_b.data(), g_rank == 0 ? 999 : 1000, MPI_FLOAT, MPI_SUM, k);
                });
  mismatch_case(c, "allreduce count 0 on the last rank", {"count 0"}, [](MPI_Comm k) {
    return DUCT_Allreduce(g_a.data(), g_b.data(), g_rank == g_size - 1 ? 0 : 64, MPI_FLOAT, MPI_SUM, k);
  });
  mismatch_case(c, "allreduce op", {"op MPI_MAX", "op MPI_SUM"}, [](MPI_Comm k) {
    return DUCT_Allreduce(g_a.data(), g_b.data(), 16, MPI_FLOAT, g_rank == 0 ? MPI_SUM : MPI_MAX, k);
  });
  mismatch_case(c, "bcast root", {"root 1", "root 0"},
                [](MPI_Comm k) { return DUCT_Bcast(g_a.data(), 16, MPI_FLOAT, g_rank == 0 ? 0 : 1, k); });
  mismatch_case(c, "different collectives", {"called DUCT_Bcast, rank 0 called DUCT_Allreduce"}, [](MPI_Comm k) {
    return g_rank == 0 ? DUCT_Allreduce(g_a.data(), g_b.data(), 16, MPI_FLOAT, MPI_SUM, k)
                       : DUCT_Bcast(g_a.data(), 16, MPI_FLOAT, 0, k);
  });
  mismatch_case(c, "reduce datatype", {"with datatype MPI_INT, rank 0 with datatype MPI_FLOAT"}, [](MPI_Comm k) {
    return DUCT_Reduce(g_a.data(), g_b.data(), 16, g_rank == 0 ? MPI_FLOAT : MPI_INT, MPI_SUM, 0, k);
  });
  mismatch_case(c, "alltoallv counts", {"DUCT_Alltoallv", "sends 8 bytes", "expect 4 bytes"}, [](MPI_Comm k) {
    std::vector<int> sc(static_cast<std::size_t>(g_size), 1), rc(static_cast<std::size_t>(g_size), 1),
        d(static_cast<std::size_t>(g_size));
    for (int i = 0; i < g_size; ++i) d[static_cast<std::size_t>(i)] = 2 * i;
    if (g_rank == 0) sc[1] = 2;  // rank 0 sends rank 1 two floats; rank 1 expects one
    return DUCT_Alltoallv(g_a.data(), sc.data(), d.data(), MPI_FLOAT, g_b.data(), rc.data(), d.data(), MPI_FLOAT, k);
  });
  mismatch_case(c, "gatherv counts", {"DUCT_Gatherv", "recvcounts"}, [](MPI_Comm k) {
    std::vector<int> rc(static_cast<std::size_t>(g_size), 2), d(static_cast<std::size_t>(g_size));
    for (int i = 0; i < g_size; ++i) d[static_cast<std::size_t>(i)] = 2 * i;
    return DUCT_Gatherv(g_a.data(), g_rank == g_size - 1 ? 3 : 2, MPI_FLOAT, g_b.data(), rc.data(), d.data(),
                        MPI_FLOAT, 0, k);
  });
  (void)last;
  // A mismatch is found before any data moves: the communicator still works.
  Outcome o = timed([&] { return DUCT_Allreduce(g_a.data(), g_b.data(), 1000, MPI_FLOAT, MPI_SUM, c); });
  report("matching allreduce afterwards", o);
  expect(o.rc == MPI_SUCCESS && g_b[999] == static_cast<float>(g_size), "the communicator works after a mismatch");
  MPI_Comm_free(&c);
  return 0;
}

// ---- hang / dump --------------------------------------------------------------------------

int run_hang(bool dump, bool small, bool bcast = false) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  // Set up the context first, so that only the collective itself waits.
  DUCT_Barrier(c);
  const int n = small ? 2 : 100000;
  std::vector<float> big(100000, 1.0f), out(100000);
  const char* call = bcast ? "DUCT_Bcast" : "DUCT_Allreduce";
  // The collective: an allreduce, or a bcast from rank 0 (of `big`).
  auto coll = [&](int cnt) {
    return bcast ? DUCT_Bcast(big.data(), cnt, MPI_FLOAT, 0, c)
                 : DUCT_Allreduce(big.data(), out.data(), cnt, MPI_FLOAT, MPI_SUM, c);
  };
  // A small call of the same size first: the one rank 0 skips then takes the
  // small-call path on the others.
  if (small) expect(coll(n) == MPI_SUCCESS, "a first 8-byte call");
  std::thread signaller;
  if (dump && g_rank == 1)
    signaller = std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      kill(getpid(), SIGUSR1);
    });
  const int count = g_rank == 0 ? 0 : n;  // rank 0 has nothing to do and returns
  Outcome o = timed([&] { return coll(count); });
  report(bcast ? "bcast that rank 0 skips" : "allreduce that rank 0 skips", o);
  if (signaller.joinable()) signaller.join();
  const char* t = std::getenv("DUCT_TIMEOUT");
  const double limit = t ? std::atof(t) : 0;
  if (g_rank == 0) {
    expect(o.rc == MPI_SUCCESS, "rank 0 (count 0) returns at once");
  } else {
    expect(o.cls == DUCT_Error_class(DUCT_ERRCLASS_TIMEOUT), "a timeout error");
    expect(o.seconds >= limit * 0.9 && o.seconds < limit + 5, "within the timeout");
    expect(has(o, call) && has(o, "waiting for") && has(o, "rank"),
           "the message names the pending operation and the peer");
    // The communicator is unusable afterwards, at once.
    Outcome again = timed([&] { return coll(8); });
    report("next call on the failed communicator", again);
    expect(again.cls == DUCT_Error_class(DUCT_ERRCLASS_TIMEOUT) && again.seconds < 1.0,
           "later calls fail at once with the first error");
  }
  // The MPI library's barrier: rank 0, back at once, must not start duct's
  // context on MPI_COMM_WORLD below while the others still wait for their
  // timeout (its own setup would time out first, DUCT_TIMEOUT apart).
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&c);
  // Other communicators work: the process goes on and finalizes cleanly.
  Outcome w = timed([&] { return DUCT_Allreduce(big.data(), out.data(), 1000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
  report("allreduce on MPI_COMM_WORLD afterwards", w);
  expect(w.rc == MPI_SUCCESS && out[999] == static_cast<float>(g_size), "other communicators still work");
  return 0;
}

// ---- first --------------------------------------------------------------------------------

// The last rank skips a first duct call on `c`; the others time out in the
// context creation. Every rank then meets in MPI_Allreduce on MPI_COMM_WORLD.
void skip_first_call(MPI_Comm c, const char* what, bool dump) {
  const int skipper = g_size - 1;
  const char* t = std::getenv("DUCT_TIMEOUT");
  const double limit = t ? std::atof(t) : 0;
  std::vector<float> a(1 << 18, 1.0f), b(1 << 18, 0.0f);  // 1 MiB
  if (g_rank != skipper) {
    std::thread signaller;
    if (dump && g_rank == 1)
      signaller = std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        kill(getpid(), SIGUSR1);
      });
    Outcome o = timed([&] { return DUCT_Allreduce(a.data(), b.data(), 1 << 18, MPI_FLOAT, MPI_SUM, c); });
    if (signaller.joinable()) signaller.join();
    report(what, o);
    expect(o.cls == DUCT_Error_class(DUCT_ERRCLASS_TIMEOUT), "a timeout error");
    expect(o.seconds >= limit * 0.9 && o.seconds < limit + 2, "within DUCT_TIMEOUT + 2 s");
    expect(has(o, "creating duct's context for communicator"), "the message says the context was being created");
    // It cannot tell which rank is missing (MPI_Comm_idup does not say): it
    // names the ranks other than itself, which include the missing one.
    std::string others = g_size == 2 ? "rank " : "ranks ";
    for (int r = 0, k = 0; r < g_size; ++r)
      if (r != g_rank) others += (k++ ? ", " : "") + std::to_string(r);
    expect(has(o, others.c_str()) && others.find(std::to_string(skipper)) != std::string::npos,
           "the message names the ranks it waits for, the missing one among them");
    // Later duct calls on the communicator fail at once.
    Outcome again = timed([&] { return DUCT_Allreduce(a.data(), b.data(), 8, MPI_FLOAT, MPI_SUM, c); });
    report("next duct call on that communicator", again);
    expect(again.cls == DUCT_Error_class(DUCT_ERRCLASS_TIMEOUT) && again.seconds < 1.0,
           "later calls fail at once with the first error");
  }
  // The skipping rank's next MPI call, which the others reach after their timeout.
  int one = 1, sum = 0;
  Outcome m = timed([&] { return MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); });
  report("MPI_Allreduce on MPI_COMM_WORLD after it", m);
  expect(m.rc == MPI_SUCCESS && sum == g_size, "MPI_Allreduce on MPI_COMM_WORLD works");
  // The communicator still works for the MPI library.
  sum = 0;
  m = timed([&] { return MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c); });
  expect(m.rc == MPI_SUCCESS && sum == g_size, "MPI_Allreduce on the communicator works");
}

int run_first(bool check) {
  // The communicators are made first: after a rank has skipped a collective
  // on MPI_COMM_WORLD the others hold a nonblocking collective there that
  // never completes (duct's first MPI_Ibarrier), and Open MPI makes new
  // communicators with nonblocking collectives on the parent, which are then
  // out of step. Blocking collectives on it still work (checked below), and
  // freeing it is safe (c below).
  MPI_Comm c, d;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  skip_first_call(MPI_COMM_WORLD, "first duct call of the process (MPI_COMM_WORLD) that the last rank skips", !check);
  skip_first_call(c, "first duct call on a fresh communicator that the last rank skips", false);
  MPI_Comm_free(&c);
  // duct works on another communicator.
  if (check) {
    Outcome o = timed([&] {
      return DUCT_Allreduce(g_a.data(), g_b.data(), g_rank == 0 ? 999 : 1000, MPI_FLOAT, MPI_SUM, d);
    });
    report("first call on a new communicator with mismatched counts", o);
    expect(o.cls == DUCT_Error_class(DUCT_ERRCLASS_MISMATCH), "a mismatch error");
    expect(has(o, "rank 1 called DUCT_Allreduce with count 1000, rank 0 with count 999"), "naming the ranks");
  }
  Outcome w = timed([&] { return DUCT_Allreduce(g_a.data(), g_b.data(), 1000, MPI_FLOAT, MPI_SUM, d); });
  report("allreduce on another communicator afterwards", w);
  expect(w.rc == MPI_SUCCESS && g_b[999] == static_cast<float>(g_size), "another communicator works");
  MPI_Comm_free(&d);
  return 0;
}

// ---- kill -----------------------------------------------------------------------------------

int run_kill(bool whole_node) {
  const char* what = whole_node ? "kill-node" : "kill";
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  // The victims: the last rank, or every rank of its node (a node is named
  // by the lowest world rank on it).
  bool victim = g_rank == g_size - 1;
  int victims = 1;
  if (whole_node) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int my_node = g_rank;
    MPI_Allreduce(MPI_IN_PLACE, &my_node, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    int last_node = my_node;
    MPI_Bcast(&last_node, 1, MPI_INT, g_size - 1, MPI_COMM_WORLD);
    victim = my_node == last_node;
    int v = victim ? 1 : 0;
    MPI_Allreduce(&v, &victims, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (victims == g_size) {
      std::printf("rank %d: %s: every rank is on one node; needs two nodes\n", g_rank, what);
      return 1;
    }
  }
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  const std::size_t n = std::size_t{16} << 20;  // 64 MiB of floats: the ring algorithm
  std::vector<float> a(n, 1.0f), b(n);
  DUCT_Allreduce(a.data(), b.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, c);  // wire everything up
  std::printf("rank %d: %s: warmed up (%d rank(s) to be killed%s)\n", g_rank, what, victims,
              victim ? ", this one among them" : "");
  std::fflush(stdout);
  if (victim) {
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      kill(getpid(), SIGKILL);
    }).detach();
  }
  Outcome o;
  auto t0 = clock_t_::now();
  double since_kill = 0;
  for (int i = 0; i < 100000; ++i) {
    o = timed([&] { return DUCT_Allreduce(a.data(), b.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, c); });
    if (o.rc != MPI_SUCCESS) break;
  }
  since_kill = std::chrono::duration<double>(clock_t_::now() - t0).count() - 0.3;
  // A victim that saw another victim die first (their kills are not at the
  // same instant) says nothing: it is about to die too.
  if (victim)
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  report("allreduce loop while a peer dies", o);
  std::printf("rank %d: %s: error %.2f s after the kill\n", g_rank, what, since_kill);
  const int cls = o.cls;
  expect(cls == DUCT_Error_class(DUCT_ERRCLASS_PEER_FAILED) || cls == DUCT_Error_class(DUCT_ERRCLASS_TIMEOUT),
         "survivors get a peer-failed or timeout error");
  std::fflush(stdout);
  // Stay until every survivor has seen the failure by its own means (a
  // survivor leaving at once would look like a second failure to the
  // others), then leave as a failed MPI job would: it cannot finalize with
  // a dead rank (fault.sh reads the lines above).
  std::this_thread::sleep_for(std::chrono::seconds(7));
  std::_Exit(g_ok ? 0 : 1);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const std::string mode = argc > 1 ? argv[1] : "";
  int rc = 2;
  if (g_size < 2) {
    std::printf("duct-fault needs at least 2 ranks\n");
  } else if (mode == "mismatch") {
    rc = run_mismatch();
  } else if (mode == "hang" || mode == "hang-small") {
    rc = run_hang(false, mode == "hang-small");
  } else if (mode == "hang-small-bcast") {
    rc = run_hang(false, true, true);
  } else if (mode == "dump" || mode == "dump-small") {
    rc = run_hang(true, mode == "dump-small");
  } else if (mode == "first") {
    rc = run_first(false);
  } else if (mode == "first-check") {
    rc = run_first(true);
  } else if (mode == "kill" || mode == "kill-node") {
    rc = run_kill(mode == "kill-node");
  } else {
    std::printf("usage: duct-fault mismatch|hang|hang-small|hang-small-bcast|dump|dump-small|first|first-check|kill|kill-node\n");
  }
  std::printf("rank %d: %s\n", g_rank, g_ok && rc == 0 ? "PASS" : "FAIL");
  MPI_Finalize();
  return g_ok && rc == 0 ? 0 : 1;
}
