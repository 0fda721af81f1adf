/*
 * SQ8 basic kernels, TFLM requantisation: activations, global pooling, softmax, copies.
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 *
 * The kernels read their zero points, clamps and multipliers from the layer's Infos vector
 * (CNN_SQ8_Infos.h, autotiler/generators/sq8_infos.py; the builders are act_infos, mean_infos,
 * softmax_infos, concat_infos in autotiler/generators/sq8_gen_tflm_ops.py).
 *
 * The first part holds gemmlowp's fixed-point exp / logistic / tanh / reciprocal as TFLM uses
 * them, the twins of sq8_tflm.py's numpy functions of the same names, bit for bit on every int32
 * input (tests/test_sq8_ops_kernels.py). Every sum and difference gemmlowp writes on int32 wraps
 * here (unsigned arithmetic), as the numpy twin's wrap32 does.
 */
#ifndef __CNN_SQ8_TFLM_OPS_H__
#define __CNN_SQ8_TFLM_OPS_H__

#include <string.h>
#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* Four int8 at any address as one vector (memcpy: a v4s access at an unaligned address is
 * undefined in C; the chip loads from any address in one instruction). */
static inline v4s at_tflm_load4(const signed char *p)
{
	v4s v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The largest of the four lanes of v and m. */
static inline int at_tflm_max_lanes(v4s v, int m)
{
	int k;

	for (k = 0; k < 4; k++)
		m = (v[k] > m) ? v[k] : m;
	return m;
}

/* ---- gemmlowp fixed point ------------------------------------------------------------------- */

static inline int32_t at_tflm_add(int32_t a, int32_t b)
{
	return (int32_t) ((uint32_t) a + (uint32_t) b);
}

static inline int32_t at_tflm_sub(int32_t a, int32_t b)
{
	return (int32_t) ((uint32_t) a - (uint32_t) b);
}

/* SaturatingRoundingMultiplyByPOT: exponent > 0 shifts left saturating, < 0 divides rounding
 * half away from zero (|exponent| <= 31). */
static inline int32_t at_tflm_srmbpot(int32_t x, int exponent)
{
	if (exponent > 0) {
		int32_t threshold = (int32_t) ((1u << (31 - exponent)) - 1u);

		if (x > threshold)
			return INT32_MAX;
		if (x < -threshold)
			return INT32_MIN;
		return (int32_t) ((uint32_t) x << exponent);
	}
	if (exponent < 0)
		return at_tflm_rdbpot(x, -exponent);
	return x;
}

/* RoundingHalfSum: (a + b + sign(a + b)) / 2, truncating. */
static inline int32_t at_tflm_rounding_half_sum(int32_t a, int32_t b)
{
	int64_t s = (int64_t) a + (int64_t) b;

	s += (s >= 0) ? 1 : -1;
	return (int32_t) (s / 2);
}

/* exp(a) for a Q0.31 a in [-1/4, 0): Taylor around -1/8 (gemmlowp's constants: exp(-1/8), 1/3). */
static inline int32_t at_tflm_exp_quarter(int32_t a)
{
	const int32_t constant_term = 1895147668, one_third = 715827883;
	int32_t x = at_tflm_add(a, 1 << 28);
	int32_t x2 = at_tflm_srdhm(x, x);
	int32_t x3 = at_tflm_srdhm(x2, x);
	int32_t x4 = at_tflm_srdhm(x2, x2);
	int32_t x4_over_4 = at_tflm_srmbpot(x4, -2);
	int32_t poly = at_tflm_srmbpot(at_tflm_add(at_tflm_srdhm(at_tflm_add(x4_over_4, x3), one_third), x2), -1);

	return at_tflm_add(constant_term, at_tflm_srdhm(constant_term, at_tflm_add(x, poly)));
}

/* exp(a) of a Q(IntBits).(31-IntBits) a <= 0, Q0.31 result: the Taylor step on a mod 1/4, then one
 * multiplier exp(-2^k) per set bit k of the rest (gemmlowp's barrel, k = -2..4 while IntBits > k). */
static inline int32_t at_tflm_exp_on_negative_values(int32_t a, int IntBits)
{
	static const int32_t Mult[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
	int FracBits = 31 - IntBits, k;
	int32_t OneQuarter = (int32_t) 1 << (FracBits - 2);
	int32_t AMod = at_tflm_sub(a & (OneQuarter - 1), OneQuarter);
	int32_t Result = at_tflm_exp_quarter(at_tflm_srmbpot(AMod, IntBits));
	uint32_t Remainder = (uint32_t) at_tflm_sub(AMod, a);

	for (k = -2; k <= 4; k++)
		if (IntBits > k && (Remainder & ((uint32_t) 1 << (FracBits + k))))
			Result = at_tflm_srdhm(Result, Mult[k + 2]);
	if (IntBits > 5 && a < -((int32_t) 1 << (36 - IntBits)))
		Result = 0;
	return (a == 0) ? INT32_MAX : Result;
}

/* The Newton-Raphson shared by one_over_one_plus_x and one_minus_x_over_one_plus_x: ~1 / ((1 + a) / 2)
 * in Q2.29 (start 48/17 - 32/17 d, three steps). */
static inline int32_t at_tflm_newton_reciprocal(int32_t a)
{
	int32_t HalfDen = at_tflm_rounding_half_sum(a, INT32_MAX);
	int32_t x = at_tflm_add(1515870810, at_tflm_srdhm(HalfDen, -1010580540));
	int i;

	for (i = 0; i < 3; i++) {
		int32_t OneMinus = at_tflm_sub((int32_t) 1 << 29, at_tflm_srdhm(HalfDen, x));

		x = at_tflm_add(x, at_tflm_srmbpot(at_tflm_srdhm(x, OneMinus), 2));
	}
	return x;
}

/* 1 / (1 + a), a Q0.31 in [0, 1). */
static inline int32_t at_tflm_one_over_one_plus_x(int32_t a)
{
	return at_tflm_srmbpot(at_tflm_newton_reciprocal(a), 1);
}

/* (1 - a) / (1 + a), a Q0.31 in [0, 1). */
static inline int32_t at_tflm_one_minus_x_over_one_plus_x(int32_t a)
{
	return at_tflm_srmbpot(at_tflm_sub(at_tflm_newton_reciprocal(a), (int32_t) 1 << 29), 2);
}

/* logistic(a), a in Q(IntBits), Q0.31 result. */
static inline int32_t at_tflm_logistic(int32_t a, int IntBits)
{
	int32_t AbsA = (a > 0) ? a : at_tflm_sub(0, a);
	int32_t r = at_tflm_one_over_one_plus_x(at_tflm_exp_on_negative_values(at_tflm_sub(0, AbsA), IntBits));

	if (a == 0)
		return (int32_t) 1 << 30;
	return (a > 0) ? r : at_tflm_sub(INT32_MAX, r);
}

/* tanh(a), a in Q(IntBits), Q0.31 result: (1 - e) / (1 + e) with e = exp(-2|a|), the same raw
 * value read with one more integer bit. */
static inline int32_t at_tflm_tanh(int32_t a, int IntBits)
{
	int32_t NegAbs = (a < 0) ? a : at_tflm_sub(0, a);
	int32_t t = at_tflm_one_minus_x_over_one_plus_x(at_tflm_exp_on_negative_values(NegAbs, IntBits + 1));

	if (a == 0)
		return 0;
	return (a < 0) ? at_tflm_sub(0, t) : t;
}

/* Leading zeros of x as 32 bits (32 for 0). */
static inline int at_tflm_clz(uint32_t x)
{
	return x ? __builtin_clz(x) : 32;
}

/* GetReciprocal: 1 / x for a Q(Digits) x > 0, as a Q0.31 in [1/2, 1) and *NumBitsOverUnit. */
static inline int32_t at_tflm_reciprocal(int32_t x, int Digits, int *NumBitsOverUnit)
{
	int h = at_tflm_clz((uint32_t) x);
	int32_t Shifted = (h < 32) ? (int32_t) (((uint32_t) x << h) - ((uint32_t) 1 << 31)) : INT32_MIN;

	*NumBitsOverUnit = Digits - h;
	return at_tflm_one_over_one_plus_x(Shifted);
}

/* ---- Activations, element-wise (CNN_SQ8_Act.c) -------------------------------------------------
 * N items of In to Out, split across the cores (in place allowed: item i reads In[i] only).
 * KerParActRequant_TFLM_SQ8: QUANTIZE int8 -> int8, RELU, RELU6 (sq8_tflm.quantize / relu / relu6):
 *     Out = clamp(MBQM(In - IN_ZP, MULT, SHIFT) + OUT_ZP, ACT_MIN, ACT_MAX)
 *     (RELU6 does not rescale in TFLM: its Infos hold the identity 2^30, 1 and OUT_ZP = IN_ZP).
 * KerParLogistic_TFLM_SQ8 / KerParTanh_TFLM_SQ8 (sq8_tflm.logistic / tanh): IN_ZP, MULT, SHIFT
 *     (the input multiplier and its shift), PARAM (the input radius).
 * KerParHSwish_TFLM_SQ8 (sq8_tflm.hard_swish): IN_ZP, OUT_ZP, MULT/SHIFT output (16-bit multiplier,
 *     exponent), MULT2/SHIFT2 reluish.
 * KerParLeakyRelu_TFLM_SQ8 (sq8_tflm.leaky_relu): IN_ZP, OUT_ZP, MULT/SHIFT identity (x >= 0),
 *     MULT2/SHIFT2 alpha (x < 0). */
typedef struct {
	signed char * __restrict__ In;		/* N */
	signed char * __restrict__ Out;		/* N */
	unsigned int N;
	signed char * __restrict__ Infos;
} KerAct_TFLM_SQ8_T;

void KerParActRequant_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg);
void KerParLogistic_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg);
void KerParTanh_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg);
void KerParHSwish_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg);
void KerParLeakyRelu_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg);

