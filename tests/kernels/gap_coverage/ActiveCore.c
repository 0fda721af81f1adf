/* A basic kernel in the SDK's style: the core count read once, at file scope. */
#include "ActiveCore.h"
#include "Gap8.h"

static int ActiveCore = gap_ncore();

void KerActiveCore(Word32 *Out)
{
    Out[0] = ActiveCore;
    Out[1] = gap_ncore();
    Out[2] = gap_ncorem1();
    Out[3] = rt_nb_pe();
}

void KerParActiveCore(Word32 *Out)
{
    unsigned int CoreId = gap_coreid(), Chunk = 1, First = CoreId * Chunk;
    if (First < (unsigned int)ActiveCore)
        Out[4 + First] = ActiveCore;
    gap_waitbarrier(0);
}
