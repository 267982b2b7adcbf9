// duct core: simulated computation, in the simulation build (-Dsim=true)
// only: SimGrid's SMPI runs each rank as a coroutine, and a rank's clock
// moves only by its messages and by what it declares as computation.
#pragma once

#ifdef DUCT_SIM
#include <simgrid/host.h>
#include <smpi/smpi.h>

namespace duct::sim {

// Charge `seconds` of computation to the calling simulated rank, whatever
// the platform's host speed and SMPI's configuration.
//
// Not smpi_execute(seconds): SimGrid 3.32 turns those seconds into flops
// at smpi/host-speed (default 20 kflop/s) and runs them at the host's own
// speed (1e11 flop/s on duct-sim's platforms), so 1 ms came out as 10 ns;
// and it drops any duration under smpi/cpu-threshold (1 us). Checked with a
// one-rank program on 2026-11-27: smpi_execute(1e-3) advanced MPI_Wtime by
// 1.0e-8 s, this function by 1.0e-3 s.
inline void compute(double seconds) {
  if (seconds > 0) smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}

}  // namespace duct::sim
#endif
