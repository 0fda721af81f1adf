/*
 * SQ8 element-wise ADD, SUB and MUL with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Dense.h,
 * docs/cnn-sq8.md "ADD / SUB" and "MUL"): both inputs of the output's shape, or (MUL) the second a
 * vector broadcast over the pixels of an HWC tensor. The zero points, multipliers and clamp come
 * from the layer's Infos (sq8_infos.py).
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* ADD/SUB's constants, read from Infos once per call. */
typedef struct {
	int32_t zp1, zp2, out_zp, act_min, act_max, left_shift;
	int32_t m1, s1, m2, s2, m_out, s_out, flags;
} at_sq8_add_consts;

static inline at_sq8_add_consts at_sq8_add_read(const signed char *Infos)
{
	at_sq8_add_consts k;

	k.zp1 = at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP);
	k.zp2 = at_inf_tflm(Infos, AT_INF_TFLM_IN2_ZP);
	k.out_zp = at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
	k.act_min = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN);
	k.act_max = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX);
	k.left_shift = at_inf_tflm(Infos, AT_INF_TFLM_LEFT_SHIFT);
	k.m1 = at_inf_tflm(Infos, AT_INF_TFLM_MULT2);
	k.s1 = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT2);
	k.m2 = at_inf_tflm(Infos, AT_INF_TFLM_MULT3);
	k.s2 = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT3);
	k.m_out = at_inf_tflm(Infos, AT_INF_TFLM_MULT);
	k.s_out = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT);
	k.flags = at_inf_tflm(Infos, AT_INF_TFLM_FLAGS);
	return k;
}

/* One input of ADD/SUB brought to the common scale: (x - zp) 2^LeftShift, then times a multiplier
 * below one (Prepare's shift is <= 0, so MBQM is TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp).
 * |x - zp| <= 255 and LeftShift is 20: the shifted value fits int32. */
static inline int32_t at_sq8_add_input(int x, int32_t zero_point, int left_shift, int32_t multiplier, int shift,
				       int32_t flags)
{
	return at_tflm_mbqm_mode((int32_t) ((uint32_t) (x - zero_point) << left_shift), multiplier, shift, flags);
}

/* One item of ADD (subtract 0) or SUB (subtract 1). SUB subtracts the rescaled second input: it
 * is not ADD with MULT3 negated, since the high multiply rounds ties half up and
 * SRDHM(b, -M) != -SRDHM(b, M) on a tie (scales 1, 1 - 17 2^-24, 2^-12 and x1 = x2 = -120 give -1
 * for SUB, 0 for the negated ADD). TFLM sums in int32; the sum wraps where its C++ would overflow.
 * Flags is k's rounding mode, passed apart so that a constant one removes its tests. */
static inline signed char at_sq8_add_one(const at_sq8_add_consts *k, int x1, int x2, int subtract, int32_t flags)
{
	int32_t a = at_sq8_add_input(x1, k->zp1, k->left_shift, k->m1, k->s1, flags);
	int32_t b = at_sq8_add_input(x2, k->zp2, k->left_shift, k->m2, k->s2, flags);
	uint32_t raw = subtract ? (uint32_t) a - (uint32_t) b : (uint32_t) a + (uint32_t) b;

	return (signed char) at_tflm_requant_int8_mode((int32_t) raw, k->m_out, k->s_out, k->out_zp, k->act_min,
						       k->act_max, flags);
}

/* Items [First, Last), the rounding mode flags a constant once inlined. */
static inline void at_sq8_add_range(const KerEltwise_TFLM_SQ8_T *Arg, const at_sq8_add_consts *k, int First, int Last,
				    int subtract, int32_t flags)
{
	const signed char *In1 = Arg->In1, *In2 = Arg->In2;
	signed char *Out = Arg->Out;
	int i;

	for (i = First; i < Last; i++)
		Out[i] = at_sq8_add_one(k, In1[i], In2[i], subtract, flags);
}

/* An input's rescale MBQM((x - zp) 2^LeftShift, M, shift) for int8 x, without the 64-bit high
 * multiply: with L = LeftShift + max(shift, 0) and S = 31 - L, a = d 2^L (d = x - zp, |d| <= 255)
 * and M = Mh 2^S + Ml (0 <= Ml < 2^S), floor((a M + 2^30) / 2^31) = d Mh + floor((d Ml + 2^(S-1)) / 2^S)
 * exactly; both products fit int32 when 9 <= L <= 22 (ADD's LeftShift is 20). Then TFLM's
 * RoundingDivideByPOT by max(-shift, 0). */
typedef struct {
	int32_t Mh, Ml, Mask, Half;
	int S, Right;
} at_sq8_add_in_t;

static inline int at_sq8_add_in_prep(at_sq8_add_in_t *r, const at_tflm_rq_t *q, int left_shift)
{
	int L = left_shift + q->Left;

	if (!at_tflm_rq_is_double(q) || L < 9 || L > 22)
		return 0;
	r->S = 31 - L;
	r->Mh = q->M >> r->S;
	r->Ml = q->M & (int32_t) ((1u << r->S) - 1u);
	r->Right = q->Right;
	r->Mask = q->Mask;
	r->Half = q->Half;
	return 1;
}

static inline int32_t at_sq8_add_in(const at_sq8_add_in_t *r, int32_t d)
{
	int32_t h = d * r->Mh + ((d * r->Ml + (1 << (r->S - 1))) >> r->S);

	return (h >> r->Right) + ((h & r->Mask) > r->Half + (int32_t) ((uint32_t) h >> 31));
}

