/*
 * The original's SQ8 element-wise kernels and global pooling, 1-byte requantisation, CHW
 * (docs/cnn-sq8-original.md; A0/B0/C0 read as signed bytes except in the global pooling):
 *
 *   KerParMatAdd_<Act>_SQ8      X = (In1Scale ? AT_SCALE(In1, In1Scale, In1ScaleN) : In1) + In2,
 *                               Y = OutScale ? AT_SCALE(X, OutScale, OutScaleN) : X, then the
 *                               activation of KerMatAdd*_SQ8 (see MatAddAct);
 *   KerParMatVectMul_<Act>_SQ8  P = AT_NORM(In1 * (Scale ? Scale : 1) * In2[c], ScaleN),
 *                               clip8(ACT_SWITCH(P, in_n_bits 0));
 *   KerParGlobal{Max,Avg}PoolFullFeat_SQ8
 *                               avg: clip8(AT_SCALE((Sum << 7) / (W*H), GlobalSumScale(N)));
 *                               max: max(-128, taps), then AT_SCALE by ActScale if DoScale && ActScale.
 *   KerParGlobal{Max,Avg}Pool_SQ8 + ...PoolReduct_SQ8
 *                               the same over a plane in tiles: an int32 sum (wrapping) or maximum
 *                               per feature across the tiles, then the same narrowing.
 *
 * Numpy twin: sq8_original.matadd / tensor_vect_mult / global_pool.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* The activation of the MatAdd kernels on Y (X: the sum before the output scale). With ReLUN,
 * ActScale set and neither In1Scale nor OutScale, the original scales by (OutScale, OutScaleN),
 * that is by 0: reproduced. */
static inline int MatAddAct(int X, int Y, int Oper, const at_sq8_act_T *P, int In1Scale, int OutScale,
			    int OutScaleN)
{
	switch (Oper) {
	case ACT_RELU: return gap_clipu(P->ActScale ? at_sq8_scale(Y, P->ActScale, P->ActScaleN) : Y, 7);
	case ACT_RELUN:
		if (P->ActScale && !In1Scale && !OutScale)
			return gap_clip(at_sq8_scale(at_sq8_clip_pos(X, P->A0), OutScale, OutScaleN), 7);
		if (P->ActScale) return gap_clip(at_sq8_scale(at_sq8_clip_pos(Y, P->A0), P->ActScale, P->ActScaleN), 7);
		return gap_clip(at_sq8_clip_pos(Y, P->A0), 7);
	case ACT_HSIGMOID:
	case ACT_HSWISH:
	case ACT_LEAKYRELU: return gap_clip(at_sq8_act_c0_mul(gap_clip(Y, 7), Oper, P), 7);
	default: return gap_clip(Y, 7);
	}
}

/* Each core takes a chunk of the features. */
static void MatAdd(KerMat3_SQ8_T *Arg, int Oper)
{
	const unsigned char *U = (const unsigned char *) Arg->Infos;
	int In1Scale = U[AT_INF_IN1SCALE], In1ScaleN = U[AT_INF_IN1SCALEN];
	int OutScale = U[AT_INF_OUTSCALE], OutScaleN = U[AT_INF_OUTSCALEN];
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 1);
	int Plane = Arg->W * Arg->H, First, Last, i;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (i = First * Plane; i < Last * Plane; i++) {
		int A = Arg->In1[i];
		int X = (In1Scale ? at_sq8_scale(A, In1Scale, In1ScaleN) : A) + Arg->In2[i];
		int Y = OutScale ? at_sq8_scale(X, OutScale, OutScaleN) : X;

		Arg->Out[i] = (signed char) MatAddAct(X, Y, Oper, &P, In1Scale, OutScale, OutScaleN);
	}
	gap_waitbarrier(0);
}

void KerParMatAdd_ActNone_SQ8(KerMat3_SQ8_T *Arg) { MatAdd(Arg, ACT_NONE); }
void KerParMatAdd_ReLU_SQ8(KerMat3_SQ8_T *Arg) { MatAdd(Arg, ACT_RELU); }
void KerParMatAdd_ReLUN_SQ8(KerMat3_SQ8_T *Arg) { MatAdd(Arg, ACT_RELUN); }
void KerParMatAdd_HSigmoid_SQ8(KerMat3_SQ8_T *Arg) { MatAdd(Arg, ACT_HSIGMOID); }
void KerParMatAdd_HSwish_SQ8(KerMat3_SQ8_T *Arg) { MatAdd(Arg, ACT_HSWISH); }
void KerParMatAdd_LeakyReLU_SQ8(KerMat3_SQ8_T *Arg) { MatAdd(Arg, ACT_LEAKYRELU); }

