#include "coll/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "channel/ucx.hpp"
#include "coll/engine.hpp"
#include "coll/shm.hpp"
#include "coll/task.hpp"
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
}  // namespace

// ---- Context ----------------------------------------------------------------

Context::~Context() { release(); }

void Context::release() noexcept {
  engine.reset();
  shm.reset();  // collective (MPI_Win_free): every rank releases in the same order
  const bool ipc = channels && channels->uses_ipc();
  channels.reset();
  if (ipc) DUCT_INFO(memory, "IPC cache after releasing communicator cid %u: %s", cid,
                     memory::IpcCache::instance().describe().c_str());
  for (int i = 0; i < kSlots; ++i) {
    host_[i].reset();
    device_[i].reset();
  }
  int fin = 0;
  MPI_Finalized(&fin);
  if (dup != MPI_COMM_NULL && !fin) PMPI_Comm_free(&dup);
  dup = MPI_COMM_NULL;
}

Status Context::scratch(memory::MemKind kind, std::size_t bytes, int slot, void** out) {
  if (slot < 0 || slot >= kSlots) return make_error(Errc::internal, "scratch slot %d out of range", slot);
  memory::Buffer& b = kind == memory::MemKind::device ? device_[slot] : host_[slot];
  DUCT_TRY(b.reserve(kind, bytes));
  *out = b.data();
  return Status::ok();
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
  DUCT_TRY(select::Table::make(config::get().tune, &table_));
  // Teardown at MPI_Finalize: MPI deletes MPI_COMM_SELF's attributes first.
  DUCT_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &Runtime::self_delete, &self_keyval_, nullptr));
  DUCT_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval_, this));
  install_dump_signal(world_rank_);
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
  restore_dump_signal();
  // Contexts stay attached to their communicators (MPI may still delete
  // those attributes later); only their resources go now, in cid order:
  // releasing a shared-memory area is collective, and cids are the same on
  // every rank.
  last_ctx_ = nullptr;
  last_comm_ = MPI_COMM_NULL;
  std::vector<Context*> by_cid(live_.begin(), live_.end());
  std::sort(by_cid.begin(), by_cid.end(), [](const Context* a, const Context* b) { return a->cid < b->cid; });
  for (Context* c : by_cid) c->release();
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
  DUCT_TRY(select::Table::make(rules, &t));
  table_ = std::move(t);
  ++generation_;
  DUCT_INFO(select, "selection rules replaced: %s", rules.empty() ? "(built-in)" : rules.c_str());
  return Status::ok();
}

void Runtime::delete_context(void* value) noexcept {
  auto* ctx = static_cast<Context*>(value);
  if (g_runtime) {
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

Status Runtime::context(MPI_Comm comm, Context** out) {
  if (comm == last_comm_ && last_ctx_) {
    *out = last_ctx_;
    return Status::ok();
  }
  void* v = nullptr;
  DUCT_TRY(attr_.get(comm, &v));
  if (v) {
    *out = static_cast<Context*>(v);
  } else {
    DUCT_TRY(create_context(comm, out));
  }
  last_comm_ = comm;
  last_ctx_ = *out;
  return Status::ok();
}

Status Runtime::agree_cid(MPI_Comm dup, std::uint32_t* cid) {
  // The smallest id >= every rank's next candidate that no rank has in use.
  std::uint32_t cand = next_cid_;
  for (unsigned tries = 0; tries < channel::ucx::kMaxCid; ++tries) {
    std::uint32_t agreed = 0;
    DUCT_MPI_CHECK(PMPI_Allreduce(&cand, &agreed, 1, MPI_UINT32_T, MPI_MAX, dup));
    if (agreed >= channel::ucx::kMaxCid) agreed = 1;
    int is_free = cids_.count(agreed) == 0;
    DUCT_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, &is_free, 1, MPI_INT, MPI_LAND, dup));
    if (is_free) {
      *cid = agreed;
      next_cid_ = agreed + 1;
      return Status::ok();
    }
    cand = agreed + 1;
  }
  return make_error(Errc::not_supported, "more than %u communicators in use by duct at once",
                    channel::ucx::kMaxCid - 1);
}

Status Runtime::create_context(MPI_Comm comm, Context** out) {
  auto ctx = std::make_unique<Context>();
  ctx->comm = comm;
  DUCT_MPI_CHECK(PMPI_Comm_dup(comm, &ctx->dup));
  DUCT_MPI_CHECK(MPI_Comm_set_errhandler(ctx->dup, MPI_ERRORS_RETURN));

  // Local setup first (UCX worker, CUDA device), then agree that every rank
  // succeeded before any exchange that needs it.
  channel::PeerInfo local;
  Status local_st = channel::local_peer_info(&local);
  if (local_st) local.numa = hwtopo::process_numa_node();
  int ok = local_st.is_ok(), all_ok = 0;
  DUCT_MPI_CHECK(PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, ctx->dup));
  if (!local_st) return local_st.context("setting up communicator");
  if (!all_ok) {
    int me = 0;
    MPI_Comm_rank(comm, &me);
    return make_error(Errc::comm, "another rank of the communicator failed to set up duct (see its message)");
  }

  DUCT_TRY(build_topology(ctx->dup, &ctx->topo));
  for (const auto& node : ctx->topo.ranks_on) {
    if (node.front() == ctx->topo.rank) ctx->leader_index_ = static_cast<int>(ctx->leaders_.size());
    ctx->leaders_.push_back(node.front());
  }
  DUCT_TRY(agree_cid(ctx->dup, &ctx->cid));
  DUCT_TRY(channel::ChannelSet::create(ctx->dup, ctx->topo, ctx->cid, local, &ctx->channels));
  if (ctx->topo.num_nodes == 1 && ctx->topo.size > 1) {
    Status st = ShmArea::create(ctx->dup, ctx->topo.rank, ctx->topo.size, &ctx->shm);
    if (!st) DUCT_INFO(init, "no shared-memory area (%s): small collectives use messages", st.message().c_str());
  }
  if (std::string why; Engine::possible(*ctx, &why)) {
    ctx->engine = std::make_unique<Engine>(*ctx);
    DUCT_INFO(init, "device engine on: %s", ctx->engine->one_gpu() ? "every rank on one GPU, rank 0 does the work"
                                                                     : "ranks on several GPUs, each does its share");
  } else if (ctx->topo.num_nodes == 1 && ctx->topo.size > 1) {
    DUCT_INFO(init, "no device engine: %s", why.c_str());
  }

  auto mode = config::get().yield;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long node_ranks = ctx->topo.local_size;
  if (const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) node_ranks = std::max(node_ranks, std::atol(s));
  ctx->yield = mode == config::YieldMode::yield || (mode == config::YieldMode::auto_ && node_ranks > cores);

  DUCT_TRY(attr_.set(comm, ctx.get()));
  cids_.insert(ctx->cid);
  live_.insert(ctx.get());
  DUCT_INFO(init, "communicator context: %d ranks on %d node(s), cid %u, %s while waiting", ctx->topo.size,
            ctx->topo.num_nodes, ctx->cid, ctx->yield ? "yielding" : "spinning");
  *out = ctx.release();
  return Status::ok();
}

}  // namespace duct::coll
