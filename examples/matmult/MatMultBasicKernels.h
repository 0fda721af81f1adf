/*
 * Basic kernels of the GAP SDK's MatMult generator (16-bit fixed point), written for this port.
 *
 * Modelled in model.py (LoadMatMultLibrary) as:
 *   LibKernel("KerMatMultParallel16", CALL_PARALLEL, CArgs(10, In1, W_In1, H_In1, In2, W_In2, Out,
 *             W_Out, OutFirstCol, BufferColIn2, Norm), "KerMatMultParallel16_ArgT", NULL)
 *   LibKernel("KerMatMultParallelVectorial16", CALL_PARALLEL, CArgs(10, same), "KerMatMultParallel16_ArgT", NULL)
 *
 * Both compute, for the tile they are given (In1: H_In1 lines of W_In1, In2: W_In1 lines of
 * W_In2, Out: H_In1 lines of W_Out, W_Out >= OutFirstCol + W_In2):
 *
 *   Out[l*W_Out + OutFirstCol + c] = gap_clip(gap_roundnorm_reg(Acc, Norm), 15)
 *   with Acc = sum over i < W_In1 of In1[l*W_In1 + i] * In2[i*W_In2 + c]   (int32)
 *
 * for l < H_In1 and c < W_In2: a block of W_In2 columns of the product, placed at column
 * OutFirstCol of full-width Out lines. The caller keeps Acc within int32 (signed overflow is
 * undefined in C; on the chip it would wrap).
 */
#ifndef MAT_MULT_BASIC_KERNELS_H
#define MAT_MULT_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of both kernels: the fields are the LibKernels' CArgs, in order. */
typedef struct {
	short int * __restrict__ In1;		/* M1 tile: H_In1 lines of W_In1 */
	unsigned int W_In1;			/* Columns of In1 = lines of In2 */
	unsigned int H_In1;			/* Lines of In1 (and of Out) */
	short int * __restrict__ In2;		/* M2 tile: W_In1 lines of W_In2 */
	unsigned int W_In2;			/* Columns of In2: output columns computed by this call */
	short int * __restrict__ Out;		/* Out tile: H_In1 lines of W_Out */
	unsigned int W_Out;			/* Columns of Out */
	unsigned int OutFirstCol;		/* Column of Out receiving column 0 of In2 */
	short int * __restrict__ BufferColIn2;	/* Vectorial only: L1 scratch of 2 * W_In1 items */
	unsigned int Norm;			/* Fixed-point normalization of the products */
} KerMatMultParallel16_ArgT;

/* The cores share the columns of In2; each core computes every line of its columns. */
void KerMatMultParallel16(KerMatMultParallel16_ArgT *Arg);

/* Two columns of In2 at a time: the cores copy them into BufferColIn2 (contiguous), then share
 * the lines of In1 and compute two outputs a line with 2-way dot products. Correct for any
 * W_In2, odd ones included. */
void KerMatMultParallelVectorial16(KerMatMultParallel16_ArgT *Arg);

#endif /* MAT_MULT_BASIC_KERNELS_H */
