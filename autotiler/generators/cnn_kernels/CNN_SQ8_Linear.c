/*
 * SQ8 fully connected layer with TensorFlow Lite Micro's arithmetic (CNN_SQ8_BasicKernels.h,
 * docs/cnn-sq8.md "FULLY_CONNECTED").
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

/* sum x[i] * w[i] and sum w[i] for i < n, four at a time on the dot-product unit, the tail one
 * by one. Both fit in int32: |x w| <= 2^14 and n < 2^16. */
static inline void at_sq8_dot_and_sum(const signed char *x, const signed char *w, int n, int *dot, int *wsum)
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
	*dot = d;
	*wsum = s;
}

/* Output channel c's accumulator: Bias[c] + sum (x - zp_in) w, taken as sum x w - zp_in sum w
 * since x - zp_in (in [-255, 255]) does not fit the int8 lanes. The bias is any int32 and TFLM
 * adds in int32: the sum wraps (unsigned arithmetic), as the reference's does. */
static inline int32_t at_sq8_linear_acc(const KerLinear_TFLM_SQ8_T *Arg, int c)
{
	int dot, wsum;

	at_sq8_dot_and_sum(Arg->In, Arg->Filter + c * Arg->InDim, Arg->InDim, &dot, &wsum);
	return (int32_t) ((uint32_t) Arg->Bias[c] + (uint32_t) dot
			  - (uint32_t) Arg->InZeroPoint * (uint32_t) wsum);
}

void KerParLinear_TFLM_SQ8(KerLinear_TFLM_SQ8_T *Arg)
{
	int First, Last, c;

	CNN_Chunk(Arg->OutDim, &First, &Last);
	for (c = First; c < Last; c++)
		Arg->Out[c] = (signed char) at_tflm_requant_int8(at_sq8_linear_acc(Arg, c), Arg->Multiplier[c],
								 Arg->Shift[c], Arg->OutZeroPoint, Arg->ActMin,
								 Arg->ActMax);
	gap_waitbarrier(0);
}
