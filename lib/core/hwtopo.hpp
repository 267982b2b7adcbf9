// duct core: hardware topology through hwloc (NUMA nodes of this process
// and of PCI devices such as GPUs). The hwloc topology is loaded once, on
// first use; PCI devices only when one is asked for.
#pragma once

#include <string>

namespace duct::hwtopo {

// The NUMA node this process is bound to or last ran on; -1 if unknown.
int process_numa_node() noexcept;
// The NUMA node nearest the PCI device with bus id "0000:65:00.0"; -1 if unknown.
int pci_numa_node(const std::string& bus_id) noexcept;
// Cores available to this process (its CPU binding).
int available_cores() noexcept;
// The CPUs of NUMA node `numa` as a list ("0-15,32-47"); "" if unknown.
std::string numa_cpus(int numa) noexcept;
// hwloc's version and the machine's NUMA node and core counts.
std::string describe() noexcept;
// Free the topologies (at MPI_Finalize).
void release() noexcept;

}  // namespace duct::hwtopo