/* ---- A unary operator by its table (CNN_SQ8_Act.c, generator CNN_ActLUT_SQ8) -------------------
 * Out[i] = Table[In[i] + 128] for the N items, split across the cores. Table: the 256 int8 outputs of
 * inputs -128..127, computed by the model (onnxruntime's QlinearBuildLookupTable for an imported
 * ONNX QDQ model, sq8_tflm.ort_lookup_table; any int8 -> int8 function). Numpy twin:
 * sq8_tflm.apply_lookup_table. */
typedef struct {
	signed char * __restrict__ In;
	signed char * __restrict__ Out;
	unsigned int N;
	signed char * __restrict__ Table;
} KerActLUT_SQ8_T;

void KerParActLUT_SQ8(KerActLUT_SQ8_T *Arg);

/* ---- onnxruntime's QLinearSoftmax (CNN_SQ8_SoftMax.c, generator CNN_SoftMaxTable_SQ8) ----------
 * N rows of Dim items, the rows split across the cores. Table: 256 float32 exponentials (their bits
 * as int32), e(d) = Table[d + 255] for d = x - max(row) in [-255, 0] (sq8_tflm.ort_softmax_table);
 * per row sum = the e(d) added in order in float32; Out = (int) rint(e(d) * PARAM / sum) + OUT_ZP,
 * stored modulo 256 as onnxruntime's int8 store (PARAM = floor(1 / s_out)). Numpy twin:
 * sq8_tflm.ort_softmax. Float arithmetic: the FPU of GAP9 (and the host); GAP8 has none (soft float). */
