#include "core/comm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <list>
#include <mutex>

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

namespace {
thread_local SetupLock::Lock* t_setup_lock = nullptr;
}  // namespace

SetupLock::SetupLock(Lock* lock) noexcept : saved_(t_setup_lock) { t_setup_lock = lock; }
SetupLock::~SetupLock() { t_setup_lock = saved_; }

SetupLock::Released::Released() noexcept {
  if (t_setup_lock && t_setup_lock->owns_lock()) {
    lock_ = t_setup_lock;
    lock_->unlock();
  }
}
SetupLock::Released::~Released() {
  if (lock_) lock_->lock();
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS) return "?";
  return std::string(name, static_cast<size_t>(len));
}

namespace {
// The kernel's boot id ("" where /proc does not have it): one per machine,
// shared by its network namespaces and containers. Read once per process.
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
}  // namespace

Status build_topology(MPI_Comm comm, Topology* out, const MpiWait& wait) {
  Topology t;
  DUCT_MPI_CHECK(MPI_Comm_rank(comm, &t.rank));
  DUCT_MPI_CHECK(MPI_Comm_size(comm, &t.size));

  // The node of each rank: the lowest rank of `comm` that shares memory with it.
  MPI_Comm node_comm;
  {
    SetupLock::Released unlocked;  // blocking and collective: other threads' setups may need this rank's peers
    DUCT_MPI_CHECK(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, t.rank, MPI_INFO_NULL, &node_comm));
  }
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(node_comm, &local_rank);
  MPI_Comm_size(node_comm, &local_size);
  struct Row {
    int leader;
    int local_rank;
    char host[MPI_MAX_PROCESSOR_NAME];
    char boot_id[40];  // the kernel's boot id: one per machine, shared by its namespaces
  };
  struct Bufs {
    int leader;
    Row mine{};
    std::vector<Row> rows;
  };
  auto buf = std::make_shared<Bufs>();
  buf->leader = t.rank;
  MPI_Request req;
  int rc = PMPI_Iallreduce(MPI_IN_PLACE, &buf->leader, 1, MPI_INT, MPI_MIN, node_comm, &req);
  Status st = rc == MPI_SUCCESS ? wait(&req, "MPI_Iallreduce of the node leaders", buf)
                                : mpi_error(rc, "MPI_Iallreduce(node leader)");
  PMPI_Comm_free(&node_comm);  // freed once its pending operations complete
  DUCT_TRY(st);

  buf->mine.leader = buf->leader;
  buf->mine.local_rank = local_rank;
  std::snprintf(buf->mine.host, sizeof buf->mine.host, "%s", processor_name().c_str());
  std::snprintf(buf->mine.boot_id, sizeof buf->mine.boot_id, "%s", boot_id().c_str());
  buf->rows.resize(static_cast<size_t>(t.size));
  DUCT_MPI_CHECK(PMPI_Iallgather(&buf->mine, sizeof(Row), MPI_BYTE, buf->rows.data(), sizeof(Row), MPI_BYTE, comm,
                                 &req));
  DUCT_TRY(wait(&req, "MPI_Iallgather of the hostnames", buf));
  const std::vector<Row>& rows = buf->rows;

  std::vector<int> leaders;
  for (const Row& r : rows) leaders.push_back(r.leader);
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  t.num_nodes = static_cast<int>(leaders.size());
  t.ranks_on.assign(leaders.size(), {});
  for (int r = 0; r < t.size; ++r) {
    const Row& row = rows[static_cast<size_t>(r)];
    int node = static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), row.leader) - leaders.begin());
    t.node_of.push_back(node);
    t.local_rank_of.push_back(row.local_rank);
    t.host_of.emplace_back(row.host);
    t.ranks_on[static_cast<size_t>(node)].push_back(r);
  }
  t.node = t.node_of[static_cast<size_t>(t.rank)];
  t.local_rank = local_rank;
  t.local_size = local_size;
  const Row& me = rows[static_cast<size_t>(t.rank)];
  if (me.boot_id[0] != '\0')
    t.machine_size = static_cast<int>(std::count_if(rows.begin(), rows.end(), [&me](const Row& r) {
      return std::strncmp(r.boot_id, me.boot_id, sizeof r.boot_id) == 0;
    }));
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
