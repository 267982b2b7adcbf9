// duct core: hardware topology through hwloc (NUMA nodes of this process
// and of PCI devices such as GPUs). The hwloc topology is loaded once, on
// first use; PCI devices only when one is asked for.
#pragma once

#include <string>
#include <vector>

namespace duct::hwtopo {

// The NUMA node this process is bound to or last ran on; -1 if unknown.
int process_numa_node() noexcept;
// The NUMA node nearest the PCI device with bus id "0000:65:00.0"; -1 if unknown.
int pci_numa_node(const std::string& bus_id) noexcept;
// Cores available to this process (its CPU binding).
int available_cores() noexcept;
// The CPUs of NUMA node `numa` as a list ("0-15,32-47"); "" if unknown.
std::string numa_cpus(int numa) noexcept;
// A network device on a PCI card, as hwloc finds it (I/O topology).
struct PciNic {
  std::string name;      // the OS device: "mlx5_0" (an OpenFabrics/verbs device) or "eth0" (an interface)
  std::string bus_id;    // its PCI device, "0000:17:00.0"
  bool rdma = false;     // an OpenFabrics device (UCX names its ports "mlx5_0:1")
  long speed_mbps = -1;  // an interface's link speed (/sys/class/net/NAME/speed); -1 unknown or rdma
  bool near_process = false;  // its CPU-side parent (NUMA node, package) holds this process's CPU binding
};
// The machine's network devices on PCI cards, in PCI bus order; empty if
// hwloc finds none or cannot load its I/O topology.
std::vector<PciNic> pci_nics() noexcept;
// The machine's NVIDIA GPUs (PCI vendor 0x10de, display or 3D controller
// class), their bus ids in PCI bus order.
std::vector<std::string> pci_gpus() noexcept;
// How far apart two PCI devices are, NCCL's path classes as one score:
// 100 * class + PCI hops, class 0 when a PCIe switch joins them (NCCL's
// PIX/PXB), 1 when their host bridge does (PHB), 2 when one CPU package
// or NUMA node does (NODE), 3 across packages (SYS). -1 if either bus id
// is unknown to hwloc.
int pci_distance(const std::string& a, const std::string& b) noexcept;
// A network interface's link speed in Mb/s (/sys/class/net/NAME/speed);
// -1 unknown (bridges, tunnels, a link that is down).
long link_speed_mbps(const std::string& ifname) noexcept;
// Whether this process is bound to fewer CPUs than the machine has.
bool process_bound() noexcept;
// hwloc's version and the machine's NUMA node and core counts.
std::string describe() noexcept;
// Free the topologies (at MPI_Finalize).
void release() noexcept;

}  // namespace duct::hwtopo
