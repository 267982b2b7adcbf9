#include "core/hwtopo.hpp"

#include <hwloc.h>

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

}  // namespace

int process_numa_node() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  hwloc_topology_t t = load(false);
  if (!t) return -1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) return -1;
  int node = -1;
  // The binding if there is one narrower than the machine, else where we last ran.
  if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0 &&
      !hwloc_bitmap_isequal(set, hwloc_topology_get_topology_cpuset(t))) {
    node = first_numa(t, set);
  } else if (hwloc_get_last_cpu_location(t, set, HWLOC_CPUBIND_THREAD) == 0) {
    node = first_numa(t, set);
  }
  hwloc_bitmap_free(set);
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
