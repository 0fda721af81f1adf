/*
 * SQ8 softmax with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Ops.h, docs/cnn-sq8.md
 * "SOFTMAX"): TFLM's LUT-free int8 path, gemmlowp's exp on Q5.26 differences from the row's max,
 * a Q12.19 sum, its reciprocal, int8 out at scale 1/256, zero point -128.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* exp(d * beta * s_in) of one difference d = x - max >= DiffMin, Q0.31: the difference goes to
 * Q5.26 by TFLM's MultiplyByQuantizedMultiplierGreaterThanOne (the left shift wraps as its C++). */
static inline int32_t at_sq8_softmax_exp(int32_t d, int32_t Mult, int LeftShift)
{
	return at_tflm_exp_on_negative_values(at_tflm_srdhm((int32_t) ((uint32_t) d << LeftShift), Mult), 5);
}

/* RoundingDivideByPOT for any exponent >= 0: from 32 on, |x| / 2^e < 1/2 rounds to 0 (TFLM's
 * reference asserts e <= 31; a row of 512 or more items at its max would pass it). */
static inline int32_t at_sq8_rdbpot_any(int32_t x, int e)
{
	return (e > 31) ? 0 : at_tflm_rdbpot(x, e);
}

/* The row's max, four items at a time on the vector unit, the tail one by one. */
static inline int at_sq8_row_max(const signed char *In, int Dim)
{
	v4s m = {-128, -128, -128, -128};
	int Max, i;

	for (i = 0; i + 4 <= Dim; i += 4)
		m = gap_max4(m, at_tflm_load4(In + i));
	Max = at_tflm_max_lanes(m, -128);
	for (; i < Dim; i++)
		Max = (In[i] > Max) ? In[i] : Max;
	return Max;
}

/* The sum over items [First, Last) of their exponentials in Q12.19 (items below DiffMin add 0),
 * wrapping as TFLM's int32 sum. */
static inline uint32_t at_sq8_softmax_sum(const signed char *In, int First, int Last, int Max, int32_t Mult,
					  int LeftShift, int32_t DiffMin)
{
	uint32_t Sum = 0;
	int i;

	for (i = First; i < Last; i++) {
		int32_t d = In[i] - Max;

		if (d >= DiffMin)
			Sum += (uint32_t) at_tflm_rdbpot(at_sq8_softmax_exp(d, Mult, LeftShift), 12);
	}
	return Sum;
}

/* Items [First, Last) out: each exponential times the reciprocal of the row's sum, to 8 bits;
 * items below DiffMin give -128 (exp underflows to 0). */
static inline void at_sq8_softmax_out(const signed char *In, signed char *Out, int First, int Last, int Max,
				      uint32_t Sum, int32_t Mult, int LeftShift, int32_t DiffMin)
{
	int NumBits, i;
	int32_t Recip = at_tflm_reciprocal((int32_t) Sum, 12, &NumBits);

	for (i = First; i < Last; i++) {
		int32_t d = In[i] - Max, v = -128;

		if (d >= DiffMin) {
			v = at_sq8_rdbpot_any(at_tflm_srdhm(Recip, at_sq8_softmax_exp(d, Mult, LeftShift)), NumBits + 23) - 128;
			v = (v > 127) ? 127 : ((v < -128) ? -128 : v);
		}
		Out[i] = (signed char) v;
	}
}

/* One row on one core: max, sum, outputs. */
static void at_sq8_softmax_row(const signed char *In, signed char *Out, int Dim, int32_t Mult, int LeftShift,
			       int32_t DiffMin)
{
	int Max = at_sq8_row_max(In, Dim);
	uint32_t Sum = at_sq8_softmax_sum(In, 0, Dim, Max, Mult, LeftShift, DiffMin);

	at_sq8_softmax_out(In, Out, 0, Dim, Max, Sum, Mult, LeftShift, DiffMin);
}

/* The cores share the rows. */
void KerParSoftMax_TFLM_SQ8(KerSoftMax_TFLM_SQ8_T *Arg)
{
	int Dim = Arg->Dim, First, Last, r;
	int32_t Mult = at_inf_tflm(Arg->Infos, AT_INF_TFLM_MULT);
	int LeftShift = at_inf_tflm(Arg->Infos, AT_INF_TFLM_LEFT_SHIFT);
	int32_t DiffMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_PARAM);

	CNN_Chunk(Arg->N, &First, &Last);
	for (r = First; r < Last; r++)
		at_sq8_softmax_row(Arg->In + r * Dim, Arg->Out + r * Dim, Dim, Mult, LeftShift, DiffMin);
	gap_waitbarrier(0);
}

/* One row, its items split across the cores (see CNN_SQ8_TFLM_Ops.h). */
void KerParSoftMaxItems_TFLM_SQ8(KerSoftMaxItems_TFLM_SQ8_T *Arg)
{
	int NCore = (int) gap_ncore(), Core = (int) gap_coreid(), Half = AT_SQ8_SOFTMAX_SLOTS / 2;
	int32_t Mult = at_inf_tflm(Arg->Infos, AT_INF_TFLM_MULT);
	int LeftShift = at_inf_tflm(Arg->Infos, AT_INF_TFLM_LEFT_SHIFT);
	int32_t DiffMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_PARAM);
	int First, Last, Max = -128, k;
	uint32_t Sum = 0;

	CNN_Chunk(Arg->Dim, &First, &Last);
	Arg->Reduct[Core] = (First < Last) ? at_sq8_row_max(Arg->In + First, Last - First) : -128;
	gap_waitbarrier(0);
	for (k = 0; k < NCore; k++)
		Max = (Arg->Reduct[k] > Max) ? Arg->Reduct[k] : Max;
	Arg->Reduct[Half + Core] = (int) at_sq8_softmax_sum(Arg->In, First, Last, Max, Mult, LeftShift, DiffMin);
	gap_waitbarrier(0);
	for (k = 0; k < NCore; k++)
		Sum += (uint32_t) Arg->Reduct[Half + k];
	at_sq8_softmax_out(Arg->In, Arg->Out, First, Last, Max, Sum, Mult, LeftShift, DiffMin);
	gap_waitbarrier(0);
}

/* ---- onnxruntime's QLinearSoftmax: float exponentials from a table, float sum and division */

void KerParSoftMaxTable_SQ8(KerSoftMaxTable_SQ8_T *Arg)
{
	int Dim = Arg->Dim, Zp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	float Y = (float) at_inf_tflm(Arg->Infos, AT_INF_TFLM_PARAM);
	const int *Table = Arg->Table + 255;	/* Table[d] for d in [-255, 0] */
	int First, Last, r, i;

	CNN_Chunk(Arg->N, &First, &Last);
	for (r = First; r < Last; r++) {
		const signed char *In = Arg->In + r * Dim;
		signed char *Out = Arg->Out + r * Dim;
		int Max = -128;
		float Sum = 0.0f;

		for (i = 0; i < Dim; i++)
			Max = (In[i] > Max) ? In[i] : Max;
		for (i = 0; i < Dim; i++)
			Sum += at_sq8_f32_of_bits(Table[In[i] - Max]);
		for (i = 0; i < Dim; i++) {
			int q = at_sq8_rint_f32(at_sq8_f32_of_bits(Table[In[i] - Max]) * Y / Sum) + Zp;

			Out[i] = (signed char) (((q + 128) & 255) - 128);	/* onnxruntime's int8 store wraps */
		}
	}
	gap_waitbarrier(0);
}
