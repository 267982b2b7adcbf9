#include "coll/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "channel/ucx.hpp"
#include "coll/engine.hpp"
#include "coll/shm.hpp"
#include "core/comm.hpp"
#include "core/config.hpp"
#include "core/dtype.hpp"
#include "core/hwtopo.hpp"
#include "core/log.hpp"
#include "memory/ipc_cache.hpp"

namespace duct::coll {

namespace {
std::mutex g_init_mutex;
Runtime* g_runtime = nullptr;
bool g_finalized = false;

// 0..n-1, from a per-thread generator (the cid agreement's step).
std::uint32_t random_below(std::uint32_t n) {
  thread_local std::minstd_rand gen(static_cast<std::uint32_t>(getpid()) * 2654435761u ^
                                    static_cast<std::uint32_t>(std::hash<std::thread::id>{}(std::this_thread::get_id())) ^
                                    static_cast<std::uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return static_cast<std::uint32_t>(gen() % n);
}
}  // namespace

// ---- Context ----------------------------------------------------------------

Context::~Context() { release(); }

void Context::release() noexcept {
  ft.reset();
  engine.reset();
  shm.reset();
  const bool ipc = channels && channels->uses_ipc();
  channels.reset();
  if (ipc) DUCT_INFO(memory, "IPC cache after releasing communicator cid %u: %s", cid,
                     memory::IpcCache::instance().describe().c_str());
  for (int i = 0; i < kSlots; ++i) {
    host_[i].reset();
    device_[i].reset();
  }
}

const PortTree& Context::port_tree(int root) {
  if (port_trees_.empty()) port_trees_.resize(static_cast<std::size_t>(size()));
  std::unique_ptr<PortTree>& pt = port_trees_[static_cast<std::size_t>(root)];
  if (!pt) pt = std::make_unique<PortTree>(coll::port_tree(topo, root));
  return *pt;
}

Status Context::scratch(memory::MemKind kind, std::size_t bytes, int slot, void** out) {
  if (slot < 0 || slot >= kSlots) return make_error(Errc::internal, "scratch slot %d out of range", slot);
  memory::Buffer& b = kind == memory::MemKind::device ? device_[slot] : host_[slot];
  DUCT_TRY(b.reserve(kind, bytes));
  *out = b.data();
  return Status::ok();
}

LayerHooks& layer_hooks() noexcept {
  static LayerHooks hooks;
  return hooks;
}

// ---- Runtime ----------------------------------------------------------------

bool Runtime::finalized() noexcept { return g_finalized; }
Runtime* Runtime::ready() noexcept { return g_runtime; }

Status Runtime::get(Runtime** out) {
  if (g_runtime) {
    *out = g_runtime;
    return Status::ok();
  }
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_finalized) return make_error(Errc::arg, "duct is called after MPI_Finalize");
  if (!g_runtime) {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return make_error(Errc::arg, "duct is called before MPI_Init");
    auto* rt = new Runtime();
    Status st = rt->init();
    if (!st) {
      delete rt;
      return st;
    }
    g_runtime = rt;
  }
  *out = g_runtime;
  return Status::ok();
}

Status Runtime::init() {
  config::get();
  DUCT_TRY(config::load_status());
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  threaded_ = level == MPI_THREAD_MULTIPLE;
  log::set_identity(world_rank_, processor_name().c_str());
  const config::RulesFile& rules = config::rules_file();
  DUCT_TRY(rules.status);
  DUCT_TRY(select::Table::make(config::get().tune, rules.text, rules.path, &table_));
  if (!rules.path.empty())
    DUCT_INFO(select, "selection rules file %s (%s) read; its rules go before the built-in ones", rules.path.c_str(),
              rules.why.c_str());
  // Teardown at MPI_Finalize: MPI deletes MPI_COMM_SELF's attributes first.
  DUCT_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &Runtime::self_delete, &self_keyval_, nullptr));
  DUCT_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval_, this));
  if (layer_hooks().runtime_up) layer_hooks().runtime_up(world_rank_);
  DUCT_INFO(init, "duct runtime up (CUDA: %s)",
            memory::cuda::available() ? "available" : memory::cuda::unavailable_reason().c_str());
  return Status::ok();
}

