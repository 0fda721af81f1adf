/*
 * The original's SQ8 convolution chain, CHW, feature parallel (docs/cnn-sq8-original.md):
 *
 *   KerParSetBiasB{8,16,32}_SQ8          Acc[c] = Bias[c] << NormBias            (int32 planes)
 *   KerParConvNxMDxDyStrideSxSy_SQ8      Acc[o] += sum over in-image taps In * Filter
 *   KerParConvDWNxMDxDyStrideSxSyB*_SQ8  Acc[c] = (Bias[c] << NormBias) + taps  (depth wise)
 *   KerParReduct_CC_<Act>_SQ8            Out = clip8(ACT_SWITCH(AT_SCALE(AT_NORM(Acc, Prenorm),
 *                                                                  Scale[c], ScaleN[c])))
 *   KerParReductIO_CC_SQ8                the same without activation, int8 written in place
 *                                        (a pooling follows)
 *
 * Padding contributes nothing (SQ8 tensors are symmetric, zero point 0). Sums and products wrap
 * on 32 bits as the chip's. One generic geometry (any N x Ny, strides, dilations) stands for the
 * original's fixed-geometry kernels. Numpy twin: sq8_original.conv_acc / reduct.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

static void SetBias(KerSetBias_SQ8_T *Arg, int Size)
{
	int Plane = Arg->W * Arg->H, NormBias = ((unsigned char *) Arg->Infos)[AT_INF_BIASN], First, Last, c, i;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) {
		int B = at_sq8_lshift(at_sq8_bias(Arg->Bias, Size, c), NormBias);
		int *Out = Arg->Out + Plane * c;

		for (i = 0; i < Plane; i++) Out[i] = B;
	}
	gap_waitbarrier(0);
}

void KerParSetBiasB8_SQ8(KerSetBias_SQ8_T *Arg) { SetBias(Arg, 1); }
void KerParSetBiasB16_SQ8(KerSetBias_SQ8_T *Arg) { SetBias(Arg, 2); }
void KerParSetBiasB32_SQ8(KerSetBias_SQ8_T *Arg) { SetBias(Arg, 4); }

typedef struct {
	int W, UsedW, UsedH, Fx, Fy, Sx, Sy, Dx, Dy, PadL, PadT, Wo, Ho;
} at_sq8_geom_T;

static at_sq8_geom_T ConvGeom(const KerConv_SQ8_T *Arg)
{
	at_sq8_geom_T G;

	G.W = Arg->W; G.UsedW = Arg->UsedW; G.UsedH = Arg->UsedH;
	G.Fx = Arg->N; G.Fy = Arg->Ny; G.Sx = Arg->S; G.Sy = Arg->Sy; G.Dx = Arg->D; G.Dy = Arg->Dy;
	G.PadL = Arg->Pad[0]; G.PadT = Arg->Pad[2];
	G.Wo = (G.UsedW - (G.Dx * (G.Fx - 1) + 1) + Arg->Pad[0] + Arg->Pad[1]) / G.Sx + 1;
	G.Ho = (G.UsedH - (G.Dy * (G.Fy - 1) + 1) + Arg->Pad[2] + Arg->Pad[3]) / G.Sy + 1;
	return G;
}

/* Acc + the taps of output (x, y) of one (input plane, filter) pair. The in-image taps of a
 * filter line are a contiguous range [j0, j1): with no dilation they go four at a time. */
static int ConvSum(const signed char *In, const signed char *F, const at_sq8_geom_T *G, int x, int y, int Acc)
{
	int X0 = x * G->Sx - G->PadL, Y0 = y * G->Sy - G->PadT, i, j;
	int j0 = (X0 < 0) ? (-X0 + G->Dx - 1) / G->Dx : 0;
	int j1 = (G->UsedW - 1 - X0 < 0) ? 0 : (G->UsedW - 1 - X0) / G->Dx + 1;

	if (j1 > G->Fx) j1 = G->Fx;
	for (i = 0; i < G->Fy; i++) {
		int Yi = Y0 + i * G->Dy;
		const signed char *Line, *FLine = F + i * G->Fx;

		if (Yi < 0 || Yi >= G->UsedH) continue;
		Line = In + Yi * G->W + X0;	/* tap j at Line[j * Dx] */
		if (G->Dx == 1) {
			if (j1 > j0) Acc = at_sq8_orig_dot(Line + j0, FLine + j0, j1 - j0, Acc);
		} else {
			for (j = j0; j < j1; j++) Acc = at_sq8_add(Acc, Line[j * G->Dx] * FLine[j]);
		}
	}
	return Acc;
}

/* Out plane += one input plane convolved with one filter. */
static void ConvPlane(const signed char *In, const signed char *F, int *Out, const at_sq8_geom_T *G)
{
	int x, y;

	for (y = 0; y < G->Ho; y++)
		for (x = 0; x < G->Wo; x++)
			Out[y * G->Wo + x] = ConvSum(In, F, G, x, y, Out[y * G->Wo + x]);
}

