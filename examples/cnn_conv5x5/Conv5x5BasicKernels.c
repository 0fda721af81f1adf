/*
 * Basic kernels of the CNN 5x5 convolution example (AutoTiler guide, GenerateCnnConv5x5).
 */
#include "Gap.h"
#include "Conv5x5BasicKernels.h"

/* The [First, Last) lines of N lines owned by the calling core. */
static void CoreLines(int N, int *First, int *Last)
{
	int CoreId = (int) gap_coreid();
	int NCore = (int) gap_ncore();
	int Chunk = (N + NCore - 1) / NCore;

	*First = CoreId * Chunk;
	*Last = (*First + Chunk < N) ? (*First + Chunk) : N;
	if (*First > *Last) *First = *Last;
}

void KerSetInBias(KerSetInBiasT *Arg)
{
	short int * __restrict__ Out = Arg->Out;
	int W = Arg->W;
	short int Bias = Arg->Bias;
	int First, Last, i;

	CoreLines(Arg->H, &First, &Last);
	for (i = First * W; i < Last * W; i++)
		Out[i] = Bias;
	gap_waitbarrier(0);
}

void KerDirectConv5x5_fp(KerConv_fpT *Arg)
{
	short int * __restrict__ In = Arg->In;
	int W = Arg->W;
	int H = Arg->H;
	short int * __restrict__ Filter = Arg->Filter;
	short int * __restrict__ Out = Arg->Out;
	unsigned int Norm = Arg->Norm;
	int Wo = W - 4;			/* Output tile width */
	int Ho = H - 4;			/* Output tile height */
	int First, Last, y, x, i, j;

	CoreLines(Ho > 0 ? Ho : 0, &First, &Last);
	for (y = First; y < Last; y++) {
		for (x = 0; x < Wo; x++) {
			int Acc = 0;

			for (i = 0; i < 5; i++)
				for (j = 0; j < 5; j++)
					Acc += In[(y + i) * W + (x + j)] * Filter[i * 5 + j];
			Out[y * Wo + x] = (short int) gap_clip(Out[y * Wo + x] + (Acc >> Norm), 15);
		}
	}
	gap_waitbarrier(0);
}
