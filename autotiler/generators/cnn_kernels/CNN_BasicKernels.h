/*
 * CNN basic kernels, 16-bit ("_fp") and 8-bit ("_fps") fixed point: the header a model's
 * generated code includes (SetUsedFilesNames(0, 1, "CNN_BasicKernels.h")).
 *
 * Kernel, struct and field names are those of GreenWaves' CNN library (gap_sdk
 * tools/autotiler_v3/CNN_Libraries/CNN_BasicKernels.h); the code is ours. Struct fields are in the
 * order of the original generator's LibKernelTemplate declarations, which is also the order of
 * LoadCNNLibrary()'s CArgs (autotiler/generators/cnn_library.py), so the original generators'
 * Bindings(...) lists apply unchanged. The exact arithmetic is in docs/cnn-fixed-point.md and
 * replicated in numpy by autotiler/generators/cnn_reference.py.
 *
 * Conventions: feature maps are CHW, W*H items per plane, planes packed one after another.
 * "KerPar..." kernels split features (or outputs) across the cores, "Ker..." (no Par) kernels
 * split one feature's lines (Orientation 0) or columns (Orientation 1).
 */
#ifndef __CNN_BASIC_KERNELS_H__
#define __CNN_BASIC_KERNELS_H__

#include "Gap.h"

/* The DP accumulator of the 8-bit kernels is 32-bit (the original's MAXDPPREC setting). */
#define DP_fps_T int

/* Activation operations of KerDPLinearLayerReduct_* (the original's numbering, then ours). */
typedef enum {
	KACT_NONE = 0,
	KACT_RELU,
	KACT_RELUN,
	KACT_HSIGMOID,
	KACT_SIGMOID,
	KACT_HSWISH,
	KACT_LEAKY,
	KACT_TANH,		/* not in the original's enum */
	KACT_SWISH		/* not in the original's enum */
} CNN_ActivationOper_T;

/* ---- Set bias --------------------------------------------------------------------------- */

typedef struct {
	signed char * __restrict__ Out;		/* OutFeatures planes of W x H */
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	signed char * __restrict__ Bias;	/* One per output feature */
	signed char NormBias;			/* Unused in single precision (bias already in Q o) */
} KerSetBias_fps_T;

typedef struct {
	short int * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	short int * __restrict__ Bias;
	signed char NormBias;			/* Unused in single precision */
} KerSetBias_fp_T;

typedef struct {
	int * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	short int * __restrict__ Bias;
	signed char NormBias;			/* DP: Bias << NormBias (>> -NormBias when negative) */
} KerSetBias_fpd_fp_T;

typedef struct {
	int * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	signed char * __restrict__ Bias;
	signed char NormBias;			/* DP: Bias << NormBias (>> -NormBias when negative) */
} KerSetBias_fpd_fps_T;

/* ---- Convolution ------------------------------------------------------------------------ */

/* Single precision, and depth wise (Bias used, TotalInFeatures is then the bias' NormBias) */
typedef struct {
	short int * __restrict__ In;		/* InFeatures planes of W x H, UsedW x UsedH read */
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int InFeatures;
	unsigned short int OutFeatures;
	short int * __restrict__ Filter;	/* (of, if) at Filter + (TotalInFeatures*of + if)*N*Ny */
	short int * __restrict__ Bias;		/* Depth wise only */
	short int * __restrict__ Out;		/* OutFeatures planes of Wo x Ho */
	unsigned char Norm;
	short int TotalInFeatures;
	v4s Pad;				/* Left, Right, Top, Bottom */
	unsigned char Orientation;		/* Line-parallel kernels: 1 split columns, 0 split lines */
	unsigned char N;			/* Filter width */
	unsigned char S;			/* Horizontal stride */
	unsigned char D;			/* Horizontal dilation */
	unsigned char Ny;			/* Filter height */
	unsigned char Sy;
	unsigned char Dy;
} KerConv_fp_T;
typedef KerConv_fp_T KerConvDW_fp_T;

