#include "core/hwtopo.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>

#include "core/log.hpp"
#include "core/status.hpp"

namespace duct::hwtopo {

namespace {

std::mutex g_mutex;
hwloc_topology_t g_topo = nullptr;     // CPUs and memory
hwloc_topology_t g_io_topo = nullptr;  // with PCI devices

hwloc_topology_t load(bool io) {
  hwloc_topology_t* slot = io ? &g_io_topo : &g_topo;
  if (*slot) return *slot;
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) return nullptr;
  if (io && hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
    DUCT_DEBUG(init, "hwloc_topology_set_io_types_filter failed: GPU NUMA nodes unknown");
  // PCI devices and the kernel's network and verbs devices are all duct
  // asks for; hwloc's GPU-library backends would start CUDA, OpenCL or
  // the display server's libraries inside every MPI process.
  if (io)
    for (const char* c : {"cuda", "nvml", "opencl", "gl", "rsmi", "levelzero"})
      (void)hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, c);
  if (hwloc_topology_load(t) != 0) {
    DUCT_WARN(init, "hwloc_topology_load failed: NUMA information unavailable");
    hwloc_topology_destroy(t);
    return nullptr;
  }
  *slot = t;
  return t;
}

int first_numa(hwloc_topology_t t, hwloc_const_cpuset_t cpus) {
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, node)) != nullptr) {
    if (node->cpuset && hwloc_bitmap_intersects(node->cpuset, cpus)) return static_cast<int>(node->os_index);
  }
  return -1;
}

std::string bus_string(hwloc_obj_t pci) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return buf;
}

// The process's CPU binding when it is narrower than the machine, else null
// (the caller frees it).
hwloc_bitmap_t binding(hwloc_topology_t t) {
  if (!hwloc_topology_is_thissystem(t)) return nullptr;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set && hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(set) &&
      !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(t), set))
    return set;
  hwloc_bitmap_free(set);
  return nullptr;
}

}  // namespace

int process_numa_node() noexcept {
#ifdef DUCT_SIM
  // Simulated ranks are coroutines of one process: this machine's NUMA node
  // says nothing of a simulated host, and every rank's private copy of the
  // library would load a topology of its own (memory and time in n).
  return -1;
#endif
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(false);
  if (!t) return -1;
  // The binding if there is one narrower than the machine, else where we last ran.
  hwloc_bitmap_t set = binding(t);
  int node = -1;
  if (set) {
    node = first_numa(t, set);
  } else if ((set = hwloc_bitmap_alloc()) != nullptr && hwloc_get_last_cpu_location(t, set, HWLOC_CPUBIND_THREAD) == 0) {
    node = first_numa(t, set);
  }
  if (set) hwloc_bitmap_free(set);
  return node;
}

int pci_numa_node(const std::string& bus_id) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(true);
  if (!t || bus_id.empty()) return -1;
  hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(t, bus_id.c_str());
  if (!dev) return -1;
  hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(t, dev);
  if (!parent || !parent->cpuset) return -1;
  return first_numa(t, parent->cpuset);
}

int available_cores() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(false);
  if (!t) return 1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int n = 0;
  if (set && hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0)
    n = hwloc_get_nbobjs_inside_cpuset_by_type(t, set, HWLOC_OBJ_PU);
  hwloc_bitmap_free(set);
  if (n <= 0) n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  return n > 0 ? n : 1;
}

std::string numa_cpus(int numa) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(false);
  if (!t || numa < 0) return "";
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, node)) != nullptr) {
    if (static_cast<int>(node->os_index) != numa || !node->cpuset) continue;
    char buf[1024];
    if (hwloc_bitmap_list_snprintf(buf, sizeof buf, node->cpuset) < 0) return "";
    return buf;
  }
  return "";
}

