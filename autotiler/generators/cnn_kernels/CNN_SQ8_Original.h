/*
 * SQ8 basic kernels, the original's 1-byte requantisation (Scale_DataSize 1, CHW feature maps):
 * unsigned char Scale[c] and ScaleN[c] per output channel, the byte Infos vector (AT_INF_* in
 * CNN_SQ8_Infos.h), AT_SCALE / AT_NORM = at_sq8_scale / at_sq8_norm (CNN_SQ8_Requant.h).
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8-original.md, numpy twin
 * autotiler/generators/sq8_original.py. Names and struct fields are the original's where known;
 * one generic NxM kernel stands for the original's fixed geometries. The code is ours.
 */
#ifndef __CNN_SQ8_ORIGINAL_H__
#define __CNN_SQ8_ORIGINAL_H__

#include <string.h>
#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* The activations of ACT_SWITCH (CNN_BasicKernels_SQ8.h), in the original's order. */
typedef enum {
	ACT_NONE = 0, ACT_RELU, ACT_RELUN, ACT_HSIGMOID, ACT_HTANH, ACT_HSWISH, ACT_LEAKYRELU, ACT_SIGMOID, ACT_TANH,
	ACT_RELUM, ACT_RELUMN
} CNN_SQ8_ActivationOper_T;

/* The activation words of Infos as a kernel reads them: A0/B0/C0 are one byte each, read
 * unsigned (reductions, standalone activations) or signed (pooling, FullFeat linear, MatMul,
 * MatAdd, tensor x vector) as the original's kernels read them. */
typedef struct {
	int ActScale, ActScaleN, A0, B0, C0;
} at_sq8_act_T;

static inline at_sq8_act_T at_sq8_act_params(const signed char *Infos, int Signed)
{
	const unsigned char *U = (const unsigned char *) Infos;
	at_sq8_act_T P;

	P.ActScale = U[AT_INF_ACTSCALE];
	P.ActScaleN = U[AT_INF_ACTSCALEN];
	P.A0 = Signed ? Infos[AT_INF_A0] : U[AT_INF_A0];	/* the first of the field's two bytes */
	P.B0 = Signed ? Infos[AT_INF_B0] : U[AT_INF_B0];
	P.C0 = Signed ? Infos[AT_INF_C0] : U[AT_INF_C0];
	return P;
}

/* AT_CLIP_POS(x, n) = gap_clipur(x, n): Max(0, Min(x, n)) for n >= 0. */
static inline int at_sq8_clip_pos(int x, int n)
{
	return gap_clipur(x, n);
}

/* A 32-bit product that wraps as the chip's does (C's signed overflow is undefined). */
static inline int at_sq8_mul(int a, int b)
{
	return (int) ((unsigned int) a * (unsigned int) b);
}

static inline int at_sq8_add(int a, int b)
{
	return (int) ((unsigned int) a + (unsigned int) b);
}

/* Four int8 as one vector from any address (memcpy: a v4s access off a 4-byte boundary is
 * undefined in C; the chip loads unaligned words). */