/* Items [First, Last) with inputs on at_sq8_add_in and the output on TFLM's double rounding
 * (at_tflm_rq_int8_double): everything prepared once, local copies the byte stores cannot alias. */
static inline void at_sq8_add_range_fast(const KerEltwise_TFLM_SQ8_T *Arg, const at_sq8_add_consts *k, int First,
					 int Last, int subtract, const at_sq8_add_in_t *in, const at_tflm_rq_t *q)
{
	const signed char *In1 = Arg->In1, *In2 = Arg->In2;
	signed char *Out = Arg->Out;
	at_sq8_add_in_t R1 = in[0], R2 = in[1];
	at_tflm_rq_t QOut = *q;
	int32_t zp1 = k->zp1, zp2 = k->zp2, OutZp = k->out_zp, Lo = k->act_min, Hi = k->act_max;
	int i;

	for (i = First; i < Last; i++) {
		int32_t a = at_sq8_add_in(&R1, In1[i] - zp1), b = at_sq8_add_in(&R2, In2[i] - zp2);
		uint32_t raw = subtract ? (uint32_t) a - (uint32_t) b : (uint32_t) a + (uint32_t) b;

		Out[i] = (signed char) at_tflm_rq_int8_double(&QOut, (int32_t) raw, OutZp, Lo, Hi);
	}
}

/* The cores share the items. */
static inline void at_sq8_add_all(KerEltwise_TFLM_SQ8_T *Arg, int subtract)
{
	at_sq8_add_consts k = at_sq8_add_read(Arg->Infos);
	at_tflm_rq_t q[3];
	at_sq8_add_in_t in[2];
	int First, Last;

	CNN_Chunk((int) Arg->N, &First, &Last);
	at_tflm_rq_prep(&q[0], k.m1, k.s1, k.flags);
	at_tflm_rq_prep(&q[1], k.m2, k.s2, k.flags);
	at_tflm_rq_prep(&q[2], k.m_out, k.s_out, k.flags);
	if (at_sq8_add_in_prep(&in[0], &q[0], k.left_shift) && at_sq8_add_in_prep(&in[1], &q[1], k.left_shift)
	    && at_tflm_rq_is_double(&q[2])) {
		if (subtract)	/* a constant in each loop */
			at_sq8_add_range_fast(Arg, &k, First, Last, 1, in, &q[2]);
		else
			at_sq8_add_range_fast(Arg, &k, First, Last, 0, in, &q[2]);
	} else if (k.flags & AT_TFLM_FLAG_SINGLE_ROUNDING)
		at_sq8_add_range(Arg, &k, First, Last, subtract, AT_TFLM_FLAG_SINGLE_ROUNDING);
	else
		at_sq8_add_range(Arg, &k, First, Last, subtract, 0);
	gap_waitbarrier(0);
}

void KerParAdd_TFLM_SQ8(KerEltwise_TFLM_SQ8_T *Arg)
{
	at_sq8_add_all(Arg, 0);
}

void KerParSub_TFLM_SQ8(KerEltwise_TFLM_SQ8_T *Arg)
{
	at_sq8_add_all(Arg, 1);
}

/* MUL's constants, read from Infos once per call. */
typedef struct {
	int32_t zp1, zp2, out_zp, act_min, act_max, mult, shift, flags;
} at_sq8_mul_consts;

static inline at_sq8_mul_consts at_sq8_mul_read(const signed char *Infos)
{
	at_sq8_mul_consts k;

	k.zp1 = at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP);
	k.zp2 = at_inf_tflm(Infos, AT_INF_TFLM_IN2_ZP);
	k.out_zp = at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
	k.act_min = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN);
	k.act_max = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX);
	k.mult = at_inf_tflm(Infos, AT_INF_TFLM_MULT);
	k.shift = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT);
	k.flags = at_inf_tflm(Infos, AT_INF_TFLM_FLAGS);
	return k;
}

/* (x1 - zp1)(x2 - zp2) is at most 255 * 256 in magnitude: exact in int32. MBQM's left shift (the
 * multiplier may exceed one here) and the zero point's addition wrap, as in at_tflm_requant_int8. */
static inline signed char at_sq8_mul_one(const at_sq8_mul_consts *k, int x1, int x2)
{
	int32_t prod = (int32_t) (x1 - k->zp1) * (int32_t) (x2 - k->zp2);

	return (signed char) at_tflm_requant_int8_mode(prod, k->mult, k->shift, k->out_zp, k->act_min, k->act_max,
						       k->flags);
}

void KerParMul_TFLM_SQ8(KerEltwise_TFLM_SQ8_T *Arg)
{
	at_sq8_mul_consts k = at_sq8_mul_read(Arg->Infos);
	int First, Last, i;

	CNN_Chunk((int) Arg->N, &First, &Last);
	for (i = First; i < Last; i++)
		Arg->Out[i] = at_sq8_mul_one(&k, Arg->In1[i], Arg->In2[i]);
	gap_waitbarrier(0);
}

/* The cores share the pixels; each pixel's channels meet the vector's items one to one. */
void KerParTensorVectMul_TFLM_SQ8(KerTensorVectMul_TFLM_SQ8_T *Arg)
{
	at_sq8_mul_consts k = at_sq8_mul_read(Arg->Infos);
	int Feat = Arg->Feat;
	int First, Last, p, c;

	CNN_Chunk((int) Arg->NPix, &First, &Last);
	for (p = First; p < Last; p++)
		for (c = 0; c < Feat; c++)
			Arg->Out[p * Feat + c] = at_sq8_mul_one(&k, Arg->In1[p * Feat + c], Arg->In2[c]);
	gap_waitbarrier(0);
}