typedef struct {
	signed char * __restrict__ In;
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int InFeatures;
	unsigned short int OutFeatures;
	signed char * __restrict__ Filter;
	signed char * __restrict__ Bias;
	signed char * __restrict__ Out;
	unsigned char Norm;
	short int TotalInFeatures;
	v4s Pad;
	unsigned char Orientation;
	unsigned char N;
	unsigned char S;
	unsigned char D;
	unsigned char Ny;
	unsigned char Sy;
	unsigned char Dy;
} KerConv_fps_T;
typedef KerConv_fps_T KerConvDW_fps_T;

/* Double precision: Out is the int32 accumulator (also taken by the DWDP kernels, whose Out the
 * original declares short int * and casts) */
typedef struct {
	short int * __restrict__ In;
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int InFeatures;
	unsigned short int OutFeatures;
	short int * __restrict__ Filter;
	short int * __restrict__ Bias;		/* Depth wise DP only */
	int * __restrict__ Out;
	unsigned char Norm;			/* Unused (the DP reduction normalises) */
	short int TotalInFeatures;
	v4s Pad;
	unsigned char Orientation;
	unsigned char N;
	unsigned char S;
	unsigned char D;
	unsigned char Ny;
	unsigned char Sy;
	unsigned char Dy;
} KerConv_DP_fp_T;

typedef struct {
	signed char * __restrict__ In;
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int InFeatures;
	unsigned short int OutFeatures;
	signed char * __restrict__ Filter;
	signed char * __restrict__ Bias;
	DP_fps_T * __restrict__ Out;
	unsigned char Norm;
	short int TotalInFeatures;
	v4s Pad;
	unsigned char Orientation;
	unsigned char N;
	unsigned char S;
	unsigned char D;
	unsigned char Ny;
	unsigned char Sy;
	unsigned char Dy;
} KerConv_DP_fps_T;

/* ---- DP -> SP reduction with activation ------------------------------------------------- */

typedef struct {
	int * __restrict__ In;			/* InFeatures planes of W x H int32 */
	unsigned short int W;
	unsigned short int H;
	short int * __restrict__ Out;		/* _IO kernels: Out == In, compacted in place */
	unsigned char Norm;			/* i+w-o (sigmoid, tanh: i+w-15) */
	signed char NormBias;			/* Unused */
	unsigned short int InFeatures;
	int LB;					/* NONE/RELU/RELUN bounds */
	int UB;					/* ... or o (hsigmoid, hswish, swish) */
	short int * __restrict__ MulBias;	/* Unused */
} KerDP_fp_T;

typedef struct {
	DP_fps_T * __restrict__ In;
	unsigned short int W;
	unsigned short int H;
	signed char * __restrict__ Out;
	unsigned char Norm;			/* i+w-o (sigmoid, tanh: i+w-7) */
	signed char NormBias;
	unsigned short int InFeatures;
	int LB;
	int UB;
	signed char * __restrict__ MulBias;
} KerDP_fps_T;

/* ---- Pooling / activation --------------------------------------------------------------- */

typedef struct {
	short int * __restrict__ In;
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int OutFeatures;
	short int * __restrict__ Out;
	v4s Pad;
	unsigned char M;			/* Window width */
	unsigned char S;
	unsigned char Orientation;
	unsigned char Oper;			/* Bit 0: clip to [LB, UB] (ReLU, ReLUN), bit 1: average */
	unsigned char D;
	unsigned char My;
	unsigned char Sy;
	unsigned char Dy;
	int LB;
	int UB;					/* Hswish/Hsigmoid/Leakyrelu kernels: o in UB */
} KerReLUPool_fp_T;

typedef struct {
	signed char * __restrict__ In;
	unsigned short int W;
	unsigned short int UsedW;
	unsigned short int H;
	unsigned short int UsedH;
	unsigned short int OutFeatures;
	signed char * __restrict__ Out;
	v4s Pad;
	unsigned char M;
	unsigned char S;
	unsigned char Orientation;
	unsigned char Oper;
	unsigned char D;
	unsigned char My;
	unsigned char Sy;
	unsigned char Dy;
	int LB;
	int UB;
} KerReLUPool_fps_T;

