/*
 * SQ8 basic kernels, TFLM requantisation: fully connected, element-wise, matrix products.
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 *
 * Every kernel reads its zero points, clamp and per-tensor multipliers from the layer's Infos
 * vector (CNN_SQ8_Infos.h, autotiler/generators/sq8_infos.py): the generators' user kernels
 * carry one Infos constant per layer, as the original's SQ8 kernels do.
 */
#ifndef __CNN_SQ8_TFLM_DENSE_H__
#define __CNN_SQ8_TFLM_DENSE_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* ---- Fully connected (CNN_SQ8_Linear.c) --------------------------------------------------------
 * Out[c] = clamp(MBQM(Bias[c] + sum_i (In[i] - IN_ZP) * Filter[c*InDim + i], Scale[c], ScaleN[c])
 *                + OUT_ZP, ACT_MIN, ACT_MAX)
 * TFLM's FULLY_CONNECTED (sq8_tflm.fully_connected); a per-tensor layer repeats its one multiplier
 * and shift in every channel. Infos: IN_ZP, OUT_ZP, ACT_MIN, ACT_MAX. */
typedef struct {
	signed char * __restrict__ In;		/* InDim */
	signed char * __restrict__ Filter;	/* OutDim rows of InDim, symmetric (zero point 0) */
	int * __restrict__ Bias;		/* OutDim */
	signed char * __restrict__ Out;		/* OutDim */
	unsigned short int InDim;
	unsigned short int OutDim;
	int * __restrict__ Scale;		/* OutDim, Q31 multipliers in [2^30, 2^31) (or 0) */
	signed char * __restrict__ ScaleN;	/* OutDim, shifts: > 0 left, < 0 rounded right */
	signed char * __restrict__ Infos;
} KerLinear_TFLM_SQ8_T;

/* The output channels are split across the cores. */
void KerParLinear_TFLM_SQ8(KerLinear_TFLM_SQ8_T *Arg);

/* The input-tiled form, for layers whose filter rows do not fit L1: one output at a time, its
 * inputs in tiles. KerLinearDP_TFLM_SQ8 adds this tile's sum (In[i] - IN_ZP) * Filter[i] to one
 * int32 partial sum per core (Tile 0 starts them); KerLinearReduct_TFLM_SQ8 (one core) adds the
 * partial sums to the bias and requantises. */
typedef struct {
	signed char * __restrict__ In;		/* InSize inputs of this tile */
	signed char * __restrict__ Filter;	/* the matching InSize weights of the output's row */
	int * __restrict__ Reduct;		/* gap_ncore() partial sums */
	unsigned short int InSize;
	unsigned short int Tile;		/* the tile's index: 0 starts the sums */
	signed char * __restrict__ Infos;
} KerLinearDP_TFLM_SQ8_T;

typedef struct {
	int * __restrict__ Reduct;		/* gap_ncore() partial sums */
	int * __restrict__ Bias;		/* this output's bias */
	signed char * __restrict__ Out;		/* this output */
	int * __restrict__ Scale;		/* its multiplier */
	signed char * __restrict__ ScaleN;	/* its shift */
	signed char * __restrict__ Infos;
} KerLinearReduct_TFLM_SQ8_T;

void KerLinearDP_TFLM_SQ8(KerLinearDP_TFLM_SQ8_T *Arg);
void KerLinearReduct_TFLM_SQ8(KerLinearReduct_TFLM_SQ8_T *Arg);

/* ---- Element-wise ADD / SUB / MUL (CNN_SQ8_Eltwise.c) ------------------------------------------
 * TFLM's int8 ADD, SUB and MUL (sq8_tflm.add / sub / mul) on N items, both inputs of the output's
 * shape; the items are split across the cores.
 * ADD: Out = clamp(MBQM(s1 + s2, MULT, SHIFT) + OUT_ZP, ACT_MIN, ACT_MAX),
 *      s1 = MBQM((In1 - IN_ZP) 2^LEFT_SHIFT, MULT2, SHIFT2), s2 = MBQM((In2 - IN2_ZP) 2^LEFT_SHIFT, MULT3, SHIFT3);
 * SUB: the same with s1 - s2 (its own kernel: not ADD with a negated MULT3);
 * MUL: Out = clamp(MBQM((In1 - IN_ZP)(In2 - IN2_ZP), MULT, SHIFT) + OUT_ZP, ACT_MIN, ACT_MAX). */
typedef struct {
	signed char * __restrict__ In1;		/* N */
	signed char * __restrict__ In2;		/* N */
	signed char * __restrict__ Out;		/* N */
	unsigned int N;
	signed char * __restrict__ Infos;
} KerEltwise_TFLM_SQ8_T;

void KerParAdd_TFLM_SQ8(KerEltwise_TFLM_SQ8_T *Arg);
void KerParSub_TFLM_SQ8(KerEltwise_TFLM_SQ8_T *Arg);
void KerParMul_TFLM_SQ8(KerEltwise_TFLM_SQ8_T *Arg);

/* MUL broadcast over pixels (squeeze-and-excitation): In1 is NPix HWC pixels of Feat channels,
 * In2 one item per channel; Out[p][c] = MUL(In1[p][c], In2[c]). The pixels are split across the
 * cores. */
typedef struct {
	signed char * __restrict__ In1;		/* NPix x Feat */
	signed char * __restrict__ In2;		/* Feat */
	signed char * __restrict__ Out;		/* NPix x Feat */
	unsigned int NPix;
	unsigned short int Feat;
	signed char * __restrict__ Infos;
} KerTensorVectMul_TFLM_SQ8_T;

void KerParTensorVectMul_TFLM_SQ8(KerTensorVectMul_TFLM_SQ8_T *Arg);

/* ---- Matrix product (CNN_SQ8_MatMul.c) ----------------------------------------------------------
 * Out[l][j] = clamp(MBQM(Bias[l] + sum_k In1[l][k] (In2[k][j] - IN2_ZP), Scale[l], ScaleN[l]) + OUT_ZP,
 *                   ACT_MIN, ACT_MAX)
 * In1 [Lines][ColM1] (weights, symmetric), In2 [ColM1][W] (or, transposed, [W][ColM1]), Out
 * [Lines][W]: TFLM's FULLY_CONNECTED applied to every column of In2 (a 1x1 convolution). Bias may be
 * 0 (none); with Scale 0 every line takes Infos's MULT, SHIFT. The lines are split across the cores. */
typedef struct {
	signed char * __restrict__ In1;		/* Lines x ColM1 */
	signed char * __restrict__ In2;		/* ColM1 x W, or W x ColM1 when transposed */
	int * __restrict__ Bias;		/* Lines, or 0 */
	signed char * __restrict__ Out;		/* Lines x W */
	unsigned short int ColM1;
	unsigned short int Lines;
	unsigned short int W;			/* columns of In2 and Out in this tile */
	int * __restrict__ Scale;		/* Lines, or 0 (per tensor: Infos MULT) */
	signed char * __restrict__ ScaleN;	/* Lines, or 0 (per tensor: Infos SHIFT) */
	signed char * __restrict__ Infos;
} KerMatMul_TFLM_SQ8_T;

void KerParMatMul_TFLM_SQ8(KerMatMul_TFLM_SQ8_T *Arg);
void KerParMatMulTransposed_TFLM_SQ8(KerMatMul_TFLM_SQ8_T *Arg);

#endif /* __CNN_SQ8_TFLM_DENSE_H__ */
