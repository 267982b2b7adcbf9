// duct select: which algorithm serves a collective call, and why.
//
// Rules are readable strings next to the algorithms, in the form
//   <collective>:<lo>-<hi>:<algorithm>[,<lo>-<hi>:<algorithm>...][;<collective>:...]
// with sizes in bytes of the whole vector (k, M, G suffixes; "inf"), e.g.
//   allreduce:0-64k:recursive_doubling,64k-inf:ring
// DUCT_TUNE overrides the built-in rules for the collectives it names. An
// algorithm that cannot serve a call (say, one that needs a power-of-two
// communicator) is skipped for the next rule that matches, or the
// collective's default algorithm, and the reason is kept for the log.
//
// Selection depends only on arguments that are equal on every rank (size in
// bytes, communicator size, number of nodes), so every rank picks the same
// algorithm without talking to the others.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace duct::select {

enum class Coll : int { allreduce = 0, count_ };

const char* coll_name(Coll c) noexcept;
bool parse_coll(const std::string& name, Coll* out) noexcept;

struct Query {
  Coll coll = Coll::allreduce;
  std::size_t bytes = 0;  // of the whole vector on one rank
  int comm_size = 1;
  int num_nodes = 1;
  std::size_t shm_bytes = 0;  // largest vector the node's shared-memory area takes (0: no area)
};

struct AlgoDesc {
  Coll coll;
  const char* name;
  const char* doc;     // one line, with the source of the algorithm
  bool fallback;       // the collective's last resort: serves every call
  bool (*can_serve)(const Query& q, std::string* why);
};

// Every algorithm, in a fixed order; the index is the algorithm's id.
const std::vector<AlgoDesc>& algorithms();
int find_algo(Coll c, const std::string& name) noexcept;

struct Rule {
  Coll coll;
  std::size_t lo, hi;  // [lo, hi) bytes; hi == SIZE_MAX means infinity
  int algo;
};

// The built-in rules, as a string in the DUCT_TUNE format.
const char* default_rules() noexcept;

// Parse rules in the DUCT_TUNE format.
Status parse_rules(const std::string& text, std::vector<Rule>* out);

class Table {
 public:
  // Built-in rules, overridden per collective by `tune` (may be empty).
  static Status make(const std::string& tune, Table* out);
  // The algorithm for `q`, never fails (falls back). With `why`, also the
  // reason (formatting it costs more than choosing: pass it only to log).
  int choose(const Query& q, std::string* why = nullptr) const;
  // The rules in effect, one collective per line.
  std::string describe() const;

 private:
  std::vector<Rule> rules_;
};

}  // namespace duct::select