/* ---- Global pooling --------------------------------------------------------------------- */

typedef struct {
	short int * __restrict__ In;		/* OutFeatures planes of one tile of W x H */
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	unsigned short int TileIndex;		/* 0: the tile initialises Out */
	int * __restrict__ Out;			/* One int32 per feature: running max or sum */
} KerGlobalPoolDP_fp_T;

typedef struct {
	int * __restrict__ In;
	unsigned short int W;			/* Whole plane width */
	unsigned short int H;			/* Whole plane height */
	unsigned short int OutFeatures;
	unsigned char Norm;			/* Unused: the output keeps the input's Q */
	short int * __restrict__ Out;
} KerGlobalPoolDPReduct_fp_T;

typedef struct {
	short int * __restrict__ In;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	unsigned char Norm;			/* Unused */
	short int * __restrict__ Out;
} KerGlobalPool_fp_T;

typedef struct {
	signed char * __restrict__ In;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	unsigned short int TileIndex;
	int * __restrict__ Out;
} KerGlobalPoolDP_fps_T;

typedef struct {
	int * __restrict__ In;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	unsigned char Norm;
	signed char * __restrict__ Out;
} KerGlobalPoolDPReduct_fps_T;

typedef struct {
	signed char * __restrict__ In;
	unsigned short int W;
	unsigned short int H;
	unsigned short int OutFeatures;
	unsigned char Norm;
	signed char * __restrict__ Out;
} KerGlobalPool_fps_T;

/* ---- Linear layers ---------------------------------------------------------------------- */

#define CNN_LINEAR_STRUCT(Name, TIn, TFilter, TBias, TOut) \
typedef struct { \
	TIn * __restrict__ In;			/* InSize inputs */ \
	unsigned short int InSize; \
	unsigned short int TotalInSize;		/* Filter row stride */ \
	unsigned short int OutSize; \
	TFilter * __restrict__ Filter;		/* OutSize rows of TotalInSize */ \
	TBias * __restrict__ Bias; \
	TOut * __restrict__ Out; \
	unsigned char Norm;			/* i+w-o */ \
	signed char NormBias;			/* i+w-b */ \
	int LB;					/* ReLU kernels: bounds */ \
	int UB;					/* ... Hswish/Hsigmoid: o */ \
} Name;

CNN_LINEAR_STRUCT(KerLinearLayerReLU_fp_T, short int, short int, short int, short int)
CNN_LINEAR_STRUCT(KerLinearLayerReLU_fps_T, signed char, signed char, signed char, signed char)
CNN_LINEAR_STRUCT(KerLinearLayerReLU_fp_fps_fp_T, short int, signed char, short int, short int)
CNN_LINEAR_STRUCT(KerLinearLayerReLU_fps_fps_fp_T, signed char, signed char, short int, short int)
CNN_LINEAR_STRUCT(KerLinearLayerReLU_fps_fps_fpd_T, signed char, signed char, signed char, int)
CNN_LINEAR_STRUCT(KerLinearLayerReLU_fp_fp_fpd_T, short int, short int, short int, int)

typedef struct {
	short int * __restrict__ In;		/* This tile of the inputs */
	short int * __restrict__ Filter;	/* The same tile of the filter row */
	int * __restrict__ Out;			/* gap_ncore() partial sums, one per core */
	unsigned short int InSize;
	unsigned char Tile;			/* 0: first tile, the partial sums start at 0 */
} KerDPLinearLayer_fp_T;

typedef struct {
	short int * __restrict__ In;
	signed char * __restrict__ Filter;
	int * __restrict__ Out;
	unsigned short int InSize;
	unsigned char Tile;
} KerDPLinearLayer_fp_fps_T;

typedef struct {
	signed char * __restrict__ In;
	signed char * __restrict__ Filter;
	int * __restrict__ Out;
	unsigned short int InSize;
	unsigned char Tile;
} KerDPLinearLayer_fps_T;