int Runtime::self_delete(MPI_Comm, int keyval, void* value, void*) {
  auto* rt = static_cast<Runtime*>(value);
  if (rt) {
    rt->teardown();
    {
      std::lock_guard<std::mutex> lock(g_init_mutex);
      g_runtime = nullptr;
      g_finalized = true;
    }
    delete rt;
  }
  MPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

void Runtime::teardown() noexcept {
  DUCT_INFO(init, "tearing duct down at MPI_Finalize (%zu live communicator contexts)", live_.size());
  for (auto it = hooks_.rbegin(); it != hooks_.rend(); ++it) (*it)();
  hooks_.clear();
  if (layer_hooks().runtime_down) layer_hooks().runtime_down();
  // Contexts stay attached to their communicators (MPI may still delete
  // those attributes later); only their resources go now, in cid order:
  // releasing a shared-memory area is collective, and cids are the same on
  // every rank.
  last_ctx_ = nullptr;
  last_comm_ = MPI_COMM_NULL;
  std::vector<Context*> by_cid(live_.begin(), live_.end());
  std::sort(by_cid.begin(), by_cid.end(), [](const Context* a, const Context* b) { return a->cid < b->cid; });
  for (Context* c : by_cid) {
    // MPI_Finalize with requests active is erroneous (MPI-4.0 §11.2.2): they fail.
    if (!c->queue.empty() && layer_hooks().abandon_queue)
      layer_hooks().abandon_queue(*c, make_error(Errc::internal, "MPI_Finalize was called with %zu nonblocking collective(s) of "
                                             "communicator cid %u not completed", c->queue.size(), c->cid));
    c->release();
  }
  attr_.release();
  if (memory::IpcCache::instance().stats().misses > 0)
    DUCT_INFO(memory, "IPC cache at finalize: %s", memory::IpcCache::instance().describe().c_str());
  memory::IpcCache::instance().clear();
  memory::IpcExports::instance().clear();
  memory::BouncePool::instance().clear();
  channel::ucx::Worker::shutdown();
  memory::cuda::shutdown();
  hwtopo::release();
  free_half_types();
}

std::string Runtime::describe_contexts() const {
  std::vector<const Context*> by_cid(live_.begin(), live_.end());
  std::sort(by_cid.begin(), by_cid.end(), [](const Context* a, const Context* b) { return a->cid < b->cid; });
  std::string out;
  for (const Context* c : by_cid)
    out += strprintf("duct:   communicator cid %u: rank %d of %d, %u collectives started%s%s\n", c->cid, c->rank(),
                     c->size(), c->collectives_started(), c->failed.is_ok() ? "" : ", failed: ",
                     c->failed.is_ok() ? "" : c->failed.message().c_str());
  return out;
}

Status Runtime::set_rules(const std::string& rules) {
  select::Table t;
  const config::RulesFile& file = config::rules_file();
  DUCT_TRY(select::Table::make(rules, file.text, file.path, &t));
  table_ = std::move(t);
  ++generation_;
  DUCT_INFO(select, "selection rules replaced: %s", rules.empty() ? "(built-in)" : rules.c_str());
  return Status::ok();
}

void Runtime::delete_context(void* value) noexcept {
  auto* ctx = static_cast<Context*>(value);
  // Its stream-ordered collectives first (they run on a duplicate), then
  // its nonblocking ones (LayerHooks).
  const LayerHooks& hooks = layer_hooks();
  if (ctx->streams && hooks.end_streams) hooks.end_streams(*ctx);
  if (hooks.end_queue) hooks.end_queue(*ctx);
  if (g_runtime) {
    // Another thread may be setting a context up (agree_cid reserves ids in
    // cids_) or running a collective.
    std::unique_lock<std::recursive_mutex> lock;
    if (g_runtime->threaded()) lock = std::unique_lock<std::recursive_mutex>(g_runtime->mutex());
    g_runtime->live_.erase(ctx);
    // A failed context's messages may still arrive: never reuse its cid.
    if (ctx->failed.is_ok()) g_runtime->cids_.erase(ctx->cid);
    if (g_runtime->last_ctx_ == ctx) {
      g_runtime->last_ctx_ = nullptr;
      g_runtime->last_comm_ = MPI_COMM_NULL;
    }
  }
  delete ctx;
}

Status Runtime::context(MPI_Comm comm, Context** out, std::unique_lock<std::recursive_mutex>* lock) {
  if (comm == last_comm_ && last_ctx_) {
    *out = last_ctx_;
    return Status::ok();
  }
  void* v = nullptr;
  DUCT_TRY(attr_.get(comm, &v));
  if (v) {
    *out = static_cast<Context*>(v);
  } else {
    DUCT_TRY(create_context(comm, out, lock));
  }
  last_comm_ = comm;
  last_ctx_ = *out;
  return Status::ok();
}

Status Runtime::find_context(MPI_Comm comm, Context** out) {
  void* v = nullptr;
  DUCT_TRY(attr_.get(comm, &v));
  *out = static_cast<Context*>(v);
  return Status::ok();
}

Status Runtime::agree_cid(MPI_Comm comm, std::uint32_t* cid, bool local_ok, bool* all_ok, const MpiWait& wait) {
  // The smallest id >= every rank's next candidate that no rank has in use;
  // the first exchange also carries "my local setup failed" (MPI_MAX of 0/1).
  struct Bufs {
    std::uint32_t mine[2], max[2];
    int is_free;
  };
  auto b = std::make_shared<Bufs>();
  b->mine[0] = next_cid_;
  b->mine[1] = local_ok ? 0 : 1;
  *all_ok = true;
  for (unsigned tries = 0; tries < channel::ucx::kMaxCid; ++tries) {
    MPI_Request req;
    DUCT_MPI_CHECK(setup_mpi::Iallreduce(b->mine, b->max, tries == 0 ? 2 : 1, MPI_UINT32_T, MPI_MAX, comm, &req));
    DUCT_TRY(wait(&req, "MPI_Iallreduce of the communicator id", b));
    if (tries == 0 && b->max[1] != 0) {
      *all_ok = false;
      return Status::ok();
    }
    if (b->max[0] >= channel::ucx::kMaxCid) b->max[0] = 1;
    // Reserved while the ranks agree: another thread setting up another
    // communicator meanwhile (the waits let the runtime lock go) then finds
    // it taken. Given back if another rank has it in use.
    const bool reserved = cids_.insert(b->max[0]).second;
    b->is_free = reserved;
    DUCT_MPI_CHECK(setup_mpi::Iallreduce(MPI_IN_PLACE, &b->is_free, 1, MPI_INT, MPI_LAND, comm, &req));
    // A wait that gives up keeps the reservation: the other ranks may still
    // agree on the id and use it.
    DUCT_TRY(wait(&req, "MPI_Iallreduce of the communicator id", b));
    if (b->is_free) {
      *cid = b->max[0];
      next_cid_ = std::max(next_cid_, b->max[0] + 1);
      return Status::ok();
    }
    if (reserved) cids_.erase(b->max[0]);
    // Under MPI_THREAD_MULTIPLE two setups on overlapping ranks can each
    // hold the other's choice on some rank and fail together; a random step
    // of 1-4 (the largest proposal wins) makes the same collision in the
    // next round unlikely.
    b->mine[0] = b->max[0] + 1 + (threaded_ ? random_below(4) : 0);
  }
  return make_error(Errc::not_supported, "more than %u communicators in use by duct at once",
                    channel::ucx::kMaxCid - 1);
}

namespace {

// "MPI_COMM_WORLD", "'halo'" (a name set with MPI_Comm_set_name) or "without
// a name", for messages.
std::string comm_label(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return "MPI_COMM_WORLD";
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  if (MPI_Comm_get_name(comm, name, &len) == MPI_SUCCESS && len > 0)
    return "'" + std::string(name, static_cast<std::size_t>(len)) + "'";
  return "without a name";
}

// "1, 2" or "1, 2, ..., 511": every rank but `me`, up to 16 of them.
std::string other_ranks(int me, int n) {
  std::string out;
  int listed = 0;
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    if (listed == 15 && n - 1 > 16) {
      out += strprintf(", ..., %d", me == n - 1 ? n - 2 : n - 1);
      break;
    }
    out += strprintf(listed ? ", %d" : "%d", r);
    ++listed;
  }
  return out;
}

// More ranks on this machine (the communicator's, or the job's as Open MPI
// tells them) than online cores: the same answer on every rank of a node.
bool oversubscribed(long node_ranks) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) node_ranks = std::max(node_ranks, std::atol(s));
  return node_ranks > cores;
}

