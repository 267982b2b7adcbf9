#include "core/netdev.hpp"

#include <algorithm>
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

namespace {

// DUCT_NET_DEVICES's one-word values: "auto" (as empty) and "ucx".
bool is_word(const std::vector<std::string>& devs, const char* word) { return devs.size() == 1 && devs[0] == word; }

}  // namespace

bool is_automatic(const std::string& rails, const char* ucx_env) {
  const std::vector<std::string> devs = split_list(rails);
  return (devs.empty() || is_word(devs, "auto")) && !(ucx_env && *ucx_env);
}

namespace {

// Step 2: the user's UCX_NET_DEVICES, spread over the node's ranks.
Choice spread_listed(const char* ucx_env, int local_rank, const Devices* devices) {
  std::vector<std::string> listed;
  for (const std::string& d : split_list(ucx_env))
    if (!devices || !devices->loopback.count(d)) listed.push_back(d);
  auto here = [&](const std::string& d) { return !devices || devices->present.empty() || devices->present.count(d) > 0; };
  std::vector<std::string> have;
  std::string missing;
  for (const std::string& d : listed) {
    if (here(d))
      have.push_back(d);
    else
      missing += (missing.empty() ? "" : ",") + d;
  }
  const std::string absent = missing.empty() ? "" : strprintf("; %s not on this node", missing.c_str());
  if (listed.size() == 1 && (listed[0] == "all" || listed[0] == "any"))
    return {"", strprintf("UCX_NET_DEVICES=%s (the user's): every device, as UCX chooses", ucx_env)};
  if (have.size() < 2)
    return {"", strprintf("UCX_NET_DEVICES=%s (the user's): %s, nothing to spread%s", ucx_env,
                          have.empty() ? "no listed device found" : "one device", absent.c_str())};
  const int k = static_cast<int>(listed.size());
  if (local_rank < 0)
    return {"", strprintf("UCX_NET_DEVICES=%s (the user's): every listed device (the launcher gives no local rank)",
                          ucx_env)};
  const std::string& d = listed[static_cast<std::size_t>(local_rank % k)];
  if (!here(d)) {
    std::string all;
    for (const std::string& h : have) all += (all.empty() ? "" : ",") + h;
    return {all, strprintf("UCX_NET_DEVICES=%s (the user's): local rank %d's device %d of %d (%s) is not on this "
                           "node, so it keeps the listed devices this node has",
                           ucx_env, local_rank, local_rank % k, k, d.c_str())};
  }
  return {d, strprintf("UCX_NET_DEVICES=%s (the user's): local rank %d on listed device %d of %d%s "
                       "(DUCT_NET_DEVICES=ucx gives every rank the whole list)",
                       ucx_env, local_rank, local_rank % k, k, absent.c_str())};
}

}  // namespace

Choice choose(const std::string& rails, const char* ucx_env, int local_rank, const Node* node,
              const Devices* devices) {
  const std::vector<std::string> devs = split_list(rails);
  if (is_word(devs, "ucx"))
    return {"", ucx_env && *ucx_env ? strprintf("DUCT_NET_DEVICES=ucx: UCX_NET_DEVICES=%s for every rank, as UCX reads it",
                                                ucx_env)
                                    : std::string("DUCT_NET_DEVICES=ucx: UCX's default")};
  if (!devs.empty() && !is_word(devs, "auto")) {
    const int k = static_cast<int>(devs.size());
    if (local_rank < 0)
      return {rails, strprintf("DUCT_NET_DEVICES=%s, every device (the launcher gives no local rank)", rails.c_str())};
    const std::string& d = devs[static_cast<std::size_t>(local_rank % k)];
    return {d, strprintf("DUCT_NET_DEVICES=%s: local rank %d on rail %d of %d", rails.c_str(), local_rank,
                         local_rank % k, k)};
  }
  if (ucx_env && *ucx_env) return spread_listed(ucx_env, local_rank, devices);
  if (!node) return {"", "UCX's default (no topology; DUCT_NET_DEVICES spreads ranks over rails)"};
  return automatic(*node, local_rank);
}

