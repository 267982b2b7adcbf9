#include "coll/msg_rounds.hpp"

namespace duct::coll {

Sched msg_rounds_any(std::unique_ptr<AnySpec> spec) {
  std::vector<Request> reqs;
  for (int r = 0;; ++r) {
    bool more = false;
    DUCT_CO_TRY(spec->round(r, &reqs, &more));
    if (!reqs.empty()) {
      DUCT_CO_TRY(co_await wait(reqs));
      reqs.clear();
    }
    if (memory::Fence* f = spec->fence()) DUCT_CO_TRY(co_await wait(*f));
    if (!more) co_return Status::ok();
  }
}

}  // namespace duct::coll
