#include "select/select.hpp"

#include <cstdint>
#include <string_view>

#include "core/config.hpp"

namespace duct::select {

namespace {

bool any(const Query&, std::string*) { return true; }

bool shm_fits(const Query& q, std::string* why) {
  if (q.num_nodes != 1) return (*why = "the communicator spans nodes"), false;
  if (q.shm_bytes == 0) return (*why = "no shared-memory area on this communicator"), false;
  if (q.bytes > q.shm_bytes) return (*why = "the vector is larger than a shared-memory slot"), false;
  return true;
}

// The built-in rules. Recursive doubling moves the whole vector log2(n)
// times and wins while latency dominates; the ring moves 2(n-1)/n of it and
// wins once bandwidth dominates. Crossover measured with duct-bench -A on 2
// and 4 ranks (host, 2 cores): recursive doubling faster up to 8 KiB (np 2:
// 3.99 vs 4.41 us; np 4: 15.6 vs 27.9 us), the ring from 16 KiB (np 2: 6.9
// vs 11.9 us; np 4: 28.6 vs 53.2 us).
// The shared-memory algorithm serves single-node communicators; elsewhere
// its rule is skipped for the next one that covers the size.
constexpr const char* kDefaultRules = "allreduce:0-16k:shm,0-16k:recursive_doubling,16k-inf:ring";

const char* kCollNames[] = {"allreduce"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

Status parse_bound(std::string_view s, std::size_t* out) {
  s = trim(s);
  if (s == "inf") {
    *out = SIZE_MAX;
    return Status::ok();
  }
  std::string t(s);
  Status st = config::parse_size(t.c_str(), out);
  return st ? st : make_error(Errc::config, "'%s' is not a size (use 4096, 64k, 1M or inf)", t.c_str());
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

}  // namespace

const char* coll_name(Coll c) noexcept {
  auto i = static_cast<size_t>(c);
  return i < sizeof kCollNames / sizeof kCollNames[0] ? kCollNames[i] : "?";
}

bool parse_coll(const std::string& name, Coll* out) noexcept {
  for (size_t i = 0; i < sizeof kCollNames / sizeof kCollNames[0]; ++i) {
    if (name == kCollNames[i]) {
      *out = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

const std::vector<AlgoDesc>& algorithms() {
  static const std::vector<AlgoDesc> all = {
      {Coll::allreduce, "shm",
       "single node: every rank writes its vector to node shared memory and reduces all of them in rank order "
       "(flat shared-memory collective as in Open MPI coll/sm and UCC tl/shm)",
       false, shm_fits},
      {Coll::allreduce, "recursive_doubling",
       "exchange the whole vector with partners at distance 1, 2, 4, ...; non-powers of two fold the "
       "extra ranks in first (Thakur, Rabenseifner, Gropp 2005)",
       false, any},
      {Coll::allreduce, "ring",
       "ring reduce-scatter then ring allgather, segments pipelined across steps (Patarasuk, Yuan 2009)",
       true, any},
  };
  return all;
}

int find_algo(Coll c, const std::string& name) noexcept {
  const auto& all = algorithms();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].coll == c && name == all[i].name) return static_cast<int>(i);
  return -1;
}

const char* default_rules() noexcept { return kDefaultRules; }

Status parse_rules(const std::string& text, std::vector<Rule>* out) {
  std::vector<Rule> rules;
  for (std::string_view part : split(text, ';')) {
    part = trim(part);
    if (part.empty()) continue;
    size_t colon = part.find(':');
    if (colon == std::string_view::npos)
      return make_error(Errc::config, "DUCT_TUNE: '%.*s' has no ':' after the collective name",
                        static_cast<int>(part.size()), part.data());
    std::string cname(trim(part.substr(0, colon)));
    Coll c;
    if (!parse_coll(cname, &c)) return make_error(Errc::config, "DUCT_TUNE: unknown collective '%s'", cname.c_str());
    for (std::string_view r : split(part.substr(colon + 1), ',')) {
      r = trim(r);
      size_t dash = r.find('-');
      size_t c2 = r.find(':');
      if (dash == std::string_view::npos || c2 == std::string_view::npos || dash > c2)
        return make_error(Errc::config, "DUCT_TUNE: '%.*s' is not <lo>-<hi>:<algorithm>", static_cast<int>(r.size()),
                          r.data());
      Rule rule{c, 0, 0, -1};
      DUCT_TRY(parse_bound(r.substr(0, dash), &rule.lo));
      DUCT_TRY(parse_bound(r.substr(dash + 1, c2 - dash - 1), &rule.hi));
      std::string aname(trim(r.substr(c2 + 1)));
      if (!aname.empty() && aname[0] == '@') aname.erase(0, 1);  // UCC's spelling
      rule.algo = find_algo(c, aname);
      if (rule.algo < 0)
        return make_error(Errc::config, "DUCT_TUNE: %s has no algorithm '%s' (duct-info -a lists them)", cname.c_str(),
                          aname.c_str());
      if (rule.lo >= rule.hi)
        return make_error(Errc::config, "DUCT_TUNE: empty size range in '%.*s'", static_cast<int>(r.size()), r.data());
      rules.push_back(rule);
    }
  }
  *out = std::move(rules);
  return Status::ok();
}

Status Table::make(const std::string& tune, Table* out) {
  std::vector<Rule> base, over;
  DUCT_TRY(parse_rules(kDefaultRules, &base));
  DUCT_TRY(parse_rules(tune, &over));
  Table t;
  // Rules of DUCT_TUNE come first and replace the built-in ones of the
  // collectives they name.
  t.rules_ = over;
  for (const Rule& r : base) {
    bool overridden = false;
    for (const Rule& o : over) overridden = overridden || o.coll == r.coll;
    if (!overridden) t.rules_.push_back(r);
  }
  *out = std::move(t);
  return Status::ok();
}

int Table::choose(const Query& q, std::string* why) const {
  const auto& all = algorithms();
  std::string skipped;
  for (const Rule& r : rules_) {
    if (r.coll != q.coll || q.bytes < r.lo || q.bytes >= r.hi) continue;
    std::string reason;
    if (all[static_cast<size_t>(r.algo)].can_serve(q, &reason)) {
      if (why)
        *why = strprintf("%zu bytes in [%s, %s)%s", q.bytes, config::format_size(r.lo).c_str(),
                       r.hi == SIZE_MAX ? "inf" : config::format_size(r.hi).c_str(), skipped.c_str());
      return r.algo;
    }
    if (why) skipped += strprintf("; %s skipped: %s", all[static_cast<size_t>(r.algo)].name, reason.c_str());
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].coll == q.coll && all[i].fallback) {
      if (why) *why = "no rule matched" + skipped + "; using the fallback";
      return static_cast<int>(i);
    }
  }
  if (why) *why = "no algorithm";
  return -1;
}

std::string Table::describe() const {
  std::string out;
  for (int c = 0; c < static_cast<int>(Coll::count_); ++c) {
    std::string line;
    for (const Rule& r : rules_) {
      if (static_cast<int>(r.coll) != c) continue;
      line += strprintf("%s%s-%s:%s", line.empty() ? "" : ",", config::format_size(r.lo).c_str(),
                        r.hi == SIZE_MAX ? "inf" : config::format_size(r.hi).c_str(),
                        algorithms()[static_cast<size_t>(r.algo)].name);
    }
    out += std::string(coll_name(static_cast<Coll>(c))) + ":" + line + "\n";
  }
  return out;
}

}  // namespace duct::select