namespace {

std::string names(const std::vector<Nic>& nics, const std::vector<int>& idx) {
  std::string s;
  for (int i : idx) s += (s.empty() ? "" : " ") + nics[static_cast<std::size_t>(i)].ucx;
  return s;
}

const char* path_class(int distance) {
  static const char* const kNames[] = {"same PCIe switch", "same host bridge", "same CPU package", "across CPU packages"};
  const int c = distance / 100;
  return c >= 0 && c < 4 ? kNames[c] : "unknown path";
}

// The NICs that take part: every verbs device if there is one (RDMA; the
// node's Ethernet is then its management or IP network), else the
// interfaces of the highest known link speed (a 1 Gb/s management port
// beside 100 Gb/s ones does not become a rail).
std::vector<int> usable(const std::vector<Nic>& nics) {
  std::vector<int> out;
  bool rdma = false;
  long top = -1;
  for (const Nic& n : nics) {
    rdma = rdma || n.rdma;
    top = std::max(top, n.speed_mbps);
  }
  for (int i = 0; i < static_cast<int>(nics.size()); ++i) {
    const Nic& n = nics[static_cast<std::size_t>(i)];
    if (rdma ? n.rdma : (top < 0 || n.speed_mbps == top)) out.push_back(i);
  }
  return out;
}

// The NICs of `idx` nearest GPU g, and their distance (-1: none known).
std::vector<int> nearest(const Node& node, std::size_t g, const std::vector<int>& idx, int* best) {
  *best = -1;
  std::vector<int> out;
  if (g >= node.distance.size()) return out;
  const std::vector<int>& d = node.distance[g];
  for (int i : idx) {
    const int di = static_cast<std::size_t>(i) < d.size() ? d[static_cast<std::size_t>(i)] : -1;
    if (di < 0) continue;
    if (*best < 0 || di < *best) {
      *best = di;
      out.clear();
    }
    if (di == *best) out.push_back(i);
  }
  return out;
}

Choice spread(const std::vector<Nic>& nics, const std::vector<int>& idx, int local_rank, const char* what) {
  const int k = static_cast<int>(idx.size());
  if (local_rank < 0)
    return {"", strprintf("UCX's default: %d %s (%s) and no local rank from the launcher", k, what, names(nics, idx).c_str())};
  const Nic& n = nics[static_cast<std::size_t>(idx[static_cast<std::size_t>(local_rank % k)])];
  return {n.ucx, strprintf("local rank %d on %s %d of %d (%s)", local_rank, what, local_rank % k, k,
                           names(nics, idx).c_str())};
}

}  // namespace

Choice automatic(const Node& node, int local_rank) {
  const std::vector<int> idx = usable(node.nics);
  if (idx.empty()) {
    // No NIC on a PCI card: virtual links (a network namespace's veth, a
    // container's). They are rails only when UCX finds several of one
    // known speed; bridges and tunnels report none.
    const std::vector<Nic>& v = node.virtual_nics;
    std::vector<int> all;
    for (int i = 0; i < static_cast<int>(v.size()); ++i) all.push_back(i);
    bool same = v.size() >= 2 && v[0].speed_mbps > 0;
    for (const Nic& n : v) same = same && n.speed_mbps == v[0].speed_mbps;
    if (!same)
      return {"", v.empty() ? std::string("UCX's default: no network device found on a PCI card")
                            : strprintf("UCX's default: no NIC on a PCI card; virtual devices %s are not rails of one speed",
                                        names(v, all).c_str())};
    return spread(v, all, local_rank, "virtual link");
  }
  if (idx.size() == 1)
    return {"", strprintf("UCX's default: one usable NIC (%s)", node.nics[static_cast<std::size_t>(idx[0])].ucx.c_str())};

  // 1. The NIC nearest this process's GPU. NICs at the same distance from
  // several GPUs are split among those GPUs in bus order, so two GPUs
  // behind one switch with two NICs take one each.
  if (node.my_gpu >= 0 && static_cast<std::size_t>(node.my_gpu) < node.gpus.size()) {
    int best = -1;
    const std::vector<int> mine = nearest(node, static_cast<std::size_t>(node.my_gpu), idx, &best);
    if (!mine.empty()) {
      int pos = 0, sharing = 0;
      for (std::size_t g = 0; g < node.gpus.size(); ++g) {
        int b = -1;
        if (nearest(node, g, idx, &b) != mine) continue;
        if (static_cast<int>(g) < node.my_gpu) ++pos;
        ++sharing;
      }
      const Nic& n = node.nics[static_cast<std::size_t>(mine[static_cast<std::size_t>(pos) % mine.size()])];
      return {n.ucx, strprintf("nearest NIC to GPU %s (%s; %zu NIC(s) at that distance, %d GPU(s) share them)",
                               node.gpus[static_cast<std::size_t>(node.my_gpu)].c_str(), path_class(best), mine.size(),
                               sharing)};
    }
  }
  // 2. No GPU (or no PCI path to it): the NICs on the CPU package or NUMA
  // node this process is bound to.
  if (node.bound) {
    std::vector<int> near;
    for (int i : idx)
      if (node.nics[static_cast<std::size_t>(i)].near_process) near.push_back(i);
    if (!near.empty()) {
      if (near.size() == 1 || local_rank < 0) {
        std::string d;
        for (int i : near) d += (d.empty() ? "" : ",") + node.nics[static_cast<std::size_t>(i)].ucx;
        return {d, strprintf("the NIC(s) near this process's CPU binding (%s)", names(node.nics, near).c_str())};
      }
      return spread(node.nics, near, local_rank, "NIC near its CPU binding");
    }
  }
  // 3. Rails: local rank l on NIC l mod K, the same index on every node.
  return spread(node.nics, idx, local_rank, "NIC");
}

bool tcp_only(const std::map<std::string, std::set<std::string>>& served, const std::set<std::string>& loopbacks,
              const std::string& selected) {
  std::vector<std::string> names = split_list(selected);
  const bool all = names.empty() || (names.size() == 1 && names[0] == "all");
  if (all) {
    names.clear();
    for (const auto& [dev, comps] : served)
      if (!loopbacks.count(dev)) names.push_back(dev);
  }
  bool any = false;
  for (const std::string& n : names) {
    auto it = served.find(n);
    if (it == served.end()) continue;
    for (const std::string& c : it->second)
      if (c != "tcp") return false;
    any = true;
  }
  return any;
}

}  // namespace duct::netdev
