// duct core: the one table of DUCT_* environment variables.
//
// Every setting is one row (name, type, default, one-line doc). The table is
// read once, on first use; `duct-info -c` prints it and docs/env.md is
// generated from it. Nothing else in duct calls getenv() for DUCT_*.
#pragma once

#include <atomic>

#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include "core/status.hpp"

namespace duct::config {

enum class Kind { boolean, integer, size, seconds, choice, string, subsys_list };

struct Var {
  const char* name;
  Kind kind;
  const char* def;      // default, as it would be written in the environment
  const char* choices;  // for Kind::choice: "a|b|c"; otherwise nullptr
  bool must_agree;      // must be equal on every rank of a communicator
  const char* doc;
};

enum class ChannelMode { auto_, ucx, ipc, mpi };
enum class YieldMode { auto_, spin, yield };

// The parsed values, one field per row of the table.
struct Config {
  int log_level = 1;                 // DUCT_LOG (duct::log::Level)
  unsigned log_subsys = 0xffu;       // DUCT_LOG_SUBSYS
  ChannelMode channel = ChannelMode::auto_;  // DUCT_CHANNEL
  std::string tune;                  // DUCT_TUNE
  std::string tune_file;             // DUCT_TUNE_FILE as set ("", "none" or a path)
  std::string net_devices;           // DUCT_NET_DEVICES
  size_t pipeline_chunk = 1u << 20;  // DUCT_PIPELINE_CHUNK
  long pipeline_depth = 4;           // DUCT_PIPELINE_DEPTH
  long tree_radix = 4;               // DUCT_TREE_RADIX
  long node_tree_radix = 0;          // DUCT_NODE_TREE_RADIX (0: chosen by node count and size)
  size_t eager_limit = 8u << 10;     // DUCT_EAGER_LIMIT
  size_t ring_segment = 1u << 20;    // DUCT_RING_SEGMENT
  size_t rail_segment_min = 16u << 10;  // DUCT_RAIL_SEGMENT_MIN
  YieldMode yield = YieldMode::auto_;  // DUCT_YIELD
  double timeout = 0;                // DUCT_TIMEOUT (seconds; 0: off)
  bool check = false;                // DUCT_CHECK
  bool measure = true;               // DUCT_MEASURE (select/trial.hpp)
  bool ft = false;                   // DUCT_FT
  double ft_timeout = 10;            // DUCT_FT_TIMEOUT (seconds)
  // The silence after which a wait gives up: DUCT_TIMEOUT, or under
  // DUCT_FT with DUCT_TIMEOUT 0 the DUCT_FT_TIMEOUT (0: never).
  double wait_timeout() const noexcept { return timeout > 0 ? timeout : (ft ? ft_timeout : 0); }
  bool peer_failure = true;          // DUCT_PEER_FAILURE
  bool interpose = true;             // DUCT_INTERPOSE (libduct-mpi)
  bool engine = true;                // DUCT_ENGINE
  bool engine_memops = true;         // DUCT_ENGINE_MEMOPS
  bool stream_emulate = false;       // DUCT_STREAM_EMULATE (tests without a GPU)
  bool stream_engine = false;        // DUCT_STREAM_ENGINE (eager stream-ordered calls: the engine enqueues on the stream)
  bool stream_async = false;         // DUCT_STREAM_ASYNC (eager stream-ordered calls on duct's stream thread)
  long ipc_cache_size = 256;         // DUCT_IPC_CACHE_SIZE
  long engine_blocks = 0;            // DUCT_ENGINE_BLOCKS (0: the kernels' own choice)
  size_t ipc_cache_bytes = size_t{1} << 30;  // DUCT_IPC_CACHE_BYTES
  size_t sim_reduce_bw = size_t{10} << 30;    // DUCT_SIM_REDUCE_BW (bytes per simulated second; 0: not charged)
  size_t sim_shared_scratch = 0;              // DUCT_SIM_SHARED_SCRATCH (bytes; 0: off)
};

std::span<const Var> table() noexcept;

// Environment lookup; returns nullptr when unset. Injectable for unit tests.
using Env = std::function<const char*(const char*)>;
Env process_env();

// Parse every row from `env` into `out`. On an invalid value, returns an
// Errc::config status naming the variable, the value and what was expected;
// `out` then holds defaults for the rows that failed.
Status parse(const Env& env, Config* out);

// The process configuration, parsed from the environment once (thread
// safe). Inline: every call asks it several times, and once it is loaded
// the answer is one acquire load.
namespace detail {
extern Config g_config;
extern std::atomic<bool> g_loaded;
const Config& load();
}  // namespace detail
inline const Config& get() {
  if (detail::g_loaded.load(std::memory_order_acquire)) [[likely]]
    return detail::g_config;
  return detail::load();
}
// The status of that parse (ok, or the first invalid variable).
const Status& load_status();

// The value a row has in `env`, or its default when unset.
std::string value_of(const Var& v, const Env& env);

// The selection rules file in effect (read once, on first use): the path
// DUCT_TUNE_FILE names, else the installed default (default_rules_file())
// where it exists; none with DUCT_TUNE_FILE=none. `status`: a file named by
// DUCT_TUNE_FILE that cannot be read (Errc::config). `digest`: FNV-1a of
// the text (0 without a file), compared across ranks when a communicator's
// context is created.
struct RulesFile {
  std::string path;   // "" when no file is read
  std::string text;   // its contents (rules, '#' comments)
  std::string why;    // where the path came from, for duct-info and logs
  unsigned long long digest = 0;
  Status status;
};
const RulesFile& rules_file();
// Where duct looks for a rules file when DUCT_TUNE_FILE is unset:
// <prefix>/<sysconfdir>/duct/tune.rules of the installation.
const char* default_rules_file() noexcept;

// A digest of the must_agree rows, compared across ranks when a
// communicator context is created.
unsigned long long agree_digest(const Env& env);

// DUCT_* variables in `environ` that are not in the table (likely typos).
std::string unknown_vars();

// Value parsers, exposed for unit tests.
// Sizes: "4096", "64k", "64K", "64KiB", "1m", "2G" (binary multiples).
Status parse_size(const char* text, size_t* out);
Status parse_long(const char* text, long* out);
Status parse_bool(const char* text, bool* out);
Status parse_seconds(const char* text, double* out);
// Human form of a byte count: "64K", "1M", "1000003".
std::string format_size(size_t bytes);

// Markdown rendering of the table (docs/env.md).
std::string render_markdown();

}  // namespace duct::config