bool yield_while_waiting(long node_ranks) {
  auto mode = config::get().yield;
  return mode == config::YieldMode::yield || (mode == config::YieldMode::auto_ && oversubscribed(node_ranks));
}

// Lets the caller's runtime lock go for a scope and takes it back; nothing
// without a lock, or with one the thread does not hold.
class Unlocked {
 public:
  explicit Unlocked(std::unique_lock<std::recursive_mutex>* lock) noexcept
      : lock_(lock && lock->owns_lock() ? lock : nullptr) {
    if (lock_) lock_->unlock();
  }
  ~Unlocked() {
    if (lock_) lock_->lock();
  }
  Unlocked(const Unlocked&) = delete;
  Unlocked& operator=(const Unlocked&) = delete;

 private:
  std::unique_lock<std::recursive_mutex>* lock_;
};

}  // namespace

Status Runtime::create_context(MPI_Comm comm, Context** out, std::unique_lock<std::recursive_mutex>* lock) {
  auto ctx = std::make_unique<Context>();
  ctx->comm = comm;
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const std::string doing =
      strprintf("creating duct's context for communicator %s (%d ranks; this is rank %d)", comm_label(comm).c_str(), n, me);
  ctx->yield = yield_while_waiting(1);

  // Every exchange of the setup is a nonblocking MPI collective waited for
  // under DUCT_TIMEOUT and SIGUSR1 (wait_setup), so a rank that never comes
  // turns into a timeout error on the ranks that did, not a hang. The wait
  // lets the caller's runtime lock go (MPI_THREAD_MULTIPLE, or beside
  // duct's stream thread) and takes it back: held across it, two ranks
  // whose threads set up two communicators in opposite orders deadlocked,
  // each waiting for the other with its lock held. The waits are the only
  // steps that let it go; the others touch the runtime's tables or the UCX
  // worker.
  const MpiWait wait = [&](MPI_Request* req, const char* what, std::shared_ptr<void> buffers) {
    const Unlocked unlocked(lock);
    if (!layer_hooks().setup_wait) return mpi_wait(req, what, std::move(buffers));
    return layer_hooks().setup_wait(req, [&] { return doing; }, [what] { return std::string(what); },
                                    std::move(buffers), ctx->yield);
  };
  Status st = setup_context(*ctx, comm, me, n, wait);
  if (!st) {
    // The ranks may now disagree on how far the setup got: the context stays
    // on the communicator, failed, and every later duct call on it returns
    // this error at once (as after a failed collective). Its cid, if it got
    // one, is never reused.
    ctx->failed = st;
    ctx->failed.context("an earlier duct call on this communicator failed");
    if (attr_.set(comm, ctx.get())) {
      live_.insert(ctx.get());
      (void)ctx.release();
    }
    return st;
  }

  DUCT_TRY(attr_.set(comm, ctx.get()));
  live_.insert(ctx.get());
  DUCT_INFO(init, "communicator context: %d ranks on %d node(s), cid %u, %s while waiting", ctx->topo.size,
            ctx->topo.num_nodes, ctx->cid, ctx->yield ? "yielding" : "spinning");
  *out = ctx.release();
  return Status::ok();
}

