/* Helpers of tests/test_graph_paths.py (see GraphCalls.h). */
#include "Gap.h"
#include "GraphCalls.h"

void MatAddScalarPar(MatAddScalar_Arg_T *Arg)
{
	unsigned int Size = Arg->W * Arg->H;
	unsigned int CoreId = (unsigned int) gap_coreid();
	unsigned int NCore = (unsigned int) gap_ncore();
	unsigned int Chunk = (Size + NCore - 1) / NCore;
	unsigned int First = CoreId * Chunk;
	unsigned int Last = (First + Chunk < Size) ? (First + Chunk) : Size;
	unsigned int i;

	for (i = First; i < Last; i++)
		Arg->Out[i] = Arg->In[i] + Arg->Val;
	gap_waitbarrier(0);
}

void GraphAddOne(Word32 * __restrict__ Buf, int N)
{
	int i;

	for (i = 0; i < N; i++)
		Buf[i] += 1;
}

void GraphAccumulate(Word32 * __restrict__ Dst, Word32 * __restrict__ Src, int N)
{
	int i;

	for (i = 0; i < N; i++)
		Dst[i] += Src[i];
}
