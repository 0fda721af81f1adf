#ifndef PMSIS_CORE_H
#define PMSIS_CORE_H
#include "pmsis.h"

/* Out[1 + id]: 100 * pi_cl_team_nb_cores() + 10 * pi_cluster_id() + id + pi_is_fc() as core id
 * saw it; Out[0]: their sum, made by core 0 after a pi_cl_team_barrier(). */
void KerPmsisCore(Word32 *Out);
#endif
