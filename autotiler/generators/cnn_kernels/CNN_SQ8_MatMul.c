/*
 * SQ8 matrix product with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Dense.h, docs/cnn-sq8.md
 * "MatMul"): every column of In2 through a fully connected layer whose weights are In1's lines,
 * i.e. a 1x1 convolution. In1 symmetric; In2's zero point (Infos IN2_ZP) is taken out as
 * IN2_ZP * sum_k In1[l][k], since In2 - IN2_ZP does not fit the int8 lanes.
 */
#include <string.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Four int8 from any address (lines of ColM1 bytes are not 4-byte aligned when ColM1 % 4 != 0). */
static inline v4s at_sq8_mm_load4(const signed char *p)
{
	v4s v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Four items of a column, Stride bytes apart, as one vector. */
static inline v4s at_sq8_mm_gather4(const signed char *p, int stride)
{
	v4s v = {p[0], p[stride], p[2 * stride], p[3 * stride]};

	return v;
}

/* sum_k a[k] b[k * stride] (stride 1: a contiguous line of the transposed In2), four at a time on
 * the dot-product unit, the tail one by one; int32 is exact (|a b| <= 2^14, n < 2^16). */
static inline int at_sq8_mm_dot(const signed char *a, const signed char *b, int n, int stride)
{
	int d = 0, k;

	for (k = 0; k + 4 <= n; k += 4) {
		v4s vb = (stride == 1) ? at_sq8_mm_load4(b + k) : at_sq8_mm_gather4(b + k * stride, stride);

		d = gap_sumdotp4(at_sq8_mm_load4(a + k), vb, d);
	}
	for (; k < n; k++)
		d += a[k] * b[k * stride];
	return d;
}

/* sum_k a[k] on the dot-product unit. */
static inline int at_sq8_mm_sum(const signed char *a, int n)
{
	const v4s ones = {1, 1, 1, 1};
	int s = 0, k;

	for (k = 0; k + 4 <= n; k += 4)
		s = gap_sumdotp4(at_sq8_mm_load4(a + k), ones, s);
	for (; k < n; k++)
		s += a[k];
	return s;
}

/* Line l of the output. Column j of In2 starts at j * ColStep and its items are Stride apart:
 * (ColStep, Stride) = (1, W) as stored, (ColM1, 1) transposed. The accumulator is int32 and wraps as
 * TFLM's does (unsigned arithmetic). */
static inline void at_sq8_mm_line(KerMatMul_TFLM_SQ8_T *Arg, int l, int col_step, int stride)
{
	const signed char *Infos = Arg->Infos;
	int n = Arg->ColM1, W = Arg->W, j;
	const signed char *a = Arg->In1 + l * n;
	uint32_t base = (Arg->Bias ? (uint32_t) Arg->Bias[l] : 0u)
		      - (uint32_t) at_inf_tflm(Infos, AT_INF_TFLM_IN2_ZP) * (uint32_t) at_sq8_mm_sum(a, n);
	int32_t mult = Arg->Scale ? Arg->Scale[l] : at_inf_tflm(Infos, AT_INF_TFLM_MULT);
	int shift = Arg->ScaleN ? Arg->ScaleN[l] : at_inf_tflm(Infos, AT_INF_TFLM_SHIFT);
	int32_t out_zp = at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
	int32_t lo = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN), hi = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX);
	int32_t flags = at_inf_tflm(Infos, AT_INF_TFLM_FLAGS);

	for (j = 0; j < W; j++) {
		uint32_t acc = base + (uint32_t) at_sq8_mm_dot(a, Arg->In2 + j * col_step, n, stride);

		Arg->Out[l * W + j] = (signed char) at_tflm_requant_int8_mode((int32_t) acc, mult, shift, out_zp, lo, hi,
										      flags);
	}
}

/* The cores share the lines. */
static inline void at_sq8_mm_all(KerMatMul_TFLM_SQ8_T *Arg, int transposed)
{
	int First, Last, l;

	CNN_Chunk(Arg->Lines, &First, &Last);
	for (l = First; l < Last; l++)
		at_sq8_mm_line(Arg, l, transposed ? Arg->ColM1 : 1, transposed ? 1 : Arg->W);
	gap_waitbarrier(0);
}

void KerParMatMul_TFLM_SQ8(KerMatMul_TFLM_SQ8_T *Arg)
{
	at_sq8_mm_all(Arg, 0);
}

void KerParMatMulTransposed_TFLM_SQ8(KerMatMul_TFLM_SQ8_T *Arg)
{
	at_sq8_mm_all(Arg, 1);
}
