/*
 * Set bias, DP -> SP reduction with activation, activation alone, linear layers.
 * Semantics: CNN_BasicKernels.h, CNN_Activation.h and docs/cnn-fixed-point.md.
 */
#include "Gap.h"
#include "CNN_BasicKernels.h"
#include "CNN_Activation.h"

/* ---- Set bias ------------------------------------------------------------------------------
 * Single precision: the bias is copied (it is already in Q o); DP: shifted by NormBias into the
 * accumulator's Q i+w. Par: features split across cores; no Par: one feature, items split. */

#define SET_BIAS_PAR(Name, T, TOut, DP) \
void Name(T *Arg) \
{ \
	int Size = Arg->W * Arg->H, First, Last, f, i; \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (f = First; f < Last; f++) { \
		TOut B = (TOut) ((DP) ? CNN_LShift(Arg->Bias[f], Arg->NormBias) : Arg->Bias[f]); \
		TOut * __restrict__ O = Arg->Out + Size * f; \
		for (i = 0; i < Size; i++) O[i] = B; \
	} \
	gap_waitbarrier(0); \
}

#define SET_BIAS_ONE(Name, T, TOut, DP) \
void Name(T *Arg) \
{ \
	int First, Last, i; \
	TOut B = (TOut) ((DP) ? CNN_LShift(Arg->Bias[0], Arg->NormBias) : Arg->Bias[0]); \
	CNN_Chunk(Arg->W * Arg->H, &First, &Last); \
	for (i = First; i < Last; i++) Arg->Out[i] = B; \
	gap_waitbarrier(0); \
}

SET_BIAS_PAR(KerParSetBias_fp, KerSetBias_fp_T, short int, 0)
SET_BIAS_PAR(KerParSetBias_fps, KerSetBias_fps_T, signed char, 0)
SET_BIAS_PAR(KerParSetBias_DP_fp, KerSetBias_fpd_fp_T, int, 1)
SET_BIAS_PAR(KerParSetBias_DP_fps, KerSetBias_fpd_fps_T, int, 1)
SET_BIAS_ONE(KerSetBias_fp, KerSetBias_fp_T, short int, 0)
SET_BIAS_ONE(KerSetBias_fps, KerSetBias_fps_T, signed char, 0)
SET_BIAS_ONE(KerSetBias_DP_fp, KerSetBias_fpd_fp_T, int, 1)
SET_BIAS_ONE(KerSetBias_DP_fps, KerSetBias_fpd_fps_T, int, 1)

/* ---- DP -> SP reduction ------------------------------------------------------------------- */

/* Items [First, Last) of In (int32) activated into Out (Bits 15: short, 7: signed char). */
static void ReductRange(const int *In, void *Out, int First, int Last, int Norm, int Oper, int LB, int UB,
			int Bits)
{
	int i;

	if (Bits == 15) {
		short int *O = (short int *) Out;
		for (i = First; i < Last; i++) O[i] = (short int) CNN_Activation(In[i], Norm, Oper, LB, UB, Bits);
	} else {
		signed char *O = (signed char *) Out;
		for (i = First; i < Last; i++) O[i] = (signed char) CNN_Activation(In[i], Norm, Oper, LB, UB, Bits);
	}
}

static void DPReduct(int *In, void *Out, int Size, int Norm, int Oper, int LB, int UB, int Bits)
{
	int First, Last;

	CNN_Chunk(Size, &First, &Last);
	ReductRange(In, Out, First, Last, Norm, Oper, LB, UB, Bits);
	gap_waitbarrier(0);
}

/* In place: each core first narrows its chunk of int32 into the start of that chunk's own bytes
 * (item k of the chunk at narrow index Step*First + k, inside the int32 already read), then the
 * chunks are moved down one after another (chunk c from narrow index Step*c*Chunk to c*Chunk: the
 * two ranges are disjoint, and the earlier chunks' sources are free once moved), each move split
 * across the cores, a barrier between moves. Step = 4 / item size. */