typedef struct {
	signed char * __restrict__ In;
	signed char * __restrict__ Out;
	unsigned short int Dim;
	unsigned short int N;
	int * __restrict__ Table;
	signed char * __restrict__ Infos;
} KerSoftMaxTable_SQ8_T;

void KerParSoftMaxTable_SQ8(KerSoftMaxTable_SQ8_T *Arg);

/* ---- Global pooling (CNN_SQ8_Act.c) ------------------------------------------------------------
 * In: Pixels HWC pixels of Feat channels, Out: Feat items; the channels are split across the cores.
 * KerParGlobalSumRequant_TFLM_SQ8, TFLM's MEAN and SUM over H, W (sq8_tflm.mean_hw, sum_hw):
 *     Out[c] = clamp(MBQM(sum_p In[p][c] - IN_ZP * Pixels, MULT, SHIFT) + OUT_ZP, ACT_MIN, ACT_MAX)
 *     (MULT, SHIFT: MEAN's multiplier has 1 / Pixels folded in, sq8_tflm.mean_multiplier; SUM's is
 *     s_in / s_out).
 * KerParGlobalMaxPool_TFLM_SQ8, TFLM's REDUCE_MAX (same quantisation in and out, no rescale):
 *     Out[c] = clamp(max_p In[p][c], ACT_MIN, ACT_MAX). */
