/*
 * SQ8 fully connected layer with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Dense.h,
 * docs/cnn-sq8.md "FULLY_CONNECTED"): the output-parallel kernel, and the input-tiled pair (partial
 * sums per core, then a reduction) for layers whose filter rows do not fit L1.
 */
#include <string.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Four int8 as one vector. Filter rows start at c * InDim, so they are not 4-byte aligned when
 * InDim % 4 != 0: the chip loads from any address, but a v4s access there is undefined in C;
 * memcpy is defined and compiles to a single load where the target allows unaligned ones. */
static inline v4s at_sq8_load4(const signed char *p)
{
	v4s v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* sum (x[i] - zp) w[i] for i < n, computed as sum x w - zp sum w since x - zp (in [-255, 255])
 * does not fit the int8 lanes; four at a time on the dot-product unit, the tail one by one. The
 * sums fit int32 (|x w| <= 2^14, n < 2^16); the last product and difference wrap as TFLM's int32
 * accumulation would (unsigned arithmetic). */
static inline int32_t at_sq8_dot_zp(const signed char *x, const signed char *w, int n, int zp)
{
	const v4s ones = {1, 1, 1, 1};
	int d = 0, s = 0, i;

	for (i = 0; i + 4 <= n; i += 4) {
		v4s vw = at_sq8_load4(w + i);

		d = gap_sumdotp4(at_sq8_load4(x + i), vw, d);
		s = gap_sumdotp4(vw, ones, s);
	}
	for (; i < n; i++) {
		d += x[i] * w[i];
		s += w[i];
	}
	return (int32_t) ((uint32_t) d - (uint32_t) zp * (uint32_t) s);
}

/* The requantised, clamped output of an accumulator (Bias already added): Infos's OUT_ZP and clamp. */
static inline signed char at_sq8_linear_out(int32_t acc, int32_t scale, int shift, const signed char *Infos)
{
	return (signed char) at_tflm_requant_int8_mode(acc, scale, shift, at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP),
						       at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN),
						       at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX),
						       at_inf_tflm(Infos, AT_INF_TFLM_FLAGS));
}

void KerParLinear_TFLM_SQ8(KerLinear_TFLM_SQ8_T *Arg)
{
	int zp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP);
	int First, Last, c;

	CNN_Chunk(Arg->OutDim, &First, &Last);
	for (c = First; c < Last; c++) {
		int32_t dot = at_sq8_dot_zp(Arg->In, Arg->Filter + c * Arg->InDim, Arg->InDim, zp);
		/* the bias is any int32 and TFLM adds in int32: wrap */
		int32_t acc = (int32_t) ((uint32_t) Arg->Bias[c] + (uint32_t) dot);

		Arg->Out[c] = at_sq8_linear_out(acc, Arg->Scale[c], Arg->ScaleN[c], Arg->Infos);
	}
	gap_waitbarrier(0);
}

/* Each core adds its share of this tile to its own partial sum (a fresh one on tile 0). */
void KerLinearDP_TFLM_SQ8(KerLinearDP_TFLM_SQ8_T *Arg)
{
	int CoreId = (int) gap_coreid();
	int First, Last;
	uint32_t acc = Arg->Tile ? (uint32_t) Arg->Reduct[CoreId] : 0u;

	CNN_Chunk(Arg->InSize, &First, &Last);
	acc += (uint32_t) at_sq8_dot_zp(Arg->In + First, Arg->Filter + First, Last - First,
					at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP));
	Arg->Reduct[CoreId] = (int) acc;
	gap_waitbarrier(0);
}

/* One core: the bias plus every core's partial sum (int32, wrapping), requantised. */
void KerLinearReduct_TFLM_SQ8(KerLinearReduct_TFLM_SQ8_T *Arg)
{
	uint32_t acc = (uint32_t) Arg->Bias[0];
	int c;

	for (c = 0; c < (int) gap_ncore(); c++)
		acc += (uint32_t) Arg->Reduct[c];
	Arg->Out[0] = at_sq8_linear_out((int32_t) acc, Arg->Scale[0], Arg->ScaleN[0], Arg->Infos);
}
