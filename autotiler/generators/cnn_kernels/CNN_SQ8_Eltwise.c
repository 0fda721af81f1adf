/*
 * SQ8 element-wise ADD, SUB and MUL with TensorFlow Lite Micro's arithmetic (CNN_SQ8_BasicKernels.h,
 * docs/cnn-sq8.md "ADD / SUB" and "MUL"). Both inputs have the output's shape (no broadcasting).
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* One input of ADD/SUB brought to the common scale: (x - zp) 2^LeftShift, then times a multiplier
 * below one (Prepare's shift is <= 0, so MBQM is TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp).
 * |x - zp| <= 255 and LeftShift is 20: the shifted value fits int32. */
static inline int32_t at_sq8_add_input(int x, int zero_point, int left_shift, int32_t multiplier, int shift)
{
	return at_tflm_mbqm((int32_t) ((uint32_t) (x - zero_point) << left_shift), multiplier, shift);
}

/* The shared epilogue of ADD and SUB: the rescaled sum (or difference) back to the output scale.
 * TFLM sums in int32; the sum wraps where its C++ would overflow, as the reference's does. */
static inline signed char at_sq8_add_output(const KerAdd_TFLM_SQ8_T *Arg, uint32_t raw)
{
	return (signed char) at_tflm_requant_int8((int32_t) raw, Arg->OutputMultiplier, Arg->OutputShift,
						  Arg->OutZeroPoint, Arg->ActMin, Arg->ActMax);
}

/* One item of ADD (subtract 0) or SUB (subtract 1). SUB subtracts the rescaled second input: it
 * is not ADD with Input2Multiplier negated, since the high multiply rounds ties half up and
 * SRDHM(b, -M) != -SRDHM(b, M) on a tie (scales 1, 1 - 17 2^-24, 2^-12 and x1 = x2 = -120 give -1
 * for SUB, 0 for the negated ADD). */
static inline signed char at_sq8_add_one(const KerAdd_TFLM_SQ8_T *Arg, int i, int subtract)
{
	int32_t a = at_sq8_add_input(Arg->In1[i], Arg->In1ZeroPoint, Arg->LeftShift, Arg->Input1Multiplier,
				     Arg->Input1Shift);
	int32_t b = at_sq8_add_input(Arg->In2[i], Arg->In2ZeroPoint, Arg->LeftShift, Arg->Input2Multiplier,
				     Arg->Input2Shift);

	return at_sq8_add_output(Arg, subtract ? (uint32_t) a - (uint32_t) b : (uint32_t) a + (uint32_t) b);
}

/* The cores share the items. */
static inline void at_sq8_add_all(KerAdd_TFLM_SQ8_T *Arg, int subtract)
{
	int First, Last, i;

	CNN_Chunk((int) Arg->N, &First, &Last);
	for (i = First; i < Last; i++)
		Arg->Out[i] = at_sq8_add_one(Arg, i, subtract);
	gap_waitbarrier(0);
}

void KerParAdd_TFLM_SQ8(KerAdd_TFLM_SQ8_T *Arg)
{
	at_sq8_add_all(Arg, 0);
}

void KerParSub_TFLM_SQ8(KerAdd_TFLM_SQ8_T *Arg)
{
	at_sq8_add_all(Arg, 1);
}

/* (x1 - zp1)(x2 - zp2) is at most 255 * 256 in magnitude: exact in int32. MBQM's left shift (the
 * multiplier may exceed one here) and the zero point's addition wrap, as in at_tflm_requant_int8. */
void KerParMul_TFLM_SQ8(KerMul_TFLM_SQ8_T *Arg)
{
	int First, Last, i;

	CNN_Chunk((int) Arg->N, &First, &Last);
	for (i = First; i < Last; i++) {
		int32_t prod = (int32_t) (Arg->In1[i] - Arg->In1ZeroPoint) * (int32_t) (Arg->In2[i] - Arg->In2ZeroPoint);

		Arg->Out[i] = (signed char) at_tflm_requant_int8(prod, Arg->Multiplier, Arg->Shift, Arg->OutZeroPoint,
								 Arg->ActMin, Arg->ActMax);
	}
	gap_waitbarrier(0);
}
