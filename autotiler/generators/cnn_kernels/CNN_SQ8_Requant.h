/*
 * The int8 requantisations of the SQ8 basic kernels (issue 23). First TensorFlow Lite Micro's
 * (Scale_DataSize 4), for the SQ8
 * basic kernels: an int32 accumulator times a real scale given as an int32 multiplier M in
 * [2^30, 2^31) (Q31) and a power-of-two shift, rounded exactly as TFLM's reference kernels
 * round by default (the double rounding of gemmlowp's fixed-point primitives, not
 * TFLITE_SINGLE_ROUNDING):
 *
 *   MultiplyByQuantizedMultiplier(x, M, s) =
 *       RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2^max(s, 0), M), max(-s, 0))
 *
 * Semantics and the numpy twin: docs/cnn-sq8.md, autotiler/generators/sq8_tflm.py. Every function
 * is total on its int32 inputs: where TFLM's C++ would overflow a signed int (x * 2^s), the
 * product wraps as the 32-bit chip's does; right shifts of negative values are arithmetic (gcc
 * and the chip).
 */
#ifndef __CNN_SQ8_REQUANT_H__
#define __CNN_SQ8_REQUANT_H__

#include <stdint.h>
#include "Gap.h"
#include "CNN_SQ8_Infos.h"

/* floor(a * b / 2^31 + 1/2): the high half of the doubled product, rounded half UP (toward +inf:
 * -0.5 gives 0; only RoundingDivideByPOT rounds ties away from zero); the one overflowing case,
 * INT32_MIN * INT32_MIN, saturates to INT32_MAX. TFLM writes (ab + nudge) / 2^31 with a nudge of
 * 2^30 or 1 - 2^30 by sign and a division truncating toward zero; for ab < 0 that truncation is a
 * ceiling, ceil((ab + 1 - 2^30) / 2^31) = floor((ab + 2^30) / 2^31), so both signs are one
 * arithmetic shift: no branch, no 64-bit division (a mul, a mulh and a few adds on rv32). */
static inline int32_t at_tflm_srdhm(int32_t a, int32_t b)
{
	int64_t ab = (int64_t) a * (int64_t) b;

	if (a == b && a == INT32_MIN)
		return INT32_MAX;
	return (int32_t) ((ab + ((int64_t) 1 << 30)) >> 31);
}

/* x / 2^exponent rounded to nearest, ties away from zero (exponent in [0, 31]); 32-bit only (a
 * 64-bit shift by a variable is a library call on rv32) and branch free. */
static inline int32_t at_tflm_rdbpot(int32_t x, int exponent)
{
	int32_t mask = (int32_t) (((uint32_t) 1 << exponent) - 1u);
	int32_t remainder = x & mask;
	int32_t threshold = (mask >> 1) + (int32_t) ((uint32_t) x >> 31);

	return (x >> exponent) + (remainder > threshold);
}

/* x * M * 2^shift / 2^31 as TFLM computes it: a left shift (shift > 0) before the high
 * multiply, a rounded right shift (shift < 0) after it. */
static inline int32_t at_tflm_mbqm(int32_t x, int32_t multiplier, int shift)
{
	int left = (shift > 0) ? shift : 0;
	int right = (shift > 0) ? 0 : -shift;
	int32_t shifted = (int32_t) ((uint32_t) x << left);

	return at_tflm_rdbpot(at_tflm_srdhm(shifted, multiplier), right);
}

/* The epilogue of TFLM's int8 conv / depthwise / fully connected: requantise, add the output
 * zero point, clamp to the activation's range [act_min, act_max] (int8 by default). */
static inline int8_t at_tflm_requant_int8(int32_t acc, int32_t multiplier, int shift, int32_t out_zero_point,
					  int32_t act_min, int32_t act_max)
{
	/* TFLM adds in int32 too; wrapping where its C++ would overflow */
	int32_t v = (int32_t) ((uint32_t) at_tflm_mbqm(acc, multiplier, shift) + (uint32_t) out_zero_point);

	v = (v < act_min) ? act_min : v;
	v = (v > act_max) ? act_max : v;
	return (int8_t) v;
}

/* onnxruntime's requantisation (MLAS MlasRequantizeOutput rounds the scaled accumulator once; TFLM's
 * TFLITE_SINGLE_ROUNDING form of the same M and shift): (x M + 2^(30 - shift)) >> (31 - shift) on 64
 * bits, shift in [-31, 30]. Not wrapped: the caller adds the zero point and clamps on 64 bits. */
static inline int64_t at_tflm_mbqm_single(int32_t x, int32_t multiplier, int shift)
{
	int total = 31 - shift;

	return ((int64_t) x * (int64_t) multiplier + ((int64_t) 1 << (total - 1))) >> total;
}

