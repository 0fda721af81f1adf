/*
 * The original's SQ8 pooling (CNN_Pooling_SQ8.c, the version with KerParPoolActivation) and
 * standalone activations (Ker_<Act>_SQ8), CHW, int8 in and out (docs/cnn-sq8-original.md):
 *
 *   max:  windows entirely inside the image start from INT_MIN, windows touching the padding
 *         from 0 (a border output is max(0, in-image taps));
 *   avg:  gap_roundnorm(Sum(in-image taps) * (65536 / (FS*FSy)), 16): the divisor is always the
 *         full window;
 *   then: ActScale != 0: the C0-multiply form (ActNone only when DoScale); ActScale == 0: ReLU
 *         Max(0, x), ReLUN Min(A0, Max(0, x)); clip to int8 (A0/B0/C0 read as signed bytes).
 *   Ker_<Act>_SQ8: gap_clip(ACT_SWITCH(In, in_n_bits 8), 7) item by item.
 *
 * Numpy twin: sq8_original.pool / activation.
 */
#include <limits.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Output (x, y) of one plane. */
static int PoolOne(const KerPool_SQ8_T *Arg, const signed char *In, int x, int y, int Max)
{
	int X0 = x * Arg->S - Arg->Pad[0], Y0 = y * Arg->Sy - Arg->Pad[2], i, j;
	int Inside = X0 >= 0 && Y0 >= 0 && X0 + Arg->FS <= Arg->UsedW && Y0 + Arg->FSy <= Arg->UsedH;
	int Acc = (Max && Inside) ? INT_MIN : 0;

	for (i = gap_max(0, -Y0); i < Arg->FSy && Y0 + i < Arg->UsedH; i++)
		for (j = gap_max(0, -X0); j < Arg->FS && X0 + j < Arg->UsedW; j++) {
			int v = In[(Y0 + i) * Arg->W + X0 + j];
			Acc = Max ? gap_max(Acc, v) : Acc + v;
		}
	if (!Max) {
		Acc = gap_roundnorm_reg(at_sq8_mul(Acc, (1 << 16) / (Arg->FS * Arg->FSy)), 16);
		if (!Inside) Acc = gap_clip(Acc, 7);
	}
	return Acc;
}

/* KerParPoolActivation: the fused activation of the pooling kernels. */
static inline int PoolAct(int v, int Oper, int DoScale, const at_sq8_act_T *P)
{
	if (P->ActScale) {
		if (Oper != ACT_NONE || DoScale) v = gap_clip(at_sq8_act_c0_mul(v, Oper, P), 7);
	} else if (Oper == ACT_RELU) {
		v = gap_max(0, v);
	} else if (Oper == ACT_RELUN) {
		v = gap_min(P->A0, gap_max(0, v));
	}
	return gap_clip(v, 7);
}

/* Each core takes a chunk of the features. */
static void Pool(KerPool_SQ8_T *Arg, int Max, int Oper)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 1);	/* KerParPoolActivation: signed A0/B0/C0 */
	int Wo = (Arg->UsedW - Arg->FS + Arg->Pad[0] + Arg->Pad[1]) / Arg->S + 1;
	int Ho = (Arg->UsedH - Arg->FSy + Arg->Pad[2] + Arg->Pad[3]) / Arg->Sy + 1;
	int First, Last, c, x, y;

	CNN_Chunk(Arg->Feat, &First, &Last);
	for (c = First; c < Last; c++) {
		const signed char *In = Arg->In + Arg->W * Arg->H * c;
		signed char *Out = Arg->Out + Wo * Ho * c;

		for (y = 0; y < Ho; y++)
			for (x = 0; x < Wo; x++)
				Out[y * Wo + x] = (signed char) PoolAct(PoolOne(Arg, In, x, y, Max), Oper, Arg->DoScale, &P);
	}
	gap_waitbarrier(0);
}

#define AT_SQ8_POOL(Act, Oper) \
void KerParMaxPoolNxMStrideSxSy_##Act##_SQ8(KerPool_SQ8_T *Arg) { Pool(Arg, 1, Oper); } \
void KerParAvgPoolNxMStrideSxSy_##Act##_SQ8(KerPool_SQ8_T *Arg) { Pool(Arg, 0, Oper); }

AT_SQ8_POOL(ActNone, ACT_NONE)
AT_SQ8_POOL(ReLU, ACT_RELU)
AT_SQ8_POOL(ReLUN, ACT_RELUN)

/* Standalone activation: the items of all Feat planes split across the cores. */
static void Act(KerActivation_SQ8_T *Arg, int Oper)
{
	at_sq8_act_T P = at_sq8_act_params(Arg->Infos, 0);
	int First, Last, i;

	CNN_Chunk(Arg->W * Arg->H * Arg->Feat, &First, &Last);
	for (i = First; i < Last; i++)
		Arg->Out[i] = (signed char) gap_clip(at_sq8_act_switch(Arg->In[i], Oper, &P), 7);
	gap_waitbarrier(0);
}

#define AT_SQ8_ACT(Name, Oper) \
void Ker_##Name##_SQ8(KerActivation_SQ8_T *Arg) { Act(Arg, Oper); }

AT_SQ8_ACT(ActNone, ACT_NONE)
AT_SQ8_ACT(ReLU, ACT_RELU)
AT_SQ8_ACT(ReLUN, ACT_RELUN)
AT_SQ8_ACT(ReLUM, ACT_RELUM)
AT_SQ8_ACT(ReLUMN, ACT_RELUMN)
AT_SQ8_ACT(HSigmoid, ACT_HSIGMOID)
AT_SQ8_ACT(HSwish, ACT_HSWISH)
AT_SQ8_ACT(LeakyReLU, ACT_LEAKYRELU)
