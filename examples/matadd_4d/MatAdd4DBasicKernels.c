/*
 * Basic kernels of the 4D matrix addition example ("MyFavoriteKernel" in the AutoTiler guide).
 * MatrixAdd is the guide's parallel basic kernel example, made to accumulate into Out so
 * that the in-plane loop of the user kernel sums the planes; KerSetZero32 clears the output
 * tile first (at LOC_IN_PLANE_PROLOG).
 */
#include "Gap.h"
#include "MatAdd4DBasicKernels.h"

/* The [First, Last) items of a working space of Size items owned by the calling core. */
static void CoreChunk(unsigned int Size, unsigned int *First, unsigned int *Last)
{
	unsigned int CoreId = (unsigned int) gap_coreid();	/* Who am I? */
	unsigned int NCore = (unsigned int) gap_ncore();
	/* Divide the working space by the number of cores (a chunk per core) */
	unsigned int ChunkCell = (Size + NCore - 1) / NCore;

	*First = CoreId * ChunkCell;
	/* Last is either a full chunk after First or capped to the working space size */
	*Last = (*First + ChunkCell < Size) ? (*First + ChunkCell) : Size;
	if (*First > *Last) *First = *Last;
}

void KerSetZero32(KerSetZero32_Arg_T *Arg)
{
	Word32 * __restrict__ Out = Arg->Out;
	unsigned int First, Last, i;

	CoreChunk(Arg->W * Arg->H, &First, &Last);
	for (i = First; i < Last; i++)
		Out[i] = 0;
	/* Wait on the barrier until all the cores have got here */
	gap_waitbarrier(0);
}

void MatrixAdd(MatrixAdd_Arg_T *Arg)
{
	Word32 * __restrict__ In1 = Arg->In1;	/* First input int matrix */
	Word32 * __restrict__ In2 = Arg->In2;	/* Second input int matrix */
	Word32 * __restrict__ Out = Arg->Out;	/* Output int matrix */
	/* Bias to be added to each matrix element sum */
	Word32 Bias = Arg->Bias;
	unsigned int First, Last, i;

	CoreChunk(Arg->W * Arg->H, &First, &Last);
	for (i = First; i < Last; i++)
		Out[i] += In1[i] + In2[i] + Bias;
	/* Wait on the barrier until all the cores have got here */
	gap_waitbarrier(0);
}
