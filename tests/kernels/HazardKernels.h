#ifndef HAZARD_KERNELS_H
#define HAZARD_KERNELS_H

/* Basic kernels for tests/test_sim_hazards.py: hazards the simulator names (issue 22, items 3
 * and 4): a wild read, a stack overflow and a division by zero (host faults), a wrapped unsigned index into a
 * core's stack array, a reduction through a file-scope static without its barrier. */

#include "Gap.h"

typedef struct {
    int *In;      /* N inputs */
    int *Out;     /* N outputs, or the sum in Out[0] */
    int N;
} Hazard_Arg_T;

void KerHazardWildRead(Hazard_Arg_T *Arg);
void KerHazardStackOverflow(Hazard_Arg_T *Arg);
void KerHazardDivide(Hazard_Arg_T *Arg);
void KerHazardStackWrap(Hazard_Arg_T *Arg);
void KerHazardStaticSum(Hazard_Arg_T *Arg);
void KerHazardStaticSumNoBarrier(Hazard_Arg_T *Arg);

#endif
