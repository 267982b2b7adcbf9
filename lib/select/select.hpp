// duct select: which algorithm serves a collective call, and why.
//
// Rules are readable strings next to the algorithms:
//   <collective>[/<qualifier>...]:<lo>-<hi>:<algorithm>[,<lo>-<hi>:<algorithm>...][;<collective>...]
// Sizes are bytes (k, M, G suffixes; "inf"); their meaning per collective is
// Query::bytes below. Qualifiers narrow a rule:
//   host | cuda          the caller's buffers are host / device memory
//   node | nodes         the communicator is on one node / spans nodes
//   n=<lo>-<hi>          the communicator has lo..hi ranks
//   ppn=<lo>-<hi>        every node has lo..hi ranks of it (nodes that differ
//                        match no ppn rule)
//   pow2                 the communicator's size is a power of two
// e.g. "allreduce:0-16k:shm,0-16k:recursive_doubling,16k-inf:ring" or
// "bcast/nodes/n=64-inf:0-inf:scatter_allgather". Rules are tried in order;
// the first whose range and qualifiers match and whose algorithm can serve
// the call wins. One that cannot (say, an algorithm for powers of two) is
// skipped and the reason kept for the log; when none is left, the
// collective's fallback algorithm serves every call.
//
// DUCT_TUNE (or DUCT_Tune()) replaces the built-in rules of the collectives
// it names. Every rank must pick the same algorithm, so selection only uses
// what is equal on every rank: sizes every rank knows, the communicator
// size and node count. The "host"/"cuda" qualifiers use the caller's buffer
// kind; built-in rules never use them, and a DUCT_TUNE that does assumes
// every rank passes the same kind of memory (as NCCL and UCC do).
#pragma once

#include <climits>
#include <cstddef>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace duct::select {

enum class Coll : int {
  allreduce = 0,
  bcast,
  reduce,
  allgather,
  allgatherv,
  reduce_scatter_block,
  reduce_scatter,
  alltoall,
  alltoallv,
  gather,
  gatherv,
  scatter,
  scatterv,
  barrier,
  count_
};

const char* coll_name(Coll c) noexcept;
bool parse_coll(const std::string& name, Coll* out) noexcept;

struct Query {
  Coll coll = Coll::allreduce;
  // Bytes, equal on every rank: the vector (allreduce, reduce, bcast); the
  // whole result (allgather(v): all blocks; reduce_scatter(_block): the
  // input vector); one rank's share times the number of ranks (gather,
  // scatter, alltoall); 0 where ranks cannot all know it (the v-variants of
  // gather, scatter and alltoall, barrier).
  std::size_t bytes = 0;
  int comm_size = 1;
  int num_nodes = 1;
  std::size_t shm_bytes = 0;  // largest payload the node's shared-memory area takes (0: no area)
  bool device = false;        // the caller's buffers are device memory
  bool engine = false;        // the communicator has a device engine (coll/engine.hpp)
  int ranks_per_node = 0;     // every node has this many ranks (0: nodes differ)
  bool cma = false;           // the shared-memory area's ranks may read each other's memory (coll/cma.hpp)
};

struct AlgoDesc {
  Coll coll;
  const char* name;
  const char* doc;   // one line, with the source of the algorithm
  bool fallback;     // the collective's last resort: serves every call
  bool (*can_serve)(const Query& q, std::string* why);
};

// Every algorithm, in a fixed order; the index is the algorithm's id.
const std::vector<AlgoDesc>& algorithms();
int find_algo(Coll c, const std::string& name) noexcept;

struct Rule {
  Coll coll;
  std::size_t lo, hi;  // [lo, hi) bytes; hi == SIZE_MAX means infinity
  int algo;
  int kind = -1;       // -1 any, 0 host, 1 device
  int nodes = -1;      // -1 any, 0 one node, 1 several
  int nmin = 0, nmax = INT_MAX;
  int ppn_min = 0, ppn_max = INT_MAX;  // ranks per node; 0-inf: any layout, nodes that differ included
  bool pow2 = false;   // only communicators of a power-of-two size
  int source = 0;      // 0 built-in, 1 rules file, 2 DUCT_TUNE / DUCT_Tune
};

// The built-in rules, as a string in the DUCT_TUNE format.
const char* default_rules() noexcept;

// Parse rules in the DUCT_TUNE format. Newlines separate like ';' and '#'
// starts a comment to the end of its line (the rules file's format).
Status parse_rules(const std::string& text, std::vector<Rule>* out);

// The groups of rules in `text` (DUCT_TUNE or file format) in order, each
// "coll[/qualifier...]:<lo>-<hi>:<algo>,...", comments and blanks removed;
// with `c`, only the groups of that collective. Not checked: parse_rules
// says what is wrong.
std::vector<std::string> rule_groups(const std::string& text);
std::vector<std::string> rule_groups(const std::string& text, Coll c);

class Table {
 public:
  // Built-in rules, overridden per collective by `tune` (may be empty).
  static Status make(const std::string& tune, Table* out);
  // The same with a rules file (its text, config::rules_file()): for the
  // collectives `tune` does not name, the file's rules are tried first,
  // then the built-in ones (a file tuned for some communicator shapes
  // leaves the others to the built-in rules). `file_name` names it in errors.
  static Status make(const std::string& tune, const std::string& file_text, const std::string& file_name,
                     Table* out);
  // The algorithm for `q`, never fails (falls back). With `why`, also the
  // reason (formatting it costs more than choosing: pass it only to log);
  // with `source`, where the rule that chose came from (Rule::source; the
  // fallback counts as built in).
  int choose(const Query& q, std::string* why = nullptr, int* source = nullptr) const;
  // The rules in effect, one collective per line, each rule marked with
  // where it came from when not built in ({file}, {DUCT_TUNE}).
  std::string describe() const;

 private:
  std::vector<Rule> rules_;
};

}  // namespace duct::select
