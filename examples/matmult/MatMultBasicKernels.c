/*
 * Basic kernels of the GAP SDK's MatMult generator, 16-bit fixed point (see MatMultBasicKernels.h
 * for the arithmetic). Written as if the tiles were in shared L1: the generated user kernels move
 * the tiles of M1, M2 and Out between L2 and L1 and run these on every core of the cluster.
 */
#include "Gap.h"
#include "MatMultBasicKernels.h"

/* [First, Last) of a range of N items shared among the cores: ceil(N / NCore) each, the
 * trailing cores get fewer (or none). */
static inline void CoreChunk(unsigned int N, unsigned int *First, unsigned int *Last)
{
	unsigned int NCore = (unsigned int) gap_ncore();
	unsigned int Chunk = (N + NCore - 1) / NCore;
	unsigned int F = (unsigned int) gap_coreid() * Chunk;

	*First = (F < N) ? F : N;
	*Last = (F + Chunk < N) ? (F + Chunk) : N;
}

/* The output of an accumulator: rounded, normalized and saturated to 16 bits. */
static inline short int Out16(int Acc, unsigned int Norm)
{
	return (short int) gap_clip(gap_roundnorm_reg(Acc, Norm), 15);
}

void KerMatMultParallel16(KerMatMultParallel16_ArgT *Arg)
{
	short int * __restrict__ In1 = Arg->In1;
	short int * __restrict__ In2 = Arg->In2;
	short int * __restrict__ Out = Arg->Out;
	unsigned int W_In1 = Arg->W_In1, H_In1 = Arg->H_In1, W_In2 = Arg->W_In2;
	unsigned int W_Out = Arg->W_Out, OutFirstCol = Arg->OutFirstCol, Norm = Arg->Norm;
	unsigned int First, Last, l, c, i;

	CoreChunk(W_In2, &First, &Last);
	for (c = First; c < Last; c++) {
		for (l = 0; l < H_In1; l++) {
			const short int *Line = In1 + l * W_In1;
			int Acc = 0;
			/* Every term, odd W_In1 included: the SDK's scalar kernels read the odd tail at
			 * In2[(W_In1-1)*W_In2], without the column, which this one does not reproduce. */
			for (i = 0; i < W_In1; i++)
				Acc += Line[i] * In2[i * W_In2 + c];
			Out[l * W_Out + OutFirstCol + c] = Out16(Acc, Norm);
		}
	}
	gap_waitbarrier(0);
}

/* Acc0 += a . b0 and Acc1 += a . b1 over N items. With Vect, a, b0 and b1 are 4-byte aligned
 * and the pairs are read as v2s; otherwise (an odd W_In1 leaves In1's lines and the second
 * buffer column misaligned) item by item. */
static inline void Dot2(const short int *a, const short int *b0, const short int *b1, unsigned int N, int Vect,
			int *Acc0, int *Acc1)
{
	int S0 = *Acc0, S1 = *Acc1;
	unsigned int i = 0;

	if (Vect) {
		const v2s *Va = (const v2s *) a, *Vb0 = (const v2s *) b0, *Vb1 = (const v2s *) b1;
		for (; i < N / 2; i++) {
			v2s A = Va[i];
			S0 = gap_sumdotp2(A, Vb0[i], S0);
			S1 = gap_sumdotp2(A, Vb1[i], S1);
		}
		i *= 2;
	}
	for (; i < N; i++) {
		S0 += a[i] * b0[i];
		S1 += a[i] * b1[i];
	}
	*Acc0 = S0;
	*Acc1 = S1;
}

/*
 * The buffer holds two columns shared by all the cores, so here the cores split the lines of
 * In1 (and the copy of the columns), not the columns of In2 as KerMatMultParallel16 does.
 *
 * The GAP SDK's KerMatMultParallelVectorial16_v2 has the same structure, but when W_In2 is odd
 * it copies the last column into the first buffer column and then computes it from the second
 * one, which still holds the column before: the last output column of an odd-width tile is
 * wrong. This kernel handles a lone last column explicitly (one buffer column, one output a
 * line), so any tile width is correct.
 */
void KerMatMultParallelVectorial16(KerMatMultParallel16_ArgT *Arg)
{
	short int * __restrict__ In1 = Arg->In1;
	short int * __restrict__ In2 = Arg->In2;
	short int * __restrict__ Out = Arg->Out;
	short int * __restrict__ Buff0 = Arg->BufferColIn2;		/* column Col of In2 */
	short int * __restrict__ Buff1 = Arg->BufferColIn2 + Arg->W_In1;	/* column Col + 1 */
	unsigned int W_In1 = Arg->W_In1, H_In1 = Arg->H_In1, W_In2 = Arg->W_In2;
	unsigned int W_Out = Arg->W_Out, OutFirstCol = Arg->OutFirstCol, Norm = Arg->Norm;
	/* Tiles and the buffer start 4-byte aligned; lines of In1 and the second column stay
	 * aligned when W_In1 is even */
	int Vect = (W_In1 % 2) == 0;
	unsigned int FirstI, LastI, FirstL, LastL, Col, l, i;

	CoreChunk(W_In1, &FirstI, &LastI);	/* lines of In2 each core copies */
	CoreChunk(H_In1, &FirstL, &LastL);	/* lines of In1 (and Out) each core computes */
	for (Col = 0; Col < W_In2; Col += 2) {
		int Pair = (Col + 1) < W_In2;

		/* The cores copy columns Col (and Col + 1) of In2 into the buffer */
		for (i = FirstI; i < LastI; i++) {
			Buff0[i] = In2[i * W_In2 + Col];
			if (Pair)
				Buff1[i] = In2[i * W_In2 + Col + 1];
		}
		gap_waitbarrier(0);
		/* Each core: its lines of In1 times the buffered column(s) */
		for (l = FirstL; l < LastL; l++) {
			const short int *Line = In1 + l * W_In1;
			short int *O = Out + l * W_Out + OutFirstCol + Col;
			int Acc0 = 0, Acc1 = 0;

			if (Pair) {
				Dot2(Line, Buff0, Buff1, W_In1, Vect, &Acc0, &Acc1);
				O[0] = Out16(Acc0, Norm);
				O[1] = Out16(Acc1, Norm);
			} else {
				/* Lone last column of an odd-width tile: from the first buffer column only */
				for (i = 0; i < W_In1; i++)
					Acc0 += Line[i] * Buff0[i];
				O[0] = Out16(Acc0, Norm);
			}
		}
		/* The buffer is refilled only once every core is done with it */
		gap_waitbarrier(0);
	}
}