static void DPReductIO(int *In, int Size, int Norm, int Oper, int LB, int UB, int Bits)
{
	int NCore = (int) gap_ncore(), Chunk = (Size + NCore - 1) / NCore;
	int Item = (Bits == 15) ? 2 : 1, Step = 4 / Item;
	char *Base = (char *) In;
	int First, Last, c, i;

	CNN_Chunk(Size, &First, &Last);
	for (i = First; i < Last; i++) {
		int V = CNN_Activation(In[i], Norm, Oper, LB, UB, Bits);
		int k = Step * First + (i - First);
		if (Item == 2) ((short int *) Base)[k] = (short int) V; else ((signed char *) Base)[k] = (signed char) V;
	}
	gap_waitbarrier(0);
	for (c = 1; c < NCore; c++) {
		int Len = Size - c * Chunk, F, L;
		if (Len <= 0) break;
		if (Len > Chunk) Len = Chunk;
		CNN_Chunk(Len * Item, &F, &L);	/* bytes of this move */
		for (i = F; i < L; i++) Base[c * Chunk * Item + i] = Base[Step * c * Chunk * Item + i];
		gap_waitbarrier(0);
	}
}

#define DP_KERNELS(Act, Oper) \
void KerDP##Act##_fp(KerDP_fp_T *Arg) \
{ DPReduct(Arg->In, Arg->Out, Arg->W * Arg->H * Arg->InFeatures, Arg->Norm, Oper, Arg->LB, Arg->UB, 15); } \
void KerDP_IO##Act##_fp(KerDP_fp_T *Arg) \
{ DPReductIO(Arg->In, Arg->W * Arg->H * Arg->InFeatures, Arg->Norm, Oper, Arg->LB, Arg->UB, 15); } \
void KerDP##Act##_fps(KerDP_fps_T *Arg) \
{ DPReduct(Arg->In, Arg->Out, Arg->W * Arg->H * Arg->InFeatures, Arg->Norm, Oper, Arg->LB, Arg->UB, 7); } \
void KerDP_IO##Act##_fps(KerDP_fps_T *Arg) \
{ DPReductIO(Arg->In, Arg->W * Arg->H * Arg->InFeatures, Arg->Norm, Oper, Arg->LB, Arg->UB, 7); }

DP_KERNELS(, KACT_NONE)
DP_KERNELS(_hsigmoid, KACT_HSIGMOID)
DP_KERNELS(_hswish, KACT_HSWISH)
DP_KERNELS(_leakyrelu, KACT_LEAKY)
DP_KERNELS(_sigmoid, KACT_SIGMOID)
DP_KERNELS(_tanh, KACT_TANH)
DP_KERNELS(_swish, KACT_SWISH)

/* ---- Activation alone (input already in Q o, Norm 0) ------------------------------------- */

#define ACT_PAR(Name, T, TData, Oper, Bits) \
void Name(T *Arg) \
{ \
	int Size = Arg->W * Arg->H, First, Last, i; \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (i = First * Size; i < Last * Size; i++) \
		Arg->Out[i] = (TData) CNN_Activation(Arg->In[i], 0, Oper, Arg->LB, Arg->UB, Bits); \
	gap_waitbarrier(0); \
}

#define ACT_ONE(Name, T, TData, Oper, Bits) \
void Name(T *Arg) \
{ \
	int First, Last, i; \
	CNN_Chunk(Arg->W * Arg->H, &First, &Last); \
	for (i = First; i < Last; i++) \
		Arg->Out[i] = (TData) CNN_Activation(Arg->In[i], 0, Oper, Arg->LB, Arg->UB, Bits); \
	gap_waitbarrier(0); \
}

ACT_PAR(KerParReLU_fp, KerReLUPool_fp_T, short int, KACT_NONE, 15)
ACT_PAR(KerParReLU_fps, KerReLUPool_fps_T, signed char, KACT_NONE, 7)
ACT_ONE(KerReLU_fp, KerReLUPool_fp_T, short int, KACT_NONE, 15)
ACT_ONE(KerReLU_fps, KerReLUPool_fps_T, signed char, KACT_NONE, 7)
ACT_PAR(KerParHswish_fp, KerReLUPool_fp_T, short int, KACT_HSWISH, 15)
ACT_PAR(KerParHswish_fps, KerReLUPool_fps_T, signed char, KACT_HSWISH, 7)
ACT_PAR(KerParHsigmoid_fp, KerReLUPool_fp_T, short int, KACT_HSIGMOID, 15)
ACT_PAR(KerParHsigmoid_fps, KerReLUPool_fps_T, signed char, KACT_HSIGMOID, 7)
ACT_PAR(KerParLeakyrelu_fp, KerReLUPool_fp_T, short int, KACT_LEAKY, 15)
ACT_PAR(KerParLeakyrelu_fps, KerReLUPool_fps_T, signed char, KACT_LEAKY, 7)

/* ---- Linear layers: outputs split across the cores ---------------------------------------
 * Out[i] = act(Bias[i] << NormBias + sum_j In[j] * Filter[i*TotalInSize + j]), 32-bit wrapping
 * accumulation, activation as CNN_Activation (ReLU kernels: clip to [LB, UB]). */

