/*
 * Basic kernel of the deinterleave example. Written as if the whole tile were in shared L1: the
 * generated user kernel moves the tiles between L2 and L1 and runs KerSelectChannelPar on every
 * core of the cluster.
 */
#include "Gap.h"
#include "DeinterleaveBasicKernels.h"

void KerSelectChannelPar(KerSelectChannel_Arg_T *Arg)
{
	int * __restrict__ In = Arg->In;
	int * __restrict__ Out = Arg->Out;
	unsigned int W = Arg->W, H = Arg->H, Channels = Arg->Channels, Channel = Arg->Channel;
	unsigned int CoreId = (unsigned int) gap_coreid();
	unsigned int NCore = (unsigned int) gap_ncore();
	/* The frames of a line are shared among the cores: ceil(W / NCore) each, trailing cores may
	 * get fewer (or none). */
	unsigned int Chunk = (W + NCore - 1) / NCore;
	unsigned int First = CoreId * Chunk;
	unsigned int Last = (First + Chunk < W) ? (First + Chunk) : W;
	unsigned int i, j;

	for (i = 0; i < H; i++)
		for (j = First; j < Last; j++)
			Out[i * W + j] = In[(i * W + j) * Channels + Channel];
	/* Every core waits for the others: the tile is complete when the call returns */
	gap_waitbarrier(0);
}
