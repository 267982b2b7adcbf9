// duct coll: per-communicator context and the process runtime.
//
// A Context is what duct keeps per MPI communicator: the topology, a
// communicator id for message tags,
// the channel to every rank, scratch buffers and the sequence number of the
// next collective. It is created collectively on the first duct call on the
// communicator and cached on the communicator with an attribute keyval;
// freeing the communicator frees it. Every setup exchange is a nonblocking
// MPI collective on the communicator itself (MPI_Ibarrier first, then
// MPI_Iallgather & co.; no communicator is created, see setup_context)
// waited for under DUCT_TIMEOUT and SIGUSR1 (wait_setup in
// coll/wait.hpp): a rank that fails locally makes all ranks fail, and a
// rank that never comes makes the others time out, never hang. A setup that
// failed stays on the communicator as a failed context.
//
// The Runtime is the process-wide part, created on the first duct call. It
// registers a delete callback on MPI_COMM_SELF, which MPI runs at the start
// of MPI_Finalize, and there releases every context, the UCX worker, CUDA
// streams, IPC mappings and bounce buffers. No DUCT_Init is needed.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "channel/table.hpp"
#include "coll/ft.hpp"
#include "coll/port_tree.hpp"
#include "core/comm.hpp"
#include "memory/buffer.hpp"
#include "select/select.hpp"
#include "select/trial.hpp"

namespace duct::coll {

class ShmArea;
class Engine;
class Pending;
class Sched;
class Spinner;
struct CollArgs;
struct StreamSide;

class Context {
 public:
  ~Context();

  MPI_Comm comm = MPI_COMM_NULL;  // the user's communicator
  Topology topo;
  std::uint32_t cid = 0;
  std::unique_ptr<channel::ChannelSet> channels;
  std::unique_ptr<ShmArea> shm;  // single-node communicators only
  std::unique_ptr<Engine> engine;  // single node, every rank with CUDA IPC (coll/engine.hpp)
  bool yield = false;  // give up the core while waiting (oversubscribed node)
  // More ranks on the machine than cores (alike on every rank of a node,
  // whatever DUCT_YIELD says): one call's time is then the scheduler's
  // time slices, and the measured choice (select/trial.hpp) is not made.
  bool oversubscribed = false;
  // Set by the first collective that fails (timeout, failed peer, transport
  // error): its messages may still be in flight, so every later call on the
  // communicator returns this error at once. Its cid is never reused.
  Status failed;
  // Nonblocking collectives started and not finished, in start order; the
  // head is the one running (coll/nonblocking.hpp).
  std::deque<Pending*> queue;
  // Where the communicator's stream-ordered collectives run (coll/stream.hpp);
  // null until the first one.
  std::shared_ptr<StreamSide> streams;
  // DUCT_FT=1: the control communicator and what this rank knows of
  // failures (coll/ft.hpp); null otherwise.
  std::unique_ptr<ft::State> ft;

  int rank() const noexcept { return topo.rank; }
  int size() const noexcept { return topo.size; }
  std::uint32_t next_seq() noexcept { return seq_++; }
  std::uint32_t collectives_started() const noexcept { return seq_; }

  // Scratch of at least `bytes` of `kind`; `slot` tells apart the buffers one
  // collective needs at the same time. Valid until the next call with the
  // same kind and slot.
  Status scratch(memory::MemKind kind, std::size_t bytes, int slot, void** out);