typedef struct {
	int * __restrict__ In;			/* gap_ncore() partial sums */
	short int * __restrict__ Bias;		/* This output's bias */
	short int * __restrict__ Out;		/* This output */
	int LB;
	int UB;					/* ... or o (hsigmoid, hswish, swish) */
	signed char Norm;
	signed char NormBias;
	char Oper;				/* CNN_ActivationOper_T */
} KerDPLinearLayerReduct_fp_T;

typedef struct {
	int * __restrict__ In;
	signed char * __restrict__ Bias;
	signed char * __restrict__ Out;
	int LB;
	int UB;
	signed char Norm;
	signed char NormBias;
	char Oper;
} KerDPLinearLayerReduct_fps_T;

/* ---- Matrix algebra --------------------------------------------------------------------- */

typedef struct {
	short int * __restrict__ In1;
	short int * __restrict__ In2;
	short int * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int N;			/* Planes */
	int LB;					/* DynAdjust only */
	int UB;
	unsigned char In1_Q;			/* DynAdjust only */
	unsigned char In2_Q;
	unsigned char Out_Q;
} KerMat3_fp_T;

typedef struct {
	signed char * __restrict__ In1;
	signed char * __restrict__ In2;
	signed char * __restrict__ Out;
	unsigned short int W;
	unsigned short int H;
	unsigned short int N;
	int LB;
	int UB;
	unsigned char In1_Q;
	unsigned char In2_Q;
	unsigned char Out_Q;
} KerMat3_fps_T;

/* ---- Softmax ---------------------------------------------------------------------------- */

typedef struct {
	short int * __restrict__ In;
	unsigned short int N;
	unsigned short int Norm;		/* Q of In, 0..15 */
	short int * __restrict__ Out;		/* Q15 */
} KerSoftMax_fp_T;

typedef struct {
	signed char * __restrict__ In;
	unsigned short int N;
	unsigned short int Norm;
	short int * __restrict__ Out;		/* Q15 */
} KerSoftMax_fps_T;

/* ---- Kernels ---------------------------------------------------------------------------- */

/* Set bias */
void KerParSetBias_fp(KerSetBias_fp_T *Arg);
void KerParSetBias_fps(KerSetBias_fps_T *Arg);
void KerParSetBias_DP_fp(KerSetBias_fpd_fp_T *Arg);
void KerParSetBias_DP_fps(KerSetBias_fpd_fps_T *Arg);
void KerSetBias_fp(KerSetBias_fp_T *Arg);
void KerSetBias_fps(KerSetBias_fps_T *Arg);
void KerSetBias_DP_fp(KerSetBias_fpd_fp_T *Arg);
void KerSetBias_DP_fps(KerSetBias_fpd_fps_T *Arg);

/* Convolutions: for each family the generic kernel and the original's fixed-geometry names,
 * which are the generic kernel with N/Ny/S/Sy/D/Dy forced (bit-exact by construction). */
#define CNN_CONV_NAMES(Pre, Post, T) \
void Pre##1x1Stride1##Post(T *Arg); void Pre##1x1Stride2##Post(T *Arg); void Pre##1x1StrideS##Post(T *Arg); \
void Pre##3x1Stride1x1##Post(T *Arg); void Pre##3x1Stride2x1##Post(T *Arg); \
void Pre##1x3Stride1x1##Post(T *Arg); void Pre##1x3Stride1x2##Post(T *Arg); \
void Pre##3x3Stride1##Post(T *Arg); void Pre##3x3Stride2##Post(T *Arg); void Pre##3x3StrideS##Post(T *Arg); \
void Pre##5x1Stride1x1##Post(T *Arg); void Pre##5x1Stride2x1##Post(T *Arg); \
void Pre##1x5Stride1x1##Post(T *Arg); void Pre##1x5Stride1x2##Post(T *Arg); \
void Pre##5x5Stride1##Post(T *Arg); void Pre##5x5Stride2##Post(T *Arg); void Pre##5x5StrideS##Post(T *Arg); \
void Pre##7x7StrideS##Post(T *Arg); \
void Pre##NxNStrideS##Post(T *Arg); void Pre##NxMStrideSxSy##Post(T *Arg); void Pre##NxMDxDyStrideSxSy##Post(T *Arg);

