/*
 * Fixed-point helpers shared by the CNN basic kernels: work split, rounded shifts, saturation
 * and the activations. Semantics: docs/cnn-fixed-point.md (numpy twin: cnn_reference.py).
 * Products that the original computes on 32 bits and can overflow are done on 64 bits here;
 * wherever the original does not overflow the results are the same.
 */
#ifndef __CNN_ACTIVATION_H__
#define __CNN_ACTIVATION_H__

#include "Gap.h"

/* The [First, Last) part of N items owned by the calling core: chunks of ceil(N / NCore). */
static inline void CNN_Chunk(int N, int *First, int *Last)
{
	int NCore = (int) gap_ncore();
	int Chunk = (N + NCore - 1) / NCore;
	int F = (int) gap_coreid() * Chunk;

	*First = (F < N) ? F : N;
	*Last = (F + Chunk < N) ? (F + Chunk) : N;
}

/* gap_roundnorm: (x + 2^(n-1)) >> n on 32 bits (wrapping add, arithmetic shift): round half up */
static inline int CNN_Norm(int x, int n) { return gap_roundnorm_reg(x, n); }

/* The same on 64 bits, n in [0, 62] */
static inline long long CNN_Norm64(long long x, int n)
{
	return n ? ((x + (1LL << (n - 1))) >> n) : x;
}

/* x << n on 32 bits, wrapping; a negative n shifts right (arithmetic, floor) */
static inline int CNN_LShift(int x, int n)
{
	return (n >= 0) ? (int) ((unsigned int) x << (n & 31)) : (x >> ((-n) & 31));
}

static inline long long CNN_Clip64(long long x, long long lo, long long hi)
{
	return (x < lo) ? lo : ((x > hi) ? hi : x);
}

/* Saturation to the container: Bits = 15 (int16) or 7 (int8) */
static inline int CNN_Sat(long long x, int Bits)
{
	return (int) CNN_Clip64(x, -(1LL << Bits), (1LL << Bits) - 1);
}

/* round(65536 * sigmoid(i / 24)), i = 0..255 (our table, same definition as the original's) */
static const unsigned short int CNN_SigmoidLUT[256] = {
	32768, 33451, 34133, 34813, 35492, 36169, 36843, 37513, 38179, 38841, 39498, 40149,
	40793, 41432, 42063, 42687, 43303, 43911, 44511, 45101, 45682, 46254, 46816, 47369,
	47911, 48442, 48964, 49474, 49974, 50463, 50941, 51408, 51865, 52310, 52744, 53168,
	53581, 53982, 54374, 54754, 55124, 55484, 55834, 56173, 56502, 56822, 57132, 57433,
	57724, 58006, 58279, 58544, 58800, 59048, 59287, 59519, 59743, 59959, 60168, 60370,
	60565, 60753, 60934, 61109, 61278, 61441, 61598, 61750, 61896, 62036, 62172, 62302,
	62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63453, 63536,
	63615, 63691, 63764, 63835, 63903, 63968, 64030, 64090, 64148, 64203, 64257, 64308,
	64357, 64405, 64450, 64494, 64535, 64576, 64614, 64651, 64687, 64721, 64754, 64786,
	64816, 64845, 64873, 64900, 64925, 64950, 64974, 64997, 65018, 65039, 65060, 65079,
	65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
	65269, 65280, 65291, 65300, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
	65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
	65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
	65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
	65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
	65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
	65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
	65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
	65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
	65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
	65534, 65534, 65534, 65534,
};

/* sigmoid of x in Q12, in Q15: the table entry of floor(|x| * 24 / 4096), mirrored for x <= 0 */
static inline int CNN_SigmoidQ12(int x)
{
	long long a = (x < 0) ? -(long long) x : (long long) x;
	long long idx = (a * 3) >> 9;
	int r = (idx > 255) ? 0xFFFF : CNN_SigmoidLUT[idx];

	if (x <= 0) r = 65536 - r;
	return r >> 1;
}

