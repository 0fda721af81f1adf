/* A basic kernel in PMSIS style: pmsis.h's core and team names on the simulated cluster. */
#include "pmsis.h"
#include "PmsisCore.h"

void KerPmsisCore(Word32 *Out)
{
    int Id = pi_core_id(), i, Sum = 0;
    Out[1 + Id] = 100 * pi_cl_team_nb_cores() + 10 * pi_cluster_id() + Id + pi_is_fc();
    pi_cl_team_barrier();
    if (Id == 0) {
        for (i = 0; i < pi_cl_team_nb_cores(); i++)
            Sum += Out[1 + i];
        Out[0] = Sum;
    }
    pi_cl_team_barrier();
}
