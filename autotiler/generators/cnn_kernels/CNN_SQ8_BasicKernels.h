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

/* ---- Element-wise ADD / SUB / MUL (CNN_SQ8_Eltwise.c) -----------------------------------------
 * TFLM's int8 ADD, SUB and MUL (sq8_tflm.add / sub / mul) on N items, both inputs of the output's
 * shape; the items are split across the cores. Field names follow sq8_tflm.AddParams (left_shift,
 * input1, input2, output) and the zero points of the three tensors.
 * ADD: Out = clamp(MBQM(s1 + s2, OutputMultiplier, OutputShift) + OutZeroPoint, ActMin, ActMax),
 *      s_k = MBQM((Ink - InkZeroPoint) 2^LeftShift, InputkMultiplier, InputkShift);
 * SUB: the same with s1 - s2 (its own kernel: not ADD with a negated Input2Multiplier). */
typedef struct {
	signed char * __restrict__ In1;		/* N */
	signed char * __restrict__ In2;		/* N */
	signed char * __restrict__ Out;		/* N */
	unsigned int N;
	int In1ZeroPoint;
	int In2ZeroPoint;
	int OutZeroPoint;
	int LeftShift;				/* 20, TFLM's */
	int Input1Multiplier;			/* Q31 in [2^30, 2^31), shifts <= 0 (multipliers below one) */
	int Input1Shift;
	int Input2Multiplier;
	int Input2Shift;
	int OutputMultiplier;
	int OutputShift;
	int ActMin;				/* the fused activation's clamp, int8 range */
	int ActMax;
} KerAdd_TFLM_SQ8_T;

void KerParAdd_TFLM_SQ8(KerAdd_TFLM_SQ8_T *Arg);
void KerParSub_TFLM_SQ8(KerAdd_TFLM_SQ8_T *Arg);

/* MUL: Out = clamp(MBQM((In1 - In1ZeroPoint)(In2 - In2ZeroPoint), Multiplier, Shift) + OutZeroPoint,
 * ActMin, ActMax); Multiplier, Shift = QuantizeMultiplier(s1 s2 / s_out), the shift may be > 0. */
typedef struct {
	signed char * __restrict__ In1;		/* N */
	signed char * __restrict__ In2;		/* N */
	signed char * __restrict__ Out;		/* N */
	unsigned int N;
	int In1ZeroPoint;
	int In2ZeroPoint;
	int OutZeroPoint;
	int Multiplier;				/* Q31 in [2^30, 2^31) (or 0) */
	int Shift;				/* > 0 a left shift, < 0 a rounded right shift */
	int ActMin;
	int ActMax;
} KerMul_TFLM_SQ8_T;

void KerParMul_TFLM_SQ8(KerMul_TFLM_SQ8_T *Arg);

/* ---- Max and average pooling (CNN_SQ8_Pooling.c) ---------------------------------------------
 * TFLM's MAX_POOL_2D / AVERAGE_POOL_2D (sq8_tflm.max_pool2d / average_pool2d), NHWC for one image:
 * In[H][W][C], Out[Ho][Wo][C]. Output (oy, ox) pools the window starting at (oy Sy - PadTop,
 * ox Sx - PadLeft); taps outside the image are skipped (the caller computes SAME/VALID pads). The
 * average divides by the number of in-image taps, rounding half away from zero; then the clamp
 * [ActMin, ActMax]. No rescale: TFLM requires equal input and output quantisation. The output
 * lines are split across the cores. */
typedef struct {
	signed char * __restrict__ In;		/* H x W x C */
	signed char * __restrict__ Out;		/* Ho x Wo x C */
	unsigned short int W;
	unsigned short int H;
	unsigned short int C;
	unsigned short int Wo;
	unsigned short int Ho;
	unsigned char Fx;			/* filter width, height */
	unsigned char Fy;
	unsigned char Sx;			/* strides */
	unsigned char Sy;
	unsigned char PadLeft;			/* < Fx, Fy: every window holds a tap */
	unsigned char PadTop;
	int ActMin;				/* the fused activation's clamp, int8 range */
	int ActMax;
} KerPool_TFLM_SQ8_T;

void KerParMaxPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg);
void KerParAvgPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg);

#endif /* __CNN_SQ8_BASIC_KERNELS_H__ */
