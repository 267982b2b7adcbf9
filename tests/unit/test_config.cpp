// The configuration table: parsing, defaults, errors, digest, docs.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "core/config.hpp"

using namespace duct;
using namespace duct::config;

namespace {
Env fake(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("sizes parse with binary units", "[config]") {
  size_t v = 0;
  struct Case {
    const char* text;
    size_t want;
  };
  for (Case c : {Case{"0", 0}, Case{"4096", 4096}, Case{"64k", 65536}, Case{"64K", 65536}, Case{"64KiB", 65536},
                 Case{"64KB", 65536}, Case{"1m", 1u << 20}, Case{"2M", 2u << 20}, Case{"1G", 1u << 30},
                 Case{"  8k ", 8192}, Case{"12b", 12}}) {
    INFO(c.text);
    REQUIRE(parse_size(c.text, &v).is_ok());
    CHECK(v == c.want);
  }
  for (const char* bad : {"", "k", "-1", "1x", "1Kx", "1.5M", "99999999999999999999", "20000000000000000G"}) {
    INFO(bad);
    Status st = parse_size(bad, &v);
    CHECK(st.code() == Errc::config);
  }
  CHECK(format_size(65536) == "64K");
  CHECK(format_size(1u << 20) == "1M");
  CHECK(format_size(1000003) == "1000003");
}

TEST_CASE("booleans, integers and seconds parse", "[config]") {
  bool b = false;
  CHECK((parse_bool("yes", &b).is_ok() && b));
  CHECK((parse_bool("0", &b).is_ok() && !b));
  CHECK(parse_bool("maybe", &b).code() == Errc::config);
  long l = 0;
  CHECK((parse_long("-12", &l).is_ok() && l == -12));
  CHECK(parse_long("12x", &l).code() == Errc::config);
  double d = 0;
  CHECK((parse_seconds("2.5", &d).is_ok() && d == 2.5));
  CHECK(parse_seconds("-1", &d).code() == Errc::config);
}

TEST_CASE("the table parses defaults and overrides", "[config]") {
  Config c;
  REQUIRE(parse(fake({}), &c).is_ok());
  CHECK(c.channel == ChannelMode::auto_);
  CHECK(c.pipeline_chunk == (1u << 20));
  CHECK(c.log_level == 1);

  Config d;
  REQUIRE(parse(fake({{"DUCT_CHANNEL", "ucx"}, {"DUCT_PIPELINE_CHUNK", "256K"}, {"DUCT_LOG", "debug"},
                      {"DUCT_LOG_SUBSYS", "coll, channel"}, {"DUCT_PIPELINE_DEPTH", "8"}}),
              &d)
              .is_ok());
  CHECK(d.channel == ChannelMode::ucx);
  CHECK(d.pipeline_chunk == (256u << 10));
  CHECK(d.log_level == 3);
  CHECK(d.pipeline_depth == 8);
  CHECK(d.log_subsys == ((1u << 5) | (1u << 4)));

  // The reliability settings.
  CHECK(c.timeout == 0);
  CHECK_FALSE(c.check);
  CHECK(c.peer_failure);
  CHECK(c.ipc_cache_size == 256);
  Config r;
  REQUIRE(parse(fake({{"DUCT_TIMEOUT", "7.5"}, {"DUCT_CHECK", "on"}, {"DUCT_PEER_FAILURE", "no"},
                      {"DUCT_IPC_CACHE_SIZE", "16"}}),
                &r)
              .is_ok());
  CHECK(r.timeout == 7.5);
  CHECK(r.check);
  CHECK_FALSE(r.peer_failure);
  CHECK(r.ipc_cache_size == 16);
}

TEST_CASE("invalid values name the variable, the value and what is expected", "[config]") {
  Config c;
  Status st = parse(fake({{"DUCT_CHANNEL", "fast"}}), &c);
  CHECK(st.code() == Errc::config);
  CHECK(st.message().find("DUCT_CHANNEL") != std::string::npos);
  CHECK(st.message().find("'fast'") != std::string::npos);
  CHECK(st.message().find("auto|ucx|ipc") != std::string::npos);
  CHECK(c.channel == ChannelMode::auto_);  // the default stays

  for (auto kv : std::map<std::string, std::string>{{"DUCT_PIPELINE_CHUNK", "12"},
                                                   {"DUCT_PIPELINE_DEPTH", "0"},
                                                   {"DUCT_LOG_SUBSYS", "coll,nope"},
                                                   {"DUCT_RING_SEGMENT", "lots"},
                                                   {"DUCT_TIMEOUT", "-3"},
                                                   {"DUCT_CHECK", "sometimes"},
                                                   {"DUCT_IPC_CACHE_SIZE", "0"}}) {
    Config e;
    INFO(kv.first << "=" << kv.second);
    Status s2 = parse(fake({kv}), &e);
    CHECK(s2.code() == Errc::config);
    CHECK(s2.message().find(kv.first) != std::string::npos);
  }
}

TEST_CASE("the agreement digest covers exactly the must-agree rows", "[config]") {
  unsigned long long base = agree_digest(fake({}));
  CHECK(agree_digest(fake({{"DUCT_TUNE", "allreduce:0-inf:ring"}})) != base);
  CHECK(agree_digest(fake({{"DUCT_CHANNEL", "ucx"}})) != base);
  CHECK(agree_digest(fake({{"DUCT_LOG", "debug"}})) == base);        // local only
  CHECK(agree_digest(fake({{"DUCT_PIPELINE_DEPTH", "2"}})) == base);  // local only
  CHECK(agree_digest(fake({{"DUCT_CHECK", "1"}})) != base);            // an extra exchange per call
  CHECK(agree_digest(fake({{"DUCT_TIMEOUT", "5"}})) == base);          // local only
}

TEST_CASE("the markdown page lists every row", "[config]") {
  std::string md = render_markdown();
  for (const Var& v : table()) {
    INFO(v.name);
    CHECK(md.find(std::string("`") + v.name + "`") != std::string::npos);
    CHECK(v.doc != nullptr);
    CHECK(std::string(v.doc).size() > 10);
  }
}

// ---- network devices per rank (core/netdev.hpp) --------------------------------

#include "core/netdev.hpp"

TEST_CASE("DUCT_NET_DEVICES and the user's UCX_NET_DEVICES spread local ranks over the rails", "[config][netdev]") {
  using duct::netdev::choose;
  // Rails: local rank l on rail l mod K, the same rail index on every node.
  CHECK(choose("eth0,eth1", nullptr, 0).devices == "eth0");
  CHECK(choose("eth0,eth1", nullptr, 1).devices == "eth1");
  CHECK(choose("eth0,eth1", nullptr, 2).devices == "eth0");
  CHECK(choose("eth0, eth1 ,eth2", "eth0", 5).devices == "eth2");  // DUCT_NET_DEVICES wins over UCX_NET_DEVICES
  CHECK(choose("mlx5_0:1,mlx5_1:1", nullptr, 3).devices == "mlx5_1:1");
  CHECK(choose("eth0,eth1", nullptr, 1).why.find("rail 1 of 2") != std::string::npos);
  // No local rank from the launcher: every rail.
  CHECK(choose("eth0,eth1", nullptr, -1).devices == "eth0,eth1");
  // No rails: the user's UCX_NET_DEVICES is the set the site allows, spread
  // over the node's ranks as the rails are (loopback is never a rail).
  duct::netdev::Devices here;
  here.present = {"eth0", "eth1", "lo"};
  here.loopback = {"lo"};
  CHECK(choose("", "eth0,eth1", 0, nullptr, &here).devices == "eth0");
  CHECK(choose("", "eth0,eth1", 1, nullptr, &here).devices == "eth1");
  CHECK(choose("", "eth0,eth1", 3, nullptr, &here).devices == "eth1");
  CHECK(choose("", "eth0,eth1", 1, nullptr, &here).why.find("listed device 1 of 2") != std::string::npos);
  CHECK(choose("", "eth0,lo,eth1", 1, nullptr, &here).devices == "eth1");
  CHECK(choose("", "mlx5_0:1,mlx5_1:1", 1).devices == "mlx5_1:1");  // devices unknown: taken to be there
  // One device, "all", or no local rank: UCX reads the list itself.
  CHECK(choose("", "eth0,lo", 1, nullptr, &here).devices.empty());
  CHECK(choose("", "eth0,lo", 1, nullptr, &here).why.find("nothing to spread") != std::string::npos);
  CHECK(choose("", "eth1", 0, nullptr, &here).devices.empty());
  CHECK(choose("", "all", 0, nullptr, &here).devices.empty());
  CHECK(choose("", "eth0,eth1", -1, nullptr, &here).devices.empty());
  CHECK(choose("", "eth0,eth1", -1, nullptr, &here).why.find("the user's") != std::string::npos);
  // A listed device that this node lacks: ranks keep rail alignment (the
  // index counts every listed device); the rank whose device is missing
  // keeps the listed devices this node has.
  CHECK(choose("", "eth0,eth2,eth1", 0, nullptr, &here).devices == "eth0");
  CHECK(choose("", "eth0,eth2,eth1", 2, nullptr, &here).devices == "eth1");
  CHECK(choose("", "eth0,eth2,eth1", 1, nullptr, &here).devices == "eth0,eth1");
  CHECK(choose("", "eth0,eth2,eth1", 2, nullptr, &here).why.find("eth2 not on this node") != std::string::npos);
  CHECK(choose("", "eth2,eth3", 0, nullptr, &here).devices.empty());
  // DUCT_NET_DEVICES=ucx: the whole list for every rank.
  CHECK(choose("ucx", "eth0,eth1", 1, nullptr, &here).devices.empty());
  CHECK(choose("ucx", "eth0,eth1", 1, nullptr, &here).why.find("for every rank") != std::string::npos);
  CHECK(choose(" , ", nullptr, 0).devices.empty());
  CHECK(duct::netdev::split_list(",a,,b ,").size() == 2);
  // "ucx" leaves UCX alone; "auto" (like empty) is the automatic choice.
  CHECK(choose("ucx", nullptr, 1).devices.empty());
  CHECK(choose("ucx", nullptr, 1).why.find("DUCT_NET_DEVICES=ucx") != std::string::npos);
  CHECK(duct::netdev::is_automatic("auto", nullptr));
  CHECK(duct::netdev::is_automatic("", ""));
  CHECK_FALSE(duct::netdev::is_automatic("", "eth0"));
  CHECK_FALSE(duct::netdev::is_automatic("eth0,eth1", nullptr));
}

namespace {

duct::netdev::Nic nic(const char* ucx, const char* bus, bool rdma, long speed = -1, bool near = false) {
  duct::netdev::Nic n;
  n.ucx = ucx;
  n.bus_id = bus;
  n.rdma = rdma;
  n.speed_mbps = speed;
  n.near_process = near;
  return n;
}

}  // namespace

TEST_CASE("Automatic NIC choice: nearest to the GPU, split among GPUs, else binding, else rails", "[config][netdev]") {
  using duct::netdev::automatic;
  using duct::netdev::Node;
  // Two GPUs behind one PCIe switch with two NICs; a third GPU across the
  // machine; an Ethernet management port, which RDMA NICs exclude.
  Node node;
  node.nics = {nic("eno1", "0000:01:00.0", false, 1000), nic("mlx5_0:1", "0000:1d:00.0", true),
               nic("mlx5_1:1", "0000:1e:00.0", true)};
  node.gpus = {"0000:1b:00.0", "0000:1c:00.0", "0000:9b:00.0"};
  node.distance = {{205, 2, 2}, {205, 2, 2}, {305, 306, 306}};
  node.my_gpu = 0;
  CHECK(automatic(node, 5).devices == "mlx5_0:1");
  CHECK(automatic(node, 5).why.find("same PCIe switch") != std::string::npos);
  node.my_gpu = 1;  // the second GPU on the switch takes the second NIC
  CHECK(automatic(node, 0).devices == "mlx5_1:1");
  node.my_gpu = 2;  // alone at its distance: both NICs are equally far, it takes the first
  CHECK(automatic(node, 0).devices == "mlx5_0:1");
  CHECK(automatic(node, 0).why.find("across CPU packages") != std::string::npos);

  // No GPU: the NICs near the CPU binding, else local rank mod the NICs.
  node.my_gpu = -1;
  CHECK(automatic(node, 0).devices == "mlx5_0:1");
  CHECK(automatic(node, 3).devices == "mlx5_1:1");
  CHECK(automatic(node, -1).devices.empty());  // no local rank: UCX's default
  node.bound = true;
  node.nics[2].near_process = true;
  CHECK(automatic(node, 0).devices == "mlx5_1:1");
  CHECK(automatic(node, 0).why.find("CPU binding") != std::string::npos);
  node.bound = false;

  // Ethernet only: the fastest interfaces are the rails, not the 1 Gb/s port.
  Node eth;
  eth.nics = {nic("eno1", "0000:01:00.0", false, 1000), nic("ens1", "0000:41:00.0", false, 100000),
              nic("ens2", "0000:c1:00.0", false, 100000)};
  CHECK(automatic(eth, 0).devices == "ens1");
  CHECK(automatic(eth, 1).devices == "ens2");
  CHECK(automatic(eth, 2).devices == "ens1");
  // One usable NIC: UCX's default (it uses that NIC anyway, with shared memory beside it).
  eth.nics.pop_back();
  CHECK(automatic(eth, 1).devices.empty());
  CHECK(automatic(eth, 1).why.find("one usable NIC (ens1)") != std::string::npos);

  // No PCI NIC: virtual links of one known speed are rails (a network
  // namespace's veth); bridges and links of unknown speed are not.
  Node virt;
  virt.virtual_nics = {nic("eth0", "", false, 10000), nic("eth1", "", false, 10000)};
  CHECK(automatic(virt, 3).devices == "eth1");
  virt.virtual_nics[1].speed_mbps = -1;
  CHECK(automatic(virt, 3).devices.empty());
  virt.virtual_nics.pop_back();
  CHECK(automatic(virt, 3).devices.empty());
  CHECK(automatic(Node{}, 0).devices.empty());
}

// ---- the same from an hwloc topology (tests/unit/data/*.xml) -----------------------

#include <cstdlib>

#include "channel/ucx.hpp"
#include "core/hwtopo.hpp"

TEST_CASE("NICs and GPUs from an hwloc XML topology: PCI distances and the NIC of each GPU", "[config][netdev][hwloc]") {
  // hwloc reads HWLOC_XMLFILE instead of this machine (hwloc(7)).
  REQUIRE(setenv("HWLOC_XMLFILE", DUCT_TEST_DATA "/gpu-node-4gpu-3nic.xml", 1) == 0);
  duct::hwtopo::release();
  struct Restore {
    ~Restore() {
      unsetenv("HWLOC_XMLFILE");
      duct::hwtopo::release();
    }
  } restore;

  const std::vector<std::string> gpus = duct::hwtopo::pci_gpus();
  REQUIRE(gpus == std::vector<std::string>{"0000:1b:00.0", "0000:1c:00.0", "0000:9b:00.0", "0000:9c:00.0"});
  const std::vector<duct::hwtopo::PciNic> nics = duct::hwtopo::pci_nics();
  REQUIRE(nics.size() == 7);  // eno1; mlx5_0..2 with their IPoIB interfaces ib0..2
  CHECK(nics[0].name == "eno1");
  CHECK_FALSE(nics[0].rdma);
  CHECK(nics[1].bus_id == "0000:1d:00.0");
  CHECK(((nics[1].name == "mlx5_0" && nics[1].rdma) || (nics[2].name == "mlx5_0" && nics[2].rdma)));

  using duct::hwtopo::pci_distance;
  CHECK(pci_distance("0000:1b:00.0", "0000:1d:00.0") == 2);    // one PCIe switch, a hop each side
  CHECK(pci_distance("0000:9b:00.0", "0000:9c:00.0") == 2);
  CHECK(pci_distance("0000:1b:00.0", "0000:01:00.0") == 205);  // package 0: two host bridges
  CHECK(pci_distance("0000:1b:00.0", "0000:9d:00.0") / 100 == 3);  // across packages
  CHECK(pci_distance("0000:1b:00.0", "0000:ff:00.0") == -1);

  // UCX sees each verbs device's port 1, the interfaces, and loopback.
  const std::set<std::string> ucx = {"eno1", "ib0", "ib1", "ib2", "lo", "mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "docker0"};
  auto pick = [&](const std::string& gpu, int local_rank) {
    duct::netdev::Node node = duct::channel::ucx::describe_node(nics, ucx, {"lo"}, gpu);
    return duct::netdev::automatic(node, local_rank).devices;
  };
  // NCCL's rule: the nearest NIC; NICs behind one switch split over its GPUs.
  CHECK(pick("0000:1b:00.0", 0) == "mlx5_0:1");
  CHECK(pick("0000:1C:00.0", 1) == "mlx5_0:1");  // CUDA writes bus ids in capitals
  CHECK(pick("0000:9b:00.0", 2) == "mlx5_1:1");
  CHECK(pick("0000:9c:00.0", 3) == "mlx5_2:1");
  // No GPU and no binding: local rank l on verbs device l mod 3.
  CHECK(pick("", 4) == "mlx5_1:1");
  duct::netdev::Node node = duct::channel::ucx::describe_node(nics, ucx, {"lo"}, "");
  CHECK(node.nics.size() == 7);
  CHECK(node.virtual_nics.size() == 1);  // docker0: on no PCI card
  // A verbs device UCX does not list is no candidate.
  node = duct::channel::ucx::describe_node(nics, {"eno1", "mlx5_0:1", "mlx5_2:1"}, {}, "0000:9b:00.0");
  CHECK(node.nics.size() == 3);
  CHECK(duct::netdev::automatic(node, 0).devices == "mlx5_2:1");
}

TEST_CASE("The eager protocol over TCP: only where TCP alone serves the selected network devices", "[config][netdev]") {
  using duct::netdev::tcp_only;
  const std::map<std::string, std::set<std::string>> veth = {{"eth0", {"tcp"}}, {"eth1", {"tcp"}}, {"lo", {"tcp"}}};
  const std::set<std::string> lo = {"lo"};
  CHECK(tcp_only(veth, lo, ""));
  CHECK(tcp_only(veth, lo, "all"));
  CHECK(tcp_only(veth, lo, "eth1"));
  CHECK(tcp_only(veth, lo, "eth0,lo"));
  CHECK_FALSE(tcp_only(veth, lo, "mlx5_0:1"));  // nothing selected is known: UCX's default
  CHECK_FALSE(tcp_only({{"lo", {"tcp"}}}, lo, ""));  // loopback only: no network to speak of
  // An InfiniBand or RoCE node: its verbs ports are served by the ib
  // component, its interfaces (IPoIB, the Ethernet port of a RoCE NIC) by tcp.
  const std::map<std::string, std::set<std::string>> ib = {
      {"eno1", {"tcp"}}, {"ib0", {"tcp"}}, {"lo", {"tcp"}}, {"mlx5_0:1", {"ib"}}, {"mlx5_1:1", {"ib"}}};
  CHECK_FALSE(tcp_only(ib, lo, ""));
  CHECK_FALSE(tcp_only(ib, lo, "mlx5_1:1"));
  CHECK_FALSE(tcp_only(ib, lo, "eno1,mlx5_0:1"));
  CHECK(tcp_only(ib, lo, "eno1"));  // the job chose the management port: TCP it is
  CHECK_FALSE(tcp_only({{"roce0", {"tcp", "ib"}}}, lo, "roce0"));
}
