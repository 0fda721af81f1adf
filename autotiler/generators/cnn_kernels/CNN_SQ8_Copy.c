/*
 * SQ8 copies (CNN_SQ8_TFLM_Ops.h, docs/cnn-sq8.md): channel concatenation with each input brought
 * to the output's quantisation (TFLM's QUANTIZE int8 -> int8), and the permutations of a 3D tensor
 * (the original's CNN_3DTensorPermute and CNN_MatTranspose: bytes moved, nothing requantised).
 */
#include <string.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Whether a concatenation block maps every int8 value to itself: TFLite's QUANTIZE from a
 * quantisation to the same one has multiplier 2^30, shift 1 and equal zero points. */
static inline int at_sq8_concat_is_copy(const signed char *Infos)
{
	return at_inf_tflm(Infos, AT_INF_TFLM_MULT) == (1 << 30) && at_inf_tflm(Infos, AT_INF_TFLM_SHIFT) == 1
	       && at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP) == at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
}

/* The cores share the pixels; each copies (or requantises) its pixels' InFeat channels. */
void KerParConcat_TFLM_SQ8(KerConcat_TFLM_SQ8_T *Arg)
{
	const signed char *Infos = Arg->Infos + AT_INF_TFLM_DIM * Arg->Index;
	int InFeat = Arg->InFeat, OutFeat = Arg->OutFeat, Copy = at_sq8_concat_is_copy(Infos);
	int32_t InZp = at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP), OutZp = at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
	int32_t Mult = at_inf_tflm(Infos, AT_INF_TFLM_MULT);
	int Shift = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT);
	int First, Last, p, c;

	CNN_Chunk((int) Arg->Pixels, &First, &Last);
	for (p = First; p < Last; p++) {
		const signed char *In = Arg->In + p * InFeat;
		signed char *Out = Arg->Out + p * OutFeat + Arg->Offset;

		if (Copy)
			memcpy(Out, In, (size_t) InFeat);
		else
			for (c = 0; c < InFeat; c++)
				Out[c] = (signed char) at_tflm_requant_int8(In[c] - InZp, Mult, Shift, OutZp, -128, 127);
	}
	gap_waitbarrier(0);
}

/* Item i of In (Size bytes) to item o of Out. */
static inline void at_perm_move(const void *In, void *Out, int i, int o, int Size)
{
	if (Size == 1)
		((signed char *) Out)[o] = ((const signed char *) In)[i];
	else if (Size == 2)
		((short int *) Out)[o] = ((const short int *) In)[i];
	else
		((int *) Out)[o] = ((const int *) In)[i];
}

/* Out has the input's axes in the order Perm (a * 9 + b * 3 + c: output axis 0 is input axis a,
 * ...): the cores share the first output axis; each output item is written once, from its input
 * item found through the input's strides. */
void KerParPermute(KerPermute_T *Arg)
{
	int Dims[3], InStride[3], Axis[3], First, Last, o0, o1, o2, k;

	Dims[0] = Arg->D0;
	Dims[1] = Arg->D1;
	Dims[2] = Arg->D2;
	InStride[0] = Dims[1] * Dims[2];
	InStride[1] = Dims[2];
	InStride[2] = 1;
	Axis[0] = Arg->Perm / 9;
	Axis[1] = (Arg->Perm / 3) % 3;
	Axis[2] = Arg->Perm % 3;
	CNN_Chunk(Dims[Axis[0]], &First, &Last);
	for (o0 = First; o0 < Last; o0++)
		for (o1 = 0; o1 < Dims[Axis[1]]; o1++)
			for (o2 = 0; o2 < Dims[Axis[2]]; o2++) {
				int i = o0 * InStride[Axis[0]] + o1 * InStride[Axis[1]] + o2 * InStride[Axis[2]];

				k = (o0 * Dims[Axis[1]] + o1) * Dims[Axis[2]] + o2;
				at_perm_move(Arg->In, Arg->Out, i, k, Arg->Size);
			}
	gap_waitbarrier(0);
}