/* MBQM in the mode of Flags (an Infos's AT_INF_TFLM_FLAGS): TFLM's double rounding, or the single one. */
static inline int32_t at_tflm_mbqm_mode(int32_t x, int32_t multiplier, int shift, int32_t flags)
{
	if (flags & AT_TFLM_FLAG_SINGLE_ROUNDING)
		return (int32_t) at_tflm_mbqm_single(x, multiplier, shift);
	return at_tflm_mbqm(x, multiplier, shift);
}

/* at_tflm_requant_int8 in the mode of Flags: with SINGLE_ROUNDING, requantised, the zero point added
 * and clamped on 64 bits (nothing wraps). */
static inline int8_t at_tflm_requant_int8_mode(int32_t acc, int32_t multiplier, int shift, int32_t out_zero_point,
					       int32_t act_min, int32_t act_max, int32_t flags)
{
	int64_t v;

	if (!(flags & AT_TFLM_FLAG_SINGLE_ROUNDING))
		return at_tflm_requant_int8(acc, multiplier, shift, out_zero_point, act_min, act_max);
	v = at_tflm_mbqm_single(acc, multiplier, shift) + out_zero_point;
	v = (v < act_min) ? act_min : v;
	v = (v > act_max) ? act_max : v;
	return (int8_t) v;
}

/* One channel's requantisation prepared once (at_tflm_rq_prep) for the many accumulators of a
 * kernel's inner loops (at_tflm_rq_int8): the mode, the shifts and RoundingDivideByPOT's mask are
 * decided per channel, not per output; results are at_tflm_requant_int8_mode's, bit for bit. */
typedef struct {
	int32_t M;			/* the Q31 multiplier */
	int32_t Mask, Half;		/* 2^Right - 1 and its half (RoundingDivideByPOT's threshold) */
	signed char Shift, Left, Right;	/* the shift, max(shift, 0), max(-shift, 0) */
	signed char Single;		/* AT_TFLM_FLAG_SINGLE_ROUNDING */
} at_tflm_rq_t;

static inline void at_tflm_rq_prep(at_tflm_rq_t *q, int32_t multiplier, int shift, int32_t flags)
{
	q->M = multiplier;
	q->Shift = (signed char) shift;
	q->Left = (signed char) ((shift > 0) ? shift : 0);
	q->Right = (signed char) ((shift > 0) ? 0 : -shift);
	q->Mask = (int32_t) (((uint32_t) 1 << q->Right) - 1u);
	q->Half = q->Mask >> 1;
	q->Single = (signed char) ((flags & AT_TFLM_FLAG_SINGLE_ROUNDING) != 0);
}

/* at_tflm_requant_int8_mode(acc, q's multiplier, shift, flags, out_zero_point, act_min, act_max). */
static inline int8_t at_tflm_rq_int8(const at_tflm_rq_t *q, int32_t acc, int32_t out_zero_point, int32_t act_min,
				     int32_t act_max)
{
	int32_t h, v;

	if (q->Single) {
		int64_t w = at_tflm_mbqm_single(acc, q->M, q->Shift) + out_zero_point;

		w = (w < act_min) ? act_min : w;
		w = (w > act_max) ? act_max : w;
		return (int8_t) w;
	}
	h = at_tflm_srdhm((int32_t) ((uint32_t) acc << q->Left), q->M);
	h = (h >> q->Right) + ((h & q->Mask) > q->Half + (int32_t) ((uint32_t) h >> 31));
	v = (int32_t) ((uint32_t) h + (uint32_t) out_zero_point);
	v = (v < act_min) ? act_min : v;
	v = (v > act_max) ? act_max : v;
	return (int8_t) v;
}

/* Is q TFLM's double rounding with a multiplier other than INT32_MIN (every multiplier
 * QuantizeMultiplier gives): then at_tflm_rq_int8_double applies, with no test per output. */
static inline int at_tflm_rq_is_double(const at_tflm_rq_t *q)
{
	return !q->Single && q->M != INT32_MIN;
}

/* at_tflm_rq_int8 for a q of at_tflm_rq_is_double: SaturatingRoundingDoublingHighMul cannot
 * saturate (b != INT32_MIN), so it is floor((a b + 2^30) / 2^31) alone. With a b = hi 2^32 + lo
 * (lo unsigned) that is 2 hi + floor((lo + 2^30) / 2^31) = 2 hi + ((lo >> 1) + 2^29) >> 30, all on
 * 32 bits (mul, mulh and four simple operations). The clamp is gap_clamp_i32 (p.max, p.min on the
 * cluster). */
