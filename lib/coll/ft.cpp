// duct coll: surviving a failed rank (DUCT_FT=1). See coll/ft.hpp.
#include "coll/ft.hpp"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "core/config.hpp"
#include "core/log.hpp"
#include "core/sim.hpp"

namespace duct::coll::ft {

namespace {

constexpr int kRevokeTag = 1;
constexpr int kAgreeTag = 2;
constexpr int kShrinkTag = 3;
constexpr std::uint64_t kContrib = 1;
constexpr std::uint64_t kDecide = 2;
constexpr double kScanSeconds = 0.010;  // pids of this machine's ranks, while waiting
constexpr int kNextCoordinators = 3;  // survivors that every decided rank tells directly (agree)
constexpr unsigned kPollsPerLook = 16;  // agreement passes between looks at the clock (each pass yields the core)

// A pass of a wait that found nothing: the core goes to another process
// (an agreement is rare and its ranks may share cores); under the
// simulation build, a moment of simulated time.
void pause_a_moment() {
#ifdef DUCT_SIM
  sim::compute(50e-9);
#else
  sched_yield();
#endif
}

std::size_t words(int n) { return static_cast<std::size_t>(n + 63) / 64; }

// A process that is gone, or a zombie its parent has not reaped yet.
bool dead(std::int32_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0) return errno == ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return true;
  char buf[512];
  const std::size_t got = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[got] = '\0';
  const char* close = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

void post_revoke(State& s) {
  if (PMPI_Irecv(&s.revoke_in, 1, MPI_INT32_T, MPI_ANY_SOURCE, kRevokeTag, s.comm, &s.revoke_req) != MPI_SUCCESS)
    s.revoke_req = MPI_REQUEST_NULL;
}

void post_agree(State& s) {
  s.agree_in.assign(2 + words(s.n), 0);
  if (PMPI_Irecv(s.agree_in.data(), static_cast<int>(s.agree_in.size() * 8), MPI_BYTE, MPI_ANY_SOURCE, kAgreeTag,
                 s.comm, &s.agree_req) != MPI_SUCCESS)
    s.agree_req = MPI_REQUEST_NULL;
}

void send(State& s, int to, int tag, std::vector<std::uint64_t> buf) {
  State::Out& o = s.sends.emplace_back();
  o.buf = std::move(buf);
  const int rc = tag == kRevokeTag
                     ? PMPI_Isend(o.buf.data(), 1, MPI_INT32_T, to, tag, s.comm, &o.req)
                     : PMPI_Isend(o.buf.data(), static_cast<int>(o.buf.size() * 8), MPI_BYTE, to, tag, s.comm, &o.req);
  if (rc != MPI_SUCCESS) {
    DUCT_DEBUG(coll, "fault tolerance: a control message to rank %d could not be sent", to);
    s.sends.pop_back();
  }
}

// Where a rank sends on a flooded message (a revocation, a decision): its
// neighbours among the ranks not in `failed`, in the circulant graph that
// joins every rank r to r +- 2^j (mod n) for 2^j < n. Every rank forwards
// once, on first receipt, so the message reaches every survivor the graph
// still connects, in about log2(n) hops, with 2 log2(n) messages per rank
// instead of n - 1 (at 1024 ranks: 19 instead of 1023). The graph stays
// connected unless every neighbour of some survivor failed (at 1024 ranks,
// 19 ranks at distances 1, 2, 4, ...; a node of 8 consecutive ranks holds
// at most 6 of them). Where the survivors it knows of are not connected,
// the rank sends to every survivor, as a plain flood would.
std::vector<int> flood_targets(const State& s, const std::vector<std::uint8_t>& failed) {
  const int n = s.n;
  auto alive = [&](int r) { return !failed[static_cast<std::size_t>(r)]; };
  auto neighbours = [n](int r, std::vector<int>* out) {
    out->clear();
    for (int d = 1; d < n; d *= 2)
      for (int q : {(r + d) % n, (r - d % n + n) % n})
        if (q != r && std::find(out->begin(), out->end(), q) == out->end()) out->push_back(q);
  };
  // Are the survivors connected? (a breadth-first search from this rank)
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
  std::vector<int> todo{s.me}, next;
  seen[static_cast<std::size_t>(s.me)] = 1;
  int reached = 1, survivors = 0;
  for (int r = 0; r < n; ++r) survivors += alive(r) || r == s.me;
  while (!todo.empty()) {
    const int r = todo.back();
    todo.pop_back();
    neighbours(r, &next);
    for (int q : next)
      if (alive(q) && !seen[static_cast<std::size_t>(q)]) {
        seen[static_cast<std::size_t>(q)] = 1;
        ++reached;
        todo.push_back(q);
      }
  }
  std::vector<int> out;
  if (reached < survivors) {
    for (int r = 0; r < n; ++r)
      if (r != s.me && alive(r)) out.push_back(r);
    return out;
  }
  neighbours(s.me, &next);
  for (int q : next)
    if (alive(q)) out.push_back(q);
  return out;
}

// Mark revoked and tell this rank's flood neighbours (once; each of them
// tells theirs: flood_targets).
void do_revoke(State& s, int origin, const std::string& why) {
  if (s.revoked) return;
  s.revoked = true;
  s.why = why;
  DUCT_INFO(coll, "rank %d: communicator revoked: %s", s.me, why.c_str());
  for (int r : flood_targets(s, s.failed)) {
    std::vector<std::uint64_t> b(1, 0);
    const std::int32_t o = origin;
    std::memcpy(b.data(), &o, sizeof o);
    send(s, r, kRevokeTag, std::move(b));
  }
}

// Take in what arrived; drop sends that completed.
void pump(State& s) {
  for (auto it = s.sends.begin(); it != s.sends.end();) {
    int flag = 0;
    if (PMPI_Test(&it->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag)
      it = s.sends.erase(it);
    else
      ++it;
  }
  for (;;) {
    int flag = 0;
    if (s.revoke_req == MPI_REQUEST_NULL || PMPI_Test(&s.revoke_req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
      break;
    const int origin = s.revoke_in;
    post_revoke(s);
    do_revoke(s, origin, strprintf("rank %d revoked it", origin));
  }
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (s.agree_req == MPI_REQUEST_NULL || PMPI_Test(&s.agree_req, &flag, &status) != MPI_SUCCESS || !flag) break;
    s.inbox.emplace_back(status.MPI_SOURCE, std::move(s.agree_in));
    post_agree(s);
  }
}

// An agreement pass that found nothing to do: the core goes to another
// process; under the simulation build, whose ranks wait for nothing but
// messages, the rank blocks until the next agreement message arrives.
void idle(State& s) {
#ifdef DUCT_SIM
  MPI_Status status;
  if (s.agree_req != MPI_REQUEST_NULL && PMPI_Wait(&s.agree_req, &status) == MPI_SUCCESS) {
    s.inbox.emplace_back(status.MPI_SOURCE, std::move(s.agree_in));
    post_agree(s);
    return;
  }
#else
  (void)s;
#endif
  pause_a_moment();
}

// Look at the pids of this machine's ranks; the newly dead, in rank order.
std::vector<int> scan(State& s) {
  std::vector<int> gone;
  for (int r = 0; r < s.n; ++r) {
    const std::size_t i = static_cast<std::size_t>(r);
    if (r == s.me || s.failed[i] || !s.local[i]) continue;
    if (dead(s.pid[i])) {
      s.failed[i] = 1;
      gone.push_back(r);
    }
  }
  s.last_scan = Clock::now();
  return gone;
}

Status revoked_error(const State& s) {
  return make_error(Errc::revoked, "the communicator is revoked (%s): shrink it (DUCT_Comm_shrink)", s.why.c_str());
}

std::string rank_list(const std::vector<int>& v) {
  std::string out;
  for (int r : v) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace

State::~State() {
  int finalized = 0;
  (void)PMPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Request* r : {&revoke_req, &agree_req}) {
    if (*r == MPI_REQUEST_NULL) continue;
    (void)PMPI_Cancel(r);
    (void)PMPI_Wait(r, MPI_STATUS_IGNORE);
  }
  // Sends to dead processes may never complete: the library keeps them.
  for (Out& o : sends) {
    if (o.req == MPI_REQUEST_NULL) continue;
    int flag = 0;
    if (PMPI_Test(&o.req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) continue;
    (void)PMPI_Request_free(&o.req);
    (void)new std::vector<std::uint64_t>(std::move(o.buf));  // the library may still read it
  }
  if (comm != MPI_COMM_NULL) (void)PMPI_Comm_free(&comm);
}

Status attach(int me, int n_ranks, MPI_Comm comm, const std::vector<int>& node_of, const MpiWait& wait,
              std::unique_ptr<State>* out) {
  auto s = std::make_unique<State>();
  s->me = me;
  s->n = n_ranks;
  const std::size_t n = static_cast<std::size_t>(s->n);
#ifdef DUCT_SIM
  (void)wait;
  DUCT_MPI_CHECK(PMPI_Comm_dup(comm, &s->comm));
#else
  {
    MPI_Request req;
    DUCT_MPI_CHECK(PMPI_Comm_idup(comm, &s->comm, &req));
    DUCT_TRY(wait(&req, "MPI_Comm_idup of the communicator for fault tolerance (DUCT_FT=1)", nullptr));
  }
#endif
  DUCT_MPI_CHECK(PMPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN));
  // Every rank's pid and a hash of its kernel's boot id.
  struct Row {
    std::int64_t pid;
    std::uint64_t boot;
  };
  auto rows = std::make_shared<std::vector<Row>>(n + 1);
  Row& mine = (*rows)[n];
  mine.pid = static_cast<std::int64_t>(getpid());
  mine.boot = std::hash<std::string>{}(boot_id());
#ifdef DUCT_SIM
  mine.boot = 0;  // simulated ranks are coroutines of one process: no pid to look at
#endif
  {
    MPI_Request req;
    DUCT_MPI_CHECK(setup_mpi::Iallgather(&mine, sizeof(Row), MPI_BYTE, rows->data(), sizeof(Row), MPI_BYTE, s->comm, &req));
    DUCT_TRY(wait(&req, "MPI_Iallgather of the pids for fault tolerance (DUCT_FT=1)", rows));
  }
  s->pid.resize(n);
  s->local.resize(n);
  s->same_node.resize(n);
  s->failed.assign(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    s->pid[r] = static_cast<std::int32_t>((*rows)[r].pid);
    s->local[r] = mine.boot != 0 && !boot_id().empty() && (*rows)[r].boot == mine.boot;
    s->same_node[r] = s->local[r] && r < node_of.size() && node_of[r] == node_of[static_cast<std::size_t>(me)];
  }
  post_revoke(*s);
  post_agree(*s);
  s->last_scan = Clock::now();
  *out = std::move(s);
  return Status::ok();
}

Status look(State& s) {
  pump(s);
  return s.revoked ? revoked_error(s) : Status::ok();
}

Status watch(State& s) {
  pump(s);
  if (std::chrono::duration<double>(Clock::now() - s.last_scan).count() >= kScanSeconds) {
    const std::vector<int> gone = scan(s);
    if (!gone.empty()) {
      const std::string what = strprintf("rank%s %s of the communicator died (pid%s gone)", gone.size() > 1 ? "s" : "",
                                         rank_list(gone).c_str(), gone.size() > 1 ? "s" : "");
      const bool first = !s.revoked;
      do_revoke(s, s.me, strprintf("rank %d found that %s", s.me, what.c_str()));
      if (first) return make_error(Errc::peer_failed, "%s; the communicator is revoked for every survivor", what.c_str());
    }
  }
  return s.revoked ? revoked_error(s) : Status::ok();
}

Status on_failure(State& s, const Status& st) {
  pump(s);
  (void)scan(s);
  if (!s.revoked)
    do_revoke(s, s.me, strprintf("rank %d: a collective failed: %s", s.me, st.message().c_str()));
  return revoked_error(s);
}

void revoke(State& s, const std::string& why) {
  pump(s);
  do_revoke(s, s.me, why);
}

bool is_revoked(State& s) {
  pump(s);
  return s.revoked;
}

std::vector<int> failed_ranks(State& s) {
  pump(s);
  std::vector<int> out;
  for (int r = 0; r < s.n; ++r)
    if (s.failed[static_cast<std::size_t>(r)]) out.push_back(r);
  return out;
}

Status agree(State& s, int* flag, std::vector<int>* failed_out) {
  const std::uint32_t k = ++s.agree_seq;
  const std::size_t n = static_cast<std::size_t>(s.n), w = words(s.n);
  const double limit = config::get().ft_timeout;
  auto header = [](std::uint64_t kind, std::uint32_t seq) { return kind | (std::uint64_t{seq} << 8); };

  std::vector<std::uint8_t> heard(n, 0);
  std::vector<std::int32_t> their(n, 1);
  heard[static_cast<std::size_t>(s.me)] = 1;
  their[static_cast<std::size_t>(s.me)] = *flag;
  int coord = -1;
  Clock::time_point since = Clock::now();
  bool decided = false;
  std::int32_t result = 1;
  std::vector<std::uint8_t> result_failed;
  int decided_by = -1;
  unsigned polls = 0;

  for (;;) {
    pump(s);
    for (auto it = s.inbox.begin(); it != s.inbox.end() && !decided;) {
      const int src = it->first;
      const std::vector<std::uint64_t>& m = it->second;
      const std::uint32_t seq = static_cast<std::uint32_t>(m[0] >> 8);
      const std::uint64_t kind = m[0] & 0xff;
      if (seq > k) {  // a later agreement's, which some rank started already: kept for it
        ++it;
        continue;
      }
      if (seq == k && m.size() >= 2 + w) {
        const std::size_t si = static_cast<std::size_t>(src);
        if (kind == kContrib) {
          heard[si] = 1;
          their[si] = static_cast<std::int32_t>(m[1]);
          for (std::size_t r = 0; r < n; ++r)
            if ((m[2 + r / 64] >> (r % 64)) & 1) s.failed[r] = 1;
        } else if (kind == kDecide && !s.failed[si]) {
          decided = true;
          decided_by = src;
          result = static_cast<std::int32_t>(m[1]);
          result_failed.assign(n, 0);
          for (std::size_t r = 0; r < n; ++r) result_failed[r] = (m[2 + r / 64] >> (r % 64)) & 1;
        }
      }
      it = s.inbox.erase(it);  // an earlier agreement's are over
    }
    if (decided) break;

    int lowest = 0;
    while (lowest < s.n && s.failed[static_cast<std::size_t>(lowest)]) ++lowest;
    if (lowest != coord) {
      coord = lowest;
      since = Clock::now();
      if (coord != s.me) {
        std::vector<std::uint64_t> m(2 + w, 0);
        m[0] = header(kContrib, k);
        m[1] = static_cast<std::uint32_t>(*flag);
        for (std::size_t r = 0; r < n; ++r)
          if (s.failed[r]) m[2 + r / 64] |= std::uint64_t{1} << (r % 64);
        send(s, coord, kAgreeTag, std::move(m));
        DUCT_DEBUG(coll, "rank %d: agreement %u: contribution sent to rank %d", s.me, k, coord);
      }
    }
    if (coord == s.me) {
      bool all = true;
      for (std::size_t r = 0; r < n && all; ++r) all = heard[r] || s.failed[r];
      if (all) {
        decided = true;
        decided_by = s.me;
        result = ~std::int32_t{0};  // the bitwise AND of the survivors' flags
        for (std::size_t r = 0; r < n; ++r)
          if (!s.failed[r]) result &= their[r];
        result_failed = s.failed;
        break;
      }
    }
    if (++polls % kPollsPerLook == 0) {
      const Clock::time_point now = Clock::now();
      const double waited = std::chrono::duration<double>(now - since).count();
      if (std::chrono::duration<double>(now - s.last_scan).count() >= kScanSeconds) (void)scan(s);
      if (coord == s.me) {
        for (std::size_t r = 0; r < n; ++r)
          if (!heard[r] && !s.failed[r] && !s.same_node[r] && waited >= limit) {
            s.failed[r] = 1;
            DUCT_WARN(coll, "rank %d: agreement %u: rank %zu silent for %.1f s (DUCT_FT_TIMEOUT): taken as failed",
                      s.me, k, r, waited);
          }
      } else if (!s.same_node[static_cast<std::size_t>(coord)] && waited >= 2 * limit) {
        s.failed[static_cast<std::size_t>(coord)] = 1;
        DUCT_WARN(coll, "rank %d: agreement %u: coordinator rank %d silent for %.1f s (2 x DUCT_FT_TIMEOUT): taken "
                  "as failed", s.me, k, coord, waited);
      }
    }
    idle(s);
  }

  // Flood the decision to every survivor before returning (coll/ft.hpp).
  std::vector<std::uint64_t> m(2 + w, 0);
  m[0] = header(kDecide, k);
  m[1] = static_cast<std::uint32_t>(result);
  // What this rank knows from now on is the decision: every survivor's
  // DUCT_Comm_get_failed then says the same until a wait finds another.
  s.failed = result_failed;
  for (std::size_t r = 0; r < n; ++r)
    if (result_failed[r]) m[2 + r / 64] |= std::uint64_t{1} << (r % 64);
  // Besides the flood neighbours, the three survivors after the lowest
  // (which is the coordinator that decided: every rank below it is in the
  // decided failed set): the next coordinators, should it die now. One that
  // has not seen the decision cannot finish collecting while this rank
  // (which will not contribute again) lives, and it must learn the decision
  // before it would time this rank out, whatever the failures do to the
  // flood's graph. (Sending to the coordinator too doubled the next
  // agreement's time at 256 simulated ranks: its n-1 stale copies queued
  // ahead of the contributions.)
  std::vector<int> to = flood_targets(s, result_failed);
  for (int r = 0, seen = 0; r < s.n && seen <= kNextCoordinators; ++r) {
    if (result_failed[static_cast<std::size_t>(r)]) continue;
    if (seen++ > 0 && r != s.me && std::find(to.begin(), to.end(), r) == to.end()) to.push_back(r);
  }
  for (int r : to) send(s, r, kAgreeTag, m);
  pump(s);
  *flag = result;
  failed_out->clear();
  for (int r = 0; r < s.n; ++r)
    if (result_failed[static_cast<std::size_t>(r)]) failed_out->push_back(r);
  DUCT_INFO(coll, "rank %d: agreement %u decided by rank %d: flag %d, failed ranks [%s]", s.me, k, decided_by, result,
            rank_list(*failed_out).c_str());
  return Status::ok();
}

Status shrink(State& s, MPI_Comm user, MPI_Comm* out) {
  *out = MPI_COMM_NULL;
  int flag = 1;
  std::vector<int> failed;
  DUCT_TRY(agree(s, &flag, &failed));
  if (std::find(failed.begin(), failed.end(), s.me) != failed.end())
    return make_error(Errc::revoked, "the other ranks took this rank as failed (silent for DUCT_FT_TIMEOUT=%g s): "
                      "it is not in the shrunk communicator", config::get().ft_timeout);
  MPI_Group all = MPI_GROUP_NULL, survivors = MPI_GROUP_NULL;
  DUCT_MPI_CHECK(PMPI_Comm_group(s.comm, &all));
  int rc = MPI_SUCCESS;
  if (failed.empty()) {
    survivors = all;  // (SimGrid's SMPI refuses MPI_Group_excl of no ranks with a null array)
  } else {
    rc = PMPI_Group_excl(all, static_cast<int>(failed.size()), failed.data(), &survivors);
    (void)PMPI_Group_free(&all);
  }
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Group_excl");
  rc = PMPI_Comm_create_group(s.comm, survivors, kShrinkTag, out);
  (void)PMPI_Group_free(&survivors);
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Comm_create_group of the survivors");
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(user, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL) {
    (void)PMPI_Comm_set_errhandler(*out, eh);
    (void)PMPI_Errhandler_free(&eh);
  }
  DUCT_INFO(coll, "rank %d: shrunk to %d ranks (failed: [%s])", s.me, s.n - static_cast<int>(failed.size()),
            rank_list(failed).c_str());
  return Status::ok();
}

}  // namespace duct::coll::ft
