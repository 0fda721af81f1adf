/*
 * Basic kernel of the GAP SDK's MatAdd generator, v3 form. Written as if the whole tile were in
 * shared L1: the generated user kernel MatADD moves the tiles between L2 and L1 and runs
 * MatSumPar on every core of the cluster.
 */
#include "Gap.h"
#include "MatAddBasicKernels.h"

void MatSumPar(MatrixAdd_Arg_T *Arg)
{
	int * __restrict__ In1 = Arg->In1;
	int * __restrict__ In2 = Arg->In2;
	int * __restrict__ Out = Arg->Out;
	unsigned int W = Arg->W, H = Arg->H;
	unsigned int CoreId = (unsigned int) gap_coreid();
	unsigned int NCore = (unsigned int) gap_ncore();
	/* The columns are shared among the cores: ceil(W / NCore) each, trailing cores may get
	 * fewer (or none). */
	unsigned int Chunk = (W + NCore - 1) / NCore;
	unsigned int First = CoreId * Chunk;
	unsigned int Last = (First + Chunk < W) ? (First + Chunk) : W;
	unsigned int i, j;

	for (i = 0; i < H; i++)
		for (j = First; j < Last; j++)
			Out[i * W + j] = In1[i * W + j] + In2[i * W + j];
	/* Every core waits for the others: the tile is complete when the call returns */
	gap_waitbarrier(0);
}
