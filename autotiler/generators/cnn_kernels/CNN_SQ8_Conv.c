/*
 * SQ8 convolutions with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Conv.h, docs/cnn-sq8.md
 * "CONV_2D", "DEPTHWISE_CONV_2D"): regular and grouped, HWC (depth wise: CNN_SQ8_ConvDW.c), on one tile of lines.
 */
#include <string.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Four int8 as one vector. Pixels start at (y W + x) InFeat, not 4-byte aligned in general: the
 * chip loads from any address, but a v4s access there is undefined in C; memcpy is defined and
 * compiles to a single load where the target allows unaligned ones. */
static inline v4s at_sq8_conv_load4(const signed char *p)
{
	v4s v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* acc + sum x[i] w[i], i < n, four at a time on the dot-product unit, the tail one by one; the
 * sums wrap on 32 bits (unsigned arithmetic) as gap_sumdotp4 does, never overflowing a signed
 * int, so that only the final wrapped value matters (see at_sq8_conv_acc). */
static inline int at_sq8_conv_dot(const signed char *x, const signed char *w, int n, int acc)
{
	int i;

	for (i = 0; i + 4 <= n; i += 4)
		acc = gap_sumdotp4(at_sq8_conv_load4(x + i), at_sq8_conv_load4(w + i), acc);
	for (; i < n; i++)
		acc = (int) ((unsigned int) acc + (unsigned int) (x[i] * w[i]));
	return acc;
}

/* acc + sum w[i], i < n: the same unit against ones (never near 2^31: |w| <= 128 per item). */
static inline int at_sq8_conv_sum(const signed char *w, int n, int acc)
{
	const v4s ones = {1, 1, 1, 1};
	int i;

	for (i = 0; i + 4 <= n; i += 4)
		acc = gap_sumdotp4(at_sq8_conv_load4(w + i), ones, acc);
	for (; i < n; i++)
		acc += w[i];
	return acc;
}

/* The rectangle of work of this core: output lines [*Y0, *Y1) x chunk channels [*C0, *C1). The
 * cores share the channels when there are enough of them (each core then reads its own filter
 * rows), else the lines. */
static inline void at_sq8_conv_share(int Lines, int Channels, int *Y0, int *Y1, int *C0, int *C1)
{
	*Y0 = 0; *Y1 = Lines; *C0 = 0; *C1 = Channels;
	if (Channels >= (int) gap_ncore())
		CNN_Chunk(Channels, C0, C1);
	else
		CNN_Chunk(Lines, Y0, Y1);
}

/* Accumulator of output (oy, ox) for the filter row Filt (Fy x Fx x GroupIn) on input channels
 * In + InOff ..: sum w (x - zp) over the in-image taps. x - zp (in [-255, 255]) does not fit the
 * int8 lanes, so it is sum w x - zp sum w, the second sum over the in-image taps only: Total
 * (every tap) minus the taps a border drops, which only border pixels compute. int32 wraps as
 * TFLM's would (unsigned arithmetic). */
static inline int32_t at_sq8_conv_acc(const KerConv_TFLM_SQ8_T *Arg, const signed char *Filt, int InOff, int Total,
				      int ZeroPoint, int oy, int ox)
{
	int G = Arg->GroupIn, Tap = G;
	int y0 = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft;
	int Dot = 0, Dropped = 0, ky, kx;

	for (ky = 0; ky < Arg->Fy; ky++) {
		int y = y0 + ky * Arg->Dy;
		const signed char *Row = Filt + ky * Arg->Fx * Tap;

		if (y < 0 || y >= Arg->H) {
			Dropped = at_sq8_conv_sum(Row, Arg->Fx * Tap, Dropped);
			continue;
		}
		for (kx = 0; kx < Arg->Fx; kx++) {
			int x = x0 + kx * Arg->Dx;

			if (x < 0 || x >= Arg->W)
				Dropped = at_sq8_conv_sum(Row + kx * Tap, Tap, Dropped);
			else
				Dot = at_sq8_conv_dot(Arg->In + (y * Arg->W + x) * Arg->InFeat + InOff, Row + kx * Tap, G, Dot);
		}
	}
	return (int32_t) ((uint32_t) Dot - (uint32_t) ZeroPoint * (uint32_t) (Total - Dropped));
}

/* The first channel of this chunk in the output pixel (see CNN_SQ8_TFLM_Conv.h). */
static inline int at_sq8_chunk_offset(const KerConv_TFLM_SQ8_T *Arg)
{
	if (Arg->ChunkIndex + 1 < Arg->NChunks)
		return Arg->ChunkIndex * Arg->Chunk;
	return Arg->OutFeat - Arg->Chunk;
}

void KerParConv_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg)
{
	int InZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP), OutZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	int ActMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN), ActMax = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	int32_t Flags = at_inf_tflm(Arg->Infos, AT_INF_TFLM_FLAGS);
	int Size = Arg->Fy * Arg->Fx * Arg->GroupIn, Off = at_sq8_chunk_offset(Arg);
	int Y0, Y1, C0, C1, c, oy, ox;

	at_sq8_conv_share(Arg->Ho, Arg->Chunk, &Y0, &Y1, &C0, &C1);
	for (c = C0; c < C1; c++) {
		const signed char *Filt = Arg->Filter + c * Size;
		int Total = at_sq8_conv_sum(Filt, Size, 0);
		int InOff = ((Off + c) / Arg->GroupOut) * Arg->GroupIn;

		for (oy = Y0; oy < Y1; oy++)
			for (ox = 0; ox < Arg->Wo; ox++) {
				int32_t Acc = at_sq8_conv_acc(Arg, Filt, InOff, Total, InZp, oy, ox);

				Acc = (int32_t) ((uint32_t) Acc + (uint32_t) Arg->Bias[c]);
				Arg->Out[(oy * Arg->Wo + ox) * Arg->OutFeat + Off + c] =
					at_tflm_requant_int8_mode(Acc, Arg->Scale[c], Arg->ScaleN[c], OutZp, ActMin, ActMax,
								  Flags);
			}
	}
	gap_waitbarrier(0);
}
