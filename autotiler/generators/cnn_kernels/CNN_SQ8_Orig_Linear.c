/*
 * The original's SQ8 fully connected layer and matrix product, 1-byte requantisation
 * (docs/cnn-sq8-original.md):
 *
 *   KerParLinearLayerFullFeatB{8,16,32}_<Act>_SQ8  Out[i] = clip8(ACT_SWITCH(AT_SCALE((Bias[i] << NormBias)
 *                                                  + In . W[i], Scale[i], ScaleN[i]), in_n_bits 0))
 *   KerParLinearLayerTile_SQ8 +                    the input-tiled form (the input does not fit L1): per
 *   KerLinearReduct{B8,B16,B32}_<Act>_SQ8          output, partial sums over the input's tiles, then the
 *                                                  bias and KerParReduct_CC's reduction (PRENORM, A0/B0/C0
 *                                                  unsigned), as the original's SetBias + KerParLinearLayer
 *                                                  + KerParReduct_CC fallback
 *   KerParMatMul{B8,B16,B32,NoBias}_<Act>_SQ8      the same per line l of In1, column c of In2:
 *                                                  (Bias[l] << NormBias) + In1[l] . In2[:, c]
 *
 * NormBias = Infos[AT_INF_BIASN]; A0/B0/C0 are read as signed bytes in the FullFeat and MatMul
 * kernels, which apply no PRENORM. Sums wrap on
 * 32 bits. Numpy twin: sq8_original.linear / matmul.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

static inline signed char Requant(int Acc, int Scale, int ScaleN, int Oper, const at_sq8_act_T *P)
{
	return (signed char) gap_clip(at_sq8_act_switch(at_sq8_scale(Acc, Scale, ScaleN), Oper, P), 7);
}

/* Each core takes a chunk of the outputs; a weight row is a dot product on the vector unit. */
static void Linear(KerLinear_SQ8_T *Arg, int BiasSize, int Oper)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 1);
	int NormBias = ((unsigned char *) Arg->Infos)[AT_INF_BIASN], First, Last, i;

	CNN_Chunk(Arg->OutDim, &First, &Last);
	for (i = First; i < Last; i++) {
		int Acc = at_sq8_lshift(at_sq8_bias(Arg->Bias, BiasSize, i), NormBias);

		Acc = at_sq8_orig_dot(Arg->In, Arg->Weights + i * Arg->InDim, Arg->InDim, Acc);
		Arg->Out[i] = Requant(Acc, Arg->Scale[i], (unsigned char) Arg->ScaleN[i], Oper, &P);
	}
	gap_waitbarrier(0);
}

/* Each core takes a chunk of the band's lines of In1; a column of In2's band is strided (W_In2), one
 * by one; the results land in Out's full lines from column OutFirstCol. */
static void MatMul(KerMatMul_SQ8_T *Arg, int BiasSize, int Oper)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 1);
	int NormBias = ((unsigned char *) Arg->Infos)[AT_INF_BIASN], K = Arg->W_In1, W = Arg->W_In2;
	int First, Last, l, c, k;

	CNN_Chunk(Arg->H_In1, &First, &Last);
	for (l = First; l < Last; l++) {
		const signed char *Line = Arg->In1 + l * K;
		int B = BiasSize ? at_sq8_lshift(at_sq8_bias(Arg->Bias, BiasSize, l), NormBias) : 0;

		for (c = 0; c < W; c++) {
			int Acc = B;

			for (k = 0; k < K; k++) Acc = at_sq8_add(Acc, Line[k] * Arg->In2[k * W + c]);
			Arg->Out[l * Arg->W_Out + Arg->OutFirstCol + c] = Requant(Acc, Arg->Scale[l],
										   (unsigned char) Arg->ScaleN[l], Oper, &P);
		}
	}
	gap_waitbarrier(0);
}

/* Each core adds its chunk of the tile's dot product to its own partial sum. */
void KerParLinearLayerTile_SQ8(KerLinearTile_SQ8_T *Arg)
{
	int Core = (int) gap_coreid(), First, Last;
	int Acc = Arg->Tile ? Arg->Reduct[Core] : 0;

	CNN_Chunk(Arg->N, &First, &Last);
	if (Last > First) Acc = at_sq8_orig_dot(Arg->In + First, Arg->Weights + First, Last - First, Acc);
	Arg->Reduct[Core] = Acc;
	gap_waitbarrier(0);
}

/* Sequential: the partial sums, the shifted bias, the reduction. */
static void LinearReduct(KerLinearReduct_SQ8_T *Arg, int BiasSize, int Oper)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 0);
	const unsigned char *U = (const unsigned char *) Arg->Infos;
	int Acc = at_sq8_lshift(at_sq8_bias(Arg->Bias, BiasSize, 0), U[AT_INF_BIASN]), c;

	for (c = 0; c < (int) gap_ncore(); c++) Acc = at_sq8_add(Acc, Arg->Reduct[c]);
	Arg->Out[0] = (signed char) at_sq8_reduct1(Acc, Arg->Scale[0], (unsigned char) Arg->ScaleN[0], U[AT_INF_PRENORM],
						   Oper, &P);
}

#define AT_SQ8_LINEAR(Act, Oper) \
void KerLinearReductB8_##Act##_SQ8(KerLinearReduct_SQ8_T *Arg) { LinearReduct(Arg, 1, Oper); } \
void KerLinearReductB16_##Act##_SQ8(KerLinearReduct_SQ8_T *Arg) { LinearReduct(Arg, 2, Oper); } \
void KerLinearReductB32_##Act##_SQ8(KerLinearReduct_SQ8_T *Arg) { LinearReduct(Arg, 4, Oper); } \
void KerParLinearLayerFullFeatB8_##Act##_SQ8(KerLinear_SQ8_T *Arg) { Linear(Arg, 1, Oper); } \
void KerParLinearLayerFullFeatB16_##Act##_SQ8(KerLinear_SQ8_T *Arg) { Linear(Arg, 2, Oper); } \
void KerParLinearLayerFullFeatB32_##Act##_SQ8(KerLinear_SQ8_T *Arg) { Linear(Arg, 4, Oper); } \
void KerParMatMulB8_##Act##_SQ8(KerMatMul_SQ8_T *Arg) { MatMul(Arg, 1, Oper); } \
void KerParMatMulB16_##Act##_SQ8(KerMatMul_SQ8_T *Arg) { MatMul(Arg, 2, Oper); } \
void KerParMatMulB32_##Act##_SQ8(KerMatMul_SQ8_T *Arg) { MatMul(Arg, 4, Oper); } \
void KerParMatMulNoBias_##Act##_SQ8(KerMatMul_SQ8_T *Arg) { MatMul(Arg, 0, Oper); }

AT_SQ8_LINEAR(ActNone, ACT_NONE)
AT_SQ8_LINEAR(ReLU, ACT_RELU)
AT_SQ8_LINEAR(ReLUN, ACT_RELUN)
AT_SQ8_LINEAR(ReLUM, ACT_RELUM)
AT_SQ8_LINEAR(ReLUMN, ACT_RELUMN)
AT_SQ8_LINEAR(HSigmoid, ACT_HSIGMOID)
AT_SQ8_LINEAR(HSwish, ACT_HSWISH)
AT_SQ8_LINEAR(LeakyReLU, ACT_LEAKYRELU)
