/*
 * SQ8 PAD (CNN_SQ8_TFLM_Pad.h, docs/cnn-sq8.md): TensorFlow Lite Micro's int8 PAD of an HWC tensor,
 * the padded items the output zero point. Bytes are moved, nothing is requantised.
 */
#include <string.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* One output line that holds input line In (W pixels of Feat channels): PadLeft padded pixels,
 * then each input pixel between PadFront and PadBack padded channels, then PadRight padded pixels.
 * Without channel padding an input line is one contiguous run of the output line. */
static void at_sq8_pad_line(const KerPad_TFLM_SQ8_T *Arg, const signed char *In, signed char *Out, int Zp)
{
	int W = Arg->W, Feat = Arg->Feat, OutFeat = Feat + Arg->PadFront + Arg->PadBack, x;

	memset(Out, Zp, (size_t) (Arg->PadLeft * OutFeat));
	Out += Arg->PadLeft * OutFeat;
	if (OutFeat == Feat) {
		memcpy(Out, In, (size_t) (W * Feat));
		Out += W * Feat;
	} else {
		for (x = 0; x < W; x++) {
			memset(Out, Zp, (size_t) Arg->PadFront);
			memcpy(Out + Arg->PadFront, In + x * Feat, (size_t) Feat);
			memset(Out + Arg->PadFront + Feat, Zp, (size_t) Arg->PadBack);
			Out += OutFeat;
		}
	}
	memset(Out, Zp, (size_t) (Arg->PadRight * OutFeat));
}

/* The cores share the tile's output lines; a line above or below the input's is all zero point. */
void KerParPad_TFLM_SQ8(KerPad_TFLM_SQ8_T *Arg)
{
	int Zp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	int Top = Arg->Pad[2], H = Arg->H;
	int OutFeat = Arg->Feat + Arg->PadFront + Arg->PadBack;
	int Line = (Arg->W + Arg->PadLeft + Arg->PadRight) * OutFeat;	/* bytes of an output line */
	int First, Last, y;

	CNN_Chunk((int) Arg->Ho, &First, &Last);
	for (y = First; y < Last; y++) {
		signed char *Out = Arg->Out + y * Line;
		int iy = y - Top;

		if (iy < 0 || iy >= H)
			memset(Out, Zp, (size_t) Line);
		else
			at_sq8_pad_line(Arg, Arg->In + iy * Arg->W * Arg->Feat, Out, Zp);
	}
	gap_waitbarrier(0);
}
