// duct channel: the node's network as the automatic NIC choice sees it
// (core/netdev.hpp). hwloc says where each NIC and GPU sits on the PCI
// tree; UCX's transports say which devices it can use and by what name.
#include <ifaddrs.h>
#include <net/if.h>
#include <uct/api/uct.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "channel/ucx.hpp"
#include "core/hwtopo.hpp"
#include "core/log.hpp"
#include "memory/cuda.hpp"

namespace duct::channel::ucx {

namespace {

// What UCT offers: its network devices (resources of type NET, as
// `ucx_info -d` lists them: "eth0", "mlx5_0:1", "lo"), each with the
// components that serve it ("tcp", "ib"), and whether this UCX was built
// with CUDA (a cuda_* component). Shared-memory, loopback-memory and
// GPU-copy components are not asked for devices. Read once per process.
struct UctFacts {
  std::map<std::string, std::set<std::string>> net;
  bool cuda = false;
};

UctFacts query_uct() {
  UctFacts facts;
  auto& out = facts.net;
  uct_component_h* comps = nullptr;
  unsigned ncomps = 0;
  if (uct_query_components(&comps, &ncomps) != UCS_OK) return facts;
  for (unsigned c = 0; c < ncomps; ++c) {
    uct_component_attr_t attr{};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(comps[c], &attr) != UCS_OK) continue;
    const std::string comp = attr.name;
    if (comp.rfind("cuda", 0) == 0) facts.cuda = true;
    if (comp == "self" || comp == "sysv" || comp == "posix" || comp == "cma" || comp == "knem" ||
        comp == "xpmem" || comp.rfind("cuda", 0) == 0 || comp.rfind("rocm", 0) == 0 || comp.rfind("gdr", 0) == 0)
      continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    if (mds.empty() || uct_component_query(comps[c], &attr) != UCS_OK) continue;
    for (const uct_md_resource_desc_t& m : mds) {
      uct_md_config_t* cfg = nullptr;
      if (uct_md_config_read(comps[c], nullptr, nullptr, &cfg) != UCS_OK) continue;
      uct_md_h md = nullptr;
      ucs_status_t s = uct_md_open(comps[c], m.md_name, cfg, &md);
      uct_config_release(cfg);
      if (s != UCS_OK) continue;
      uct_tl_resource_desc_t* res = nullptr;
      unsigned nres = 0;
      if (uct_md_query_tl_resources(md, &res, &nres) == UCS_OK) {
        for (unsigned i = 0; i < nres; ++i)
          if (res[i].dev_type == UCT_DEVICE_TYPE_NET) out[res[i].dev_name].insert(comp);
        uct_release_tl_resource_list(res);
      }
      uct_md_close(md);
    }
  }
  uct_release_component_list(comps);
  return facts;
}

const UctFacts& uct_facts() {
  static const UctFacts facts = query_uct();
  return facts;
}

std::set<std::string> loopback_interfaces() {
  std::set<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next)
    if (a->ifa_name && (a->ifa_flags & IFF_LOOPBACK)) out.insert(a->ifa_name);
  freeifaddrs(list);
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

netdev::Node describe_node(const std::vector<hwtopo::PciNic>& pci, const std::set<std::string>& devs,
                           const std::set<std::string>& loopbacks, const std::string& my_gpu_bus) {
  netdev::Node node;
  std::set<std::string> on_pci;  // UCX devices that are (ports of) a NIC hwloc placed
  for (const hwtopo::PciNic& p : pci) {
    std::string ucx;
    for (const std::string& d : devs) {
      const bool match = p.rdma ? d.rfind(p.name + ":", 0) == 0 : d == p.name;
      if (!match) continue;
      ucx += (ucx.empty() ? "" : ",") + d;
      on_pci.insert(d);
    }
    if (ucx.empty()) {
      DUCT_DEBUG(channel, "NIC %s (%s) is not among UCX's network devices: not a candidate", p.name.c_str(),
                 p.bus_id.c_str());
      continue;
    }
    netdev::Nic n;
    n.ucx = ucx;
    n.bus_id = p.bus_id;
    n.rdma = p.rdma;
    n.speed_mbps = p.speed_mbps;
    n.near_process = p.near_process;
    node.nics.push_back(std::move(n));
  }
  for (const std::string& d : devs) {
    if (on_pci.count(d) || loopbacks.count(d) || d.find(':') != std::string::npos) continue;
    netdev::Nic n;
    n.ucx = d;
    n.speed_mbps = hwtopo::link_speed_mbps(d);
    node.virtual_nics.push_back(std::move(n));
  }
  if (!node.nics.empty()) {
    node.gpus = hwtopo::pci_gpus();
    for (const std::string& g : node.gpus) {
      std::vector<int> row;
      for (const netdev::Nic& n : node.nics) row.push_back(hwtopo::pci_distance(g, n.bus_id));
      node.distance.push_back(std::move(row));
    }
    auto it = std::find(node.gpus.begin(), node.gpus.end(), lower(my_gpu_bus));
    if (!my_gpu_bus.empty() && it != node.gpus.end()) node.my_gpu = static_cast<int>(it - node.gpus.begin());
  }
  node.bound = hwtopo::process_bound();
  return node;
}

netdev::Node local_node() {
  std::set<std::string> devs;
  for (const auto& [dev, comps] : uct_facts().net) devs.insert(dev);
  const std::set<std::string> loopbacks = loopback_interfaces();
  // With one network device (or none) there is nothing to choose: UCX's
  // default stays, and hwloc's PCI scan (tens of ms per process) is skipped.
  std::vector<std::string> real;
  for (const std::string& d : devs)
    if (!loopbacks.count(d)) real.push_back(d);
  if (real.size() < 2) {
    netdev::Node node;
    for (const std::string& d : real) {
      netdev::Nic n;
      n.ucx = d;
      node.nics.push_back(std::move(n));
    }
    return node;
  }
  int dev = -1;
  std::string bus;
  if (!(memory::cuda::available() && memory::cuda::current_device(&dev) && memory::cuda::pci_bus_id(dev, &bus)))
    bus.clear();
  return describe_node(hwtopo::pci_nics(), devs, loopbacks, bus);
}

bool ucx_has_cuda() { return uct_facts().cuda; }

netdev::Devices network_devices() {
  netdev::Devices out;
  for (const auto& [dev, comps] : uct_facts().net) out.present.insert(dev);
  out.loopback = loopback_interfaces();
  return out;
}

bool tcp_only(const std::string& selected) {
  return netdev::tcp_only(uct_facts().net, loopback_interfaces(), selected);
}

}  // namespace duct::channel::ucx
