/*
 * Basic kernel of the graph example besides examples/cnn_conv_v3's convolution (compiled from
 * ../cnn_conv_v3/ConvV3BasicKernels.c and the CNN library's CNN_BiasReLULinear_BasicKernels.c):
 * a saturating 16-bit addition. Semantics are stated in GraphNetBasicKernels.h; reference.py
 * replicates them in numpy.
 */
#include "Gap.h"
#include "GraphNetBasicKernels.h"

/* The [First, Last) part of N items owned by the calling core: chunks of ceil(N / NCore). */
static void CoreChunk(int N, int *First, int *Last)
{
	int CoreId = (int) gap_coreid();
	int NCore = (int) gap_ncore();
	int Chunk = (N + NCore - 1) / NCore;

	*First = CoreId * Chunk;
	*Last = (*First + Chunk < N) ? (*First + Chunk) : N;
	if (*First > *Last) *First = *Last;
}

void KerAdd16Par(KerAdd16_T *Arg)
{
	short int * __restrict__ In1 = Arg->In1;
	short int * __restrict__ In2 = Arg->In2;
	short int * __restrict__ Out = Arg->Out;
	int First, Last, i;

	CoreChunk((int) (Arg->W * Arg->H), &First, &Last);
	for (i = First; i < Last; i++) {
		int S = In1[i] + In2[i];
		Out[i] = (short int) (S < -32768 ? -32768 : (S > 32767 ? 32767 : S));
	}
	gap_waitbarrier(0);
}
