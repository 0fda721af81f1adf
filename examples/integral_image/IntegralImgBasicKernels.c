/*
 * Basic kernels of the integral image example (port of the GAP SDK generator
 * GenerateIntegralImage); see IntegralImgBasicKernels.h.
 *
 * Written as if the whole tile were in shared L1; the generated user kernel moves the tiles
 * between L2 and L1 and dispatches these kernels on all the cores.
 */
#include "Gap.h"
#include "IntegralImgBasicKernels.h"

/* [*First, *Last): this core's share of Size items, ceil(Size/NCore) a core (the last cores may
 * get fewer items, or none). */
static inline void CoreRange(unsigned int Size, unsigned int *First, unsigned int *Last)
{
	unsigned int NCore = (unsigned int) gap_ncore();
	unsigned int Chunk = (Size + NCore - 1) / NCore;
	unsigned int F = (unsigned int) gap_coreid() * Chunk;
	unsigned int L = F + Chunk;

	*First = (F < Size) ? F : Size;
	*Last = (L < Size) ? L : Size;
}

void KerPrime(KerPrimeImage_ArgT *Arg)
{
	unsigned int * __restrict__ Buffer = Arg->KerBuffer;
	unsigned int First, Last, c;

	CoreRange(Arg->W, &First, &Last);
	for (c = First; c < Last; c++)
		Buffer[c] = 0;
	/* No barrier: AT_FORK returns once every core is done. */
}

void KerProcess(KerProcessImage_ArgT *Arg)
{
	unsigned char * __restrict__ In = Arg->In;
	unsigned int * __restrict__ Out = Arg->IntegralImage;
	unsigned int * __restrict__ Buffer = Arg->KerBuffer;
	unsigned int W = Arg->W, H = Arg->H;
	unsigned int First, Last, l, c;

	/* 1. Vertical: each core owns a band of columns. Out[l][c] = sum of In[0..l][c] of the
	 * tile plus the column sum of the lines above it (Buffer[c]). The column sum down to the
	 * tile's last line goes back to Buffer[c] for the next tile; only this core touches
	 * column c of Buffer, and it does so before the horizontal pass modifies the last line. */
	CoreRange(W, &First, &Last);
	for (c = First; c < Last; c++) {
		unsigned int Sum = Buffer[c];

		for (l = 0; l < H; l++) {
			Sum += In[l * W + c];
			Out[l * W + c] = Sum;
		}
		Buffer[c] = Sum;
	}
	/* The horizontal pass reads every column of a line: all the columns must be done. */
	gap_waitbarrier(0);

	/* 2. Horizontal: each core owns a band of lines, prefix sums along each line. */
	CoreRange(H, &First, &Last);
	for (l = First; l < Last; l++) {
		unsigned int *Line = Out + l * W;

		for (c = 1; c < W; c++)
			Line[c] += Line[c - 1];
	}
	/* No barrier: AT_FORK returns once every core is done, before the tile is written back. */
}
