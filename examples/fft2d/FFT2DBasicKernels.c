/*
 * Basic kernels of the 2D FFT example (AutoTiler guide, user kernel group FFT2D).
 * See FFT2DBasicKernels.h for the fixed point arithmetic.
 */
#include "Gap.h"
#include "FFT2DBasicKernels.h"

/* The [First, Last) of N items (lines or columns) owned by the calling core. */
static void CoreChunk(unsigned int N, unsigned int *First, unsigned int *Last)
{
	unsigned int CoreId = (unsigned int) gap_coreid();
	unsigned int NCore = (unsigned int) gap_ncore();
	unsigned int Chunk = (N + NCore - 1) / NCore;

	*First = CoreId * Chunk;
	*Last = (*First + Chunk < N) ? (*First + Chunk) : N;
	if (*First > *Last) *First = *Last;
}

/* In-place radix-2 DIF FFT of N complex samples at Data, Stride samples apart.
 * Twiddles holds N/2 complex Q15 values: W^k = (cos(2*pi*k/N), -sin(2*pi*k/N)). */
static void Radix2FFT_DIF_Internal(Word16 * __restrict__ Data, Word16 * __restrict__ Twiddles,
				   unsigned int N, unsigned int Stride)
{
	unsigned int Half, TwStep, Group, j;

	for (Half = N / 2, TwStep = 1; Half >= 1; Half >>= 1, TwStep <<= 1) {
		for (Group = 0; Group < N; Group += 2 * Half) {
			for (j = 0; j < Half; j++) {
				Word16 *A = Data + 2 * Stride * (Group + j);
				Word16 *B = Data + 2 * Stride * (Group + j + Half);
				int C = Twiddles[2 * j * TwStep];
				int S = Twiddles[2 * j * TwStep + 1];
				int Ar = A[0], Ai = A[1], Br = B[0], Bi = B[1];
				int Dr = (Ar - Br) >> 1;
				int Di = (Ai - Bi) >> 1;

				A[0] = (Word16) ((Ar + Br) >> 1);
				A[1] = (Word16) ((Ai + Bi) >> 1);
				B[0] = (Word16) ((Dr * C - Di * S + (1 << 14)) >> 15);
				B[1] = (Word16) ((Dr * S + Di * C + (1 << 14)) >> 15);
			}
		}
	}
}

/* Bit-reversal reordering of N samples at Data, Stride samples apart. */
static void SwapSamples_Internal(v2s * __restrict__ Data, Word16 * __restrict__ SwapTable,
				 unsigned int N, unsigned int Stride)
{
	unsigned int i;

	for (i = 0; i < N; i++) {
		unsigned int k = (unsigned int) (Wordu16) SwapTable[i];

		if (k > i && k < N) {
			v2s S = Data[i * Stride];

			Data[i * Stride] = Data[k * Stride];
			Data[k * Stride] = S;
		}
	}
}

void Image2Complex(Image2Complex_Arg_T *Arg)
{
	Wordu8 * __restrict__ In = Arg->In;
	v2s * __restrict__ Out = Arg->Out;
	unsigned int W = Arg->W;
	unsigned int First, Last, i;

	CoreChunk(Arg->H, &First, &Last);
	for (i = First * W; i < Last * W; i++) {
		v2s C = {0, 0};

		C[0] = (short) (In[i] << 7);
		Out[i] = C;
	}
	gap_waitbarrier(0);
}

void Radix2FFT_DIF_2D_Horizontal(FFT_2D_Arg_T *Arg)
{
	unsigned int First, Last, l;

	CoreChunk(Arg->Nb, &First, &Last);
	for (l = First; l < Last; l++)
		Radix2FFT_DIF_Internal(Arg->Data + 2 * Arg->N_fft * l, Arg->Twiddles, Arg->N_fft, 1);
	gap_waitbarrier(0);
}

void Radix2FFT_DIF_2D_Vertical(FFT_2D_Arg_T *Arg)
{
	unsigned int First, Last, c;

	CoreChunk(Arg->Nb, &First, &Last);
	for (c = First; c < Last; c++)
		Radix2FFT_DIF_Internal(Arg->Data + 2 * c, Arg->Twiddles, Arg->N_fft, Arg->Nb);
	gap_waitbarrier(0);
}

void SwapSamples_2D_Horizontal_Par(SwapSamples_2D_Arg_T *Arg)
{
	unsigned int First, Last, l;

	CoreChunk(Arg->Nb, &First, &Last);
	for (l = First; l < Last; l++)
		SwapSamples_Internal(Arg->Data + Arg->Ni * l, Arg->SwapTable, Arg->Ni, 1);
	gap_waitbarrier(0);
}

void SwapSamples_2D_Vertical_Par(SwapSamples_2D_Arg_T *Arg)
{
	unsigned int First, Last, c;

	CoreChunk(Arg->Nb, &First, &Last);
	for (c = First; c < Last; c++)
		SwapSamples_Internal(Arg->Data + c, Arg->SwapTable, Arg->Ni, Arg->Nb);
	gap_waitbarrier(0);
}
