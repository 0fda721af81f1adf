/*
 * Basic kernels of the CNN convolution layer (CNN_ConvolutionPoolReLU form, 16-bit, DP): the
 * convolution and the DP reduction (KerParSetBias_DP_fp is the CNN library's). Semantics are
 * stated in ConvV3BasicKernels.h; reference.py replicates them in numpy.
 */
#include "Gap.h"
#include "ConvV3BasicKernels.h"

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

void ConvV3_KerParConvNxMStrideSxSy_DP_fp(ConvV3_KerConv_DP_fp_T *Arg)
{
	int W = Arg->W, UsedW = Arg->UsedW, H = Arg->H, UsedH = Arg->UsedH;
	int Fx = Arg->N, Fy = Arg->Ny, Sx = Arg->S, Sy = Arg->Sy;
	int PadL = Arg->Pad[0], PadR = Arg->Pad[1], PadT = Arg->Pad[2], PadB = Arg->Pad[3];
	int Wo = (UsedW - Fx + PadL + PadR) / Sx + 1;	/* Output tile width */
	int Ho = (UsedH - Fy + PadT + PadB) / Sy + 1;	/* Output tile height */
	int InFeatures = Arg->InFeatures, TotalInFeatures = Arg->TotalInFeatures;
	int First, Last, of, inf, y, x, i, j;

	CoreChunk(Arg->OutFeatures, &First, &Last);
	for (of = First; of < Last; of++) {
		int * __restrict__ Out = Arg->Out + Wo * Ho * of;

		for (inf = 0; inf < InFeatures; inf++) {
			short int * __restrict__ In = Arg->In + W * H * inf;
			short int * __restrict__ Filter = Arg->Filter + Fx * Fy * (TotalInFeatures * of + inf);

			for (y = 0; y < Ho; y++) {
				int Y0 = y * Sy - PadT;		/* Input line of the filter's first row */
				int I0 = (Y0 < 0) ? -Y0 : 0;	/* Filter rows inside [0, UsedH) */
				int I1 = (UsedH - Y0 < Fy) ? (UsedH - Y0) : Fy;

				for (x = 0; x < Wo; x++) {
					int X0 = x * Sx - PadL;
					int J0 = (X0 < 0) ? -X0 : 0;
					int J1 = (UsedW - X0 < Fx) ? (UsedW - X0) : Fx;
					/* 32-bit accumulation modulo 2^32 (unsigned: no signed overflow) */
					unsigned int Acc = (unsigned int) Out[y * Wo + x];

					for (i = I0; i < I1; i++)
						for (j = J0; j < J1; j++)
							Acc += (unsigned int) (In[(Y0 + i) * W + X0 + j] * Filter[i * Fx + j]);
					Out[y * Wo + x] = (int) Acc;
				}
			}
		}
	}
	gap_waitbarrier(0);
}

void ConvV3_KerDP_fp(ConvV3_KerDP_fp_T *Arg)
{
	int * __restrict__ In = Arg->In;
	short int * __restrict__ Out = Arg->Out;
	int Norm = Arg->Norm, LB = Arg->LB, UB = Arg->UB;
	int First, Last, i;

	CoreChunk(Arg->W * Arg->H * Arg->InFeatures, &First, &Last);
	for (i = First; i < Last; i++) {
		int V = gap_roundnorm_reg(In[i], Norm);	/* (x + 2^(Norm-1)) >> Norm, wrapping add */

		V = gap_min(gap_max(V, LB), UB);
		Out[i] = (short int) V;
	}
	gap_waitbarrier(0);
}