std::vector<PciNic> pci_nics() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<PciNic> out;
  hwloc_topology_t t = load(true);
  if (!t) return out;
  hwloc_bitmap_t bound = binding(t);
  hwloc_obj_t o = nullptr;
  while ((o = hwloc_get_next_osdev(t, o)) != nullptr) {
    const auto type = o->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    hwloc_obj_t pci = o->parent;
    while (pci && pci->type != HWLOC_OBJ_PCI_DEVICE) pci = pci->parent;
    if (!pci || !o->name) continue;
    PciNic n;
    n.name = o->name;
    n.bus_id = bus_string(pci);
    n.rdma = type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    if (!n.rdma && hwloc_topology_is_thissystem(t)) n.speed_mbps = link_speed_mbps(n.name);
    hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(t, o);
    n.near_process = bound && cpu_side && cpu_side->cpuset && hwloc_bitmap_intersects(cpu_side->cpuset, bound);
    out.push_back(std::move(n));
  }
  if (bound) hwloc_bitmap_free(bound);
  std::sort(out.begin(), out.end(),
            [](const PciNic& a, const PciNic& b) { return a.bus_id != b.bus_id ? a.bus_id < b.bus_id : a.name < b.name; });
  return out;
}

std::vector<std::string> pci_gpus() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::string> out;
  hwloc_topology_t t = load(true);
  if (!t) return out;
  hwloc_obj_t p = nullptr;
  while ((p = hwloc_get_next_pcidev(t, p)) != nullptr)
    if (p->attr->pcidev.vendor_id == 0x10de && (p->attr->pcidev.class_id >> 8) == 0x03) out.push_back(bus_string(p));
  std::sort(out.begin(), out.end());
  return out;
}

int pci_distance(const std::string& a, const std::string& b) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(true);
  if (!t || a.empty() || b.empty()) return -1;
  hwloc_obj_t oa = hwloc_get_pcidev_by_busidstring(t, a.c_str());
  hwloc_obj_t ob = hwloc_get_pcidev_by_busidstring(t, b.c_str());
  if (!oa || !ob) return -1;
  // The lowest common ancestor, walking parents (I/O objects have no
  // ordinary depth, so hwloc_get_common_ancestor_obj does not apply).
  std::vector<hwloc_obj_t> up;
  for (hwloc_obj_t x = oa; x; x = x->parent) up.push_back(x);
  hwloc_obj_t lca = nullptr;
  int hops = 0;
  for (hwloc_obj_t x = ob; x; x = x->parent, ++hops) {
    auto it = std::find(up.begin(), up.end(), x);
    if (it != up.end()) {
      lca = x;
      hops += static_cast<int>(it - up.begin());
      break;
    }
  }
  if (!lca) return -1;
  int cls;
  if (lca->type == HWLOC_OBJ_PCI_DEVICE)
    cls = 0;
  else if (lca->type == HWLOC_OBJ_BRIDGE)
    cls = lca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI ? 0 : 1;
  else if (lca->cpuset && !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(t), lca->cpuset))
    cls = 2;  // one package or NUMA node of several
  else
    cls = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE) > 1 || hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) > 1 ? 3 : 2;
  return 100 * cls + hops;
}

long link_speed_mbps(const std::string& ifname) noexcept {
  if (ifname.empty() || ifname.find('/') != std::string::npos) return -1;
  std::ifstream f("/sys/class/net/" + ifname + "/speed");
  long v = -1;
  if (!(f >> v) || v <= 0) return -1;
  return v;
}

bool process_bound() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(false);
  if (!t) return false;
  hwloc_bitmap_t set = binding(t);
  if (!set) return false;
  hwloc_bitmap_free(set);
  return true;
}

std::string describe() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(false);
  unsigned v = hwloc_get_api_version();
  if (!t) return strprintf("hwloc %u.%u.%u (topology unavailable)", v >> 16, (v >> 8) & 0xff, v & 0xff);
  return strprintf("hwloc %u.%u.%u: %d NUMA node(s), %d core(s), %d hardware thread(s)", v >> 16, (v >> 8) & 0xff,
                   v & 0xff, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE),
                   hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
}

void release() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_topo) hwloc_topology_destroy(g_topo);
  if (g_io_topo) hwloc_topology_destroy(g_io_topo);
  g_topo = g_io_topo = nullptr;
}

}  // namespace duct::hwtopo
