#include <stdint.h>

#include "HazardKernels.h"

static int ChunkFirst(int N) { return gap_coreid() * ((N + gap_ncore() - 1) / gap_ncore()); }
static int ChunkLast(int N) { return gap_min(ChunkFirst(N) + (N + gap_ncore() - 1) / gap_ncore(), N); }

/* BUG (on core 3): reads through a pointer made of an integer (N, which the caller sets to 64:
 * an address in the never mapped first page). */
void KerHazardWildRead(Hazard_Arg_T *Arg)
{
    if (gap_coreid() == 3)
        Arg->Out[0] = *(volatile int *)(uintptr_t)Arg->N;
    gap_waitbarrier(0);
}

/* BUG: a 300 KiB array on a core's 256 KiB stack. */
static void __attribute__((noinline)) BigFrame(Hazard_Arg_T *Arg)
{
    volatile char Big[300 * 1024];
    Big[0] = (char) Arg->N;
    Arg->Out[0] = Big[0];
}

/* BUG (on core 2): overflows its stack. */
void KerHazardStackOverflow(Hazard_Arg_T *Arg)
{
    if (gap_coreid() == 2)
        BigFrame(Arg);
    gap_waitbarrier(0);
}

/* BUG: divides by N, which the caller passes as 0. */
void KerHazardDivide(Hazard_Arg_T *Arg)
{
    Arg->Out[0] = Arg->In[0] / Arg->N;
}

/* Legal on the chip: Window[i - 4] with i unsigned wraps back below Window, into Below (laid out
 * just under it in one stack array: Frame[0..3] is Below, Frame[4..] is Window). Each core
 * computes Out[i] = In[i] + Frame[i], with Frame = {1, 2, 3, 4, 0, ...}. */
void KerHazardStackWrap(Hazard_Arg_T *Arg)
{
    volatile int Frame[8] = {1, 2, 3, 4, 0, 0, 0, 0};
    volatile int *Window = Frame + 4;
    unsigned int i, Last = (unsigned int) ChunkLast(Arg->N);
    for (i = (unsigned int) ChunkFirst(Arg->N); i < Last; i++)
        Arg->Out[i] = Arg->In[i] + (i < 4 ? Window[i - 4] : 0);
    gap_waitbarrier(0);
}

/* Partial sums kept in a file-scope static, as a basic kernel may keep them. */
static int Partial[64];

static void StaticPartial(Hazard_Arg_T *Arg)
{
    int i, S = 0, Last = ChunkLast(Arg->N);
    for (i = ChunkFirst(Arg->N); i < Last; i++) S += Arg->In[i];
    Partial[gap_coreid()] = S;
}

static void StaticReduce(Hazard_Arg_T *Arg)
{
    int i, S = 0;
    for (i = 0; i < gap_ncore(); i++) S += Partial[i];
    Arg->Out[0] = S;
}

/* Sum of In through the static partial sums: a barrier, then the last core adds them. */
void KerHazardStaticSum(Hazard_Arg_T *Arg)
{
    StaticPartial(Arg);
    gap_waitbarrier(0);
    if (gap_coreid() == gap_ncore() - 1) StaticReduce(Arg);
    gap_waitbarrier(0);
}

/* BUG: no barrier before the last core's reduction (one core after the other, as the simulator
 * runs them, even gets the right sum). */
void KerHazardStaticSumNoBarrier(Hazard_Arg_T *Arg)
{
    StaticPartial(Arg);
    if (gap_coreid() == gap_ncore() - 1) StaticReduce(Arg);
    gap_waitbarrier(0);
}
