/*
 * Basic kernels of the FIR example (port of the GAP SDK generator GeneratorFIR); see
 * FirBasicKernels.h for the arithmetic and the delay line convention.
 *
 * Written as if the tile and its delay line were in shared L1; the generated user kernels move
 * the tiles between L2 and L1 and dispatch these kernels on all the cores.
 */
#include "Gap.h"
#include "FirBasicKernels.h"

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

/* One output: the 32-bit sum rounded, shifted by Norm and saturated to 16 bits. */
static inline short int FirOut(int Acc, unsigned int Norm)
{
	return (short int) gap_clip(gap_roundnorm_reg(Acc, Norm), 15);
}

/* After every core has read its inputs (barrier: were NextIn this very buffer, the copy
 * would overwrite a delay line still being read), core 0 copies the last NCoeffs-1 samples
 * of the tile into the delay line of the next buffer, then all wait for the copy (barrier; as
 * in the SDK's kernels, although AT_FORK itself returns only once every core is done). When
 * the tile is shorter than NCoeffs-1 samples, part of the copy comes from this tile's own
 * delay line, i.e. from the previous tiles: still the NCoeffs-1 samples preceding the next
 * tile. The copy only writes the other buffer's delay line, never its data, which the DMA
 * may be filling with the next tile meanwhile. */
static void FirCarryDelayLine(KerFirParallel_ArgT *Arg)
{
	gap_waitbarrier(0);
	if (gap_coreid() == 0 && Arg->NextIn != 0) {
		short int * __restrict__ In = Arg->In;
		short int * __restrict__ NextIn = Arg->NextIn;
		int D = (int) Arg->NCoeffs - 1;	/* delay line length */
		int N = (int) Arg->NSamples;
		int j;

		for (j = 0; j < D; j++)
			NextIn[j - D] = In[N - D + j];
	}
	gap_waitbarrier(0);
}

void KerFirParallelInit(KerFirParallelInit_ArgT *Arg)
{
	short int * __restrict__ In = Arg->In;
	int N = (int) Arg->NCoeffs;
	unsigned int First, Last, i;

	CoreRange(Arg->NCoeffs, &First, &Last);
	for (i = First; i < Last; i++)
		In[(int) i - N] = 0;
	/* No barrier: AT_FORK returns once every core is done. */
}

void KerFirParallelScalarNTaps(KerFirParallel_ArgT *Arg)
{
	short int * __restrict__ In = Arg->In;
	short int * __restrict__ Coeffs = Arg->Coeffs;
	short int * __restrict__ Out = Arg->Out;
	int N = (int) Arg->NCoeffs;
	unsigned int Norm = Arg->Norm;
	unsigned int First, Last, i;

	CoreRange(Arg->NSamples, &First, &Last);
	for (i = First; i < Last; i++) {
		short int *X = In + (int) i - N + 1;	/* the N samples ending at sample i */
		int Acc = 0, j;

		for (j = 0; j < N; j++)
			Acc += X[j] * Coeffs[j];
		Out[i] = FirOut(Acc, Norm);
	}
	FirCarryDelayLine(Arg);
}

void KerFirParallelNTaps(KerFirParallel_ArgT *Arg)
{
	short int * __restrict__ In = Arg->In;
	short int * __restrict__ Coeffs = Arg->Coeffs;
	short int * __restrict__ Out = Arg->Out;
	int N = (int) Arg->NCoeffs;
	unsigned int Norm = Arg->Norm;
	unsigned int First, Last, i;

	CoreRange(Arg->NSamples, &First, &Last);
	for (i = First; i < Last; i++) {
		short int *X = In + (int) i - N + 1;
		int Acc = 0, j;

		/* Two taps per step (N even). The samples are packed from shorts: X is only 2-byte
		 * aligned, so it cannot be read as v2s. */
		for (j = 0; j < N; j += 2)
			Acc = gap_sumdotp2(gap_pack2(X[j], X[j + 1]), gap_pack2(Coeffs[j], Coeffs[j + 1]), Acc);
		Out[i] = FirOut(Acc, Norm);
	}
	FirCarryDelayLine(Arg);
}

/* The fixed-size filters: the taps packed in pairs once per call, then the same loop as
 * KerFirParallelNTaps with a constant trip count (fully unrolled by the compiler). */
static inline void FirFixedTaps(KerFirParallel_ArgT *Arg, v2s *Taps, int N)
{
	short int * __restrict__ In = Arg->In;
	short int * __restrict__ Out = Arg->Out;
	unsigned int Norm = Arg->Norm;
	unsigned int First, Last, i;
	int j;

	for (j = 0; j < N / 2; j++)
		Taps[j] = gap_pack2(Arg->Coeffs[2 * j], Arg->Coeffs[2 * j + 1]);
	CoreRange(Arg->NSamples, &First, &Last);
	for (i = First; i < Last; i++) {
		short int *X = In + (int) i - N + 1;
		int Acc = 0;

		for (j = 0; j < N / 2; j++)
			Acc = gap_sumdotp2(gap_pack2(X[2 * j], X[2 * j + 1]), Taps[j], Acc);
		Out[i] = FirOut(Acc, Norm);
	}
	FirCarryDelayLine(Arg);
}

void KerFirParallel10Taps(KerFirParallel_ArgT *Arg)
{
	v2s Taps[5];

	FirFixedTaps(Arg, Taps, 10);
}

void KerFirParallel20Taps(KerFirParallel_ArgT *Arg)
{
	v2s Taps[10];

	FirFixedTaps(Arg, Taps, 20);
}
