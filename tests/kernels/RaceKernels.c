#include <string.h>

#include "RaceKernels.h"

static int ChunkFirst(int N) { return gap_coreid() * ((N + gap_ncore() - 1) / gap_ncore()); }
static int ChunkLast(int N) { return gap_min(ChunkFirst(N) + (N + gap_ncore() - 1) / gap_ncore(), N); }

/* Out[i] = 2 * In[i], each core on its own chunk. */
void KerRaceScale(Race_Arg_T *Arg)
{
    int i, Last = ChunkLast(Arg->N);
    for (i = ChunkFirst(Arg->N); i < Last; i++) Arg->Out[i] = 2 * Arg->In[i];
    gap_waitbarrier(0);
}

/* BUG: `<=` also writes the first element of the next core's chunk. */
void KerRaceNeighbour(Race_Arg_T *Arg)
{
    int i, Last = ChunkLast(Arg->N);
    for (i = ChunkFirst(Arg->N); i <= Last && i < Arg->N; i++) Arg->Out[i] = 2 * Arg->In[i];
    gap_waitbarrier(0);
}

static void PartialSum(Race_Arg_T *Arg)
{
    int i, S = 0, Last = ChunkLast(Arg->N);
    for (i = ChunkFirst(Arg->N); i < Last; i++) S += Arg->In[i];
    Arg->Partial[gap_coreid()] = S;
}

static void Reduce(Race_Arg_T *Arg)
{
    int i, S = 0;
    for (i = 0; i < gap_ncore(); i++) S += Arg->Partial[i];
    Arg->Out[0] = S;
}

/* Sum of In: partial sums per core, a barrier, core 0 adds them. */
void KerRaceSum(Race_Arg_T *Arg)
{
    PartialSum(Arg);
    gap_waitbarrier(0);
    if (gap_coreid() == 0) Reduce(Arg);
    gap_waitbarrier(0);
}

/* BUG: no barrier between the partial sums and core 0's reduction. */
void KerRaceSumNoBarrier(Race_Arg_T *Arg)
{
    PartialSum(Arg);
    if (gap_coreid() == 0) Reduce(Arg);
    gap_waitbarrier(0);
}

/* BUG: no barrier either, but the last core reduces: run one core after the other, as the
 * simulator does, it even gets the right sum. */
void KerRaceSumLastNoBarrier(Race_Arg_T *Arg)
{
    PartialSum(Arg);
    if (gap_coreid() == gap_ncore() - 1) Reduce(Arg);
    gap_waitbarrier(0);
}

/* BUG (on core 3): N ints from Out on, N one too many. */
void KerRaceWritePast(Race_Arg_T *Arg)
{
    int i;
    if (gap_coreid() == 3)
        for (i = 0; i < Arg->N; i++) Arg->Out[i] = i;
    gap_waitbarrier(0);
}

/* BUG: writes Out[N]. */
void KerRaceWritePastSeq(int *Out, int N)
{
    int i;
    for (i = 0; i <= N; i++) Out[i] = -i;
}

/* Legal: a static counter (core 0 counts, every core reads it after the barrier), a static
 * array (one slot per core), a stack array. */
static int Calls;
static int PerCore[64];

void KerRaceStaticAndStack(Race_Arg_T *Arg)
{
    volatile int Tmp[16]; /* volatile: kept on the stack */
    int i, Last = ChunkLast(Arg->N), Core = gap_coreid();
    if (Core == 0) Calls++;
    gap_waitbarrier(0);
    PerCore[Core] = 0;
    for (i = ChunkFirst(Arg->N); i < Last; i++) {
        Tmp[i % 16] = Arg->In[i] + Calls;
        PerCore[Core] += 1;
        Arg->Out[i] = Tmp[i % 16] - Calls + PerCore[Core] - PerCore[Core];
    }
    gap_waitbarrier(0);
}

/* BUG: copies N + 1 ints (memcpy with a size known only at run time stays a library call). */
void KerRaceMemcpyPast(int *Out, const int *In, int N)
{
    memcpy(Out, In, (size_t)(N + 1) * sizeof(int));
}

/* BUG: every core clears the whole output, not its chunk. */
void KerRaceMemsetAll(Race_Arg_T *Arg)
{
    memset(Arg->Out, 0, (size_t)Arg->N * sizeof(int));
    gap_waitbarrier(0);
}