static inline int8_t at_tflm_rq_int8_double(const at_tflm_rq_t *q, int32_t acc, int32_t out_zero_point,
					    int32_t act_min, int32_t act_max)
{
	int32_t a = (int32_t) ((uint32_t) acc << q->Left);
	int64_t ab = (int64_t) a * (int64_t) q->M;
	uint32_t lo = (uint32_t) ab, hi = (uint32_t) (ab >> 32);
	int32_t h = (int32_t) (hi * 2u + (((lo >> 1) + (1u << 29)) >> 30));

	h = (h >> q->Right) + ((h & q->Mask) > q->Half + (int32_t) ((uint32_t) h >> 31));
	return (int8_t) gap_clamp_i32((int32_t) ((uint32_t) h + (uint32_t) out_zero_point), act_min, act_max);
}

/* A channel's constants for at_tflm_rq_int8_fast, from a prepared q and the output zero point
 * (at_tflm_rq_fast_of). */
typedef struct {
	int32_t M;		/* the Q31 multiplier */
	int32_t Round;		/* 2^(Right - 2) + OUT_ZP 2^(Right - 1) */
	int32_t Right1;		/* Right - 1 */
} at_tflm_rq_fast_t;

/* Does at_tflm_rq_int8_fast apply to q with this zero point (then *f is set): TFLM's double
 * rounding, M != INT32_MIN, no left shift, Right >= 2 and |Round| <= 2^30 (no overflow below). */
static inline int at_tflm_rq_fast_of(const at_tflm_rq_t *q, int32_t out_zero_point, at_tflm_rq_fast_t *f)
{
	int64_t round;

	if (!at_tflm_rq_is_double(q) || q->Left != 0 || q->Right < 2)
		return 0;
	round = ((int64_t) 1 << (q->Right - 2)) + (int64_t) out_zero_point * ((int64_t) 1 << (q->Right - 1));
	if (round < -((int64_t) 1 << 30) || round > ((int64_t) 1 << 30))
		return 0;
	f->M = q->M;
	f->Round = (int32_t) round;
	f->Right1 = q->Right - 1;
	return 1;
}

/* at_tflm_rq_int8_double(q, acc, out_zero_point, act_min, act_max) for an f of at_tflm_rq_fast_of,
 * in 10 simple operations after the mul and mulh. h = SRDHM(acc, M) = 2 hi + ((lo >> 1) + 2^29) >> 30
 * as there, and |h| < 2^31 (h > INT32_MIN as M != INT32_MIN). RoundingDivideByPOT(h, R) is
 * floor((h + 2^(R-1) - (h < 0)) / 2^R); the sum could overflow (h up to 2^31 - 2), so it is halved
 * first: floor((floor((h - (h < 0)) / 2) + 2^(R-2)) / 2^(R-1)) (nested floors, R >= 2), and
 * h - (h < 0) >= INT32_MIN. The zero point joins the rounding term as OUT_ZP 2^(R-1) (a multiple of
 * the divisor; the result and TFLM's wrapped addition are within 2^31). Each (a + b) >> n is one
 * instruction on the cluster (Gap.h gap_add_*: p.adduNi, p.addNi, p.addN). at_tflm_rq_fast_end takes
 * the product acc M as its low and high words (a mul and gap_mulh_i32): a kernel computes several
 * before their ends, hiding the mulh's latency (5 cycles on the cluster core, GVSoC's RI5CY). */
static inline int8_t at_tflm_rq_fast_end(const at_tflm_rq_fast_t *f, uint32_t lo, uint32_t hi, int32_t act_min,
					 int32_t act_max)
{
	int32_t h = (int32_t) (hi * 2u + gap_add_srl30_u32(lo >> 1, 1u << 29));
	int32_t x = gap_add_sra1_i32(h, h >> 31);

	return (int8_t) gap_clamp_i32(gap_add_sra_i32(x, f->Round, f->Right1), act_min, act_max);
}

static inline int8_t at_tflm_rq_int8_fast(const at_tflm_rq_fast_t *f, int32_t acc, int32_t act_min, int32_t act_max)
{
	return at_tflm_rq_fast_end(f, (uint32_t) acc * (uint32_t) f->M, (uint32_t) gap_mulh_i32(acc, f->M), act_min,
				   act_max);
}

/* A channel's constants for at_tflm_rq_int8_fast2 (at_tflm_rq_fast2_of): accumulators bounded by
 * 2^29 in magnitude (a caller's proof: bias and filter size), the low word of acc M not needed. */
typedef struct {
	int32_t M;		/* the Q31 multiplier */
	int32_t K;		/* 1 + 2^Right + OUT_ZP 2^(Right + 1) */
	int32_t Right1;		/* Right + 1 */
} at_tflm_rq_fast2_t;

