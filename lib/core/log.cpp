#include "core/log.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/status.hpp"

namespace duct {

const char* errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::ok: return "ok";
    case Errc::arg: return "invalid argument";
    case Errc::buffer: return "invalid buffer";
    case Errc::count: return "invalid count";
    case Errc::type: return "invalid datatype";
    case Errc::op: return "invalid op";
    case Errc::comm: return "invalid communicator";
    case Errc::root: return "invalid root";
    case Errc::in_place: return "invalid use of MPI_IN_PLACE";
    case Errc::overlap: return "overlapping buffers";
    case Errc::overflow: return "count or displacement overflow";
    case Errc::op_type: return "op not defined for the datatype";
    case Errc::uncommitted: return "uncommitted datatype";
    case Errc::unmapped: return "pointer not mapped in this process";
    case Errc::config: return "invalid configuration";
    case Errc::not_supported: return "not supported";
    case Errc::cuda: return "CUDA error";
    case Errc::ucx: return "UCX error";
    case Errc::mpi: return "MPI error";
    case Errc::hwloc: return "hwloc error";
    case Errc::no_memory: return "out of memory";
    case Errc::truncate: return "message truncated";
    case Errc::timeout: return "timeout";
    case Errc::mismatch: return "mismatched collective arguments";
    case Errc::peer_failed: return "peer process failed";
    case Errc::internal: return "internal error";
    case Errc::revoked: return "communicator revoked";
    case Errc::count_: break;
  }
  return "unknown error";
}

std::string strprintf(const char* fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return std::string("(bad format) ") + fmt;
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n), '\0');
  va_start(ap, fmt);
  std::vsnprintf(out.data(), out.size() + 1, fmt, ap);
  va_end(ap);
  return out;
}

namespace log {

State g_state;

namespace {
int g_rank = -1;
char g_host[64] = "";

struct SubsysName {
  Subsys s;
  const char* name;
};
constexpr SubsysName kSubsys[] = {
    {Subsys::init, "init"},     {Subsys::config, "config"}, {Subsys::memory, "memory"},
    {Subsys::reduce, "reduce"}, {Subsys::channel, "channel"}, {Subsys::coll, "coll"},
    {Subsys::select, "select"}, {Subsys::capi, "capi"},     {Subsys::all, "all"},
};
constexpr const char* kLevels[] = {"error", "warn", "info", "debug", "trace"};
}  // namespace

const char* subsys_name(Subsys s) noexcept {
  for (const auto& e : kSubsys)
    if (e.s == s) return e.name;
  return "?";
}

bool parse_subsys(const char* name, Subsys* out) noexcept {
  for (const auto& e : kSubsys) {
    if (std::strcmp(e.name, name) == 0) {
      *out = e.s;
      return true;
    }
  }
  return false;
}

const char* level_name(Level l) noexcept {
  int i = static_cast<int>(l);
  return (i >= 0 && i <= 4) ? kLevels[i] : "?";
}

bool parse_level(const char* name, Level* out) noexcept {
  for (int i = 0; i <= 4; ++i) {
    if (std::strcmp(kLevels[i], name) == 0) {
      *out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

void set_identity(int world_rank, const char* host) noexcept {
  g_rank = world_rank;
  std::snprintf(g_host, sizeof g_host, "%s", host ? host : "");
}

void emit(Level l, Subsys s, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  // One fprintf per line so that lines of different ranks do not interleave.
  if (g_rank >= 0)
    std::fprintf(stderr, "[duct %s:%d] %s %s: %s\n", g_host, g_rank, level_name(l),
                 subsys_name(s), msg);
  else
    std::fprintf(stderr, "[duct] %s %s: %s\n", level_name(l), subsys_name(s), msg);
}

}  // namespace log
}  // namespace duct