CNN_CONV_NAMES(KerParConv, _fp, KerConv_fp_T)
CNN_CONV_NAMES(KerParConv, _fps, KerConv_fps_T)
CNN_CONV_NAMES(KerParConv, _DP_fp, KerConv_DP_fp_T)
CNN_CONV_NAMES(KerParConv, _DP_fps, KerConv_DP_fps_T)
CNN_CONV_NAMES(KerParConvDW, _fp, KerConv_fp_T)
CNN_CONV_NAMES(KerParConvDW, _fps, KerConv_fps_T)
CNN_CONV_NAMES(KerParConvDWDP, _fp, KerConv_DP_fp_T)
CNN_CONV_NAMES(KerParConvDWDP, _fps, KerConv_DP_fps_T)
CNN_CONV_NAMES(KerConv, _fp, KerConv_fp_T)
CNN_CONV_NAMES(KerConv, _fps, KerConv_fps_T)
CNN_CONV_NAMES(KerConv, _DP_fp, KerConv_DP_fp_T)
CNN_CONV_NAMES(KerConv, _DP_fps, KerConv_DP_fps_T)
CNN_CONV_NAMES(KerConvDW, _fp, KerConv_fp_T)
CNN_CONV_NAMES(KerConvDW, _fps, KerConv_fps_T)
CNN_CONV_NAMES(KerConvDWDP, _fp, KerConv_DP_fp_T)
CNN_CONV_NAMES(KerConvDWDP, _fps, KerConv_DP_fps_T)

/* DP -> SP reduction and activation (_IO: Out == In, the int32 buffer compacted in place) */
#define CNN_DP_NAMES(Act) \
void KerDP##Act##_fp(KerDP_fp_T *Arg); void KerDP_IO##Act##_fp(KerDP_fp_T *Arg); \
void KerDP##Act##_fps(KerDP_fps_T *Arg); void KerDP_IO##Act##_fps(KerDP_fps_T *Arg);
CNN_DP_NAMES()
CNN_DP_NAMES(_hsigmoid)
CNN_DP_NAMES(_hswish)
CNN_DP_NAMES(_leakyrelu)
CNN_DP_NAMES(_sigmoid)
CNN_DP_NAMES(_tanh)
CNN_DP_NAMES(_swish)

/* Activation alone (the original's CNN_PoolReLU with PoolOper KOP_NONE) */
void KerParReLU_fp(KerReLUPool_fp_T *Arg);
void KerParReLU_fps(KerReLUPool_fps_T *Arg);
void KerReLU_fp(KerReLUPool_fp_T *Arg);
void KerReLU_fps(KerReLUPool_fps_T *Arg);
void KerParHswish_fp(KerReLUPool_fp_T *Arg);
void KerParHswish_fps(KerReLUPool_fps_T *Arg);
void KerParHsigmoid_fp(KerReLUPool_fp_T *Arg);
void KerParHsigmoid_fps(KerReLUPool_fps_T *Arg);
void KerParLeakyrelu_fp(KerReLUPool_fp_T *Arg);
void KerParLeakyrelu_fps(KerReLUPool_fps_T *Arg);

/* Pooling (max or average) with optional ReLU/ReLUN */
void KerParPool2x2Stride2_fp(KerReLUPool_fp_T *Arg);
void KerParPoolNxNStrideS_fp(KerReLUPool_fp_T *Arg);
void KerParPoolNxMStrideSxSy_fp(KerReLUPool_fp_T *Arg);
void KerParPool2x2Stride2_fps(KerReLUPool_fps_T *Arg);
void KerParPoolNxNStrideS_fps(KerReLUPool_fps_T *Arg);
void KerParPoolNxMStrideSxSy_fps(KerReLUPool_fps_T *Arg);
void KerPool2x2Stride2_fp(KerReLUPool_fp_T *Arg);
void KerPoolNxNStrideS_fp(KerReLUPool_fp_T *Arg);
void KerPoolNxMStrideSxSy_fp(KerReLUPool_fp_T *Arg);
void KerPool2x2Stride2_fps(KerReLUPool_fps_T *Arg);
void KerPoolNxNStrideS_fps(KerReLUPool_fps_T *Arg);
void KerPoolNxMStrideSxSy_fps(KerReLUPool_fps_T *Arg);