/* Each core takes a chunk of the output features and accumulates every input feature into them. */
void KerParConvNxMDxDyStrideSxSy_SQ8(KerConv_SQ8_T *Arg)
{
	at_sq8_geom_T G = ConvGeom(Arg);
	int Plane = G.Wo * G.Ho, FSize = G.Fx * G.Fy, InPlane = Arg->W * Arg->H, First, Last, f, i;

	CNN_Chunk(Arg->OutFeatures, &First, &Last);
	for (f = First; f < Last; f++)
		for (i = 0; i < Arg->InFeatures; i++)
			ConvPlane(Arg->In + InPlane * i, Arg->Filter + FSize * (Arg->TotalInFeatures * f + i),
				  Arg->Out + Plane * f, &G);
	gap_waitbarrier(0);
}

/* Depth wise: feature c convolved with its own filter, starting from Bias[c] << NormBias. */
static void ConvDW(KerConv_SQ8_T *Arg, int BiasSize)
{
	at_sq8_geom_T G = ConvGeom(Arg);
	int Plane = G.Wo * G.Ho, FSize = G.Fx * G.Fy, InPlane = Arg->W * Arg->H, First, Last, c, i;
	int NormBias = ((unsigned char *) Arg->Infos)[AT_INF_BIASN];

	CNN_Chunk(Arg->OutFeatures, &First, &Last);
	for (c = First; c < Last; c++) {
		int B = at_sq8_lshift(at_sq8_bias(Arg->Bias, BiasSize, c), NormBias);
		int *Out = Arg->Out + Plane * c;

		for (i = 0; i < Plane; i++) Out[i] = B;
		ConvPlane(Arg->In + InPlane * c, Arg->Filter + FSize * c, Out, &G);
	}
	gap_waitbarrier(0);
}

void KerParConvDWNxMDxDyStrideSxSyB8_SQ8(KerConv_SQ8_T *Arg) { ConvDW(Arg, 1); }
void KerParConvDWNxMDxDyStrideSxSyB16_SQ8(KerConv_SQ8_T *Arg) { ConvDW(Arg, 2); }
void KerParConvDWNxMDxDyStrideSxSyB32_SQ8(KerConv_SQ8_T *Arg) { ConvDW(Arg, 4); }

static void Reduct(KerConvLinReduct_SQ8_T *Arg, int Oper)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 0);
	int Prenorm = ((unsigned char *) Arg->Infos)[AT_INF_PRENORM];
	int Plane = Arg->W * Arg->H, First, Last, c, i;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) {
		const int *In = Arg->In + Plane * c;
		signed char *Out = Arg->Out + Plane * c;

		for (i = 0; i < Plane; i++)
			Out[i] = (signed char) at_sq8_reduct1(In[i], Arg->Scale[c], (unsigned char) Arg->ScaleN[c], Prenorm, Oper, &P);
	}
	gap_waitbarrier(0);
}

#define AT_SQ8_REDUCT(Act, Oper) \
void KerParReduct_CC_##Act##_SQ8(KerConvLinReduct_SQ8_T *Arg) { Reduct(Arg, Oper); }

AT_SQ8_REDUCT(ActNone, ACT_NONE)
AT_SQ8_REDUCT(ReLU, ACT_RELU)
AT_SQ8_REDUCT(ReLUN, ACT_RELUN)
AT_SQ8_REDUCT(ReLUM, ACT_RELUM)
AT_SQ8_REDUCT(ReLUMN, ACT_RELUMN)
AT_SQ8_REDUCT(HSigmoid, ACT_HSIGMOID)
AT_SQ8_REDUCT(HSwish, ACT_HSWISH)
AT_SQ8_REDUCT(LeakyReLU, ACT_LEAKYRELU)

/* In place, for a pooling that reads int8: each core narrows its features into the first
 * quarter of each feature's own int32 plane (byte i written after word i was read), then, after
 * a barrier, core 0 moves the narrowed planes down next to each other (plane c from byte
 * 4*Plane*c to Plane*c, in increasing c: a destination never covers a plane not yet moved). */
void KerParReductIO_CC_SQ8(KerConvLinReduct_SQ8_T *Arg)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 0);
	int Prenorm = ((unsigned char *) Arg->Infos)[AT_INF_PRENORM];
	int Plane = Arg->W * Arg->H, First, Last, c, i;
	signed char *Bytes = (signed char *) Arg->In;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) {
		const int *In = Arg->In + Plane * c;
		signed char *Out = Bytes + 4 * Plane * c;

		for (i = 0; i < Plane; i++)
			Out[i] = (signed char) at_sq8_reduct1(In[i], Arg->Scale[c], (unsigned char) Arg->ScaleN[c], Prenorm, ACT_NONE, &P);
	}
	gap_waitbarrier(0);
	if (gap_coreid() == 0)
		for (c = 1; c < Arg->Feat; c++)
			memmove(Bytes + Plane * c, Bytes + 4 * Plane * c, (size_t) Plane);
	gap_waitbarrier(0);
}
