/*
 * SQ8 basic kernels, TFLM requantisation: fully connected, element-wise, matrix products.
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 */
#ifndef __CNN_SQ8_TFLM_DENSE_H__
#define __CNN_SQ8_TFLM_DENSE_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
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

#endif /* __CNN_SQ8_TFLM_DENSE_H__ */