  // The last selection made on this communicator, per collective: repeated
  // calls of one size skip the rule table.
  struct LastChoice {
    std::size_t bytes = ~std::size_t{0};
    int algo = -1;
    int fallback = -1;    // when algo is the device engine: the algorithm without it
    int generation = -1;  // of the rules it was made with
    bool device = false;
    const char* name = "";             // algo's name
    Sched (*fn)(Context&, const CollArgs&, std::uint32_t) = nullptr;  // what runs (the fallback's under the engine)
    // Its plain form, where it has one (coll/shm_rounds.hpp, coll/msg_rounds.hpp).
    Status (*now)(Context&, const CollArgs&, std::uint32_t seq, Spinner&) = nullptr;
  };
  LastChoice last_choice[static_cast<int>(select::Coll::count_)];
  // The measured choices between shm and cma on one node (select/trial.hpp),
  // per collective and size, under the rules of generation
  // trials_generation; at most kMaxTrials sizes (later sizes keep the
  // rules' choice).
  static constexpr std::size_t kMaxTrials = 64;
  std::map<std::pair<int, std::size_t>, select::Trial> trials;
  int trials_generation = -1;
  // The requests of the small-call path's message rounds (msg_rounds_now),
  // kept between calls so that a call allocates nothing; empty between calls.
  std::vector<channel::Request> small_reqs;

  // Members of this rank's node and one leader (lowest rank) per node, in
  // rank order; leader_index_ is -1 on ranks that are not leaders.
  const std::vector<int>& node_ranks() const { return topo.ranks_on[static_cast<std::size_t>(topo.node)]; }
  const std::vector<int>& leaders() const noexcept { return leaders_; }
  int leader_index() const noexcept { return leader_index_; }
  // The port trees for a root (coll/port_tree.hpp), built on the
  // first call with that root and kept.
  const PortTree& port_tree(int root);

  // Whether a message about `key` was logged already (log once per signature).
  bool first_time(const std::string& key) { return logged_.insert(key).second; }

  // Release channels, scratch and the shared-memory area (finalize or free).
  void release() noexcept;

 private:
  friend class Runtime;
  std::uint32_t seq_ = 0;
  std::vector<int> leaders_;
  int leader_index_ = -1;
  std::vector<std::unique_ptr<PortTree>> port_trees_;  // by root
  static constexpr int kSlots = 6;
  memory::Buffer host_[kSlots];
  memory::Buffer device_[kSlots];
  std::set<std::string> logged_;
};

// What the layers above this file do when a context ends and when the
// runtime comes up and goes down. The runtime creates and deletes contexts,
// but the work queued on a context and the waits of its setup belong to
// the layers built on it (coll/stream.cpp, coll/nonblocking.cpp,
// coll/wait.cpp): each fills in its entries when the library is loaded (a
// static initializer in its own file), so that this file includes none of
// them. An entry left empty does nothing (its layer is not linked in, and
// so has nothing on any context), except setup_wait, which is then a plain
// MPI_Wait (core/comm.hpp mpi_wait).
struct LayerHooks {
  using Describe = std::function<std::string()>;
  // A context ends (its communicator is freed), in this order: its
  // stream-ordered collectives finish (they run on a duplicate), then its
  // nonblocking ones (MPI_Comm_free lets pending operations complete,
  // MPI-4.0 §7.4.3), and requests completed on it stop naming it.
  void (*end_streams)(Context&) noexcept = nullptr;
  void (*end_queue)(Context&) noexcept = nullptr;
  // MPI_Finalize with requests of the context still active (erroneous,
  // MPI-4.0 §11.2.2): they fail with `why`.
  void (*abandon_queue)(Context&, const Status& why) noexcept = nullptr;
  // The wait of each MPI request of a context's setup, under DUCT_TIMEOUT
  // and SIGUSR1 (coll/wait.hpp wait_setup has the arguments).
  Status (*setup_wait)(MPI_Request* req, const Describe& doing, const Describe& waiting_for,
                       std::shared_ptr<void> buffers, bool yield) = nullptr;
  // The runtime is up (SIGUSR1's dump taken) and is going down (given back).
  void (*runtime_up)(int world_rank) noexcept = nullptr;
  void (*runtime_down)() noexcept = nullptr;
};
LayerHooks& layer_hooks() noexcept;

class Runtime {
 public:
  // The runtime, created on first use (MPI must be initialized).
  static Status get(Runtime** out);
  // True once MPI_Finalize has torn duct down.
  static bool finalized() noexcept;
  // The runtime if it is up (MPI is then initialized and not finalized),
  // else nullptr; never creates it. The fast path of every call.
  static Runtime* ready() noexcept;
  // Whether duct serializes its progress with mutex(): the application
  // runs MPI_THREAD_MULTIPLE, or duct's stream thread (coll/stream.cpp)
  // progresses stream-ordered collectives beside the application's calls.
  bool threaded() const noexcept { return threaded_ || helper_; }
  // Whether the application itself calls duct from several threads
  // (MPI_THREAD_MULTIPLE): then no per-thread shortcut (last_context) holds.
  bool app_threaded() const noexcept { return threaded_; }
  // duct starts a thread of its own (before starting it): from now on
  // progress is serialized. The thread makes no MPI call.
  void helper_thread_started() noexcept { helper_ = true; }