#define LINEAR_PAR(Name, T, TOut, Oper, Bits) \
void Name(T *Arg) \
{ \
	int InSize = Arg->InSize, Stride = Arg->TotalInSize, First, Last, i, j; \
	CNN_Chunk(Arg->OutSize, &First, &Last); \
	for (i = First; i < Last; i++) { \
		unsigned int Acc = (unsigned int) CNN_LShift(Arg->Bias[i], Arg->NormBias); \
		for (j = 0; j < InSize; j++) Acc += (unsigned int) (Arg->In[j] * Arg->Filter[i * Stride + j]); \
		Arg->Out[i] = (TOut) CNN_Activation((int) Acc, Arg->Norm, Oper, Arg->LB, Arg->UB, Bits); \
	} \
	gap_waitbarrier(0); \
}

LINEAR_PAR(KerParLinearLayerReLU_fp, KerLinearLayerReLU_fp_T, short int, KACT_NONE, 15)
LINEAR_PAR(KerParLinearLayerHswish_fp, KerLinearLayerReLU_fp_T, short int, KACT_HSWISH, 15)
LINEAR_PAR(KerParLinearLayerHsigmoid_fp, KerLinearLayerReLU_fp_T, short int, KACT_HSIGMOID, 15)
LINEAR_PAR(KerParLinearLayerReLU_fps, KerLinearLayerReLU_fps_T, signed char, KACT_NONE, 7)
LINEAR_PAR(KerParLinearLayerHswish_fps, KerLinearLayerReLU_fps_T, signed char, KACT_HSWISH, 7)
LINEAR_PAR(KerParLinearLayerHsigmoid_fps, KerLinearLayerReLU_fps_T, signed char, KACT_HSIGMOID, 7)
LINEAR_PAR(KerParLinearLayerReLU_fp_fps_fp, KerLinearLayerReLU_fp_fps_fp_T, short int, KACT_NONE, 15)
LINEAR_PAR(KerParLinearLayerReLU_fps_fps_fp, KerLinearLayerReLU_fps_fps_fp_T, short int, KACT_NONE, 15)
LINEAR_PAR(KerParLinearLayerReLU_fps_fps_fpd, KerLinearLayerReLU_fps_fps_fpd_T, int, KACT_NONE, 31)
LINEAR_PAR(KerParLinearLayerReLU_fp_fp_fpd, KerLinearLayerReLU_fp_fp_fpd_T, int, KACT_NONE, 31)

/* ---- Linear layer, one output, inputs split across the cores ------------------------------
 * Out[c] (one partial sum per core) = (Tile ? Out[c] : 0) + this tile's part of the dot product;
 * the reduction (one core) adds the partial sums to the shifted bias and activates. */

#define LINEAR_DP(Name, T) \
void Name(T *Arg) \
{ \
	int First, Last, j, CoreId = (int) gap_coreid(); \
	unsigned int Acc = Arg->Tile ? (unsigned int) Arg->Out[CoreId] : 0u; \
	CNN_Chunk(Arg->InSize, &First, &Last); \
	for (j = First; j < Last; j++) Acc += (unsigned int) (Arg->In[j] * Arg->Filter[j]); \
	Arg->Out[CoreId] = (int) Acc; \
	gap_waitbarrier(0); \
}

LINEAR_DP(KerDPLinearLayer_fp, KerDPLinearLayer_fp_T)
LINEAR_DP(KerDPLinearLayer_fp_fps, KerDPLinearLayer_fp_fps_T)
LINEAR_DP(KerDPLinearLayer_fps, KerDPLinearLayer_fps_T)

#define LINEAR_REDUCT(Name, T, TOut, Bits) \
void Name(T *Arg) \
{ \
	unsigned int Acc = (unsigned int) CNN_LShift(Arg->Bias[0], Arg->NormBias); \
	int c; \
	for (c = 0; c < (int) gap_ncore(); c++) Acc += (unsigned int) Arg->In[c]; \
	Arg->Out[0] = (TOut) CNN_Activation((int) Acc, Arg->Norm, Arg->Oper, Arg->LB, Arg->UB, Bits); \
}

LINEAR_REDUCT(KerDPLinearLayerReduct_fp, KerDPLinearLayerReduct_fp_T, short int, 15)
LINEAR_REDUCT(KerDPLinearLayerReduct_fps, KerDPLinearLayerReduct_fps_T, signed char, 7)