/* Does at_tflm_rq_int8_fast2 apply to q with this zero point (then *f is set): TFLM's double
 * rounding, M != INT32_MIN, no left shift, 1 <= Right <= 30 and |K| <= 2^30 - 2, here as
 * K = 1 + 2^Right T, T = 1 + 2 OUT_ZP, |T| <= (2^30 - 3) >> Right (32-bit arithmetic only: a
 * kernel prepares it per block of channels). */
static inline int at_tflm_rq_fast2_of(const at_tflm_rq_t *q, int32_t out_zero_point, at_tflm_rq_fast2_t *f)
{
	int32_t t, lim;

	if (!at_tflm_rq_is_double(q) || q->Left != 0 || q->Right < 1 || q->Right > 30 || out_zero_point < -32768 ||
	    out_zero_point > 32767)
		return 0;
	t = 1 + 2 * out_zero_point;
	lim = (int32_t) ((((uint32_t) 1 << 30) - 3u) >> q->Right);
	if (t < -lim || t > lim)
		return 0;
	f->M = q->M;
	f->K = (int32_t) ((uint32_t) t << q->Right) + 1;
	f->Right1 = q->Right + 1;
	return 1;
}

/* at_tflm_rq_int8_double(q, acc, ...) for |acc| < 2^29 and an f of at_tflm_rq_fast2_of, from
 * hi = mulh(4 acc, M) = floor(acc M / 2^30) alone (no mul, no low word): SRDHM(acc, M) =
 * floor((acc M + 2^30) / 2^31) = floor((hi + 1) / 2) (nested floors), and RoundingDivideByPOT of
 * that by 2^R plus OUT_ZP is floor((hi + K - 2 [h < 0]) / 2^(R + 1)) (nested again; h < 0 iff
 * hi < -1, and at hi = -1 the term changes nothing: K - 1 and K - 3 lie in one multiple of 2^(R+1)
 * as R >= 1), so [hi < 0] serves: 3 simple operations, the shifted add (p.addN) and the clamp.
 * |hi| <= 2 |acc| < 2^30 and |K| <= 2^30 - 2: no overflow. at_tflm_rq_fast2_end takes hi
 * (several mulh issued first: each holds RI5CY's pipeline 5 cycles anyway, GVSoC too). */
static inline int32_t at_tflm_rq_fast2_hi(const at_tflm_rq_fast2_t *f, int32_t acc)
{
	return gap_mulh_i32((int32_t) ((uint32_t) acc << 2), f->M);
}

static inline int8_t at_tflm_rq_fast2_end(const at_tflm_rq_fast2_t *f, int32_t hi, int32_t act_min, int32_t act_max)
{
	int32_t s = hi >> 31;

	return (int8_t) gap_clamp_i32(gap_add_sra_i32(hi + s + s, f->K, f->Right1), act_min, act_max);
}

static inline int8_t at_tflm_rq_int8_fast2(const at_tflm_rq_fast2_t *f, int32_t acc, int32_t act_min, int32_t act_max)
{
	return at_tflm_rq_fast2_end(f, at_tflm_rq_fast2_hi(f, acc), act_min, act_max);
}

/* The original's 1-byte requantisation (Scale_DataSize 1; docs/cnn-sq8-original.md, numpy twin
 * autotiler/generators/sq8_original.py): AT_NORM(x, n), a rounded shift half up on 32 bits
 * (gap_roundnorm_reg: no rounding term for n = 0), and AT_SCALE(x, Scale, ScaleN), the 32-bit
 * product by an unsigned byte (it wraps: the original never widens it) normalised by ScaleN. */
static inline int32_t at_sq8_norm(int32_t x, int n)
{
	return gap_roundnorm_reg(x, n);
}

static inline int32_t at_sq8_scale(int32_t x, uint8_t scale, int scale_n)
{
	return at_sq8_norm((int32_t) ((uint32_t) x * scale), scale_n);
}

/* onnxruntime's arithmetic (docs/cnn-sq8.md §5) computes some layers in float32. */

/* The float32 whose bits are an int32 (an Infos word, a table entry). */
static inline float at_sq8_f32_of_bits(int32_t bits)
{
	union { int32_t i; float f; } u;

	u.i = bits;
	return u.f;
}

/* v rounded to the nearest integer, ties to even, for |v| < 2^22: the float addition of 1.5 2^23
 * rounds (volatile: stored as a float32 even where the compiler keeps wider registers), no libm. */
static inline int at_sq8_rint_f32(float v)
{
	volatile float r = v + 12582912.0f;

	return (int) (r - 12582912.0f);
}

#endif /* __CNN_SQ8_REQUANT_H__ */
