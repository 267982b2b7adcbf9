#include "stream_cases.hpp"

#include <memory>
#include <numeric>

namespace duct::test {

std::vector<StreamCase> stream_cases(MPI_Comm w, std::size_t c, struct CUstream_st* st) {
  int n = 0, me = 0;
  MPI_Comm_size(w, &n);
  MPI_Comm_rank(w, &me);
  const int ic = static_cast<int>(c);
  const std::size_t un = static_cast<std::size_t>(n);
  auto vc = std::make_shared<std::vector<int>>(un), vd = std::make_shared<std::vector<int>>(un);
  int pos = 0;
  for (int j = 0; j < n; ++j) {
    (*vc)[static_cast<std::size_t>(j)] = ic + j;
    (*vd)[static_cast<std::size_t>(j)] = pos;
    pos += ic + j + 1;
  }
  const std::size_t vt = static_cast<std::size_t>(pos);
  const int mine = ic + me;
  auto rcn = std::make_shared<std::vector<int>>(un, mine), rd = std::make_shared<std::vector<int>>(un);
  auto sd = std::make_shared<std::vector<int>>(un);
  int sp = 0, rp = 0;
  for (int j = 0; j < n; ++j) {
    (*sd)[static_cast<std::size_t>(j)] = sp;
    sp += ic + j;
    (*rd)[static_cast<std::size_t>(j)] = rp;
    rp += mine + 1;
  }
  const std::size_t rs = static_cast<std::size_t>(std::accumulate(vc->begin(), vc->end(), 0));
  std::vector<StreamCase> v;
  v.push_back({"allreduce", c, c, [=](float* s, float* r) { return DUCT_Allreduce_stream(s, r, ic, MPI_FLOAT, MPI_SUM, w, st); },
               [=](const float* s, float* r) { MPI_Allreduce(s, r, ic, MPI_FLOAT, MPI_SUM, w); }});
  v.push_back({"allreduce in place", 0, c, [=](float*, float* r) { return DUCT_Allreduce_stream(MPI_IN_PLACE, r, ic, MPI_FLOAT, MPI_MAX, w, st); },
               [=](const float*, float* r) { MPI_Allreduce(MPI_IN_PLACE, r, ic, MPI_FLOAT, MPI_MAX, w); }});
  v.push_back({"reduce", c, c, [=](float* s, float* r) { return DUCT_Reduce_stream_c(s, r, ic, MPI_FLOAT, MPI_SUM, n - 1, w, st); },
               [=](const float* s, float* r) { MPI_Reduce(s, r, ic, MPI_FLOAT, MPI_SUM, n - 1, w); }});
  v.push_back({"bcast", 0, c, [=](float*, float* r) { return DUCT_Bcast_stream(r, ic, MPI_FLOAT, n / 2, w, st); },
               [=](const float*, float* r) { MPI_Bcast(r, ic, MPI_FLOAT, n / 2, w); }});
  v.push_back({"allgather", c, c * un, [=](float* s, float* r) { return DUCT_Allgather_stream(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, w, st); },
               [=](const float* s, float* r) { MPI_Allgather(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, w); }});
  v.push_back({"alltoall", c * un, c * un, [=](float* s, float* r) { return DUCT_Alltoall_stream(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, w, st); },
               [=](const float* s, float* r) { MPI_Alltoall(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, w); }});
  v.push_back({"gather", c, c * un, [=](float* s, float* r) { return DUCT_Gather_stream(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, 0, w, st); },
               [=](const float* s, float* r) { MPI_Gather(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, 0, w); }});
  v.push_back({"scatter", c * un, c, [=](float* s, float* r) { return DUCT_Scatter_stream(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, n - 1, w, st); },
               [=](const float* s, float* r) { MPI_Scatter(s, ic, MPI_FLOAT, r, ic, MPI_FLOAT, n - 1, w); }});
  v.push_back({"reduce_scatter_block", c * un, c, [=](float* s, float* r) { return DUCT_Reduce_scatter_block_stream(s, r, ic, MPI_FLOAT, MPI_SUM, w, st); },
               [=](const float* s, float* r) { MPI_Reduce_scatter_block(s, r, ic, MPI_FLOAT, MPI_SUM, w); }});
  v.push_back({"reduce_scatter", rs, static_cast<std::size_t>(mine), [=](float* s, float* r) { return DUCT_Reduce_scatter_stream(s, r, vc->data(), MPI_FLOAT, MPI_SUM, w, st); },
               [=](const float* s, float* r) { MPI_Reduce_scatter(s, r, vc->data(), MPI_FLOAT, MPI_SUM, w); }});
  v.push_back({"allgatherv", static_cast<std::size_t>(mine), vt, [=](float* s, float* r) { return DUCT_Allgatherv_stream(s, mine, MPI_FLOAT, r, vc->data(), vd->data(), MPI_FLOAT, w, st); },
               [=](const float* s, float* r) { MPI_Allgatherv(s, mine, MPI_FLOAT, r, vc->data(), vd->data(), MPI_FLOAT, w); }});
  v.push_back({"gatherv", static_cast<std::size_t>(mine), vt, [=](float* s, float* r) { return DUCT_Gatherv_stream(s, mine, MPI_FLOAT, r, vc->data(), vd->data(), MPI_FLOAT, n - 1, w, st); },
               [=](const float* s, float* r) { MPI_Gatherv(s, mine, MPI_FLOAT, r, vc->data(), vd->data(), MPI_FLOAT, n - 1, w); }});
  v.push_back({"scatterv", vt, static_cast<std::size_t>(mine), [=](float* s, float* r) { return DUCT_Scatterv_stream(s, vc->data(), vd->data(), MPI_FLOAT, r, mine, MPI_FLOAT, 0, w, st); },
               [=](const float* s, float* r) { MPI_Scatterv(s, vc->data(), vd->data(), MPI_FLOAT, r, mine, MPI_FLOAT, 0, w); }});
  v.push_back({"alltoallv", static_cast<std::size_t>(sp), static_cast<std::size_t>(rp),
               [=](float* s, float* r) { return DUCT_Alltoallv_stream(s, vc->data(), sd->data(), MPI_FLOAT, r, rcn->data(), rd->data(), MPI_FLOAT, w, st); },
               [=](const float* s, float* r) { MPI_Alltoallv(s, vc->data(), sd->data(), MPI_FLOAT, r, rcn->data(), rd->data(), MPI_FLOAT, w); }});
  v.push_back({"barrier", 0, 0, [=](float*, float*) { return DUCT_Barrier_stream(w, st); }, [=](const float*, float*) { MPI_Barrier(w); }});
  return v;
}

}  // namespace duct::test