/* Feature c of In1 times In2[c]: each core takes a chunk of the features. */
static void MatVectMul(KerMat3_SQ8_T *Arg, int Oper)
{
	const unsigned char *U = (const unsigned char *) Arg->Infos;
	int Scale = U[AT_INF_SCALE], ScaleN = U[AT_INF_SCALEN];
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 1);
	int Plane = Arg->W * Arg->H, First, Last, c, i;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) {
		int V = Arg->In2[c];

		for (i = c * Plane; i < (c + 1) * Plane; i++) {
			int A = Scale ? at_sq8_mul(Arg->In1[i], Scale) : Arg->In1[i];

			Arg->Out[i] = (signed char) gap_clip(at_sq8_act_switch(at_sq8_norm(at_sq8_mul(A, V), ScaleN), Oper,
									   &P), 7);
		}
	}
	gap_waitbarrier(0);
}

#define AT_SQ8_MATVECT(Act, Oper) \
void KerParMatVectMul_##Act##_SQ8(KerMat3_SQ8_T *Arg) { MatVectMul(Arg, Oper); }

AT_SQ8_MATVECT(ActNone, ACT_NONE)
AT_SQ8_MATVECT(ReLU, ACT_RELU)
AT_SQ8_MATVECT(ReLUN, ACT_RELUN)
AT_SQ8_MATVECT(ReLUM, ACT_RELUM)
AT_SQ8_MATVECT(ReLUMN, ACT_RELUMN)
AT_SQ8_MATVECT(HSigmoid, ACT_HSIGMOID)
AT_SQ8_MATVECT(HSwish, ACT_HSWISH)
AT_SQ8_MATVECT(LeakyReLU, ACT_LEAKYRELU)

/* The narrowing of a global average: (Sum << 7) / Size, a C division (truncates toward 0),
 * scaled by GlobalSumScale(N). */
static inline signed char GlobalAvg(int Sum, int Size, const signed char *Infos)
{
	const unsigned char *U = (const unsigned char *) Infos;

	return (signed char) gap_clip(at_sq8_scale(at_sq8_lshift(Sum, 7) / Size, U[AT_INF_GLOBAL_SUM_SCALE],
						   U[AT_INF_GLOBAL_SUM_SCALEN]), 7);
}

/* The narrowing of a global maximum (already >= -128): ActScale when DoScale. */
static inline signed char GlobalMax(int M, int DoScale, const signed char *Infos)
{
	at_sq8_act_T P = at_sq8_act_params(Infos, 0);

	if (DoScale && P.ActScale) M = gap_clip(at_sq8_scale(M, P.ActScale, P.ActScaleN), 7);
	return (signed char) M;
}

static int PlaneSum(const signed char *In, int Plane, int Acc)
{
	int i;

	for (i = 0; i < Plane; i++) Acc = at_sq8_add(Acc, In[i]);
	return Acc;
}

static int PlaneMax(const signed char *In, int Plane, int Acc)
{
	int i;

	for (i = 0; i < Plane; i++) Acc = gap_max(Acc, In[i]);
	return Acc;
}

/* Whole features, a chunk of them per core. */
void KerParGlobalAvgPoolFullFeat_SQ8(KerGlobalPool_SQ8_T *Arg)
{
	int Plane = Arg->W * Arg->H, First, Last, c;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) Arg->Out[c] = GlobalAvg(PlaneSum(Arg->In + c * Plane, Plane, 0), Plane, Arg->Infos);
	gap_waitbarrier(0);
}

void KerParGlobalMaxPoolFullFeat_SQ8(KerGlobalPool_SQ8_T *Arg)
{
	int Plane = Arg->W * Arg->H, First, Last, c;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++)
		Arg->Out[c] = GlobalMax(PlaneMax(Arg->In + c * Plane, Plane, -128), Arg->DoScale, Arg->Infos);
	gap_waitbarrier(0);
}

/* A tile of the planes: each core its chunk of the features' accumulators. */
void KerParGlobalAvgPool_SQ8(KerGlobalPoolTile_SQ8_T *Arg)
{
	int Plane = Arg->W * Arg->H, First, Last, c;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) Arg->Acc[c] = PlaneSum(Arg->In + c * Plane, Plane, Arg->Tile ? Arg->Acc[c] : 0);
	gap_waitbarrier(0);
}

void KerParGlobalMaxPool_SQ8(KerGlobalPoolTile_SQ8_T *Arg)
{
	int Plane = Arg->W * Arg->H, First, Last, c;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) Arg->Acc[c] = PlaneMax(Arg->In + c * Plane, Plane, Arg->Tile ? Arg->Acc[c] : -128);
	gap_waitbarrier(0);
}

void KerParGlobalAvgPoolReduct_SQ8(KerGlobalPoolReduct_SQ8_T *Arg)
{
	int First, Last, c;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) Arg->Out[c] = GlobalAvg(Arg->Acc[c], (int) Arg->Size, Arg->Infos);
	gap_waitbarrier(0);
}

void KerParGlobalMaxPoolReduct_SQ8(KerGlobalPoolReduct_SQ8_T *Arg)
{
	int First, Last, c;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) Arg->Out[c] = GlobalMax(Arg->Acc[c], Arg->DoScale, Arg->Infos);
	gap_waitbarrier(0);
}
