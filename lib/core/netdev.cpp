#include "core/netdev.hpp"

#include <cstdlib>

#include "core/status.hpp"

namespace duct::netdev {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  for (char c : list) {
    if (c == ',')
      flush();
    else if (c != ' ' && c != '\t')
      cur += c;
  }
  flush();
  return out;
}

int launcher_local_rank() {
  // Open MPI, MPICH/Hydra, SLURM (srun), PMIx, and the generic one.
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMIX_LOCAL_RANK",
                        "PMI_LOCAL_RANK", "LOCAL_RANK"}) {
    const char* s = std::getenv(v);
    if (!s || !*s) continue;
    char* end = nullptr;
    long r = std::strtol(s, &end, 10);
    if (end && *end == '\0' && r >= 0 && r < (1L << 20)) return static_cast<int>(r);
  }
  return -1;
}

Choice choose(const std::string& rails, const char* ucx_env, int local_rank) {
  const std::vector<std::string> devs = split_list(rails);
  if (!devs.empty()) {
    const int k = static_cast<int>(devs.size());
    if (local_rank < 0)
      return {rails, strprintf("DUCT_NET_DEVICES=%s, every device (the launcher gives no local rank)", rails.c_str())};
    const std::string& d = devs[static_cast<std::size_t>(local_rank % k)];
    return {d, strprintf("DUCT_NET_DEVICES=%s: local rank %d on rail %d of %d", rails.c_str(), local_rank,
                         local_rank % k, k)};
  }
  if (ucx_env && *ucx_env) return {"", strprintf("UCX_NET_DEVICES=%s (the user's)", ucx_env)};
  return {"", "UCX's default (every device; DUCT_NET_DEVICES spreads ranks over rails)"};
}

}  // namespace duct::netdev
