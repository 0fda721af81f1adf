/*
 * Basic kernels of the CNN convolution layer in the form of the SDK's CNN_ConvolutionPoolReLU
 * (16-bit fixed point, "double precision": the convolution accumulates in 32 bits and a final
 * reduction normalises, clamps and narrows to 16 bits).
 *
 * The argument structs carry the fields the original generator binds, with the original's
 * names; the LibKernel declarations of model.py list them in this order:
 *   LibKernel("KerParSetBias_DP_fp", CALL_PARALLEL, CArgs(6, ...), "KerSetBias_fpd_fp_T")
 *   LibKernel("ConvV3_KerParConvNxMStrideSxSy_DP_fp", CALL_PARALLEL, CArgs(20, ...), "ConvV3_KerConv_DP_fp_T")
 *   LibKernel("ConvV3_KerDP_fp", CALL_PARALLEL, CArgs(10, ...), "ConvV3_KerDP_fp_T")
 *
 * KerParSetBias_DP_fp is the CNN library's (autotiler/generators/cnn_kernels/
 * CNN_BiasReLULinear_BasicKernels.c, compiled with this example: reference.py's SOURCES), with
 * its struct's layout. The other two are this example's own: the library has kernels of the
 * original's names KerParConvNxMStrideSxSy_DP_fp and KerDP_fp that compute the same results
 * another way (a bounds test per tap, the activation switch on 64 bits), so these carry the
 * prefix ConvV3_: one name, one implementation (the cost model measures each by its name).
 *
 * Layout of a tile in L1 (what the user kernel hands over): several feature planes of the same
 * tile are packed one after the other, a plane being the tile's W x H items, row-major.
 */
#ifndef CONV_V3_BASIC_KERNELS_H
#define CONV_V3_BASIC_KERNELS_H

#include "Gap.h"

/* KerParSetBias_DP_fp: the CNN library's struct (CNN_BasicKernels.h), field for field */
typedef struct {
	int * __restrict__ Out;			/* OutFeatures planes of W x H int32 accumulators */
	unsigned short int W;			/* Plane width */
	unsigned short int H;			/* Plane height */
	unsigned short int OutFeatures;		/* Planes (output features of this chunk) */
	short int * __restrict__ Bias;		/* One bias per output feature */
	signed char NormBias;			/* Bias is in Q(In_Q+Filter_Q-NormBias): shift left by NormBias */
} KerSetBias_fpd_fp_T;

/* ConvV3_KerParConvNxMStrideSxSy_DP_fp */
typedef struct {
	short int * __restrict__ In;		/* InFeatures planes of W x H (only UsedW x UsedH are read) */
	unsigned short int W;			/* Input plane width in L1 (line stride) */
	unsigned short int UsedW;		/* Input columns the convolution reads */
	unsigned short int H;			/* Input plane height in L1 */
	unsigned short int UsedH;		/* Input lines the convolution reads */
	unsigned short int InFeatures;		/* Input features of this chunk */
	unsigned short int OutFeatures;		/* Output features of this chunk */
	short int TotalInFeatures;		/* Filters per output feature in L1 (the filter row stride) */
	short int * __restrict__ Filter;	/* Filter of (of, if) at Filter + (TotalInFeatures*of + if)*N*Ny */
	short int * __restrict__ Bias;		/* Unused here (depthwise form only) */
	int * __restrict__ Out;			/* OutFeatures planes of Wo x Ho int32, accumulated into */
	v4s Pad;				/* Zero padding of this tile: left, right, top, bottom */
	unsigned char Norm;			/* Unused here (the DP reduction normalises) */
	unsigned char N;			/* Filter width (Fcx) */
	unsigned char S;			/* Horizontal stride (Scx) */
	unsigned char Orientation;		/* 1: horizontal tiles (unused) */
	unsigned char D;			/* Horizontal dilation: unused, always 1 */
	unsigned char Ny;			/* Filter height (Fcy) */
	unsigned char Sy;			/* Vertical stride (Scy) */
	unsigned char Dy;			/* Vertical dilation: unused, always 1 */
} ConvV3_KerConv_DP_fp_T;

/* ConvV3_KerDP_fp */
typedef struct {
	int * __restrict__ In;			/* InFeatures planes of W x H int32 accumulators */
	unsigned short int W;			/* Plane width */
	unsigned short int H;			/* Plane height */
	short int * __restrict__ Out;		/* InFeatures planes of W x H int16 results */
	unsigned char Norm;			/* Right shift, rounded (see ConvV3_KerDP_fp) */
	signed char NormBias;			/* Unused here */
	unsigned short int InFeatures;		/* Planes */
	int LB;					/* Lower bound of the result (0 with ReLU) */
	int UB;					/* Upper bound of the result */
	short int * __restrict__ MulBias;	/* Unused here */
} ConvV3_KerDP_fp_T;

/* Out[f][i] = Bias[f] << NormBias for the OutFeatures planes (32-bit, wrapping; a negative
 * NormBias shifts right). Parallel: the cores split the output features. The CNN library's. */
void KerParSetBias_DP_fp(KerSetBias_fpd_fp_T *Arg);

/* Out[of] += sum over if < InFeatures of the N x Ny convolution, strides S x Sy, of In[if] zero
 * padded by Pad with the filter of (of, if):
 *   Wo = (UsedW - N + Pad[0] + Pad[1]) / S + 1,  Ho = (UsedH - Ny + Pad[2] + Pad[3]) / Sy + 1,
 *   Out[of][y][x] += sum_{i<Ny, j<N} In[if][y*Sy - Pad[2] + i][x*S - Pad[0] + j] * F[of][if][i][j]
 * (taps outside [0, UsedH) x [0, UsedW) count as zero). 32-bit accumulation, wrapping modulo
 * 2^32, no shift, no saturation. Parallel: the cores split the output features. */
void ConvV3_KerParConvNxMStrideSxSy_DP_fp(ConvV3_KerConv_DP_fp_T *Arg);

/* Out[i] = min(max(gap_roundnorm(In[i], Norm), LB), UB) over the W*H*InFeatures items, where
 * gap_roundnorm(x, n) = (x + 2^(n-1)) >> n computed on 32 bits (the addition wraps, the shift is
 * arithmetic; n = 0 leaves x unchanged): round half up. Parallel: the cores split the items. */
void ConvV3_KerDP_fp(ConvV3_KerDP_fp_T *Arg);

#endif /* CONV_V3_BASIC_KERNELS_H */