  // The context of `comm`, created collectively on first use. `lock`: the
  // runtime lock the caller holds (once), or nullptr; a creation lets it go
  // while it waits for other ranks (create_context), so that other threads'
  // first calls on other communicators go on meanwhile.
  Status context(MPI_Comm comm, Context** out, std::unique_lock<std::recursive_mutex>* lock = nullptr);
  // The context of `comm` if duct has one on it already (null otherwise):
  // never creates one, so never waits for other ranks.
  Status find_context(MPI_Comm comm, Context** out);
  // The context of `comm` if it is the communicator of the last call
  // (without MPI_THREAD_MULTIPLE), else nullptr: no MPI call, no lookup.
  // (duct's stream thread never asks for a context: it leaves this alone.)
  // Only a live intracommunicator has one (its delete callback clears it).
  Context* last_context(MPI_Comm comm) const noexcept { return comm == last_comm_ ? last_ctx_ : nullptr; }

  const select::Table& table() const noexcept { return table_; }
  // Replace the rules (DUCT_Tune); bumps rules_generation().
  Status set_rules(const std::string& rules);
  int rules_generation() const noexcept { return generation_; }
  // Run `fn` at teardown (before MPI_Finalize completes), in reverse order.
  void on_finalize(std::function<void()> fn) { hooks_.push_back(std::move(fn)); }
  // Serializes progress when the application calls duct from several threads.
  std::recursive_mutex& mutex() noexcept { return mutex_; }
  int world_rank() const noexcept { return world_rank_; }
  // One line per live context (cid, size, collectives started, failed or
  // not), for pending-operation dumps.
  std::string describe_contexts() const;

 private:
  Runtime() = default;
  Status init();
  Status create_context(MPI_Comm comm, Context** out, std::unique_lock<std::recursive_mutex>* lock);
  Status setup_context(Context& c, MPI_Comm comm, int me, int n, const MpiWait& wait);
  Status agree_cid(MPI_Comm comm, std::uint32_t* cid, bool local_ok, bool* all_ok, const MpiWait& wait);
  void teardown() noexcept;
  static void delete_context(void* ctx) noexcept;
  static int self_delete(MPI_Comm, int, void*, void*);

  CommAttr attr_{&Runtime::delete_context};
  // The last communicator asked for, to skip the attribute lookup on repeated
  // calls. Cleared by delete_context: a freed handle value may be reused.
  MPI_Comm last_comm_ = MPI_COMM_NULL;
  Context* last_ctx_ = nullptr;
  int self_keyval_ = MPI_KEYVAL_INVALID;
  std::set<Context*> live_;
  std::set<std::uint32_t> cids_;
  std::uint32_t next_cid_ = 1;
  select::Table table_;
  int generation_ = 0;
  std::vector<std::function<void()>> hooks_;
  std::recursive_mutex mutex_;
  int world_rank_ = 0;
  bool threaded_ = false;
  bool helper_ = false;
};

}  // namespace duct::coll
