/*
 * SQ8 max and average pooling with TensorFlow Lite Micro's arithmetic (CNN_SQ8_BasicKernels.h,
 * docs/cnn-sq8.md "AVERAGE_POOL_2D / MAX_POOL_2D"). NHWC, one tile of lines: In[H][W][C],
 * Out[Ho][Wo][C]; the clamp is Infos' ACT_MIN, ACT_MAX.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* The in-image part [*Lo, *Hi) of the taps of output index o along one axis: taps in the padding
 * are skipped, not read as a value (TFLM's pooling clips its window the same way). Along the
 * lines, Size is the tile's: the tiler loads every line an inner window reads, so only the
 * image's first and last tiles clip. */
static inline void at_sq8_pool_span(int o, int Stride, int Pad, int F, int Size, int *Lo, int *Hi)
{
	int Start = o * Stride - Pad;

	*Lo = (Start < 0) ? 0 : Start;
	*Hi = (Start + F > Size) ? Size : Start + F;
}

static inline int at_sq8_clamp(int v, int Lo, int Hi)
{
	return (v < Lo) ? Lo : ((v > Hi) ? Hi : v);
}

/* Channel c of pixel (y, x) of the tile. */
static inline const signed char *at_sq8_pool_at(const KerPool_TFLM_SQ8_T *Arg, int c, int y, int x)
{
	return Arg->In + (y * Arg->W + x) * Arg->C + c;
}

/* Max of channel c over the in-image window [y0, y1) x [x0, x1); never empty (the caller's
 * padding is less than the filter, as TFLM's SAME/VALID give). The taps are C bytes apart along
 * a line, W C from line to line. */
static inline int at_sq8_max_window(const KerPool_TFLM_SQ8_T *Arg, int c, int y0, int y1, int x0, int x1)
{
	const signed char *Line = at_sq8_pool_at(Arg, c, y0, x0);
	int m = -128, C = Arg->C, y, x;

	for (y = y0; y < y1; y++, Line += Arg->W * C) {
		const signed char *p = Line;

		for (x = x0; x < x1; x++, p += C)
			m = (*p > m) ? *p : m;
	}
	return m;
}

/* Sum of channel c over the window, divided by its n taps, rounding half away from zero as
 * TFLM's C division does it: (acc +- n/2) / n truncates toward zero. |acc| <= 127 * 255 * 255
 * fits in int. */
static inline int at_sq8_avg_window(const KerPool_TFLM_SQ8_T *Arg, int c, int y0, int y1, int x0, int x1)
{
	const signed char *Line = at_sq8_pool_at(Arg, c, y0, x0);
	int acc = 0, n = (y1 - y0) * (x1 - x0), C = Arg->C, y, x;

	for (y = y0; y < y1; y++, Line += Arg->W * C) {
		const signed char *p = Line;

		for (x = x0; x < x1; x++, p += C)
			acc += *p;
	}
	return (acc > 0) ? (acc + n / 2) / n : (acc - n / 2) / n;
}

/* AT_TFLM_FLAG_FLOAT_AVERAGE (onnxruntime's AveragePool of a QDQ model, sq8_tflm.ort_average_pool2d):
 * float32 taps (x - zp_in) s_in summed in order, / n, / s_out, rounded half to even, + zp_out. In and
 * out share the quantisation (the lowering checks it), so |v| <= 256. */
static inline int at_sq8_avg_window_float(const KerPool_TFLM_SQ8_T *Arg, int c, int y0, int y1, int x0, int x1)
{
	const signed char *Infos = Arg->Infos;
	float SIn = at_sq8_f32_of_bits(at_inf_tflm(Infos, AT_INF_TFLM_MULT));
	float SOut = at_sq8_f32_of_bits(at_inf_tflm(Infos, AT_INF_TFLM_MULT2));
	int ZpIn = at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP), n = (y1 - y0) * (x1 - x0), y, x;
	float acc = 0.0f;

	for (y = y0; y < y1; y++)
		for (x = x0; x < x1; x++)
			acc += (float) (Arg->In[(y * Arg->W + x) * Arg->C + c] - ZpIn) * SIn;
	return at_sq8_rint_f32((acc / (float) n) / SOut) + at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
}

/* Channels [c0, c1) of output line oy, every column, with Avg choosing the reduction (2: in float). */
static inline void at_sq8_pool_line(const KerPool_TFLM_SQ8_T *Arg, int oy, int c0, int c1, int Avg, int ActMin,
				    int ActMax)
{
	int y0, y1, ox, c;

	at_sq8_pool_span(oy, Arg->Sy, Arg->Pad[2], Arg->Fy, Arg->H, &y0, &y1);
	for (ox = 0; ox < Arg->Wo; ox++) {
		int x0, x1;
		signed char *Out = Arg->Out + (oy * Arg->Wo + ox) * Arg->C;

		at_sq8_pool_span(ox, Arg->Sx, Arg->PadLeft, Arg->Fx, Arg->W, &x0, &x1);
		for (c = c0; c < c1; c++) {
			int v = (Avg == 2) ? at_sq8_avg_window_float(Arg, c, y0, y1, x0, x1)
				: Avg ? at_sq8_avg_window(Arg, c, y0, y1, x0, x1)
				      : at_sq8_max_window(Arg, c, y0, y1, x0, x1);

			Out[c] = (signed char) at_sq8_clamp(at_sq8_clamp(v, -128, 127), ActMin, ActMax);
		}
	}
}

/* The units (output line, channel), line major, are shared evenly by the cores: a tile of one
 * output line (a global pooling) still uses them all. Each unit reads only In, so no core waits. */
static void at_sq8_pool(const KerPool_TFLM_SQ8_T *Arg, int Avg)
{
	int ActMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN);
	int ActMax = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	int C = Arg->C, First, Last, u, oy, c0, c1;

	CNN_Chunk(Arg->Ho * C, &First, &Last);
	for (u = First; u < Last; u += c1 - c0) {
		oy = u / C;
		c0 = u - oy * C;
		c1 = (C < c0 + (Last - u)) ? C : c0 + (Last - u);
		at_sq8_pool_line(Arg, oy, c0, c1, Avg, ActMin, ActMax);
	}
	gap_waitbarrier(0);
}

void KerParMaxPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg)
{
	at_sq8_pool(Arg, 0);
}

void KerParAvgPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg)
{
	at_sq8_pool(Arg, (at_inf_tflm(Arg->Infos, AT_INF_TFLM_FLAGS) & AT_TFLM_FLAG_FLOAT_AVERAGE) ? 2 : 1);
}
