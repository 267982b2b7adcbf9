// duct core: leveled, per-subsystem logging to stderr.
//
// DUCT_LOG=warn|info|debug|trace picks the level, DUCT_LOG_SUBSYS a comma
// list of subsystems (default: all). A disabled message costs one load and
// one compare. Messages are lowercase and name the object they are about.
#pragma once

#include <cstdint>

namespace duct::log {

enum class Level : int { error = 0, warn = 1, info = 2, debug = 3, trace = 4 };

enum class Subsys : unsigned {
  init = 1u << 0,
  config = 1u << 1,
  memory = 1u << 2,
  reduce = 1u << 3,
  channel = 1u << 4,
  coll = 1u << 5,
  select = 1u << 6,
  capi = 1u << 7,
  all = 0xffu,
};

const char* subsys_name(Subsys s) noexcept;
// Parse one subsystem name; returns false for an unknown name.
bool parse_subsys(const char* name, Subsys* out) noexcept;
const char* level_name(Level l) noexcept;
bool parse_level(const char* name, Level* out) noexcept;

struct State {
  int level = static_cast<int>(Level::warn);
  unsigned subsys_mask = static_cast<unsigned>(Subsys::all);
};
extern State g_state;

inline bool enabled(Level l, Subsys s) noexcept {
  return static_cast<int>(l) <= g_state.level &&
         (g_state.subsys_mask & static_cast<unsigned>(s)) != 0;
}

// Called once the MPI rank and host are known; they prefix every line.
void set_identity(int world_rank, const char* host) noexcept;

void emit(Level l, Subsys s, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

}  // namespace duct::log

#define DUCT_LOG(level, subsys, ...)                                                   \
  do {                                                                                 \
    if (::duct::log::enabled(::duct::log::Level::level, ::duct::log::Subsys::subsys)) \
      ::duct::log::emit(::duct::log::Level::level, ::duct::log::Subsys::subsys,       \
                        __VA_ARGS__);                                                  \
  } while (0)

#define DUCT_WARN(subsys, ...) DUCT_LOG(warn, subsys, __VA_ARGS__)
#define DUCT_INFO(subsys, ...) DUCT_LOG(info, subsys, __VA_ARGS__)
#define DUCT_DEBUG(subsys, ...) DUCT_LOG(debug, subsys, __VA_ARGS__)
#define DUCT_TRACE(subsys, ...) DUCT_LOG(trace, subsys, __VA_ARGS__)
