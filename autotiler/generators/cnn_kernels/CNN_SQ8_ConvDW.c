/*
 * SQ8 depth wise convolutions with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Conv.h,
 * docs/cnn-sq8.md "DEPTHWISE_CONV_2D"): HWC, on one tile of lines.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Depth wise output (oy, ox, c): sum w (x - zp) over the in-image taps, one channel at a time
 * (the taps of one channel are not adjacent in HWC, so there is no 4-lane dot product to use). */
static inline int32_t at_sq8_convdw_acc(const KerConv_TFLM_SQ8_T *Arg, int c, int Mult, int ZeroPoint, int oy,
					int ox)
{
	int y0 = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft, ic = c / Mult;
	int32_t Acc = 0;
	int ky, kx;

	for (ky = 0; ky < Arg->Fy; ky++) {
		int y = y0 + ky * Arg->Dy;

		if (y < 0 || y >= Arg->H)
			continue;
		for (kx = 0; kx < Arg->Fx; kx++) {
			int x = x0 + kx * Arg->Dx;

			if (x >= 0 && x < Arg->W) {
				int w = Arg->Filter[(ky * Arg->Fx + kx) * Arg->OutFeat + c];
				int v = Arg->In[(y * Arg->W + x) * Arg->InFeat + ic] - ZeroPoint;

				Acc = (int32_t) ((uint32_t) Acc + (uint32_t) (w * v));	/* wraps as TFLM's int32 sum */
			}
		}
	}
	return Acc;
}

void KerParConvDW_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg)
{
	int InZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP), OutZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	int ActMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN), ActMax = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	int32_t Flags = at_inf_tflm(Arg->Infos, AT_INF_TFLM_FLAGS);
	int Mult = Arg->OutFeat / Arg->InFeat;
	int Y0, Y1, C0, C1, c, oy, ox;

	/* lines first: a core's channels of one pixel are adjacent in Out */
	Y0 = 0; Y1 = Arg->Ho; C0 = 0; C1 = Arg->OutFeat;
	if (Arg->Ho >= (int) gap_ncore())
		CNN_Chunk(Arg->Ho, &Y0, &Y1);
	else
		CNN_Chunk(Arg->OutFeat, &C0, &C1);
	for (oy = Y0; oy < Y1; oy++)
		for (ox = 0; ox < Arg->Wo; ox++)
			for (c = C0; c < C1; c++) {
				int32_t Acc = (int32_t) ((uint32_t) at_sq8_convdw_acc(Arg, c, Mult, InZp, oy, ox)
							 + (uint32_t) Arg->Bias[c]);

				Arg->Out[(oy * Arg->Wo + ox) * Arg->OutFeat + c] =
					at_tflm_requant_int8_mode(Acc, Arg->Scale[c], Arg->ScaleN[c], OutZp, ActMin, ActMax,
								  Flags);
			}
	gap_waitbarrier(0);
}
