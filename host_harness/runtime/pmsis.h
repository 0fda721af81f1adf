/*
 * pmsis.h - the cluster-side names of GreenWaves' PMSIS API that a basic kernel uses, for basic
 * kernels compiled by the host harness.
 *
 * On the chip pmsis.h is the whole runtime (devices, the fabric controller's API, drivers). A
 * basic kernel runs on the cluster's cores inside a user kernel, and from PMSIS it needs its core
 * identity, its team and the placement attributes of its data. This header gives those names on
 * the simulated cluster and includes Gap.h (every gap_* builtin and type; the SDK's basic kernels
 * that include pmsis.h reach Gap.h through it too), so `#include "pmsis.h"` at the top of an SDK
 * kernel file compiles:
 *   - pi_core_id() is the running core inside a fork (0 elsewhere), pi_cluster_id() 0,
 *     pi_is_fc() 0 (a basic kernel runs on the cluster);
 *   - pi_cl_team_nb_cores() is the simulated cluster's core count (the team of a fork of every
 *     core, as generated code forks), pi_cl_team_barrier() the barrier of the forked cores (the
 *     arguments some versions pass are ignored);
 *   - pi_cl_team_fork(n, entry, arg) runs entry(arg) on n simulated cores as AT_FORK does, on
 *     every core when n is 0 (PMSIS's "default number of cores");
 *   - PI_L1, PI_CL_L1, PI_FC_L1 and PI_L2 place nothing on a host (Gap.h's PI_L2).
 * Not provided: the rest of PMSIS (devices, cluster tasks, pi_cl_dma_*: generated code moves data
 * with at_api.h's AT_* macros; performance counters) and pi_cl_team_critical_enter/exit: the
 * simulator's race check counts two cores' accesses to a byte between two barriers, one a write,
 * as a race and has no notion of a critical section, so a kernel that serialises with one (the
 * SDK's NE16 kernels do, around printf) would fault on a race it does not have. A kernel using
 * one of these fails to compile naming it, rather than running with a meaning the simulator
 * cannot give it.
 */
#ifndef PMSIS_H
#define PMSIS_H

#include "Gap.h"

#ifndef PI_L1
#define PI_L1
#endif
#ifndef PI_CL_L1
#define PI_CL_L1
#endif
#ifndef PI_FC_L1
#define PI_FC_L1
#endif

static inline int pi_core_id(void) { return at_sim_core_id(); }
static inline int pi_cluster_id(void) { return 0; }
static inline int pi_is_fc(void) { return 0; }
static inline int pi_cl_team_nb_cores(void) { return at_sim_num_cores(); }
#define pi_cl_team_barrier(...) at_sim_barrier()

/* PMSIS's nb_cores of 0: every core of the cluster. */
static inline int at_gap_team_size(int nb_cores) { return nb_cores ? nb_cores : AT_SIM_NCORES; }
#define pi_cl_team_fork(nb_cores, entry, arg) AT_FORK(at_gap_team_size(nb_cores), entry, arg)

#endif /* PMSIS_H */