/* tanh of x in Q12, in Q15: 2*sigmoid(2x) - 1 from the same table */
static inline int CNN_TanhQ12(int x)
{
	long long a = (x < 0) ? -(long long) x : (long long) x;
	long long idx = (a * 3) >> 8;
	int r = (idx > 255) ? 0xFFFF : CNN_SigmoidLUT[idx];

	return (x > 0) ? (r - 32768) : (32768 - r);
}

/* x in Q(From) to Q12: a rounded right shift, or a left shift of x clamped to +-2^18 (the
 * tables saturate from |x| = 43691 in Q12 on, so the clamp changes no result) */
static inline int CNN_ToQ12(int x, int From)
{
	if (From >= 12) return CNN_Norm(x, From - 12);
	return (int) (CNN_Clip64(x, -(1LL << 18), 1LL << 18) << (12 - From));
}

#define CNN_C2 ((1 << 15) / 6)		/* 1/6 in Q15 */
#define CNN_LEAK 409			/* FP2FIX(0.1, 12) */

/*
 * One activation of the int32 accumulator Acc (Q i+w): x = roundnorm(Acc, Norm) is in Q o.
 *   KACT_NONE/RELU/RELUN: clip(x, LB, UB)
 *   KACT_HSIGMOID: roundnorm(clipu(x + 3<<o, 6<<o) * C2, 15)                 o = UB
 *   KACT_HSWISH:   roundnorm(roundnorm(clipu(x + 3<<o, 6<<o) * x, o) * C2, 15)  o = UB
 *   KACT_LEAKY:    x < 0 ? roundnorm(x * 409, 12) : x
 *   KACT_SIGMOID/TANH: the table at Acc in Q12 (shift Norm + Bits - 12), output Q15 (Bits 15)
 *                  or roundnorm(Q15, 8) in Q7 (Bits 7)
 *   KACT_SWISH:    roundnorm(x * sigmoid15(x in Q12), 15)                    o = UB
 * then saturated to the container (Bits).
 */
static inline int CNN_Activation(int Acc, int Norm, int Oper, int LB, int UB, int Bits)
{
	int x = CNN_Norm(Acc, Norm);
	long long y;

	switch (Oper) {
	case KACT_HSIGMOID: {
		int o = UB;
		long long xs = CNN_Clip64(x, -(1LL << 24), 1LL << 24);
		long long r6 = CNN_Clip64(xs + (3LL << o), 0, 6LL << o);
		y = CNN_Norm64(r6 * CNN_C2, 15);
		break;
	}
	case KACT_HSWISH: {
		int o = UB;
		long long xs = CNN_Clip64(x, -(1LL << 24), 1LL << 24);
		long long r6 = CNN_Clip64(xs + (3LL << o), 0, 6LL << o);
		y = CNN_Norm64(CNN_Norm64(r6 * xs, o) * CNN_C2, 15);
		break;
	}
	case KACT_LEAKY:
		y = (x < 0) ? CNN_Norm64((long long) x * CNN_LEAK, 12) : x;
		break;
	case KACT_SIGMOID:
	case KACT_TANH: {
		int x12 = CNN_ToQ12(Acc, Norm + Bits);
		int r = (Oper == KACT_SIGMOID) ? CNN_SigmoidQ12(x12) : CNN_TanhQ12(x12);
		y = (Bits == 15) ? r : CNN_Norm(r, 15 - Bits);
		break;
	}
	case KACT_SWISH: {
		int o = UB;
		long long xs = CNN_Clip64(x, -(1LL << 24), 1LL << 24);
		int s15 = CNN_SigmoidQ12(CNN_ToQ12((int) xs, o));
		y = CNN_Norm64(xs * s15, 15);
		break;
	}
	default:	/* NONE, RELU, RELUN */
		y = CNN_Clip64(x, LB, UB);
		break;
	}
	return CNN_Sat(y, Bits);
}

#endif /* __CNN_ACTIVATION_H__ */
