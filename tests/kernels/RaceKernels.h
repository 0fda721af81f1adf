#ifndef RACE_KERNELS_H
#define RACE_KERNELS_H

/* Basic kernels for tests/test_sim_races.py: each bug a real cluster would punish (a core
 * writing into its neighbour's chunk, a reduction without its barrier, a write past the end of
 * L1 or of an argument) next to the same kernel written correctly. */

#include "Gap.h"

typedef struct {
    int *In;      /* N inputs */
    int *Out;     /* N outputs, or the sum in Out[0] */
    int *Partial; /* one partial sum per core */
    int N;
} Race_Arg_T;

void KerRaceScale(Race_Arg_T *Arg);
void KerRaceNeighbour(Race_Arg_T *Arg);
void KerRaceSum(Race_Arg_T *Arg);
void KerRaceSumNoBarrier(Race_Arg_T *Arg);
void KerRaceSumLastNoBarrier(Race_Arg_T *Arg);
void KerRaceWritePast(Race_Arg_T *Arg);
void KerRaceWritePastSeq(int *Out, int N);
void KerRaceStaticAndStack(Race_Arg_T *Arg);
void KerRaceMemcpyPast(int *Out, const int *In, int N);
void KerRaceMemsetAll(Race_Arg_T *Arg);

#endif
