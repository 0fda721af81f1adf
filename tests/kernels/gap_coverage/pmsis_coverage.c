/*
 * Uses every name pmsis.h defines (tests/harness/test_gap_builtins.py checks that the list below
 * keeps up with the header), compiled with -std=c99 -Wall -Wextra -Werror.
 */
#include "pmsis.h"

PI_L1 static short L1Table[2] = {1, 2};
PI_CL_L1 static short ClTable[2] = {3, 4};
PI_FC_L1 static short FcTable[2] = {5, 6};

static void Entry(void *Arg) { (void)Arg; }

int CoverPmsis(void)
{
    int s = pi_core_id() + pi_cluster_id() + pi_is_fc() + pi_cl_team_nb_cores();
    pi_cl_team_barrier();
    pi_cl_team_barrier(0);
    pi_cl_team_fork(0, Entry, 0);
    pi_cl_team_fork(pi_cl_team_nb_cores(), Entry, 0);
    /* Gap.h's names come with it. */
    return s + gap_coreid() + L1Table[1] + ClTable[1] + FcTable[1];
}