typedef struct {
	signed char * __restrict__ In;		/* Pixels x Feat */
	signed char * __restrict__ Out;		/* Feat */
	unsigned int Pixels;
	unsigned short int Feat;
	signed char * __restrict__ Infos;
} KerGlobalPool_TFLM_SQ8_T;

void KerParGlobalSumRequant_TFLM_SQ8(KerGlobalPool_TFLM_SQ8_T *Arg);
void KerParGlobalMaxPool_TFLM_SQ8(KerGlobalPool_TFLM_SQ8_T *Arg);

/* ---- Softmax (CNN_SQ8_SoftMax.c) ---------------------------------------------------------------
 * TFLM's int8 SOFTMAX (sq8_tflm.softmax) over each of N rows of Dim items, the rows split across
 * the cores; output scale 1/256, zero point -128. Infos: MULT (input_beta_multiplier), LEFT_SHIFT
 * (input_left_shift), PARAM (diff_min). */
typedef struct {
	signed char * __restrict__ In;		/* N x Dim */
	signed char * __restrict__ Out;		/* N x Dim */
	unsigned short int Dim;
	unsigned short int N;
	signed char * __restrict__ Infos;
} KerSoftMax_TFLM_SQ8_T;

void KerParSoftMax_TFLM_SQ8(KerSoftMax_TFLM_SQ8_T *Arg);

/* One row of Dim items split across the cores: per-core maxima, then per-core sums of the
 * exponentials, each combined by every core after a barrier (Reduct: AT_SQ8_SOFTMAX_SLOTS ints,
 * the maxima in the first half, the sums in the second). The sum wraps as TFLM's int32 does, so
 * its order does not matter. */
#define AT_SQ8_SOFTMAX_SLOTS	16
typedef struct {
	signed char * __restrict__ In;		/* Dim */
	signed char * __restrict__ Out;		/* Dim */
	unsigned short int Dim;
	int * __restrict__ Reduct;		/* AT_SQ8_SOFTMAX_SLOTS, gap_ncore() <= 8 */
	signed char * __restrict__ Infos;
} KerSoftMaxItems_TFLM_SQ8_T;

void KerParSoftMaxItems_TFLM_SQ8(KerSoftMaxItems_TFLM_SQ8_T *Arg);

/* ---- Channel concatenation (CNN_SQ8_Copy.c) ----------------------------------------------------
 * Input Index of a concatenation: Pixels HWC pixels of InFeat channels requantised to the output's
 * quantisation (QUANTIZE int8 -> int8 with Infos block Index: IN_ZP, OUT_ZP, MULT, SHIFT; a block
 * holding the identity, 2^30 and 1 with equal zero points, is a copy) into channels
 * [Offset, Offset + InFeat) of the OutFeat channels of each output pixel. Pixels split across cores. */
typedef struct {
	signed char * __restrict__ In;		/* Pixels x InFeat */
	signed char * __restrict__ Out;		/* Pixels x OutFeat */
	unsigned int Pixels;
	unsigned short int InFeat;
	unsigned short int OutFeat;
	unsigned short int Offset;
	unsigned short int Index;		/* which AT_INF_TFLM_DIM-byte block of Infos */
	signed char * __restrict__ Infos;
} KerConcat_TFLM_SQ8_T;

void KerParConcat_TFLM_SQ8(KerConcat_TFLM_SQ8_T *Arg);

/* ---- Permutations (CNN_SQ8_Copy.c) -------------------------------------------------------------
 * A 3D tensor In[D0][D1][D2] of Size-byte items (1, 2 or 4) to Out with its axes in the order
 * Perm: Out[d_Perm[0]][d_Perm[1]][d_Perm[2]] = In[d0][d1][d2], Perm encoded as
 * Perm[0] * 9 + Perm[1] * 3 + Perm[2]. The first output axis is split across the cores. */
typedef struct {
	void * __restrict__ In;
	void * __restrict__ Out;
	unsigned short int D0;
	unsigned short int D1;
	unsigned short int D2;
	unsigned short int Perm;
	unsigned short int Size;
} KerPermute_T;

void KerParPermute(KerPermute_T *Arg);

#endif /* __CNN_SQ8_TFLM_OPS_H__ */