static inline v4s at_sq8_orig_load4(const signed char *p)
{
	v4s v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Acc + sum x[i] * w[i], i < n: four products per gap_sumdotp4, the tail one by one (wrapping). */
static inline int at_sq8_orig_dot(const signed char *x, const signed char *w, int n, int Acc)
{
	int i;

	for (i = 0; i + 4 <= n; i += 4)
		Acc = gap_sumdotp4(at_sq8_orig_load4(x + i), at_sq8_orig_load4(w + i), Acc);
	for (; i < n; i++)
		Acc = at_sq8_add(Acc, x[i] * w[i]);
	return Acc;
}

/* Bias[c] of a 1, 2 or 4-byte bias vector. */
static inline int at_sq8_bias(const void *Bias, int Size, int c)
{
	if (Size == 1) return ((const signed char *) Bias)[c];
	if (Size == 2) return ((const short int *) Bias)[c];
	return ((const int *) Bias)[c];
}

static inline int at_sq8_lshift(int x, int n)
{
	return (int) ((unsigned int) x << n);
}

/* ACT_SWITCH on an already channel-scaled value (unclipped): S(v) = AT_SCALE(v, ActScale,
 * ActScaleN). Sigmoid / tanh are refused by the generators (their table is not known). */
static inline int at_sq8_act_switch(int Acc, int Oper, const at_sq8_act_T *P)
{
	int S = P->ActScale, N = P->ActScaleN;

	switch (Oper) {
	case ACT_RELU: return at_sq8_scale(gap_max(0, Acc), S, N);
	case ACT_RELUN: return at_sq8_scale(at_sq8_clip_pos(Acc, P->A0), S, N);
	case ACT_RELUM: return at_sq8_scale(gap_max(P->A0, Acc), S, N);
	case ACT_RELUMN: return at_sq8_scale(gap_max(P->A0, gap_min(Acc, P->B0)), S, N);
	case ACT_HSIGMOID:
		return at_sq8_add(at_sq8_scale(at_sq8_clip_pos(at_sq8_add(Acc, P->B0), P->A0), S, N), P->C0);
	case ACT_HSWISH:
		return at_sq8_add(at_sq8_scale(at_sq8_mul(at_sq8_clip_pos(at_sq8_add(Acc, P->B0), P->A0), Acc), S, N),
				  P->C0);
	case ACT_LEAKYRELU:
		return at_sq8_add(at_sq8_scale((Acc < 0) ? at_sq8_norm(at_sq8_mul(Acc, P->A0), 7) : Acc, S, N), P->B0);
	default: return Acc;	/* ACT_NONE, ACT_HTANH: unchanged */
	}
}

/* One int32 accumulator of a convolution (or tiled linear layer) to int8, KerParReduct_CC's way:
 * PRENORM, the channel scale, the activation, the clip. */
static inline int at_sq8_reduct1(int Acc, int Scale, int ScaleN, int Prenorm, int Oper, const at_sq8_act_T *P)
{
	return gap_clip(at_sq8_act_switch(at_sq8_scale(at_sq8_norm(Acc, Prenorm), Scale, ScaleN), Oper, P), 7);
}

/* The older activation form of the pooling and MatAdd kernels: C0 multiplies, ActScale always
 * applies (the caller tests ActScale != 0). */
static inline int at_sq8_act_c0_mul(int Acc, int Oper, const at_sq8_act_T *P)
{
	int S = P->ActScale, N = P->ActScaleN;

	switch (Oper) {
	case ACT_RELU: return at_sq8_scale(gap_max(0, Acc), S, N);
	case ACT_RELUN: return at_sq8_scale(gap_min(P->A0, gap_max(0, Acc)), S, N);
	case ACT_HSIGMOID:
		return at_sq8_scale(at_sq8_mul(at_sq8_clip_pos(at_sq8_add(Acc, P->B0), P->A0), P->C0), S, N);
	case ACT_HSWISH:
		return at_sq8_scale(at_sq8_mul(at_sq8_mul(at_sq8_clip_pos(at_sq8_add(Acc, P->B0), P->A0), P->C0), Acc),
				    S, N);
	case ACT_LEAKYRELU: return at_sq8_scale((Acc < 0) ? at_sq8_norm(at_sq8_mul(Acc, P->A0), 7) : Acc, S, N);
	default: return at_sq8_scale(Acc, S, N);
	}
}

/* ---- Bias, convolution, reduction ------------------------------------------------------ */

typedef struct {
	int * __restrict__ Out;			/* Feat planes of W x H int32 accumulators */
	unsigned short int W;
	unsigned short int H;
	unsigned short int Feat;
	void * __restrict__ Bias;		/* Feat items of 1, 2 or 4 bytes (B8, B16, B32) */
	signed char * __restrict__ Infos;	/* NormBias = Infos[AT_INF_BIASN] */
} KerSetBias_SQ8_T;

typedef struct {
	signed char * __restrict__ In;		/* InFeatures planes of W x H, UsedW x UsedH read */
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int InFeatures;
	unsigned short int OutFeatures;
	unsigned short int TotalInFeatures;	/* filter (of, if) at Filter + (TotalInFeatures*of + if)*N*Ny */
	signed char * __restrict__ Filter;
	void * __restrict__ Bias;		/* depth wise only: Bias << NormBias starts the sum */
	int * __restrict__ Out;			/* OutFeatures planes of Wo x Ho int32 */
	v4s Pad;				/* Left, Right, Top, Bottom */
	signed char * __restrict__ Infos;	/* depth wise only: NormBias = Infos[AT_INF_BIASN] */
	unsigned char Orientation;
	unsigned char N;			/* filter width, stride, dilation */
	unsigned char S;
	unsigned char D;
	unsigned char Ny;			/* filter height, stride, dilation */
	unsigned char Sy;
	unsigned char Dy;
} KerConv_SQ8_T;

typedef struct {
	int * __restrict__ In;			/* Feat planes of W x H int32 accumulators */
	signed char * __restrict__ Out;		/* Feat planes of W x H int8 (the IO form: In itself) */
	unsigned short int Feat;
	unsigned short int W;
	unsigned short int H;
	unsigned char * __restrict__ Scale;	/* per channel */
	signed char * __restrict__ ScaleN;	/* shifts, read as unsigned char */
	signed char * __restrict__ Infos;
} KerConvLinReduct_SQ8_T;

/* ---- Pooling, activations -------------------------------------------------------------- */

typedef struct {
	signed char * __restrict__ In;		/* Feat planes of W x H, UsedW x UsedH read */
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int Feat;
	signed char * __restrict__ Out;		/* Feat planes of Wo x Ho */
	v4s Pad;
	unsigned char FS;			/* window width, height, strides */
	unsigned char FSy;
	unsigned char S;
	unsigned char Sy;
	unsigned char DoScale;			/* scale by ActScale without an activation (ActOper KOP_NONE) */
	signed char * __restrict__ Infos;
} KerPool_SQ8_T;

typedef struct {
	signed char * __restrict__ In;
	signed char * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int Feat;
	signed char * __restrict__ Infos;
} KerActivation_SQ8_T;

/* ---- Linear, matrix product ----------------------------------------------------------- */

typedef struct {
	signed char * __restrict__ In;		/* InDim inputs, whole */
	signed char * __restrict__ Weights;	/* OutDim rows of InDim */
	void * __restrict__ Bias;		/* OutDim items of 1, 2 or 4 bytes */
	signed char * __restrict__ Out;
	unsigned short int InDim;
	unsigned short int OutDim;		/* outputs of this chunk */
	unsigned char * __restrict__ Scale;
	signed char * __restrict__ ScaleN;	/* read as unsigned char */
	signed char * __restrict__ Infos;
} KerLinear_SQ8_T;

typedef struct {
	signed char * __restrict__ In;		/* a tile of N inputs */
	signed char * __restrict__ Weights;	/* the matching part of one weight row */
	int * __restrict__ Reduct;		/* one partial sum per core */
	unsigned short int N;
	unsigned short int Tile;		/* the tile's index: 0 starts the sums */
} KerLinearTile_SQ8_T;

typedef struct {
	int * __restrict__ Reduct;		/* the cores' partial sums of one output */
	void * __restrict__ Bias;		/* its bias (1, 2 or 4 bytes) */
	signed char * __restrict__ Out;
	unsigned char * __restrict__ Scale;
	signed char * __restrict__ ScaleN;
	signed char * __restrict__ Infos;
} KerLinearReduct_SQ8_T;

typedef struct {
	signed char * __restrict__ In1;		/* [H_In1][W_In1]: a band of lines */
	unsigned short int W_In1;
	unsigned short int H_In1;
	signed char * __restrict__ In2;		/* [W_In1][W_In2]: a band of columns */
	unsigned short int W_In2;
	void * __restrict__ Bias;		/* H_In1 items (1, 2 or 4 bytes), or none (NoBias) */
	unsigned char * __restrict__ Scale;	/* H_In1, per line of In1 */
	signed char * __restrict__ ScaleN;
	signed char * __restrict__ Out;		/* [H_In1][W_Out]: full lines */
	unsigned short int W_Out;
	unsigned short int OutFirstCol;		/* the column of Out where In2's band starts */
	signed char * __restrict__ Infos;
} KerMatMul_SQ8_T;

/* ---- Element-wise, tensor x vector, global pooling ------------------------------------- */

typedef struct {
	signed char * __restrict__ In1;		/* Feat planes of W x H */
	signed char * __restrict__ In2;		/* MatAdd: Feat planes; MatVectMul: Feat items */
	signed char * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int Feat;
	signed char * __restrict__ Infos;
} KerMat3_SQ8_T;

typedef struct {
	signed char * __restrict__ In;		/* Feat planes of W x H, whole */
	unsigned short int W;
	unsigned short int H;
	unsigned short int Feat;
	signed char * __restrict__ Out;		/* Feat items */
	unsigned char DoScale;			/* max pool: scale by ActScale (ActOper KOP_NONE) */
	signed char * __restrict__ Infos;
} KerGlobalPool_SQ8_T;

typedef struct {
	signed char * __restrict__ In;		/* Feat planes of a W x H tile */
	unsigned short int W;
	unsigned short int H;
	unsigned short int Feat;
	int * __restrict__ Acc;			/* one int32 per feature: sum or maximum so far */
	unsigned short int Tile;		/* the tile's index: 0 starts the accumulators */
} KerGlobalPoolTile_SQ8_T;

typedef struct {
	int * __restrict__ Acc;
	unsigned short int Feat;
	unsigned int Size;			/* W x H of the whole plane */
	signed char * __restrict__ Out;
	unsigned char DoScale;
	signed char * __restrict__ Infos;
} KerGlobalPoolReduct_SQ8_T;

typedef struct {
	signed char * __restrict__ In;		/* N inputs */
	unsigned short int N;
	short int * __restrict__ Out;		/* N probabilities in Q15 */
	signed char * __restrict__ Infos;	/* Infos[AT_INF_BIASL_SM]: left shift of In - max to Q15 */
} KerSoftMax_SQ8_T;

#define AT_SQ8_ORIG_ACTS(M) M(ActNone) M(ReLU) M(ReLUN) M(ReLUM) M(ReLUMN) M(HSigmoid) M(HSwish) M(LeakyReLU)
#define AT_SQ8_ORIG_POOL_ACTS(M, K) M(K, ActNone) M(K, ReLU) M(K, ReLUN)

void KerParSetBiasB8_SQ8(KerSetBias_SQ8_T *Arg);
void KerParSetBiasB16_SQ8(KerSetBias_SQ8_T *Arg);
void KerParSetBiasB32_SQ8(KerSetBias_SQ8_T *Arg);
void KerParConvNxMDxDyStrideSxSy_SQ8(KerConv_SQ8_T *Arg);
void KerParConvDWNxMDxDyStrideSxSyB8_SQ8(KerConv_SQ8_T *Arg);
void KerParConvDWNxMDxDyStrideSxSyB16_SQ8(KerConv_SQ8_T *Arg);
void KerParConvDWNxMDxDyStrideSxSyB32_SQ8(KerConv_SQ8_T *Arg);
void KerParReductIO_CC_SQ8(KerConvLinReduct_SQ8_T *Arg);
#define AT_SQ8_DECL_REDUCT(Act) void KerParReduct_CC_##Act##_SQ8(KerConvLinReduct_SQ8_T *Arg);
AT_SQ8_ORIG_ACTS(AT_SQ8_DECL_REDUCT)
#define AT_SQ8_DECL_ACT(Act) void Ker_##Act##_SQ8(KerActivation_SQ8_T *Arg);
AT_SQ8_ORIG_ACTS(AT_SQ8_DECL_ACT)
#define AT_SQ8_DECL_POOL(Kind, Act) void KerPar##Kind##PoolNxMStrideSxSy_##Act##_SQ8(KerPool_SQ8_T *Arg);
AT_SQ8_ORIG_POOL_ACTS(AT_SQ8_DECL_POOL, Max)
AT_SQ8_ORIG_POOL_ACTS(AT_SQ8_DECL_POOL, Avg)

#define AT_SQ8_DECL_LINEAR(Act) \
	void KerParLinearLayerFullFeatB8_##Act##_SQ8(KerLinear_SQ8_T *Arg); \
	void KerParLinearLayerFullFeatB16_##Act##_SQ8(KerLinear_SQ8_T *Arg); \
	void KerParLinearLayerFullFeatB32_##Act##_SQ8(KerLinear_SQ8_T *Arg); \
	void KerParMatMulB8_##Act##_SQ8(KerMatMul_SQ8_T *Arg); \
	void KerParMatMulB16_##Act##_SQ8(KerMatMul_SQ8_T *Arg); \
	void KerParMatMulB32_##Act##_SQ8(KerMatMul_SQ8_T *Arg); \
	void KerParMatMulNoBias_##Act##_SQ8(KerMatMul_SQ8_T *Arg); \
	void KerParMatVectMul_##Act##_SQ8(KerMat3_SQ8_T *Arg); \
	void KerLinearReductB8_##Act##_SQ8(KerLinearReduct_SQ8_T *Arg); \
	void KerLinearReductB16_##Act##_SQ8(KerLinearReduct_SQ8_T *Arg); \
	void KerLinearReductB32_##Act##_SQ8(KerLinearReduct_SQ8_T *Arg);
AT_SQ8_ORIG_ACTS(AT_SQ8_DECL_LINEAR)
void KerParLinearLayerTile_SQ8(KerLinearTile_SQ8_T *Arg);
void KerParMatAdd_ActNone_SQ8(KerMat3_SQ8_T *Arg);
void KerParMatAdd_ReLU_SQ8(KerMat3_SQ8_T *Arg);
void KerParMatAdd_ReLUN_SQ8(KerMat3_SQ8_T *Arg);
void KerParMatAdd_HSigmoid_SQ8(KerMat3_SQ8_T *Arg);
void KerParMatAdd_HSwish_SQ8(KerMat3_SQ8_T *Arg);
void KerParMatAdd_LeakyReLU_SQ8(KerMat3_SQ8_T *Arg);
void KerParGlobalMaxPoolFullFeat_SQ8(KerGlobalPool_SQ8_T *Arg);
void KerParSoftMax_SQ8(KerSoftMax_SQ8_T *Arg);
void KerParGlobalMaxPool_SQ8(KerGlobalPoolTile_SQ8_T *Arg);
void KerParGlobalAvgPool_SQ8(KerGlobalPoolTile_SQ8_T *Arg);
void KerParGlobalMaxPoolReduct_SQ8(KerGlobalPoolReduct_SQ8_T *Arg);
void KerParGlobalAvgPoolReduct_SQ8(KerGlobalPoolReduct_SQ8_T *Arg);
void KerParGlobalAvgPoolFullFeat_SQ8(KerGlobalPool_SQ8_T *Arg);

#endif /* __CNN_SQ8_ORIGINAL_H__ */
