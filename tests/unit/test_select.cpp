// Selection rules: the rules file's form (comments, lines), and the order
// of the three sources (DUCT_TUNE, the rules file, the built-in rules).
#include <catch2/catch.hpp>

#include <string>

#include "select/select.hpp"

using namespace duct::select;

namespace {

Query single_node(Coll c, std::size_t bytes, int n) {
  Query q;
  q.coll = c;
  q.bytes = bytes;
  q.comm_size = n;
  q.num_nodes = 1;
  q.shm_bytes = 64 << 10;
  q.ranks_per_node = n;
  return q;
}

std::string name(int algo) { return algo >= 0 ? algorithms()[static_cast<size_t>(algo)].name : "?"; }

}  // namespace

TEST_CASE("rule groups: one per rule, comments removed, by collective", "[select]") {
  const std::string text =
      "# head\n allreduce/node/n=2-2:0-4k:shm,4k-inf:ring # tail\n\nallgatherv:0-inf:ring; allgather:0-8:bruck\r\n"
      "#allreduce:0-inf:rabenseifner\nallreduce:0-inf:ring";
  const std::vector<std::string> all = rule_groups(text);
  REQUIRE(all.size() == 4);
  CHECK(all[0] == "allreduce/node/n=2-2:0-4k:shm,4k-inf:ring");
  CHECK(all[2] == "allgather:0-8:bruck");
  const std::vector<std::string> ar = rule_groups(text, Coll::allreduce);
  REQUIRE(ar.size() == 2);
  CHECK(ar[1] == "allreduce:0-inf:ring");
  // allgather is not a prefix match of allgatherv.
  const std::vector<std::string> ag = rule_groups(text, Coll::allgather);
  REQUIRE(ag.size() == 1);
  CHECK(ag[0] == "allgather:0-8:bruck");
  CHECK(rule_groups(text, Coll::bcast).empty());
  CHECK(rule_groups(" # only a comment\n;;\n").empty());
}

TEST_CASE("rules files: '#' comments and newlines separate rules", "[select]") {
  std::vector<Rule> r;
  REQUIRE(parse_rules("# a comment\nallreduce/node/n=2-2:0-4k:shm,4k-inf:ring  # tail\n\n"
                      "bcast:0-inf:binomial\r\n# allreduce:0-inf:rabenseifner\n",
                      &r));
  REQUIRE(r.size() == 3);
  CHECK(r[0].coll == Coll::allreduce);
  CHECK(r[0].nodes == 0);
  CHECK(r[0].nmin == 2);
  CHECK(r[0].nmax == 2);
  CHECK(r[0].hi == 4096);
  CHECK(name(r[1].algo) == "ring");
  CHECK(r[2].coll == Coll::bcast);
  // Errors still name what is wrong.
  CHECK_FALSE(parse_rules("allreduce:0-inf:nosuch\n", &r));
  Table t;
  duct::Status st = Table::make("", "bcast:0-inf:nosuch\n", "/x/tune.rules", &t);
  REQUIRE_FALSE(st);
  CHECK(st.message().find("/x/tune.rules") != std::string::npos);
  CHECK(st.message().find("nosuch") != std::string::npos);
}

TEST_CASE("the rules file goes before the built-in rules; DUCT_TUNE replaces both", "[select]") {
  Table builtin, filed, tuned;
  REQUIRE(Table::make("", &builtin));
  const std::string file = "allreduce/node/n=2-2:0-inf:ring\n";
  REQUIRE(Table::make("", file, "f", &filed));
  REQUIRE(Table::make("allreduce:0-inf:rabenseifner", file, "f", &tuned));
  // The built-in choice at 8 B on 2 ranks is shared memory.
  CHECK(name(builtin.choose(single_node(Coll::allreduce, 8, 2))) == "shm");
  // The file's rule serves its shape ...
  std::string why;
  CHECK(name(filed.choose(single_node(Coll::allreduce, 8, 2), &why)) == "ring");
  CHECK(why.find("of the rules file") != std::string::npos);
  // ... and other shapes keep the built-in rules.
  CHECK(name(filed.choose(single_node(Coll::allreduce, 8, 3))) == "shm");
  Query nodes = single_node(Coll::allreduce, 8, 2);
  nodes.num_nodes = 2;
  nodes.ranks_per_node = 1;
  nodes.shm_bytes = 0;
  CHECK(name(filed.choose(nodes)) == name(builtin.choose(nodes)));
  // DUCT_TUNE names allreduce: its rules replace the file's and the built-in ones.
  CHECK(name(tuned.choose(single_node(Coll::allreduce, 8, 2), &why)) == "rabenseifner");
  CHECK(why.find("of DUCT_TUNE") != std::string::npos);
  CHECK(name(tuned.choose(single_node(Coll::allreduce, 8, 3))) == "rabenseifner");
  // describe() marks where rules came from.
  CHECK(filed.describe().find("ring{file}") != std::string::npos);
  CHECK(tuned.describe().find("rabenseifner{DUCT_TUNE}") != std::string::npos);
}