Status Runtime::setup_context(Context& c, MPI_Comm comm, int me, int n, const MpiWait& wait) {
  // Every exchange is a nonblocking collective on the user's communicator
  // itself, started at the same point of every rank's sequence of
  // collectives on it (this duct call), so MPI orders them with the
  // application's own. The setup creates no communicator: Open MPI 4.1
  // lets a communicator creation proceed on a process only while no
  // creation from a parent with a lower id is under way there, so a
  // duplicate made inside a collective waited for creations in other
  // threads, whose peers waited in turn for this thread, and the ranks
  // deadlocked (MPICH's threads/comm/comm_create_group_threads and ...2,
  // where threads make communicators with MPI_Comm_create_group while
  // others make their first call on new ones). MPI_Comm_split_type and
  // MPI_Win_allocate_shared (which duplicates the communicator inside Open
  // MPI) are creations too, and the split was a blocking wait outside
  // DUCT_TIMEOUT.
  //
  // The first exchange completes only when every rank has arrived; MPI
  // does not say which ranks have not. It is an MPI_Ibarrier: one that
  // never completes may be left behind (MPI can neither cancel nor free
  // it), and Open MPI copes with that when the application then frees the
  // communicator.
  {
    MPI_Request req;
    DUCT_MPI_CHECK(setup_mpi::Ibarrier(comm, &req));
    const std::string waiting =
        n == 2 ? strprintf("rank %d to call a duct collective on it (MPI_Ibarrier)", 1 - me)
               : strprintf("ranks %s to arrive: at least one of them has not called a duct collective on it "
                           "(MPI_Ibarrier, duct's first exchange, cannot say which)", other_ranks(me, n).c_str());
    DUCT_TRY(wait(&req, waiting.c_str(), nullptr));
  }

  // Local setup (UCX worker, CUDA device); whether every rank's succeeded is
  // agreed with the cid, before any exchange that needs it.
  channel::PeerInfo local;
  Status local_st = channel::local_peer_info(&local);
  if (local_st) local.numa = hwtopo::process_numa_node();
  DUCT_TRY(build_topology(comm, &c.topo, wait));
  for (const auto& node : c.topo.ranks_on) {
    if (node.front() == c.topo.rank) c.leader_index_ = static_cast<int>(c.leaders_.size());
    c.leaders_.push_back(node.front());
  }
  c.yield = yield_while_waiting(c.topo.machine_size);
  c.oversubscribed = oversubscribed(c.topo.machine_size);
  // Fault tolerance first: a rank that fails during the rest of the setup
  // (the endpoints' wire-up, the shared-memory area) leaves a failed
  // context that can still be shrunk. One that fails before this point
  // cannot be survived by duct (nothing to agree with yet).
  if (config::get().ft && c.topo.size > 1) DUCT_TRY(ft::attach(c.rank(), c.size(), comm, c.topo.node_of, wait, &c.ft));
  // The cid exchange also carries whether every rank's local setup worked
  // (one round fewer than a separate agreement).
  bool all_ok = false;
  DUCT_TRY(agree_cid(comm, &c.cid, local_st.is_ok(), &all_ok, wait));
  if (!local_st) return local_st;
  if (!all_ok) return make_error(Errc::comm, "another rank of the communicator failed to set up duct (see its message)");
  DUCT_TRY(channel::ChannelSet::create(comm, c.topo, c.cid, local, &c.channels, wait));
  // No rank goes on before every rank has its endpoints. Creating one over
  // UCX's shared-memory transports attaches the peer's receive FIFO at
  // once, so the peer's worker must still exist. A rank with little to do
  // in the first collective (a leaf of a reduce) otherwise finished it,
  // reached MPI_Finalize and destroyed its worker while a slower rank of
  // its node was still connecting: "mm ep failed to connect to remote
  // FIFO" (MPICH's coll/longuser on 2 emulated nodes, 7 of 12 runs). On
  // one node the shared-memory segment's exchanges below do the same.
  if (c.topo.num_nodes > 1) {
    MPI_Request req;
    DUCT_MPI_CHECK(setup_mpi::Ibarrier(comm, &req));
    DUCT_TRY(wait(&req, "MPI_Ibarrier after every rank's endpoints", nullptr));
  }
#ifdef DUCT_SIM
  // Simulated ranks are coroutines of one process: a rank spinning on
  // another's shared-memory word would never let it run.
  const bool shm_wanted = false;
#else
  const bool shm_wanted = true;
#endif
  if (shm_wanted && c.topo.num_nodes == 1 && c.topo.size > 1) {
    Status st = ShmArea::create(comm, c.topo.rank, c.topo.size, &c.shm, wait);
    if (st.code() == Errc::timeout) return st;
    if (!st) DUCT_INFO(init, "no shared-memory area (%s): small collectives use messages", st.message().c_str());
  }
  if (std::string why; Engine::possible(c.shm.get(), *c.channels, c.rank(), c.size(), &why)) {
    c.engine = std::make_unique<Engine>(c.shm.get(), *c.channels, c.rank(), c.size());
    DUCT_INFO(init, "device engine on: %s", c.engine->one_gpu() ? "every rank on one GPU, rank 0 does the work"
                                                                 : "ranks on several GPUs, each does its share");
  } else if (c.topo.num_nodes == 1 && c.topo.size > 1) {
    DUCT_INFO(init, "no device engine: %s", why.c_str());
  }
  return Status::ok();
}

}  // namespace duct::coll
