/*
 * Basic kernels of the matrix addition example (AutoTiler guide, illustrative example 1).
 * Written as if the whole tile were in shared L1; the generated user kernel MatAdd moves
 * the tiles between L2 and L1 and dispatches MatSumPar on all the cores.
 */
#include "Gap.h"
#include "MatAddBasicKernels.h"

void MatSumPar(MatrixAdd_Arg_T *Arg)
{
	Word32 * __restrict__ In1 = Arg->In1;	/* First input int matrix */
	Word32 * __restrict__ In2 = Arg->In2;	/* Second input int matrix */
	Word32 * __restrict__ Out = Arg->Out;	/* Output int matrix */
	unsigned int Size = Arg->W * Arg->H;	/* The working space */
	unsigned int CoreId = (unsigned int) gap_coreid();	/* Who am I? */
	unsigned int NCore = (unsigned int) gap_ncore();
	/* Divide the working space by the number of cores (a chunk per core) */
	unsigned int ChunkCell = (Size + NCore - 1) / NCore;
	/* Given who we are, this is the first item we are interested in */
	unsigned int First = CoreId * ChunkCell;
	/* Last is either a full chunk after First or capped to the working space size */
	unsigned int Last = (First + ChunkCell < Size) ? (First + ChunkCell) : Size;
	unsigned int i;

	for (i = First; i < Last; i++)
		Out[i] = In1[i] + In2[i];
	/* Wait on the barrier until all the cores have got here */
	gap_waitbarrier(0);
}
