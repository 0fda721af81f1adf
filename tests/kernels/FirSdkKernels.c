/*
 * The FIR example's basic kernels written the way the GAP SDK's FirBasicKernels.c (2019, 2024)
 * writes them, for tests/test_sim_wrap.py: same names and argument structures as
 * examples/fir/FirBasicKernels.h, but every index is an unsigned int. A tile's first samples
 * read In[i - NCoeffs + j + 1] with i < NCoeffs - 1, the init kernel writes In[i - NCoeffs] and
 * the delay-line copy writes NextIn[j - (NCoeffs - 1)]: unsigned expressions that go
 * "negative". On the 32-bit chip the address wraps back below the pointer, into the delay
 * line; on the 64-bit host it lands 2^32 items above it, which the simulator's arena maps to
 * the same bytes (docs/simulator.md, "Wrapped 32-bit indexes"). Our own code, not the SDK's.
 */
#include "Gap.h"
#include "FirBasicKernels.h"

/* File-scope state as the SDK keeps it: read by every core, never written during a call. */
static int DynamicCores = 0;
static int CoresAtLoad = gap_ncore();

/* ceil(Size / cores), the core count a power of two. */
static inline unsigned int SdkChunk(unsigned int Size)
{
	unsigned int Cores = DynamicCores ? (unsigned int) CoresAtLoad : (unsigned int) gap_ncore();
	unsigned int Shift = gap_fl1(Cores);

	return (Size >> Shift) + ((Size & (Cores - 1)) != 0);
}

static inline short int SdkOut(int Acc, unsigned int Norm)
{
	return (short int) gap_clip(gap_roundnorm_reg(Acc, Norm), 15);
}

/* Core 0 copies the tile's last NCoeffs-1 samples below NextIn, between two barriers. */
static void SdkCarry(short int *In, short int *NextIn, unsigned int NSamples, unsigned int NCoeffs)
{
	unsigned int i, j;

	gap_waitbarrier(0);
	if (gap_coreid() == 0 && NextIn != 0)
		for (j = 0, i = NSamples - (NCoeffs - 1); i < NSamples; i++, j++)
			NextIn[j - (NCoeffs - 1)] = In[i];
	gap_waitbarrier(0);
}

void KerFirParallelInit(KerFirParallelInit_ArgT *Arg)
{
	short int *In = Arg->In;
	unsigned int NCoeffs = Arg->NCoeffs;
	unsigned int Chunk = SdkChunk(NCoeffs), First = gap_coreid() * Chunk;
	unsigned int Last = gap_min(First + Chunk, NCoeffs), i;

	for (i = First; i < Last; i++)
		In[i - NCoeffs] = 0;
	gap_waitbarrier(0);
}

void KerFirParallelScalarNTaps(KerFirParallel_ArgT *Arg)
{
	short int *In = Arg->In, *Coeffs = Arg->Coeffs, *Out = Arg->Out;
	unsigned int NSamples = Arg->NSamples, NCoeffs = Arg->NCoeffs, Norm = Arg->Norm;
	unsigned int Chunk = SdkChunk(NSamples), First = gap_coreid() * Chunk;
	unsigned int Last = gap_min(First + Chunk, NSamples), i, j;

	for (i = First; i < Last; i++) {
		int Acc = 0;
		for (j = 0; j < NCoeffs; j++)
			Acc += In[i - NCoeffs + j + 1] * Coeffs[j];
		Out[i] = SdkOut(Acc, Norm);
	}
	SdkCarry(In, Arg->NextIn, NSamples, NCoeffs);
}

void KerFirParallelNTaps(KerFirParallel_ArgT *Arg)
{
	short int *In = Arg->In, *Out = Arg->Out;
	v2s *Taps = (v2s *) Arg->Coeffs;
	unsigned int NSamples = Arg->NSamples, NCoeffs = Arg->NCoeffs, Norm = Arg->Norm;
	unsigned int Chunk = SdkChunk(NSamples), First = gap_coreid() * Chunk;
	unsigned int Last = gap_min(First + Chunk, NSamples), i, j;

	for (i = First; i < Last; i++) {
		v2s *X = (v2s *) &In[i - NCoeffs + 1];	/* pairs of samples, 2-byte aligned */
		int Acc = 0;
		for (j = 0; j < NCoeffs / 2; j++)
			Acc = gap_sumdotp2(X[j], Taps[j], Acc);
		Out[i] = SdkOut(Acc, Norm);
	}
	SdkCarry(In, Arg->NextIn, NSamples, NCoeffs);
}

/* The fixed-size filters: an int loop index, but NCoeffs unsigned, so the index is too. */
static inline void SdkFixedTaps(KerFirParallel_ArgT *Arg, unsigned int NCoeffs)
{
	short int *In = Arg->In, *Out = Arg->Out;
	v2s *Taps = (v2s *) Arg->Coeffs;
	v2s T[10];
	unsigned int NSamples = Arg->NSamples, Norm = Arg->Norm;
	unsigned int Chunk = SdkChunk(NSamples), First = gap_coreid() * Chunk;
	unsigned int Last = gap_min(First + Chunk, NSamples);
	int i, k;

	for (k = 0; k < (int) NCoeffs / 2; k++)
		T[k] = Taps[k];
	for (i = (int) First; (unsigned int) i < Last; i++) {
		v2s *X = (v2s *) &In[i - NCoeffs + 1];
		int Acc = gap_dotp2(X[0], T[0]);
		for (k = 1; k < (int) NCoeffs / 2; k++)
			Acc = gap_sumdotp2(X[k], T[k], Acc);
		Out[i] = SdkOut(Acc, Norm);
	}
	SdkCarry(In, Arg->NextIn, NSamples, NCoeffs);
}

void KerFirParallel10Taps(KerFirParallel_ArgT *Arg) { SdkFixedTaps(Arg, 10); }

void KerFirParallel20Taps(KerFirParallel_ArgT *Arg) { SdkFixedTaps(Arg, 20); }