/* Global pooling */
void KerParGlobalMaxPoolDP_fp(KerGlobalPoolDP_fp_T *Arg);
void KerParGlobalAvgPoolDP_fp(KerGlobalPoolDP_fp_T *Arg);
void KerParGlobalMaxPoolDPReduct_fp(KerGlobalPoolDPReduct_fp_T *Arg);
void KerParGlobalAvgPoolDPReduct_fp(KerGlobalPoolDPReduct_fp_T *Arg);
void KerParGlobalMaxPoolFullFeat_fp(KerGlobalPool_fp_T *Arg);
void KerParGlobalAvgPoolFullFeat_fp(KerGlobalPool_fp_T *Arg);
void KerParGlobalMaxPoolDP_fps(KerGlobalPoolDP_fps_T *Arg);
void KerParGlobalAvgPoolDP_fps(KerGlobalPoolDP_fps_T *Arg);
void KerParGlobalMaxPoolDPReduct_fps(KerGlobalPoolDPReduct_fps_T *Arg);
void KerParGlobalAvgPoolDPReduct_fps(KerGlobalPoolDPReduct_fps_T *Arg);
void KerParGlobalMaxPoolFullFeat_fps(KerGlobalPool_fps_T *Arg);
void KerParGlobalAvgPoolFullFeat_fps(KerGlobalPool_fps_T *Arg);

/* Linear layers: outputs split across the cores */
void KerParLinearLayerReLU_fp(KerLinearLayerReLU_fp_T *Arg);
void KerParLinearLayerHswish_fp(KerLinearLayerReLU_fp_T *Arg);
void KerParLinearLayerHsigmoid_fp(KerLinearLayerReLU_fp_T *Arg);
void KerParLinearLayerReLU_fps(KerLinearLayerReLU_fps_T *Arg);
void KerParLinearLayerHswish_fps(KerLinearLayerReLU_fps_T *Arg);
void KerParLinearLayerHsigmoid_fps(KerLinearLayerReLU_fps_T *Arg);
void KerParLinearLayerReLU_fp_fps_fp(KerLinearLayerReLU_fp_fps_fp_T *Arg);
void KerParLinearLayerReLU_fps_fps_fp(KerLinearLayerReLU_fps_fps_fp_T *Arg);
void KerParLinearLayerReLU_fps_fps_fpd(KerLinearLayerReLU_fps_fps_fpd_T *Arg);
void KerParLinearLayerReLU_fp_fp_fpd(KerLinearLayerReLU_fp_fp_fpd_T *Arg);
/* Linear layers: one output, its inputs split across the cores (tiled input) */
void KerDPLinearLayer_fp(KerDPLinearLayer_fp_T *Arg);
void KerDPLinearLayer_fp_fps(KerDPLinearLayer_fp_fps_T *Arg);
void KerDPLinearLayer_fps(KerDPLinearLayer_fps_T *Arg);
void KerDPLinearLayerReduct_fp(KerDPLinearLayerReduct_fp_T *Arg);
void KerDPLinearLayerReduct_fps(KerDPLinearLayerReduct_fps_T *Arg);

/* Matrix addition */
void KerParMatAdd_fp(KerMat3_fp_T *Arg);
void KerParMatAdd_fps(KerMat3_fps_T *Arg);
void KerParMatAddReLU_fp(KerMat3_fp_T *Arg);
void KerParMatAddReLU_fps(KerMat3_fps_T *Arg);
void KerParMatAddDynAdjust_fp(KerMat3_fp_T *Arg);
void KerParMatAddDynAdjust_fps(KerMat3_fps_T *Arg);

/* Softmax, Q15 output */
void KerParSoftMax_fp(KerSoftMax_fp_T *Arg);
void KerParSoftMax_fps(KerSoftMax_fps_T *Arg);

#endif /* __CNN_BASIC_KERNELS_H__ */
