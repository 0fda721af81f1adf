#include "Gap8Dma.h"

/* Out (an L1 tile) = Src (in L2), fetched by core 0 with the era's DMA call, then doubled. */
void KerFetch(KerFetch_T *Arg)
{
    if (gap8_coreid() == 0) {
        gap8_dma_type Req;
        gap8_dma_memcpy(Arg->Src, Arg->Out, Arg->N * sizeof(short), DMA_COPY_IN, 0, &Req);
        gap8_dma_wait(Req);
        for (unsigned int i = 0; i < Arg->N; i++)
            Arg->Out[i] = (short)(2 * Arg->Out[i]);
    }
    gap8_waitbarrier(0);
}
