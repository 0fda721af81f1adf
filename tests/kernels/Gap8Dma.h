/* A 2019-era basic kernel moving its own data with gap8_dma_memcpy (as the v2 FFT installs its
 * twiddles): the harness's Gap8.h maps it onto the simulator's cluster DMA. */
#ifndef __GAP8DMA_H__
#define __GAP8DMA_H__
#include "Gap8.h"

typedef struct { short *__restrict__ Src; short *__restrict__ Out; unsigned int N; } KerFetch_T;
void KerFetch(KerFetch_T *Arg);

#endif
