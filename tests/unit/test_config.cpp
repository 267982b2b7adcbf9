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

TEST_CASE("DUCT_NET_DEVICES spreads local ranks over the rails; the user's UCX_NET_DEVICES is left alone", "[config][netdev]") {
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
  // No rails: UCX reads the user's UCX_NET_DEVICES itself, or chooses.
  CHECK(choose("", "eth0,lo", 1).devices.empty());
  CHECK(choose("", "eth0,lo", 1).why.find("the user's") != std::string::npos);
  CHECK(choose(" , ", nullptr, 0).devices.empty());
  CHECK(duct::netdev::split_list(",a,,b ,").size() == 2);
}
