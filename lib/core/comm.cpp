#include "core/comm.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/hash.hpp"

namespace duct {

Status mpi_error(int rc, const char* call) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "code %d", rc);
  return make_error(Errc::mpi, "%s failed: %s", call, text);
}

Status mpi_wait(MPI_Request* req, const char* what, std::shared_ptr<void>) {
  int rc = PMPI_Wait(req, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? Status::ok() : mpi_error(rc, what);
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS) return "?";
  return std::string(name, static_cast<size_t>(len));
}

const std::string& boot_id() {
  static const std::string id = [] {
    char line[64] = {};
    if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
      if (!std::fgets(line, sizeof line, f)) line[0] = '\0';
      std::fclose(f);
    }
    return std::string(line);
  }();
  return id;
}

std::string node_name(const char* host, std::size_t len) {
  std::string name(host, len);
#ifdef DUCT_SIM
  const std::size_t dot = name.rfind(".r");
  if (dot != std::string::npos && dot + 2 < name.size() &&
      name.find_first_not_of("0123456789", dot + 2) == std::string::npos)
    name.resize(dot);
#endif
  return name;
}

Status build_topology(MPI_Comm comm, Topology* out, const MpiWait& wait) {
  Topology t;
  DUCT_MPI_CHECK(MPI_Comm_rank(comm, &t.rank));
  DUCT_MPI_CHECK(MPI_Comm_size(comm, &t.size));

  // A row is two 64-bit FNV-1a hashes, not the names themselves: every rank
  // holds every row, and at thousands of ranks (or thousands of simulated
  // ranks in one process) names of MPI_MAX_PROCESSOR_NAME bytes made the
  // exchange n times that per rank. NCCL keys its nodes by a hash of host
  // name and boot id the same way; two names with one hash among n ranks
  // (about n^2 / 2^65) would put two nodes' ranks on one.
  struct Row {
    std::uint64_t node;     // the node's name (node_name) and the kernel's boot id
    std::uint64_t machine;  // the kernel's boot id alone (0: none read)
  };
  struct Bufs {
    Row mine{};
    std::vector<Row> rows;
  };
  auto buf = std::make_shared<Bufs>();
  {
    const std::string host = processor_name();
    std::string key = node_name(host.data(), host.size());
    key += '\n';
    key += boot_id();
    buf->mine.node = fnv1a(key);
    buf->mine.machine = boot_id().empty() ? 0 : fnv1a(boot_id());
  }
  buf->rows.resize(static_cast<size_t>(t.size));
  MPI_Request req;
  DUCT_MPI_CHECK(setup_mpi::Iallgather(&buf->mine, sizeof(Row), MPI_BYTE, buf->rows.data(), sizeof(Row), MPI_BYTE, comm,
                                 &req));
  DUCT_TRY(wait(&req, "MPI_Iallgather of the node keys", buf));
  const std::vector<Row>& rows = buf->rows;
  // Each rank's node leader (the lowest rank with its node key) and local
  // rank (its place among its node's ranks, in rank order).
  std::vector<int> leader_of(static_cast<size_t>(t.size)), local_of(static_cast<size_t>(t.size));
  std::unordered_map<std::uint64_t, std::pair<int, int>> nodes;  // key -> (leader, ranks so far)
  for (int r = 0; r < t.size; ++r) {
    auto it = nodes.try_emplace(rows[static_cast<size_t>(r)].node, r, 0).first;
    leader_of[static_cast<size_t>(r)] = it->second.first;
    local_of[static_cast<size_t>(r)] = it->second.second++;
  }

  std::vector<int> leaders = leader_of;
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  t.num_nodes = static_cast<int>(leaders.size());
  t.ranks_on.assign(leaders.size(), {});
  for (int r = 0; r < t.size; ++r) {
    const int node = static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), leader_of[static_cast<size_t>(r)]) -
                                      leaders.begin());
    t.node_of.push_back(node);
    t.local_rank_of.push_back(local_of[static_cast<size_t>(r)]);
    t.ranks_on[static_cast<size_t>(node)].push_back(r);
  }
  t.node = t.node_of[static_cast<size_t>(t.rank)];
  const int local_rank = local_of[static_cast<size_t>(t.rank)];
  const int local_size = static_cast<int>(t.ranks_on[static_cast<size_t>(t.node)].size());
  t.local_rank = local_rank;
  t.local_size = local_size;
  const Row& me = rows[static_cast<size_t>(t.rank)];
  if (me.machine != 0)
    t.machine_size = static_cast<int>(
        std::count_if(rows.begin(), rows.end(), [&me](const Row& r) { return r.machine == me.machine; }));
  t.machine_size = std::max(t.machine_size, local_size);
  // Rails: with the same number of ranks on every node, rail i is the
  // ranks of local index i on every node, in node order.
  t.ranks_per_node = local_size;
  for (const auto& on : t.ranks_on)
    if (static_cast<int>(on.size()) != local_size) t.ranks_per_node = 0;
  if (t.ranks_per_node > 0)
    for (const auto& on : t.ranks_on) t.rail.push_back(on[static_cast<size_t>(local_rank)]);
  *out = std::move(t);
  return Status::ok();
}

CommAttr::Shared* CommAttr::make_shared(Deleter deleter) {
  // Owned by a process-lifetime list (reachable, so leak checkers stay
  // quiet); a keyval's state is never freed while MPI may still call it.
  static std::mutex m;
  static std::list<Shared> all;
  std::lock_guard<std::mutex> lock(m);
  return &all.emplace_back(Shared{deleter});
}

CommAttr::CommAttr(Deleter deleter) : shared_(make_shared(deleter)) {}

int CommAttr::delete_fn(MPI_Comm, int, void* value, void* extra) {
  auto* shared = static_cast<Shared*>(extra);
  if (value && shared->deleter) shared->deleter(value);
  return MPI_SUCCESS;
}

Status CommAttr::ensure_keyval() {
  if (keyval_ != MPI_KEYVAL_INVALID) return Status::ok();
  DUCT_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &CommAttr::delete_fn, &keyval_, shared_));
  return Status::ok();
}

Status CommAttr::get(MPI_Comm comm, void** value) {
  *value = nullptr;
  if (keyval_ == MPI_KEYVAL_INVALID) return Status::ok();
  int found = 0;
  void* v = nullptr;
  DUCT_MPI_CHECK(MPI_Comm_get_attr(comm, keyval_, &v, &found));
  if (found) *value = v;
  return Status::ok();
}

Status CommAttr::set(MPI_Comm comm, void* value) {
  DUCT_TRY(ensure_keyval());
  DUCT_MPI_CHECK(MPI_Comm_set_attr(comm, keyval_, value));
  return Status::ok();
}

Status CommAttr::clear(MPI_Comm comm) {
  if (keyval_ == MPI_KEYVAL_INVALID) return Status::ok();
  Deleter d = shared_->deleter;
  shared_->deleter = nullptr;  // detach without deleting
  int rc = MPI_Comm_delete_attr(comm, keyval_);
  shared_->deleter = d;
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Comm_delete_attr");
  return Status::ok();
}

void CommAttr::release() noexcept {
  if (keyval_ != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&keyval_);
  keyval_ = MPI_KEYVAL_INVALID;
}

}  // namespace duct
