// duct capi: the MPI_Request of a nonblocking collective.
//
// A DUCT_I* call hands back an MPI generalized request (MPI_Grequest_start,
// MPI-4.0 §13.2), marked complete when duct's collective is. Any MPI
// completion call accepts it: MPI_Wait, MPI_Test, MPI_Waitall with other
// requests, MPI_Request_free. What advances the collective while the
// application waits:
//  - DUCT_Wait / DUCT_Test / DUCT_Waitall / DUCT_Testall (always);
//  - MPI's own completion calls on Open MPI: duct registers its progress
//    function with Open MPI's progress loop (opal_progress_register, found
//    at run time; DUCT_LOG=info says whether it was), so MPI_Wait spins
//    duct too;
//  - every blocking duct collective, and every other duct wait.
// Errors of a nonblocking collective are reported by the call that
// completes it: DUCT_Wait/DUCT_Test raise them on the collective's
// communicator, MPI_Wait returns duct's error code (with duct's message)
// through the handler MPI uses for generalized requests.
#pragma once

#include <mpi.h>

#include <functional>

#include "coll/wait.hpp"

namespace duct::capi {

// Make the generalized request for `p` in *req, then run `start` (which
// queues or completes p). On failure nothing is left behind: p is deleted
// and the error raised on p->comm.
// Whether MPI_Wait/MPI_Test on duct's requests advance duct (Open MPI's
// progress hook registered; tries once).
bool mpi_wait_progresses_duct();

int hand_out(coll::Pending* p, MPI_Request* req, const std::function<Status()>& start);

}  // namespace duct::capi
