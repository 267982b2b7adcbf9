/* duct-sim-rails: a SimGrid platform (C++, loaded by smpirun -platform
 * FILE.so) of N nodes x L ranks, one simulated host per rank, for
 * mpi_launch_scripts/duct-sim run -N N -ppn L [-rails R].
 *
 * - Host "node-<i>.r<l>" is local rank l of node i; duct's simulation build
 *   takes "node-<i>" as its node (lib/core/comm.cpp), so its node and rail
 *   levels come from the platform, not from the kernel.
 * - The network between nodes: every NIC has its own full-duplex link into
 *   one non-blocking switch (a star zone: no contention inside it, as in a
 *   1:1 fat tree; the switches' hops are folded into the link latency).
 *   With R = L (a rail-optimized GPU node) each rank has a NIC of its own;
 *   with R < L rank l shares NIC (l mod R) with the node's other ranks of
 *   that NIC, so R = 1 is a node with one NIC.
 * - Inside a node: every rank has a full-duplex NVLink-class link; a message
 *   between two ranks of one node crosses the sender's link up and the
 *   receiver's down (a bypass route around the NICs), as through an NVSwitch.
 *
 * Parameters (environment, as duct-sim sets them): DUCT_SIM_NODES,
 * DUCT_SIM_PPN, DUCT_SIM_RAILS, DUCT_SIM_NIC_BW (default 50GBps: a 400 Gb/s
 * NDR InfiniBand or 400GbE NIC), DUCT_SIM_NIC_LAT (default 1us per link, so
 * 2 us between NICs: about what an MPI ping-pong sees across two switch
 * levels), DUCT_SIM_NVL_BW (default 450GBps: NVLink 4 on an H100, 900 GB/s
 * both ways together), DUCT_SIM_NVL_LAT (default 0.5us per link). These
 * are nominal numbers, not a calibration against a machine.
 *
 * Builds against SimGrid 3.32 (Debian bookworm) and 4.x: 4.0's platforms
 * grow from the engine's root zone (3.32 makes the first zone the root),
 * and 4.0 renamed create_host/create_split_duplex_link to add_* and takes a
 * route's ends as hosts (the 3.32 names are deprecated there, to go in
 * 4.3). The platform is the same. */
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int env_int(const char* name, int fallback) {
  const std::string v = env(name, "");
  if (v.empty()) return fallback;
  const int n = std::atoi(v.c_str());
  if (n < 1) throw std::invalid_argument(std::string(name) + " must be a positive number, not " + v);
  return n;
}

using Dir = sg4::LinkInRoute::Direction;

#if SIMGRID_VERSION >= 40000
sg4::NetZone* star_zone(const sg4::Engine& e) { return e.get_netzone_root()->add_netzone_star("rails"); }
sg4::Host* host(sg4::NetZone* z, const std::string& name) { return z->add_host(name, "100Gf"); }
sg4::SplitDuplexLink* duplex(sg4::NetZone* z, const std::string& name, const std::string& bw) {
  return z->add_split_duplex_link(name, bw);
}
// The host's route to the star's centre, both ways.
void to_centre(sg4::NetZone* z, const sg4::Host* h, sg4::SplitDuplexLink* nic) {
  z->add_route(h, static_cast<const sg4::Host*>(nullptr), {sg4::LinkInRoute(nic, Dir::UP)}, true);
}
#else
sg4::NetZone* star_zone(const sg4::Engine&) { return sg4::create_star_zone("rails"); }
sg4::Host* host(sg4::NetZone* z, const std::string& name) { return z->create_host(name, "100Gf"); }
sg4::SplitDuplexLink* duplex(sg4::NetZone* z, const std::string& name, const std::string& bw) {
  return z->create_split_duplex_link(name, bw);
}
void to_centre(sg4::NetZone* z, const sg4::Host* h, sg4::SplitDuplexLink* nic) {
  z->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(nic, Dir::UP)}, true);
}
#endif

}  // namespace

extern "C" void load_platform(const sg4::Engine& e);

void load_platform(const sg4::Engine& e) {
  const int nodes = env_int("DUCT_SIM_NODES", 2);
  const int ppn = env_int("DUCT_SIM_PPN", 8);
  const int rails = env_int("DUCT_SIM_RAILS", ppn);
  if (rails > ppn) throw std::invalid_argument("DUCT_SIM_RAILS must be at most DUCT_SIM_PPN");
  const std::string nic_bw = env("DUCT_SIM_NIC_BW", "50GBps"), nic_lat = env("DUCT_SIM_NIC_LAT", "1us");
  const std::string nvl_bw = env("DUCT_SIM_NVL_BW", "450GBps"), nvl_lat = env("DUCT_SIM_NVL_LAT", "0.5us");

  sg4::NetZone* zone = star_zone(e);
  for (int i = 0; i < nodes; ++i) {
    const std::string node = "node-" + std::to_string(i);
    std::vector<sg4::SplitDuplexLink*> nics, nvl;
    for (int k = 0; k < rails; ++k) {
      sg4::SplitDuplexLink* nic = duplex(zone, node + ".nic" + std::to_string(k), nic_bw);
      nic->set_latency(nic_lat);
      nics.push_back(nic);
    }
    std::vector<sg4::Host*> hosts;
    for (int l = 0; l < ppn; ++l) {
      const std::string name = node + ".r" + std::to_string(l);
      sg4::Host* h = host(zone, name);
      hosts.push_back(h);
      sg4::SplitDuplexLink* link = duplex(zone, name + ".nvlink", nvl_bw);
      link->set_latency(nvl_lat);
      nvl.push_back(link);
      // To the switch through the rank's NIC (both ways: symmetrical).
      to_centre(zone, h, nics[static_cast<std::size_t>(l % rails)]);
    }
    for (int a = 0; a < ppn; ++a)
      for (int b = 0; b < ppn; ++b)
        if (a != b)
          zone->add_bypass_route(hosts[static_cast<std::size_t>(a)]->get_netpoint(),
                                 hosts[static_cast<std::size_t>(b)]->get_netpoint(), nullptr, nullptr,
                                 {sg4::LinkInRoute(nvl[static_cast<std::size_t>(a)], Dir::UP),
                                  sg4::LinkInRoute(nvl[static_cast<std::size_t>(b)], Dir::DOWN)});
  }
  zone->seal();
}
