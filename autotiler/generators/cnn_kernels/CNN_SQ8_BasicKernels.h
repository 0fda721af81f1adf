/*
 * SQ8 basic kernels (issue 23): int8 tensors, int32 accumulation, requantised per output channel.
 * The "_TFLM_SQ8" kernels compute what TensorFlow Lite Micro's int8 reference kernels compute, bit
 * for bit (Scale_DataSize 4: an int32 multiplier and a shift per channel, zero points, activation
 * clamps); semantics in docs/cnn-sq8.md, numpy twin autotiler/generators/sq8_tflm.py. The
 * requantisation primitives are in CNN_SQ8_Requant.h. The code is ours.
 */
#ifndef __CNN_SQ8_BASIC_KERNELS_H__
#define __CNN_SQ8_BASIC_KERNELS_H__

#include "Gap.h"
#include "CNN_SQ8_Requant.h"

/* ---- Fully connected -----------------------------------------------------------------------
 * Out[c] = clamp(MBQM(Bias[c] + sum_i (In[i] - InZeroPoint) * Filter[c*InDim + i], Multiplier[c],
 *                     Shift[c]) + OutZeroPoint, ActMin, ActMax)
 * TFLM's FULLY_CONNECTED (sq8_tflm.fully_connected); a per-tensor layer repeats its one multiplier
 * and shift in every channel. The output channels are split across the cores. */
typedef struct {
	signed char * __restrict__ In;		/* InDim */
	signed char * __restrict__ Filter;	/* OutDim rows of InDim, symmetric (zero point 0) */
	int * __restrict__ Bias;		/* OutDim */
	signed char * __restrict__ Out;		/* OutDim */
	unsigned short int InDim;
	unsigned short int OutDim;
	int * __restrict__ Multiplier;		/* OutDim, Q31 in [2^30, 2^31) (or 0) */
	signed char * __restrict__ Shift;	/* OutDim, > 0 a left shift, < 0 a rounded right shift */
	int InZeroPoint;
	int OutZeroPoint;
	int ActMin;				/* the fused activation's clamp, int8 range */
	int ActMax;
} KerLinear_TFLM_SQ8_T;

void KerParLinear_TFLM_SQ8(KerLinear_TFLM_SQ8_T *Arg);

#endif /* __CNN_SQ8_BASIC_KERNELS_H__ */
