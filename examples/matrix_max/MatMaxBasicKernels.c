/*
 * Basic kernels of the matrix maximum example (AutoTiler guide, illustrative example 2):
 * a parallel map (the max of each tile) and a sequential reduction (the max of the maxima).
 */
#include "Gap.h"
#include "MatMaxBasicKernels.h"

#define MAT_MAX_MAX_CORES 16
#define MAT_MAX_WORD32_MIN (-2147483647 - 1)

/* One partial maximum per core, shared by the cores of the cluster. */
static Word32 PartialMax[MAT_MAX_MAX_CORES];

/*
 * Out is bound to K_Arg("TiledOut", KER_ARG_TILE): the tile of the dynamic buffer TiledOut
 * (one item per tile) that belongs to the current tile, i.e. the generated code already points
 * it at entry TileIndex of the vector of maxima (the guide's generated MatMax sets
 * KerArg0->Out = TiledOut base + Iter*4). So the result goes to Out[0]; TileIndex is kept in
 * the signature as in the guide.
 */
void KerMatrixMax(MatrixMax_Arg_T *Arg)
{
	Word32 * __restrict__ In = Arg->In;
	unsigned int W = Arg->W;
	unsigned int H = Arg->H;
	unsigned int CoreId = (unsigned int) gap_coreid();
	unsigned int NCore = (unsigned int) gap_ncore();
	/* Lines of the tile are split over the cores */
	unsigned int Chunk = (H + NCore - 1) / NCore;
	unsigned int First = CoreId * Chunk;
	unsigned int Last = (First + Chunk < H) ? (First + Chunk) : H;
	Word32 M = MAT_MAX_WORD32_MIN;
	unsigned int i;

	/* Map: maximum of my lines (an empty chunk leaves the smallest Word32) */
	for (i = First * W; i < Last * W; i++)
		if (In[i] > M) M = In[i];
	if (CoreId < MAT_MAX_MAX_CORES) PartialMax[CoreId] = M;

	/* Wait until every core has published its partial maximum */
	gap_waitbarrier(0);

	/* Reduce: core 0 combines the partial maxima and writes the tile result */
	if (CoreId == 0) {
		unsigned int c;
		unsigned int N = (NCore < MAT_MAX_MAX_CORES) ? NCore : MAT_MAX_MAX_CORES;

		M = PartialMax[0];
		for (c = 1; c < N; c++)
			if (PartialMax[c] > M) M = PartialMax[c];
		if (Arg->CompareWithOut && Arg->Out[0] > M)
			M = Arg->Out[0];
		Arg->Out[0] = M;
	}
}

void KerMatrixMaxReduction(Word32 * __restrict__ In, Word32 * __restrict__ Out, unsigned int Ntile)
{
	Word32 M = In[0];
	unsigned int i;

	for (i = 1; i < Ntile; i++)
		if (In[i] > M) M = In[i];
	*Out = M;
}
