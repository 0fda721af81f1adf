/*
 * SQ8 convolutions with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Conv.h, docs/cnn-sq8.md
 * "CONV_2D", "DEPTHWISE_CONV_2D"): regular and grouped, HWC (depth wise: CNN_SQ8_ConvDW.c), on one tile of lines.
 *
 * Two paths compute the same wrapped int32 sums. The block path takes 4 output channels x 2 output
 * pixels whose taps all lie inside the tile (interior pixels): each filter row (ky, or each tap
 * (ky, kx) when grouped or dilated) is a run of contiguous bytes both in the HWC input and in the
 * OHWI filter, so 2 input words and 4 filter words feed 8 dot products (pv.sdotsp.b on the
 * cluster, in a hardware loop). The general path (one output at a time, taps tested one by one)
 * does border pixels, the channels left over from a block of 4, and blocks that straddle groups.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Four int8 as one vector, from any address (gap_lw_any: one load on the cluster). */
static inline v4s at_sq8_conv_load4(const signed char *p)
{
	return (v4s) gap_lw_any(p);
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

/* What a call reads once: the Infos words, the chunk's offset, the filter geometry. A filter row
 * is cut into Runs runs of RunLen contiguous bytes: one run of Fx GroupIn per ky when a pixel's
 * taps along x are adjacent in the input (ungrouped, Dx = 1), else one per tap. */
typedef struct {
	int InZp, OutZp, ActMin, ActMax;
	int32_t Flags;
	int Size, Off;		/* filter bytes per output channel; the chunk's first channel */
	int Runs, RunLen;	/* runs per filter row ky, bytes per run */
	int RunIn, RowIn;	/* input bytes between runs, between filter rows (ky) */
	int OyA, OyB, OxA, OxB;	/* the interior pixels (every tap inside the tile): [OyA, OyB) x [OxA, OxB) */
	int StepY, StepX;	/* input bytes between output lines, columns */
} at_sq8_conv_ctx;

/* [*A, *B): the outputs o < Out whose taps o S - Pad + k D, k < F, all lie in [0, Size). */
static void at_sq8_conv_inner(int Out, int Size, int F, int S, int D, int Pad, int *A, int *B)
{
	int Last = Size - 1 - (F - 1) * D + Pad;

	*A = (Pad + S - 1) / S;
	*B = (Last < 0) ? 0 : gap_min(Last / S + 1, Out);
	*B = gap_max(*B, *A);
}

static void at_sq8_conv_context(const KerConv_TFLM_SQ8_T *Arg, at_sq8_conv_ctx *K)
{
	int Adjacent = Arg->GroupIn == Arg->InFeat && Arg->Dx == 1;

	K->InZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP);
	K->OutZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	K->ActMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN);
	K->ActMax = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	K->Flags = at_inf_tflm(Arg->Infos, AT_INF_TFLM_FLAGS);
	K->Size = Arg->Fy * Arg->Fx * Arg->GroupIn;
	K->Off = at_sq8_chunk_offset(Arg);
	K->Runs = Adjacent ? 1 : Arg->Fx;
	K->RunLen = Adjacent ? Arg->Fx * Arg->GroupIn : Arg->GroupIn;
	K->RunIn = Arg->Dx * Arg->InFeat;
	K->RowIn = Arg->Dy * Arg->W * Arg->InFeat;
	K->StepY = Arg->Sy * Arg->W * Arg->InFeat;
	K->StepX = Arg->Sx * Arg->InFeat;
	at_sq8_conv_inner(Arg->Ho, Arg->H, Arg->Fy, Arg->Sy, Arg->Dy, Arg->Pad[2], &K->OyA, &K->OyB);
	at_sq8_conv_inner(Arg->Wo, Arg->W, Arg->Fx, Arg->Sx, Arg->Dx, Arg->PadLeft, &K->OxA, &K->OxB);
}

/* What a block of (up to) 4 channels [c, c + n) reads per channel, once: the requantisation,
 * the filter's sum and the bias; Inner = Bias - IN_ZP Total, an interior pixel's constant term
 * (the block path's sums start from it). Fast: 4 channels, each with its at_tflm_rq_fast_t in F;
 * Double: 4 channels, each at_tflm_rq_is_double. */
typedef struct {
	at_tflm_rq_t Q[4];
	at_tflm_rq_fast_t F[4];
	at_tflm_rq_fast2_t F2[4];
	int Total[4], Fast, Fast2, Double;	/* Fast: F set (only when not Fast2) */
	int32_t Bias[4], Inner[4];
} at_sq8_conv_chans;

/* Total[j] = sum of the n bytes of filter w + j Size, j < 4. On the cluster the words of the 4
 * filters at once on a hardware loop of 8 (4 p.lw, 4 pv.sdotsp.b against ones; no load-use stall),
 * a block's set-up that would otherwise cost a pair's worth of cycles per block. */
static void at_sq8_conv_sum4(const signed char *w, int Size, int n, int *Total)
{
	int j;

#if defined(at_gap_xpulpv2)
	int z0 = 0, z1 = 0, z2 = 0, z3 = 0, Words = n >> 2, S1 = Size, S2 = 2 * Size, S3 = 3 * Size, One = 0x01010101;
	const signed char *w0 = w;

	if (Words > 0)
		__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 8)
			AT_GAP_ASM_PLW_RR("t1", "%[w0]", "%[s1]") AT_GAP_ASM_PLW_RR("t2", "%[w0]", "%[s2]")
			AT_GAP_ASM_PLW_RR("t3", "%[w0]", "%[s3]") AT_GAP_ASM_PLW_PI("t0", "%[w0]")
			AT_GAP_ASM_SDOTSP_B("%[z1]", "%[one]", "t1") AT_GAP_ASM_SDOTSP_B("%[z2]", "%[one]", "t2")
			AT_GAP_ASM_SDOTSP_B("%[z3]", "%[one]", "t3") AT_GAP_ASM_SDOTSP_B("%[z0]", "%[one]", "t0")
			AT_GAP_ASM_NORVC_END
			: [z0] "+r"(z0), [z1] "+r"(z1), [z2] "+r"(z2), [z3] "+r"(z3), [w0] "+r"(w0)
			: [n] "r"(Words), [s1] "r"(S1), [s2] "r"(S2), [s3] "r"(S3), [one] "r"(One)
			: "t0", "t1", "t2", "t3", "memory");
	Total[0] = at_sq8_conv_sum(w0, n & 3, z0);
	Total[1] = at_sq8_conv_sum(w0 + S1, n & 3, z1);
	Total[2] = at_sq8_conv_sum(w0 + S2, n & 3, z2);
	Total[3] = at_sq8_conv_sum(w0 + S3, n & 3, z3);
	(void) j;
#else
	for (j = 0; j < 4; j++)
		Total[j] = at_sq8_conv_sum(w + j * Size, n, 0);
#endif
}

static void at_sq8_conv_chans_of(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, int c, int n,
				 at_sq8_conv_chans *B)
{
	int j;

	B->Fast = B->Fast2 = B->Double = (n == 4);
	if (n == 4)
		at_sq8_conv_sum4(Arg->Filter + c * K->Size, K->Size, K->Size, B->Total);
	for (j = 0; j < n; j++) {
		uint32_t Bias;

		if (n != 4)
			B->Total[j] = at_sq8_conv_sum(Arg->Filter + (c + j) * K->Size, K->Size, 0);
		B->Bias[j] = Arg->Bias[c + j];
		B->Inner[j] = (int32_t) ((uint32_t) B->Bias[j] - (uint32_t) K->InZp * (uint32_t) B->Total[j]);
		at_tflm_rq_prep(&B->Q[j], Arg->Scale[c + j], Arg->ScaleN[c + j], K->Flags);
		B->Double = at_tflm_rq_is_double(&B->Q[j]) && B->Double;
		/* any accumulator of this channel, Bias - IN_ZP sum w + sum w x over a subset of the
		 * filter's taps, is within |Bias| + Size 2^15 (|w|, |x|, |IN_ZP| <= 128): at_tflm_rq_int8_fast2's
		 * 2^29 holds for all of them (nothing wraps then) */
		Bias = (B->Bias[j] < 0) ? 0u - (uint32_t) B->Bias[j] : (uint32_t) B->Bias[j];
		B->Fast2 = B->Fast2 && K->Size < (1 << 14) && Bias + ((uint32_t) K->Size << 15) < (1u << 29) &&
			   at_tflm_rq_fast2_of(&B->Q[j], K->OutZp, &B->F2[j]);
	}
	/* F only where F2 is not (every requantisation prefers F2): less set-up per block */
	B->Fast = B->Fast && !B->Fast2;
	for (j = 0; j < n && B->Fast; j++)
		B->Fast = at_tflm_rq_fast_of(&B->Q[j], K->OutZp, &B->F[j]);
}

/* The 8 wrapped sums of the block path: S[j][k] = Inner[j] + the sum over the filter of channel j
 * (W + j Size) times the input of pixel k (X0, X1 its tap (0, 0)). */
typedef struct {
	int32_t S[4][2];
} at_sq8_conv_sums;

#if defined(at_gap_xpulpv2)
/* Words x 4 bytes of one run on a hardware loop of 14 instructions: 6 post-incremented word
 * loads and 8 pv.sdotsp.b, no branch and no pointer arithmetic (the body must be one asm
 * statement: the compiler knows nothing of the loop). Loads are placed one instruction before
 * their first use where possible (RI5CY's load-use stall). The loaded words live in t0 .. t5,
 * clobbered: with them as operands the statement would exceed GCC's 30 operands. */
#define AT_SQ8_CONV_RUN_WORDS(Words)                                                                    \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 14)                        \
		AT_GAP_ASM_PLW_PI("t0", "%[x0]") AT_GAP_ASM_PLW_PI("t1", "%[x1]")                  \
		AT_GAP_ASM_PLW_PI("t2", "%[w0]") AT_GAP_ASM_PLW_PI("t3", "%[w1]")                  \
		AT_GAP_ASM_SDOTSP_B("%[s00]", "t0", "t2") AT_GAP_ASM_SDOTSP_B("%[s01]", "t1", "t2") \
		AT_GAP_ASM_PLW_PI("t4", "%[w2]")                                                      \
		AT_GAP_ASM_SDOTSP_B("%[s10]", "t0", "t3") AT_GAP_ASM_SDOTSP_B("%[s11]", "t1", "t3") \
		AT_GAP_ASM_PLW_PI("t5", "%[w3]")                                                      \
		AT_GAP_ASM_SDOTSP_B("%[s20]", "t0", "t4") AT_GAP_ASM_SDOTSP_B("%[s21]", "t1", "t4") \
		AT_GAP_ASM_SDOTSP_B("%[s30]", "t0", "t5") AT_GAP_ASM_SDOTSP_B("%[s31]", "t1", "t5") \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11),                    \
		  [s20] "+r"(s20), [s21] "+r"(s21), [s30] "+r"(s30), [s31] "+r"(s31),                    \
		  [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3) \
		: [n] "r"(Words)                                                                        \
		: "t0", "t1", "t2", "t3", "t4", "t5", "memory")
#endif

/* One word of the block's 4 filters against one word of each of its 2 pixels (14 instructions:
 * 6 p.lw, 8 pv.sdotsp.b): the body of the hardware loops below, w0 the first filter, S1..S3 the
 * others' offsets (p.lw register-register), w0 post-incremented last; and those loops' outputs. */
#define AT_SQ8_CONV_WORD_ASM                                                                            \
		AT_GAP_ASM_PLW_PI("t0", "%[x0]") AT_GAP_ASM_PLW_PI("t1", "%[x1]")                        \
		AT_GAP_ASM_PLW_RR("t3", "%[w0]", "%[s1]") AT_GAP_ASM_PLW_RR("t4", "%[w0]", "%[s2]")      \
		AT_GAP_ASM_PLW_RR("t5", "%[w0]", "%[s3]") AT_GAP_ASM_PLW_PI("t2", "%[w0]")               \
		AT_GAP_ASM_SDOTSP_B("%[s10]", "t0", "t3") AT_GAP_ASM_SDOTSP_B("%[s11]", "t1", "t3")      \
		AT_GAP_ASM_SDOTSP_B("%[s00]", "t0", "t2") AT_GAP_ASM_SDOTSP_B("%[s01]", "t1", "t2")      \
		AT_GAP_ASM_SDOTSP_B("%[s20]", "t0", "t4") AT_GAP_ASM_SDOTSP_B("%[s21]", "t1", "t4")      \
		AT_GAP_ASM_SDOTSP_B("%[s30]", "t0", "t5") AT_GAP_ASM_SDOTSP_B("%[s31]", "t1", "t5")
#define AT_SQ8_CONV_WORD_OUTPUTS                                                                        \
		: [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11),                    \
		  [s20] "+r"(s20), [s21] "+r"(s21), [s30] "+r"(s30), [s31] "+r"(s31),                    \
		  [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(w0)

/* The whole block when every filter row is one run of whole words (Runs 1, RunLen % 4 == 0):
 * Rows x Words words on two nested hardware loops, the outer one stepping the input pointers by
 * Skip from row to row (the filter rows follow each other). To stay within GCC's 30 asm operands
 * the 4 filters are one pointer w0 and the offsets S1 = Size, S2, S3 of the others (p.lw reg-reg
 * loads), w0 post-incremented by its own load, last. Loop 1 (outer) ends 2 words after loop 0. */
#define AT_SQ8_CONV_ROWS_WORDS(Rows, Words, Skip, S1, S2, S3)                                           \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP1("%[rows]", 17)                     \
		AT_GAP_ASM_LP_SETUP0("%[n]", 14)                                                        \
		AT_SQ8_CONV_WORD_ASM                                                                    \
		"add %[x0], %[x0], %[skip]\n\t"                                                         \
		"add %[x1], %[x1], %[skip]\n\t"                                                         \
		AT_GAP_ASM_NORVC_END                                                                    \
		AT_SQ8_CONV_WORD_OUTPUTS                                                                \
		: [n] "r"(Words), [rows] "r"(Rows), [skip] "r"(Skip), [s1] "r"(S1), [s2] "r"(S2), [s3] "r"(S3) \
		: "t0", "t1", "t2", "t3", "t4", "t5", "memory")

/* AT_SQ8_CONV_ROWS_WORDS for one row: one hardware loop, 3 operands fewer (the pair loop around it
 * keeps more in registers). */
#define AT_SQ8_CONV_ROW_WORDS(Words, S1, S2, S3)                                                        \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 14)                        \
		AT_SQ8_CONV_WORD_ASM                                                                    \
		AT_GAP_ASM_NORVC_END                                                                    \
		AT_SQ8_CONV_WORD_OUTPUTS                                                                \
		: [n] "r"(Words), [s1] "r"(S1), [s2] "r"(S2), [s3] "r"(S3)                              \
		: "t0", "t1", "t2", "t3", "t4", "t5", "memory")

/* AT_SQ8_CONV_ROWS_WORDS on filter rows cut short: the filter pointer steps WSkip bytes more from
 * a row's run to the next (a border column's taps are part of each filter row). Loop 1 ends 3
 * words after loop 0. */
#define AT_SQ8_CONV_ROWS_WORDS_CUT(Rows, Words, Skip, WSkip, S1, S2, S3)                                \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP1("%[rows]", 18)                     \
		AT_GAP_ASM_LP_SETUP0("%[n]", 14)                                                        \
		AT_SQ8_CONV_WORD_ASM                                                                    \
		"add %[x0], %[x0], %[skip]\n\t"                                                         \
		"add %[x1], %[x1], %[skip]\n\t"                                                         \
		"add %[w0], %[w0], %[wskip]\n\t"                                                        \
		AT_GAP_ASM_NORVC_END                                                                    \
		AT_SQ8_CONV_WORD_OUTPUTS                                                                \
		: [n] "r"(Words), [rows] "r"(Rows), [skip] "r"(Skip), [wskip] "r"(WSkip), [s1] "r"(S1),   \
		  [s2] "r"(S2), [s3] "r"(S3)                                                            \
		: "t0", "t1", "t2", "t3", "t4", "t5", "memory")

/* One run of Len bytes (x0, x1 in the input, w0 .. w3 the 4 filters) into the 8 sums: words,
 * then the last Len % 4 bytes one by one. */
#define AT_SQ8_CONV_RUN_TAIL(Len)                                                                       \
	do {                                                                                            \
		int t_;                                                                                 \
		for (t_ = 0; t_ < ((Len) & 3); t_++) {                                                  \
			int u0_ = x0[t_], u1_ = x1[t_];                                                 \
			s00 = (int) ((unsigned int) s00 + (unsigned int) (u0_ * w0[t_]));               \
			s01 = (int) ((unsigned int) s01 + (unsigned int) (u1_ * w0[t_]));               \
			s10 = (int) ((unsigned int) s10 + (unsigned int) (u0_ * w1[t_]));               \
			s11 = (int) ((unsigned int) s11 + (unsigned int) (u1_ * w1[t_]));               \
			s20 = (int) ((unsigned int) s20 + (unsigned int) (u0_ * w2[t_]));               \
			s21 = (int) ((unsigned int) s21 + (unsigned int) (u1_ * w2[t_]));               \
			s30 = (int) ((unsigned int) s30 + (unsigned int) (u0_ * w3[t_]));               \
			s31 = (int) ((unsigned int) s31 + (unsigned int) (u1_ * w3[t_]));               \
		}                                                                                       \
		x0 += t_; x1 += t_; w0 += t_; w1 += t_; w2 += t_; w3 += t_;                            \
	} while (0)

/* The block path's sums; the input pointers step from run to run and row to row (the filter
 * runs are contiguous: w0 .. w3 simply go on). */
static inline __attribute__((always_inline)) void at_sq8_conv_block(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const signed char *X0,
			      const signed char *X1, const signed char *W, const int32_t *Inner, at_sq8_conv_sums *R)
{
	int s00 = Inner[0], s01 = Inner[0], s10 = Inner[1], s11 = Inner[1], s20 = Inner[2], s21 = Inner[2];
	int s30 = Inner[3], s31 = Inner[3];
	int Words = K->RunLen >> 2, Skip = K->RunIn - K->RunLen, RowSkip = K->RowIn - K->Runs * K->RunIn, ky, r;
	const signed char *x0 = X0, *x1 = X1, *w0 = W, *w1 = W + K->Size, *w2 = w1 + K->Size, *w3 = w2 + K->Size;

#if defined(at_gap_xpulpv2)
	if (K->Runs == 1 && (K->RunLen & 3) == 0 && Words > 0) {
		int S1 = K->Size, S2 = 2 * K->Size, S3 = 3 * K->Size, Rows = Arg->Fy, RSkip = K->RowIn - K->RunLen;

		AT_SQ8_CONV_ROWS_WORDS(Rows, Words, RSkip, S1, S2, S3);
		goto done;
	}
#endif
	for (ky = 0; ky < Arg->Fy; ky++) {
		for (r = 0; r < K->Runs; r++) {
#if defined(at_gap_xpulpv2)
			if (Words > 0)
				AT_SQ8_CONV_RUN_WORDS(Words);
#else
			int i;

			for (i = 0; i < Words; i++) {
				v4s a0 = (v4s) gap_lw_postinc(x0), a1 = (v4s) gap_lw_postinc(x1);
				v4s b0 = (v4s) gap_lw_postinc(w0), b1 = (v4s) gap_lw_postinc(w1);
				v4s b2 = (v4s) gap_lw_postinc(w2), b3 = (v4s) gap_lw_postinc(w3);

				s00 = gap_sumdotp4(a0, b0, s00); s01 = gap_sumdotp4(a1, b0, s01);
				s10 = gap_sumdotp4(a0, b1, s10); s11 = gap_sumdotp4(a1, b1, s11);
				s20 = gap_sumdotp4(a0, b2, s20); s21 = gap_sumdotp4(a1, b2, s21);
				s30 = gap_sumdotp4(a0, b3, s30); s31 = gap_sumdotp4(a1, b3, s31);
			}
#endif
			AT_SQ8_CONV_RUN_TAIL(K->RunLen);
			x0 += Skip; x1 += Skip;
		}
		x0 += RowSkip; x1 += RowSkip;
	}
#if defined(at_gap_xpulpv2)
done:
#endif
	R->S[0][0] = s00; R->S[0][1] = s01; R->S[1][0] = s10; R->S[1][1] = s11;
	R->S[2][0] = s20; R->S[2][1] = s21; R->S[3][0] = s30; R->S[3][1] = s31;
}

/* The rectangle of work of this core: flat output pixels [P0, P1) x chunk channels [C0, C1).
 * Channels go by blocks of 4 (the block path's): the cores form Groups channel groups (the
 * largest power of two <= the blocks, at most the cores), each group's cores share the pixels. */
typedef struct {
	int P0, P1, C0, C1;
} at_sq8_conv_work;

static void at_sq8_conv_share(const KerConv_TFLM_SQ8_T *Arg, at_sq8_conv_work *Wk)
{
	int NCore = gap_ncore(), Core = gap_coreid(), Pixels = Arg->Ho * Arg->Wo;
	int Blocks = (Arg->Chunk + 3) / 4, Groups = 1, Per, Group, Member, Members, B0, B1, PPer;

	while (Groups * 2 <= NCore && Groups * 2 <= Blocks)
		Groups *= 2;
	Members = NCore / Groups;
	Group = Core / Members;
	Member = Core - Group * Members;
	Per = Blocks / Groups;
	B0 = Group * Per + gap_min(Group, Blocks - Per * Groups);
	B1 = B0 + Per + (Group < Blocks - Per * Groups);
	Wk->C0 = gap_min(4 * B0, Arg->Chunk);
	Wk->C1 = gap_min(4 * B1, Arg->Chunk);
	PPer = (Pixels + Members - 1) / Members;
	Wk->P0 = gap_min(Member * PPer, Pixels);
	Wk->P1 = gap_min(Wk->P0 + PPer, Pixels);
}

/* Output pixel (oy, ox) (its output bytes at O, channel c), chunk channels [c, c + n), on the
 * general path. */
static void at_sq8_conv_general(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
				int oy, int ox, int c, int n, signed char *O)
{
	int j;

	for (j = 0; j < n; j++) {
		int InOff = ((K->Off + c + j) / Arg->GroupOut) * Arg->GroupIn;
		int32_t Acc = at_sq8_conv_acc(Arg, Arg->Filter + (c + j) * K->Size, InOff, B->Total[j], K->InZp, oy, ox);

		Acc = (int32_t) ((uint32_t) Acc + (uint32_t) B->Bias[j]);
		O[j] = at_tflm_rq_int8(&B->Q[j], Acc, K->OutZp, K->ActMin, K->ActMax);
	}
}

/* Channels 0, 1 of F (sums a0, a1 and b0, b1 of pixels 0, 1) requantised into O0[0, 1], O1[0, 1]:
 * the 4 products first, then their ends (the mulh results are ready by then). */
static inline __attribute__((always_inline)) void at_sq8_conv_rq_pair(const at_tflm_rq_fast_t *F, int32_t a0, int32_t a1,
								      int32_t b0, int32_t b1, int32_t Lo, int32_t Hi,
								      signed char *O0, signed char *O1)
{
	uint32_t ha0 = (uint32_t) gap_mulh_i32(a0, F[0].M), ha1 = (uint32_t) gap_mulh_i32(a1, F[0].M);
	uint32_t hb0 = (uint32_t) gap_mulh_i32(b0, F[1].M), hb1 = (uint32_t) gap_mulh_i32(b1, F[1].M);

	O0[0] = at_tflm_rq_fast_end(&F[0], (uint32_t) a0 * (uint32_t) F[0].M, ha0, Lo, Hi);
	O1[0] = at_tflm_rq_fast_end(&F[0], (uint32_t) a1 * (uint32_t) F[0].M, ha1, Lo, Hi);
	O0[1] = at_tflm_rq_fast_end(&F[1], (uint32_t) b0 * (uint32_t) F[1].M, hb0, Lo, Hi);
	O1[1] = at_tflm_rq_fast_end(&F[1], (uint32_t) b1 * (uint32_t) F[1].M, hb1, Lo, Hi);
}

/* at_tflm_rq_fast2_end; Full (a constant where inlined): the clamp is [-128, 127] (Lo = -Hi - 1,
 * Hi = 127), on the cluster one p.clip (clip to [-Hi - 1, Hi]) for p.max and p.min. (hi + 2 [hi < 0]
 * as one p.mac measured no faster on GVSoC: its result has a latency of 2.) */
static inline __attribute__((always_inline)) int8_t at_sq8_conv_rq2_end(const at_tflm_rq_fast2_t *f, int32_t hi, int32_t Lo,
								      int32_t Hi, int Full)
{
#if defined(at_gap_xpulpv2)
	if (Full) {
		int32_t s = hi >> 31, v = gap_add_sra_i32(hi + s + s, f->K, f->Right1);

		__asm__(".insn r 0x33, 5, 0x0a, %0, %1, %2" : "=r"(v) : "r"(v), "r"(Hi));
		return (int8_t) v;
	}
#else
	(void) Full;
#endif
	return at_tflm_rq_fast2_end(f, hi, Lo, Hi);
}

/* at_sq8_conv_rq_pair with the constants of at_tflm_rq_int8_fast2 (B->Fast2): the 4 mulh first. */
static inline __attribute__((always_inline)) void at_sq8_conv_rq_pair2(const at_tflm_rq_fast2_t *F, int32_t a0, int32_t a1,
								       int32_t b0, int32_t b1, int32_t Lo, int32_t Hi,
								       signed char *O0, signed char *O1, int Full)
{
	/* the constants copied first: a byte store may alias them (the compiler would reload them) */
	at_tflm_rq_fast2_t Fa = F[0], Fb = F[1];
	int32_t ha0 = at_tflm_rq_fast2_hi(&Fa, a0), ha1 = at_tflm_rq_fast2_hi(&Fa, a1);
	int32_t hb0 = at_tflm_rq_fast2_hi(&Fb, b0), hb1 = at_tflm_rq_fast2_hi(&Fb, b1);

	O0[0] = at_sq8_conv_rq2_end(&Fa, ha0, Lo, Hi, Full);
	O1[0] = at_sq8_conv_rq2_end(&Fa, ha1, Lo, Hi, Full);
	O0[1] = at_sq8_conv_rq2_end(&Fb, hb0, Lo, Hi, Full);
	O1[1] = at_sq8_conv_rq2_end(&Fb, hb1, Lo, Hi, Full);
}

/* Requantise and store the block path's sums of pixels 0 .. Two (their output bytes at O0, O1)
 * for 4 channels: B->Fast2 (the common case), B->Fast or B->Double straight-line, no test per output. */
static inline __attribute__((always_inline)) void at_sq8_conv_store(const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
								    const at_sq8_conv_sums *R, int Two, signed char *O0,
								    signed char *O1)
{
	int32_t Lo = K->ActMin, Hi = K->ActMax;
	int j;

	if (B->Fast2 && Two) {
		at_sq8_conv_rq_pair2(&B->F2[0], R->S[0][0], R->S[0][1], R->S[1][0], R->S[1][1], Lo, Hi, O0, O1, 0);
		at_sq8_conv_rq_pair2(&B->F2[2], R->S[2][0], R->S[2][1], R->S[3][0], R->S[3][1], Lo, Hi, O0 + 2, O1 + 2, 0);
		return;
	}
	if (B->Fast2) {
		for (j = 0; j < 4; j++)
			O0[j] = at_tflm_rq_int8_fast2(&B->F2[j], R->S[j][0], Lo, Hi);
		return;
	}
	if (B->Fast && Two) {
		at_sq8_conv_rq_pair(&B->F[0], R->S[0][0], R->S[0][1], R->S[1][0], R->S[1][1], Lo, Hi, O0, O1);
		at_sq8_conv_rq_pair(&B->F[2], R->S[2][0], R->S[2][1], R->S[3][0], R->S[3][1], Lo, Hi, O0 + 2, O1 + 2);
		return;
	}
	if (B->Double && Two) {
		for (j = 0; j < 4; j++) {
			O0[j] = at_tflm_rq_int8_double(&B->Q[j], R->S[j][0], K->OutZp, Lo, Hi);
			O1[j] = at_tflm_rq_int8_double(&B->Q[j], R->S[j][1], K->OutZp, Lo, Hi);
		}
		return;
	}
	for (j = 0; j < 4; j++) {
		O0[j] = at_tflm_rq_int8(&B->Q[j], R->S[j][0], K->OutZp, Lo, Hi);
		if (Two)
			O1[j] = at_tflm_rq_int8(&B->Q[j], R->S[j][1], K->OutZp, Lo, Hi);
	}
}

/* Requantise and store one pixel's accumulators Acc[0 .. 3] of a block of 4 channels (at O). */
static void at_sq8_conv_store1(const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B, const int *Acc, signed char *O)
{
	int j;

	if (B->Fast2) {
		int32_t h0 = at_tflm_rq_fast2_hi(&B->F2[0], Acc[0]), h1 = at_tflm_rq_fast2_hi(&B->F2[1], Acc[1]);
		int32_t h2 = at_tflm_rq_fast2_hi(&B->F2[2], Acc[2]), h3 = at_tflm_rq_fast2_hi(&B->F2[3], Acc[3]);

		O[0] = at_tflm_rq_fast2_end(&B->F2[0], h0, K->ActMin, K->ActMax);
		O[1] = at_tflm_rq_fast2_end(&B->F2[1], h1, K->ActMin, K->ActMax);
		O[2] = at_tflm_rq_fast2_end(&B->F2[2], h2, K->ActMin, K->ActMax);
		O[3] = at_tflm_rq_fast2_end(&B->F2[3], h3, K->ActMin, K->ActMax);
		return;
	}
	if (B->Fast) {
		uint32_t h0 = (uint32_t) gap_mulh_i32(Acc[0], B->F[0].M), h1 = (uint32_t) gap_mulh_i32(Acc[1], B->F[1].M);
		uint32_t h2 = (uint32_t) gap_mulh_i32(Acc[2], B->F[2].M), h3 = (uint32_t) gap_mulh_i32(Acc[3], B->F[3].M);

		O[0] = at_tflm_rq_fast_end(&B->F[0], (uint32_t) Acc[0] * (uint32_t) B->F[0].M, h0, K->ActMin, K->ActMax);
		O[1] = at_tflm_rq_fast_end(&B->F[1], (uint32_t) Acc[1] * (uint32_t) B->F[1].M, h1, K->ActMin, K->ActMax);
		O[2] = at_tflm_rq_fast_end(&B->F[2], (uint32_t) Acc[2] * (uint32_t) B->F[2].M, h2, K->ActMin, K->ActMax);
		O[3] = at_tflm_rq_fast_end(&B->F[3], (uint32_t) Acc[3] * (uint32_t) B->F[3].M, h3, K->ActMin, K->ActMax);
		return;
	}
	for (j = 0; j < 4; j++)
		O[j] = at_tflm_rq_int8(&B->Q[j], Acc[j], K->OutZp, K->ActMin, K->ActMax);
}

/* [*A, *B): the taps k < F of an output whose first tap is at o, o + k D inside [0, Size). */
static inline void at_sq8_conv_taps(int o, int Size, int F, int D, int *A, int *B)
{
	*A = (o < 0) ? (-o + D - 1) / D : 0;
	*B = (o > Size - 1) ? 0 : gap_min(F, (Size - 1 - o) / D + 1);
	*B = gap_max(*B, *A);
}

/* acc_j + sum x[i] w_j[i] and z_j + sum w_j[i], i < n, for the 4 filters w_j = w + j Size. */
static inline void at_sq8_conv_run4x1(const signed char *x, const signed char *w, int Size, int n, int *acc, int *z)
{
	const signed char *w0 = w, *w1 = w + Size, *w2 = w1 + Size, *w3 = w2 + Size;
	int s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3], z0 = z[0], z1 = z[1], z2 = z[2], z3 = z[3], i;

#if defined(at_gap_xpulpv2)
	/* the words on a hardware loop of 13: 5 loads (w1 .. w3 reg-reg from w0) and 8 pv.sdotsp.b */
	if (n >= 4) {
		int Words = n >> 2, S1 = Size, S2 = 2 * Size, S3 = 3 * Size, One = 0x01010101;

		__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 13)
			AT_GAP_ASM_PLW_PI("t0", "%[x]") AT_GAP_ASM_PLW_RR("t2", "%[w0]", "%[s1]")
			AT_GAP_ASM_PLW_RR("t3", "%[w0]", "%[s2]") AT_GAP_ASM_PLW_RR("t4", "%[w0]", "%[s3]")
			AT_GAP_ASM_PLW_PI("t1", "%[w0]")
			AT_GAP_ASM_SDOTSP_B("%[s1r]", "t0", "t2") AT_GAP_ASM_SDOTSP_B("%[z1]", "%[one]", "t2")
			AT_GAP_ASM_SDOTSP_B("%[s2r]", "t0", "t3") AT_GAP_ASM_SDOTSP_B("%[z2]", "%[one]", "t3")
			AT_GAP_ASM_SDOTSP_B("%[s0r]", "t0", "t1") AT_GAP_ASM_SDOTSP_B("%[z0]", "%[one]", "t1")
			AT_GAP_ASM_SDOTSP_B("%[s3r]", "t0", "t4") AT_GAP_ASM_SDOTSP_B("%[z3]", "%[one]", "t4")
			AT_GAP_ASM_NORVC_END
			: [s0r] "+r"(s0), [s1r] "+r"(s1), [s2r] "+r"(s2), [s3r] "+r"(s3),
			  [z0] "+r"(z0), [z1] "+r"(z1), [z2] "+r"(z2), [z3] "+r"(z3), [x] "+r"(x), [w0] "+r"(w0)
			: [n] "r"(Words), [s1] "r"(S1), [s2] "r"(S2), [s3] "r"(S3), [one] "r"(One)
			: "t0", "t1", "t2", "t3", "t4", "memory");
		i = Words << 2;
		w1 = w0 + Size; w2 = w1 + Size; w3 = w2 + Size;
	} else {
		i = 0;
	}
#else
	for (i = 0; i + 4 <= n; i += 4) {
		const v4s ones = {1, 1, 1, 1};
		v4s a = (v4s) gap_lw_postinc(x);
		v4s b0 = (v4s) gap_lw_postinc(w0), b1 = (v4s) gap_lw_postinc(w1);
		v4s b2 = (v4s) gap_lw_postinc(w2), b3 = (v4s) gap_lw_postinc(w3);

		s0 = gap_sumdotp4(a, b0, s0); z0 = gap_sumdotp4(ones, b0, z0);
		s1 = gap_sumdotp4(a, b1, s1); z1 = gap_sumdotp4(ones, b1, z1);
		s2 = gap_sumdotp4(a, b2, s2); z2 = gap_sumdotp4(ones, b2, z2);
		s3 = gap_sumdotp4(a, b3, s3); z3 = gap_sumdotp4(ones, b3, z3);
	}
#endif
	for (; i < n; i++, x++, w0++, w1++, w2++, w3++) {
		s0 = (int) ((unsigned int) s0 + (unsigned int) (*x * *w0)); z0 += *w0;
		s1 = (int) ((unsigned int) s1 + (unsigned int) (*x * *w1)); z1 += *w1;
		s2 = (int) ((unsigned int) s2 + (unsigned int) (*x * *w2)); z2 += *w2;
		s3 = (int) ((unsigned int) s3 + (unsigned int) (*x * *w3)); z3 += *w3;
	}
	acc[0] = s0; acc[1] = s1; acc[2] = s2; acc[3] = s3;
	z[0] = z0; z[1] = z1; z[2] = z2; z[3] = z3;
}

/* A border pixel (oy, ox) (output bytes at O), channels [c, c + 4) of one group (input channel
 * InOff on): its in-tile taps only, as runs (the clipped part of a filter row, or each tap) for
 * the 4 channels at once; the zero point's term uses the same taps' filter sums. */
static void at_sq8_conv_border4(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
				int oy, int ox, int c, int InOff, signed char *O)
{
	int y0 = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft, KyA, KyB, KxA, KxB, ky, kx, j;
	int Acc[4] = {0, 0, 0, 0}, Z[4] = {0, 0, 0, 0}, G = Arg->GroupIn;
	const signed char *W = Arg->Filter + c * K->Size;

	at_sq8_conv_taps(y0, Arg->H, Arg->Fy, Arg->Dy, &KyA, &KyB);
	at_sq8_conv_taps(x0, Arg->W, Arg->Fx, Arg->Dx, &KxA, &KxB);
	for (ky = KyA; ky < KyB; ky++) {
		/* tap (ky, KxA): inside the tile (no pointer outside the buffers) */
		const signed char *Row = Arg->In + ((y0 + ky * Arg->Dy) * Arg->W + x0 + KxA * Arg->Dx) * Arg->InFeat + InOff;
		const signed char *WRow = W + (ky * Arg->Fx + KxA) * G;

		if (K->Runs == 1)
			at_sq8_conv_run4x1(Row, WRow, K->Size, (KxB - KxA) * G, Acc, Z);
		else
			for (kx = 0; kx < KxB - KxA; kx++)
				at_sq8_conv_run4x1(Row + kx * K->RunIn, WRow + kx * G, K->Size, G, Acc, Z);
	}
	for (j = 0; j < 4; j++)
		Acc[j] = (int32_t) ((uint32_t) Acc[j] - (uint32_t) K->InZp * (uint32_t) Z[j] + (uint32_t) B->Bias[j]);
	at_sq8_conv_store1(K, B, Acc, O);
}

/* Filters of at most this many bytes whose runs are shorter than 8 bytes (a first layer's single
 * channel) take border pixels through a column (at_sq8_conv_border_col): the clipped runs of
 * at_sq8_conv_border4 would be a few bytes each, all overhead (measured: from 9-byte runs on,
 * at_sq8_conv_border4 is faster). 128 bytes of stack per core. */
#define AT_SQ8_CONV_COL_MAX 128

/* A border pixel (oy, ox) as at_sq8_conv_border4, through the pixel's column: its Fy x Fx x GroupIn
 * taps in filter order, IN_ZP where a tap is outside the tile. A padded tap then adds
 * w (IN_ZP - IN_ZP) = 0 to sum w (x - IN_ZP), so the column's dot is an interior pixel's: one run
 * of Size bytes, and the constant term Inner. */
static __attribute__((noinline)) void at_sq8_conv_border_col(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K,
				   const at_sq8_conv_chans *B, int oy, int ox, int c, int InOff, signed char *O)
{
	int Col[AT_SQ8_CONV_COL_MAX / 4], Acc[4] = {0, 0, 0, 0}, Z[4] = {0, 0, 0, 0};
	int y0 = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft, G = Arg->GroupIn, Row = Arg->Fx * G;
	int KxA, KxB, ky, kx, g, j;
	signed char *C = (signed char *) Col, Zp = (signed char) K->InZp;

	at_sq8_conv_taps(x0, Arg->W, Arg->Fx, Arg->Dx, &KxA, &KxB);
	for (ky = 0; ky < Arg->Fy; ky++, C += Row) {
		int y = y0 + ky * Arg->Dy;
		const signed char *Src;

		if (y < 0 || y >= Arg->H || KxA == KxB) {
			for (g = 0; g < Row; g++)
				C[g] = Zp;
			continue;
		}
		for (g = 0; g < KxA * G; g++)
			C[g] = Zp;
		Src = Arg->In + (y * Arg->W + x0 + KxA * Arg->Dx) * Arg->InFeat + InOff;
		if (K->Runs == 1)	/* the in-tile taps of the row are adjacent: one copy */
			for (g = KxA * G; g < KxB * G; g++, Src++)
				C[g] = *Src;
		else
			for (kx = KxA; kx < KxB; kx++, Src += K->RunIn)
				for (g = 0; g < G; g++)
					C[kx * G + g] = Src[g];
		for (g = KxB * G; g < Row; g++)
			C[g] = Zp;
	}
	at_sq8_conv_run4x1((const signed char *) Col, Arg->Filter + c * K->Size, K->Size, K->Size, Acc, Z);
	for (j = 0; j < 4; j++)
		Acc[j] = (int32_t) ((uint32_t) Acc[j] + (uint32_t) B->Inner[j]);
	at_sq8_conv_store1(K, B, Acc, O);
}

#if defined(at_gap_xpulpv2)
/* The filters of at_sq8_conv_pairs_fast: W (the 4 filters Stride bytes apart), rows of Words
 * words, the input pointers stepping RSkip from a row's end to the next; Over: the bytes read past
 * a row's run (its filter bytes there are 0). */
typedef struct {
	const signed char *W;
	int Words, Stride, RSkip, Over;
} at_sq8_conv_rows;

/* Runs shorter than whole words (3x3 on 3 channels: 9 bytes) are padded with zeros into a copy of
 * the block's 4 filters of at most this many bytes (per core, on the stack). */
#define AT_SQ8_CONV_PAD_MAX 192

/* The 8 sums of a pair (R) requantised into O0[0 .. 3], O1[0 .. 3] with the fast constants F: a
 * function of its own and a loop over the channels, so that the pairs' loop and this stay small
 * (the cluster's instruction caches: 512 bytes per core, 2 KiB shared, in GVSoC's pulp-open). */
static __attribute__((noinline)) void at_sq8_conv_rq8(const at_tflm_rq_fast_t *F, const at_sq8_conv_sums *R, int32_t Lo,
						      int32_t Hi, signed char *O0, signed char *O1)
{
	int j;

	for (j = 0; j < 4; j++) {
		int32_t a0 = R->S[j][0], a1 = R->S[j][1];
		uint32_t h0 = (uint32_t) gap_mulh_i32(a0, F[j].M), h1 = (uint32_t) gap_mulh_i32(a1, F[j].M);

		O0[j] = at_tflm_rq_fast_end(&F[j], (uint32_t) a0 * (uint32_t) F[j].M, h0, Lo, Hi);
		O1[j] = at_tflm_rq_fast_end(&F[j], (uint32_t) a1 * (uint32_t) F[j].M, h1, Lo, Hi);
	}
}

/* at_sq8_conv_rq8 with the constants of at_tflm_rq_int8_fast2 (B->Fast2). */
static __attribute__((noinline)) void at_sq8_conv_rq8_2(const at_tflm_rq_fast2_t *F, const at_sq8_conv_sums *R, int32_t Lo,
							int32_t Hi, signed char *O0, signed char *O1)
{
	int j;

	for (j = 0; j < 4; j++) {
		int32_t h0 = at_tflm_rq_fast2_hi(&F[j], R->S[j][0]), h1 = at_tflm_rq_fast2_hi(&F[j], R->S[j][1]);

		O0[j] = at_tflm_rq_fast2_end(&F[j], h0, Lo, Hi);
		O1[j] = at_tflm_rq_fast2_end(&F[j], h1, Lo, Hi);
	}
}

/* Can at_sq8_conv_pairs_fast take this block's interior pixels (B->Fast or Fast2, each filter row one run):
 * then *G, from the filters at W, or from their copy in Pad with each row padded to whole words. */
static int at_sq8_conv_fast_rows(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
				 const signed char *W, signed char *Pad, at_sq8_conv_rows *G)
{
	int Len = (K->RunLen + 3) & ~3, j, ky, i;

	if (!(B->Fast || B->Fast2) || K->Runs != 1 || K->RunLen == 0 || (Len != K->RunLen && 4 * Arg->Fy * Len > AT_SQ8_CONV_PAD_MAX))
		return 0;
	G->Words = Len >> 2;
	G->RSkip = K->RowIn - Len;
	G->Over = Len - K->RunLen;
	G->W = W;
	G->Stride = K->Size;
	if (G->Over == 0)
		return 1;
	for (j = 0; j < 4; j++)
		for (ky = 0; ky < Arg->Fy; ky++)
			for (i = 0; i < Len; i++)
				Pad[(j * Arg->Fy + ky) * Len + i] = (i < K->RunLen) ? W[j * K->Size + ky * K->RunLen + i] : 0;
	G->W = Pad;
	G->Stride = Arg->Fy * Len;
	return 1;
}

/* at_sq8_conv_pairs_fast's loop in one requantisation mode (a constant where inlined, so that each
 * loop holds only its own code: the cores' 512-byte instruction caches): 0 at_sq8_conv_rq_pair,
 * 1 through at_sq8_conv_rq8 / at_sq8_conv_rq8_2 (Small), 2 at_sq8_conv_rq_pair2 (B->Fast2); 3 and
 * 4: 0 and 2 on one row (AT_SQ8_CONV_ROW_WORDS, Rows 1); 5: 4 where the clamp is [-128, 127] (one
 * p.clip). */
static inline __attribute__((always_inline)) void at_sq8_conv_pairs_mode(const KerConv_TFLM_SQ8_T *Arg,
									const at_sq8_conv_ctx *K,
									const at_sq8_conv_chans *B,
									const at_sq8_conv_rows *G, const int32_t *Init,
									const signed char *W, int Rows, const signed char *X,
									signed char *O, int Pairs, int Mode)
{
	int Words = G->Words, S1 = G->Stride, S2 = 2 * G->Stride, S3 = 3 * G->Stride;
	int RSkip = G->RSkip, Step = K->StepX, OStep = Arg->OutFeat, p;
	int32_t Lo = K->ActMin, Hi = K->ActMax;
	at_sq8_conv_sums R;

	for (p = 0; p < Pairs; p++, X += 2 * Step, O += 2 * OStep) {
		int s00 = Init[0], s01 = Init[0], s10 = Init[1], s11 = Init[1];
		int s20 = Init[2], s21 = Init[2], s30 = Init[3], s31 = Init[3];
		const signed char *x0 = X, *x1 = X + Step, *w0 = W;

		if (Mode >= 3)
			AT_SQ8_CONV_ROW_WORDS(Words, S1, S2, S3);
		else
			AT_SQ8_CONV_ROWS_WORDS(Rows, Words, RSkip, S1, S2, S3);
		if (Mode == 1) {
			R.S[0][0] = s00; R.S[0][1] = s01; R.S[1][0] = s10; R.S[1][1] = s11;
			R.S[2][0] = s20; R.S[2][1] = s21; R.S[3][0] = s30; R.S[3][1] = s31;
			if (B->Fast2)
				at_sq8_conv_rq8_2(B->F2, &R, Lo, Hi, O, O + OStep);
			else
				at_sq8_conv_rq8(B->F, &R, Lo, Hi, O, O + OStep);
		} else if (Mode == 2 || Mode == 4 || Mode == 5) {
			at_sq8_conv_rq_pair2(&B->F2[0], s00, s01, s10, s11, Lo, Hi, O, O + OStep, Mode == 5);
			at_sq8_conv_rq_pair2(&B->F2[2], s20, s21, s30, s31, Lo, Hi, O + 2, O + OStep + 2, Mode == 5);
		} else {
			at_sq8_conv_rq_pair(&B->F[0], s00, s01, s10, s11, Lo, Hi, O, O + OStep);
			at_sq8_conv_rq_pair(&B->F[2], s20, s21, s30, s31, Lo, Hi, O + 2, O + OStep + 2);
		}
	}
}

/* Pairs pairs of consecutive pixels StepX apart in the input (the first's tap (KyA, 0) at X, its
 * outputs at O) on Rows filter rows from W (G's filters, at_sq8_conv_fast_rows, from row KyA), the
 * sums starting from Init: the geometry and the constants read once, each pair's sums straight
 * into the requantisation (no structure between them). Small: the requantisation through
 * at_sq8_conv_rq8 (less code: where border pixels take other code in the same lines). */
static inline __attribute__((always_inline)) void at_sq8_conv_pairs_fast(const KerConv_TFLM_SQ8_T *Arg,
									const at_sq8_conv_ctx *K,
									const at_sq8_conv_chans *B,
									const at_sq8_conv_rows *G, const int32_t *Init,
									const signed char *W, int Rows, const signed char *X,
									signed char *O, int Pairs, int Small)
{
	if (Small)
		at_sq8_conv_pairs_mode(Arg, K, B, G, Init, W, Rows, X, O, Pairs, 1);
	else if (B->Fast2)
		at_sq8_conv_pairs_mode(Arg, K, B, G, Init, W, Rows, X, O, Pairs, 2);
	else
		at_sq8_conv_pairs_mode(Arg, K, B, G, Init, W, Rows, X, O, Pairs, 0);
}

/* Pairs pairs of a 1x1 flat block (B->Fast2, one row: at_sq8_conv_pairs_mode's mode 4; 5 where the
 * clamp is [-128, 127]) from X, O: functions of their own, called again for an odd last pixel (so
 * that it runs on hot code, not the single-pixel path's cold code) and with fewer values live
 * around their loop. */
static __attribute__((noinline)) void at_sq8_conv_pairs_row2(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K,
							     const at_sq8_conv_chans *B, const at_sq8_conv_rows *G,
							     const signed char *X, signed char *O, int Pairs)
{
	at_sq8_conv_pairs_mode(Arg, K, B, G, B->Inner, G->W, 1, X, O, Pairs, 4);
}

static __attribute__((noinline)) void at_sq8_conv_pairs_row2_full(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K,
								  const at_sq8_conv_chans *B, const at_sq8_conv_rows *G,
								  const signed char *X, signed char *O, int Pairs)
{
	at_sq8_conv_pairs_mode(Arg, K, B, G, B->Inner, G->W, 1, X, O, Pairs, 5);
}

static void at_sq8_conv_pairs_row(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
				  const at_sq8_conv_rows *G, const signed char *X, signed char *O, int Pairs)
{
	if (K->ActMin == -128 && K->ActMax == 127)
		at_sq8_conv_pairs_row2_full(Arg, K, B, G, X, O, Pairs);
	else
		at_sq8_conv_pairs_row2(Arg, K, B, G, X, O, Pairs);
}
#endif

#if defined(at_gap_xpulpv2)
/* Up to Pairs pairs of a top or bottom border line's pixels (oy, ox ..) whose columns are interior
 * (every tap along x inside the tile): their in-tile filter rows [KyA, KyB) are the same for all,
 * so they take at_sq8_conv_pairs_fast on those rows, the sums starting from Bias - IN_ZP times
 * those rows' filter sums. Returns the pairs done (0: none, the general path goes on). */
static int at_sq8_conv_edge_pairs(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
				  const at_sq8_conv_rows *G, const signed char *W, int oy, int ox, int Pairs, int Small,
				  signed char *O)
{
	int y0 = oy * Arg->Sy - Arg->Pad[2], KyA, KyB, Len = G->Words * 4, Off, End, j;
	int32_t Init[4];

	at_sq8_conv_taps(y0, Arg->H, Arg->Fy, Arg->Dy, &KyA, &KyB);
	if (KyB <= KyA)
		return 0;
	Off = ((y0 + KyA * Arg->Dy) * Arg->W + ox * Arg->Sx - Arg->PadLeft) * Arg->InFeat;
	/* the second pixel of the last pair reads Len bytes of each row: inside the tile */
	End = Arg->H * Arg->W * Arg->InFeat - (KyB - KyA - 1) * K->RowIn - Len;
	while (Pairs > 0 && Off + (2 * Pairs - 1) * K->StepX > End)
		Pairs--;
	if (Pairs == 0)
		return 0;
	for (j = 0; j < 4; j++) {
		int Z = at_sq8_conv_sum(W + j * K->Size + KyA * K->RunLen, (KyB - KyA) * K->RunLen, 0);

		Init[j] = (int32_t) ((uint32_t) B->Bias[j] - (uint32_t) K->InZp * (uint32_t) Z);
	}
	at_sq8_conv_pairs_fast(Arg, K, B, G, Init, G->W + KyA * Len, KyB - KyA, Arg->In + Off, O, Pairs, Small);
	return Pairs;
}

/* Border columns per side whose pairs' constant terms a block keeps (3x3 SAME: 1, 5x5 SAME: 2). */
#define AT_SQ8_CONV_EDGE_COLS 2

/* A block's border columns: Init[i] the constant term of column i's pairs (Bias - IN_ZP times the
 * filter sums over that column's in-tile taps), computed once per block (Known: bit i). Left
 * columns ox are i = ox, right ones i = AT_SQ8_CONV_EDGE_COLS + Wo - 1 - ox. */
typedef struct {
	int32_t Init[2 * AT_SQ8_CONV_EDGE_COLS][4];
	unsigned int Known;
} at_sq8_conv_cols;

/* The index of border column ox in at_sq8_conv_cols; -1: an interior column, or too far in. */
static inline int at_sq8_conv_col_index(const at_sq8_conv_ctx *K, int Wo, int ox)
{
	if (ox < K->OxA)
		return (ox < AT_SQ8_CONV_EDGE_COLS) ? ox : -1;
	if (ox >= K->OxB && Wo - 1 - ox < AT_SQ8_CONV_EDGE_COLS)
		return AT_SQ8_CONV_EDGE_COLS + Wo - 1 - ox;
	return -1;
}

/* Border column ox's pixels on lines oy and oy + 1, both interior lines (every filter row inside
 * the tile), column index i: their in-tile taps along x, [KxA, KxB), are the same, so they are a
 * pair StepY apart in the input on the block path's loops, each filter row cut to those taps (a
 * run of (KxB - KxA) GroupIn bytes). Filters W (the block's, Runs 1, B->Fast); outputs at O and one
 * line below. Returns 0 (nothing done) when the cut run is not whole words. */
static int at_sq8_conv_col_pair(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
				const signed char *W, at_sq8_conv_cols *C, int i, int oy, int ox, int InOff, int Small,
				signed char *O)
{
	int x = ox * Arg->Sx - Arg->PadLeft, G = Arg->GroupIn, KxA, KxB, Len, j, ky;
	int S1 = K->Size, S2 = 2 * K->Size, S3 = 3 * K->Size, Rows = Arg->Fy, Words, RSkip, WSkip;
	int s00, s01, s10, s11, s20, s21, s30, s31;
	const signed char *x0, *x1, *w0;
	signed char *O1 = O + Arg->Wo * Arg->OutFeat;
	at_sq8_conv_sums R;

	at_sq8_conv_taps(x, Arg->W, Arg->Fx, Arg->Dx, &KxA, &KxB);
	Len = (KxB - KxA) * G;
	if (Len == 0 || (Len & 3))
		return 0;
	if (!((C->Known >> i) & 1)) {
		for (j = 0; j < 4; j++) {
			int Z = 0;

			for (ky = 0; ky < Rows; ky++)
				Z = at_sq8_conv_sum(W + j * K->Size + ky * K->RunLen + KxA * G, Len, Z);
			C->Init[i][j] = (int32_t) ((uint32_t) B->Bias[j] - (uint32_t) K->InZp * (uint32_t) Z);
		}
		C->Known |= 1u << i;
	}
	s00 = s01 = C->Init[i][0]; s10 = s11 = C->Init[i][1]; s20 = s21 = C->Init[i][2]; s30 = s31 = C->Init[i][3];
	Words = Len >> 2;
	RSkip = K->RowIn - Len;
	WSkip = K->RunLen - Len;
	x0 = Arg->In + InOff + ((oy * Arg->Sy - Arg->Pad[2]) * Arg->W + x + KxA) * Arg->InFeat;
	x1 = x0 + K->StepY;
	w0 = W + KxA * G;
	AT_SQ8_CONV_ROWS_WORDS_CUT(Rows, Words, RSkip, WSkip, S1, S2, S3);
	if (Small || B->Fast2) {
		R.S[0][0] = s00; R.S[0][1] = s01; R.S[1][0] = s10; R.S[1][1] = s11;
		R.S[2][0] = s20; R.S[2][1] = s21; R.S[3][0] = s30; R.S[3][1] = s31;
		if (B->Fast2)
			at_sq8_conv_rq8_2(B->F2, &R, K->ActMin, K->ActMax, O, O1);
		else
			at_sq8_conv_rq8(B->F, &R, K->ActMin, K->ActMax, O, O1);
	} else {
		at_sq8_conv_rq_pair(&B->F[0], s00, s01, s10, s11, K->ActMin, K->ActMax, O, O1);
		at_sq8_conv_rq_pair(&B->F[2], s20, s21, s30, s31, K->ActMin, K->ActMax, O + 2, O1 + 2);
	}
	return 1;
}
#endif

#if defined(at_gap_xpulpv2)
/* 4 channels x 4 pixels of an ungrouped 1x1 convolution (flat: a pixel's input is Size bytes after
 * the previous one's, as a filter is Size bytes after the previous one): the 4 pixels and the 4
 * filters at the same offsets 0, S1, S2, S3 from x and w, 8 words into 16 pv.sdotsp.b per
 * iteration (24 instructions for 64 MACs; two 4 x 2 blocks take 28). Each filter word is loaded
 * 2 instructions before its first use (RI5CY's load-use stall). The 16 sums live in fixed
 * registers, clobbered (saved once per call by the compiler, not around each group of pixels),
 * start from Buf[16 + j] (channel j) and end in Buf[4 j + k] (pixel k): the statement's operands
 * are then 7 registers only, nothing spilled around it. The count's register is a temporary
 * once the loop is set up. */
#define AT_SQ8_CONV_QUAD_WORDS(Buf, S1, S2, S3)                                                               \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN                                                           \
		"lw s0, 64(%[b])\n\tlw s4, 68(%[b])\n\tlw s8, 72(%[b])\n\tlw ra, 76(%[b])\n\t"                \
		"mv s1, s0\n\tmv s2, s0\n\tmv s3, s0\n\tmv s5, s4\n\tmv s6, s4\n\tmv s7, s4\n\t"              \
		"mv s9, s8\n\tmv s10, s8\n\tmv s11, s8\n\tmv a0, ra\n\tmv a1, ra\n\tmv a2, ra\n\t"            \
		AT_GAP_ASM_LP_SETUP0("%[n]", 24)                                                        \
		AT_GAP_ASM_PLW_RR("t1", "%[x]", "%[s1]") AT_GAP_ASM_PLW_RR("t2", "%[x]", "%[s2]")        \
		AT_GAP_ASM_PLW_RR("t3", "%[x]", "%[s3]") AT_GAP_ASM_PLW_PI("t0", "%[x]")                 \
		AT_GAP_ASM_PLW_RR("t4", "%[w]", "%[s1]") AT_GAP_ASM_PLW_RR("%[n]", "%[w]", "%[s2]")      \
		AT_GAP_ASM_SDOTSP_B("s4", "t0", "t4") AT_GAP_ASM_SDOTSP_B("s5", "t1", "t4")              \
		AT_GAP_ASM_SDOTSP_B("s6", "t2", "t4") AT_GAP_ASM_SDOTSP_B("s7", "t3", "t4")              \
		AT_GAP_ASM_PLW_RR("t4", "%[w]", "%[s3]")                                                \
		AT_GAP_ASM_SDOTSP_B("s8", "t0", "%[n]") AT_GAP_ASM_SDOTSP_B("s9", "t1", "%[n]")          \
		AT_GAP_ASM_SDOTSP_B("s10", "t2", "%[n]") AT_GAP_ASM_SDOTSP_B("s11", "t3", "%[n]")        \
		AT_GAP_ASM_PLW_PI("%[n]", "%[w]")                                                       \
		AT_GAP_ASM_SDOTSP_B("ra", "t0", "t4") AT_GAP_ASM_SDOTSP_B("a0", "t1", "t4")              \
		AT_GAP_ASM_SDOTSP_B("a1", "t2", "t4") AT_GAP_ASM_SDOTSP_B("a2", "t3", "t4")              \
		AT_GAP_ASM_SDOTSP_B("s0", "t0", "%[n]") AT_GAP_ASM_SDOTSP_B("s1", "t1", "%[n]")          \
		AT_GAP_ASM_SDOTSP_B("s2", "t2", "%[n]") AT_GAP_ASM_SDOTSP_B("s3", "t3", "%[n]")          \
		"sw s0, 0(%[b])\n\tsw s1, 4(%[b])\n\tsw s2, 8(%[b])\n\tsw s3, 12(%[b])\n\t"                  \
		"sw s4, 16(%[b])\n\tsw s5, 20(%[b])\n\tsw s6, 24(%[b])\n\tsw s7, 28(%[b])\n\t"               \
		"sw s8, 32(%[b])\n\tsw s9, 36(%[b])\n\tsw s10, 40(%[b])\n\tsw s11, 44(%[b])\n\t"             \
		"sw ra, 48(%[b])\n\tsw a0, 52(%[b])\n\tsw a1, 56(%[b])\n\tsw a2, 60(%[b])\n\t"               \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [x] "+r"(x), [w] "+r"(w), [n] "+r"(n)                                                 \
		: [s1] "r"(S1), [s2] "r"(S2), [s3] "r"(S3), [b] "r"(Buf)                                \
		: "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "ra", "a0",     \
		  "a1", "a2", "t0", "t1", "t2", "t3", "t4", "memory")

/* Filters of fewer bytes take pairs (4 x 2) rather than at_sq8_conv_quads (measured on GVSoC: with
 * 64-byte filters its longer requantisation and its cold code at each block ate the loop's gain;
 * from 128 bytes on it wins: MobileNet's 128 -> 128 1x1 2 %). */
#define AT_SQ8_CONV_QUAD_MIN 128

/* Quads groups of 4 consecutive pixels of at_sq8_conv_block4_flat (B->Fast2, the first's input at
 * X, its outputs at O, OStep bytes between pixels' outputs) on AT_SQ8_CONV_QUAD_WORDS; the 16 sums
 * through the stack into a loop over the channels, which keeps the code within a core's 512-byte
 * instruction cache (16 outputs inline would not fit with the loop). */
static __attribute__((noinline, noipa)) void at_sq8_conv_quads(const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
							const signed char *W, const signed char *X, signed char *O,
							int OStep, int N)
{
	int S1 = K->Size, S2 = 2 * K->Size, S3 = 3 * K->Size, Words = K->Size >> 2, q, j;
	int32_t Lo = K->ActMin, Hi = K->ActMax, Buf[20];

	for (j = 0; j < 4; j++)
		Buf[16 + j] = B->Inner[j];
	/* N % 4 last pixels: the quad ending on the last one (pixels of the one before written again,
	 * the same bytes): no other code for them */
	for (q = 0; q < N; q += 4) {
		int At = gap_min(q, N - 4);
		const signed char *x = X + At * S1, *w = W;
		signed char *o = O + At * OStep;
		int n = Words;

		AT_SQ8_CONV_QUAD_WORDS(Buf, S1, S2, S3);
		for (j = 0; j < 4; j++) {
			at_tflm_rq_fast2_t F = B->F2[j];
			int32_t h0 = at_tflm_rq_fast2_hi(&F, Buf[4 * j]), h1 = at_tflm_rq_fast2_hi(&F, Buf[4 * j + 1]);
			int32_t h2 = at_tflm_rq_fast2_hi(&F, Buf[4 * j + 2]), h3 = at_tflm_rq_fast2_hi(&F, Buf[4 * j + 3]);

			o[j] = at_tflm_rq_fast2_end(&F, h0, Lo, Hi);
			o[OStep + j] = at_tflm_rq_fast2_end(&F, h1, Lo, Hi);
			o[2 * OStep + j] = at_tflm_rq_fast2_end(&F, h2, Lo, Hi);
			o[3 * OStep + j] = at_tflm_rq_fast2_end(&F, h3, Lo, Hi);
		}
	}
}
#endif

/* Channels [c, c + 4) of pixels [P0, P1) when every output pixel is interior and consecutive
 * pixels are StepX apart in the input (a 1x1 convolution of stride 1, without padding): the pairs
 * are (P0, P0 + 1), (P0 + 2, P0 + 3) ..., no test per pixel; ungrouped, groups of 4 pixels first
 * (at_sq8_conv_quads) where the requantisation is at_tflm_rq_int8_fast2's. */
static __attribute__((noinline)) void at_sq8_conv_block4_flat(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_work *Wk,
				    const at_sq8_conv_chans *B, int c, int InOff)
{
	const signed char *W = Arg->Filter + c * K->Size, *X = Arg->In + InOff + Wk->P0 * K->StepX;
	signed char *O = Arg->Out + Wk->P0 * Arg->OutFeat + K->Off + c;
	at_sq8_conv_sums R;
	int p = Wk->P0;

#if defined(at_gap_xpulpv2)
	at_sq8_conv_rows G;

	/* one run of Size bytes per pixel, the next pixel's Size bytes on */
	if (B->Fast2 && Arg->Fy == 1 && K->Runs == 1 && K->Size == K->StepX && (K->Size & 3) == 0 && K->Size >= AT_SQ8_CONV_QUAD_MIN &&
	    Wk->P1 - Wk->P0 >= 4) {
		at_sq8_conv_quads(K, B, W, X, O, Arg->OutFeat, Wk->P1 - Wk->P0);
		return;
	}
	if (at_sq8_conv_fast_rows(Arg, K, B, W, 0, &G) && G.Over == 0) {
		int Pairs = (Wk->P1 - p) >> 1;

		/* 1x1: one row; the mode a constant in each call (a variable one kept both
		 * requantisations in the loop and tested it per pair) */
		if (Arg->Fy == 1 && B->Fast2) {
			at_sq8_conv_pairs_row(Arg, K, B, &G, X, O, Pairs);
			/* an odd last pixel after another of this core's: the pair of the two (the
			 * other's bytes written again, the same) */
			if (p + 2 * Pairs + 1 == Wk->P1 && p + 2 * Pairs > Wk->P0) {
				at_sq8_conv_pairs_row(Arg, K, B, &G, X + (2 * Pairs - 1) * K->StepX,
						       O + (2 * Pairs - 1) * Arg->OutFeat, 1);
				p++;
				X += K->StepX;
				O += Arg->OutFeat;
			}
		} else if (Arg->Fy == 1)
			at_sq8_conv_pairs_mode(Arg, K, B, &G, B->Inner, G.W, 1, X, O, Pairs, 3);
		else
			at_sq8_conv_pairs_fast(Arg, K, B, &G, B->Inner, G.W, Arg->Fy, X, O, Pairs, 0);
		p += 2 * Pairs;
		X += 2 * Pairs * K->StepX;
		O += 2 * Pairs * Arg->OutFeat;
	}
#endif
	for (; p + 1 < Wk->P1; p += 2, X += 2 * K->StepX, O += 2 * Arg->OutFeat) {
		at_sq8_conv_block(Arg, K, X, X + K->StepX, W, B->Inner, &R);
		at_sq8_conv_store(K, B, &R, 1, O, O + Arg->OutFeat);
	}
	if (p < Wk->P1) {
		at_sq8_conv_block(Arg, K, X, X, W, B->Inner, &R);
		at_sq8_conv_store(K, B, &R, 0, O, O);
	}
}

#if defined(at_gap_xpulpv2)
/* Does at_sq8_conv_block4_cols take this block: a first layer's filter rows of exactly one word
 * (10x4 on one channel: DS-CNN), ungrouped, a whole filter within a column (AT_SQ8_CONV_COL_MAX),
 * the requantisation at_tflm_rq_int8_fast2's. */
static int at_sq8_conv_cols_apply(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B)
{
	return B->Fast2 && K->Runs == 1 && K->RunLen == 4 && Arg->GroupIn == Arg->InFeat && K->Size <= AT_SQ8_CONV_COL_MAX;
}

/* Pixel (oy, ox)'s column (at_sq8_conv_border_col's: its Fy x 4 taps in filter order, IN_ZP where
 * outside the tile), one word per filter row: the row's first in-tile byte and the next ones as
 * one word (gap_lw_any; the bytes past the row's in-tile taps, at most 3 past the tile, are
 * replaced), shifted to its place, the rest IN_ZP (Zw: IN_ZP in each byte). */
static __attribute__((noinline)) void at_sq8_conv_col_words(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K,
							    int oy, int ox, uint32_t Zw, uint32_t *Col)
{
	/* the geometry in locals: the column's stores could alias Arg (the compiler would reload it) */
	int y = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft, G = Arg->GroupIn, KxA, KxB, ky;
	int Fy = Arg->Fy, H = Arg->H, Dy = Arg->Dy, RowIn = K->RowIn;
	const signed char *In = Arg->In;
	uint32_t Keep, Shift;
	int Off;

	at_sq8_conv_taps(x0, Arg->W, Arg->Fx, 1, &KxA, &KxB);
	if (KxA >= KxB) {
		for (ky = 0; ky < Fy; ky++)
			Col[ky] = Zw;
		return;
	}
	Shift = 8 * KxA * G;	/* < 32: KxA G < KxB G <= 4 */
	/* bytes [KxA G, KxB G) of the word from the tile, the others IN_ZP */
	Keep = ((KxB * G >= 4) ? ~0u : ((1u << (8 * KxB * G)) - 1u)) & ~((1u << Shift) - 1u);
	Off = (y * Arg->W + x0 + KxA) * Arg->InFeat;	/* of row ky = 0 (a pointer only for rows in the tile) */
	for (ky = 0; ky < Fy; ky++, Off += RowIn, y += Dy) {
		if (y < 0 || y >= H)
			Col[ky] = Zw;
		else
			Col[ky] = (((uint32_t) gap_lw_any(In + Off) << Shift) & Keep) | (Zw & ~Keep);
	}
}

/* One pair of at_sq8_conv_block4_cols: pixels at X0, X1 (inputs or columns) on Rows rows of Words
 * words RSkip bytes apart, the filters from W, the sums from B->Inner, requantised into O0, O1 (an
 * odd pixel: X1 = X0 and O1 = O0, stored twice). */
static __attribute__((noinline)) void at_sq8_conv_cols_pair(const at_sq8_conv_ctx *K, const at_sq8_conv_chans *B,
							    const signed char *W, const signed char *X0,
							    const signed char *X1, int Rows, int Words, int RSkip,
							    signed char *O0, signed char *O1)
{
	int s00 = B->Inner[0], s01 = s00, s10 = B->Inner[1], s11 = s10, s20 = B->Inner[2], s21 = s20;
	int s30 = B->Inner[3], s31 = s30, S1 = K->Size, S2 = 2 * K->Size, S3 = 3 * K->Size;
	const signed char *x0 = X0, *x1 = X1, *w0 = W;
	at_sq8_conv_sums R;

	AT_SQ8_CONV_ROWS_WORDS(Rows, Words, RSkip, S1, S2, S3);
	R.S[0][0] = s00; R.S[0][1] = s01; R.S[1][0] = s10; R.S[1][1] = s11;
	R.S[2][0] = s20; R.S[2][1] = s21; R.S[3][0] = s30; R.S[3][1] = s31;
	at_sq8_conv_rq8_2(B->F2, &R, K->ActMin, K->ActMax, O0, O1);
}

/* Channels [c, c + 4) of this core's pixels [P0, P1): interior pixels in pairs read from the tile
 * (Fy rows of one word), border pixels in pairs of columns (at_sq8_conv_col_words: one run of Fy
 * words, the sums from Inner as a padded tap adds w (IN_ZP - IN_ZP) = 0), any two pixels of a kind
 * forming a pair (the pair's two inputs are independent pointers); an odd one of each kind last,
 * with itself. A first layer's border pixels then cost about what interior ones do. */
static __attribute__((noinline)) void at_sq8_conv_block4_cols(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K,
							      const at_sq8_conv_work *Wk, const at_sq8_conv_chans *B, int c)
{
	uint32_t Col0[AT_SQ8_CONV_COL_MAX / 4], Col1[AT_SQ8_CONV_COL_MAX / 4];
	uint32_t Zw = (uint32_t) (uint8_t) K->InZp * 0x01010101u;
	int Fy = Arg->Fy, RSkip = K->RowIn - 4, OStep = Arg->OutFeat, p;
	int oy = Wk->P0 / Arg->Wo, ox = Wk->P0 - oy * Arg->Wo;
	/* the input offset of tap (0, 0) of output (0, 0) (outside the tile when padded) */
	int Base = -(Arg->Pad[2] * Arg->W + Arg->PadLeft) * Arg->InFeat;
	signed char *O = Arg->Out + Wk->P0 * OStep + K->Off + c, *PendO = 0, *PendCO = 0;
	const signed char *W = Arg->Filter + c * K->Size, *PendX = 0;
	const signed char *C0 = (const signed char *) Col0, *C1 = (const signed char *) Col1;

	for (p = Wk->P0; p < Wk->P1; p++, O += OStep) {
		if (oy >= K->OyA && oy < K->OyB && ox >= K->OxA && ox < K->OxB) {
			const signed char *X = Arg->In + Base + oy * K->StepY + ox * K->StepX;

			if (PendO) {
				at_sq8_conv_cols_pair(K, B, W, PendX, X, Fy, 1, RSkip, PendO, O);
				PendO = 0;
			} else {
				PendX = X;
				PendO = O;
			}
		} else if (PendCO) {
			at_sq8_conv_col_words(Arg, K, oy, ox, Zw, Col1);
			at_sq8_conv_cols_pair(K, B, W, C0, C1, 1, Fy, 0, PendCO, O);
			PendCO = 0;
		} else {
			at_sq8_conv_col_words(Arg, K, oy, ox, Zw, Col0);
			PendCO = O;
		}
		if (++ox == Arg->Wo) {
			ox = 0;
			oy++;
		}
	}
	if (PendO)
		at_sq8_conv_cols_pair(K, B, W, PendX, PendX, Fy, 1, RSkip, PendO, PendO);
	if (PendCO)
		at_sq8_conv_cols_pair(K, B, W, C0, C0, 1, Fy, 0, PendCO, PendCO);
}
#endif

#if defined(at_gap_xpulpv2)
/* Channels [c, c + 4) of pixels [P0, P1) (outputs from O) when every output pixel is interior but
 * the lines are not consecutive in the input (a strided 1x1 convolution, VALID): each line's part
 * in pairs on at_sq8_conv_pairs_fast (G without padded rows), an odd last pixel on the block path;
 * no test per pixel. */
static void at_sq8_conv_block4_lines(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K, const at_sq8_conv_work *Wk,
				     const at_sq8_conv_chans *B, const at_sq8_conv_rows *G, const signed char *W, int Base,
				     signed char *O)
{
	at_sq8_conv_sums R;
	int p = Wk->P0;

	while (p < Wk->P1) {
		int oy = p / Arg->Wo, ox = p - oy * Arg->Wo, n = gap_min(Arg->Wo - ox, Wk->P1 - p), Pairs = n >> 1;
		const signed char *X = Arg->In + Base + oy * K->StepY + ox * K->StepX;

		at_sq8_conv_pairs_fast(Arg, K, B, G, B->Inner, G->W, Arg->Fy, X, O, Pairs, 0);
		if (n & 1) {
			const signed char *X1 = X + 2 * Pairs * K->StepX;
			signed char *O1 = O + 2 * Pairs * Arg->OutFeat;

			at_sq8_conv_block(Arg, K, X1, X1, W, B->Inner, &R);
			at_sq8_conv_store(K, B, &R, 0, O1, O1);
		}
		p += n;
		O += n * Arg->OutFeat;
	}
}
#endif

/* Channels [c, c + 4) of this core's pixels: interior pixels in pairs (consecutive interior pixels,
 * not necessarily on one line) on the block path, border pixels on the general one (the flat case,
 * at_sq8_conv_flat, goes to at_sq8_conv_block4_flat before). Not inlined: its frame (the padded
 * filter copy, the rows) stays off KerParConv_TFLM_SQ8's, which the 1x1 paths and a fused kernel's
 * frames share core 0's 2 KiB stack with. */
static __attribute__((noinline)) void at_sq8_conv_block4(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K,
							  const at_sq8_conv_work *Wk, const at_sq8_conv_chans *B, int c)
{
	int InOff = ((K->Off + c) / Arg->GroupOut) * Arg->GroupIn, p, oy = Wk->P0 / Arg->Wo, ox = Wk->P0 % Arg->Wo;
	/* the input offset of tap (0, 0) of output (0, 0), channel InOff (outside the tile when padded) */
	int Base = InOff - (Arg->Pad[2] * Arg->W + Arg->PadLeft) * Arg->InFeat;
	const signed char *W = Arg->Filter + c * K->Size, *PendX = 0;
	signed char *O = Arg->Out + Wk->P0 * Arg->OutFeat + K->Off + c, *PendO = 0;
	at_sq8_conv_sums R;
#if defined(at_gap_xpulpv2)
	int Pad[AT_SQ8_CONV_PAD_MAX / 4];
	at_sq8_conv_rows G;
	int Fast = at_sq8_conv_fast_rows(Arg, K, B, W, (signed char *) Pad, &G);
	/* first layers: their border pixels' column code and the pairs' alternate in every line; with
	 * at_tflm_rq_int8_fast2's shorter code the pairs requantise inline all the same (GVSoC: 3x3 on 3
	 * channels 12-14 % faster) */
	int Small = !B->Fast2 && (G.Over != 0 || (K->RunLen < 8 && K->Size <= AT_SQ8_CONV_COL_MAX));
	/* the last offset of a pair's second pixel whose reads (Over bytes past its last run) stay in the tile */
	int End = Arg->H * Arg->W * Arg->InFeat - (Arg->Fy - 1) * K->RowIn - K->RunLen - G.Over;
	/* border columns of interior lines go in vertical pairs: Done, the columns of this line done
	 * with the line above (bits of at_sq8_conv_col_index); Next, those of the next line */
	unsigned int Done = 0, Next = 0;
	/* (their cut runs are whole words when GroupIn is: not a first layer's 3 channels) */
	int ColPairs = Fast && (Arg->GroupIn & 3) == 0;
	at_sq8_conv_cols Cols;

	Cols.Known = 0;
#endif

#if defined(at_gap_xpulpv2)
	if (Fast && G.Over == 0 && K->OyA == 0 && K->OyB == Arg->Ho && K->OxA == 0 && K->OxB == Arg->Wo) {
		at_sq8_conv_block4_lines(Arg, K, Wk, B, &G, W, Base, O);
		return;
	}
#endif
	for (p = Wk->P0; p < Wk->P1; p++, O += Arg->OutFeat) {
#if defined(at_gap_xpulpv2)
		if (Fast && (oy < K->OyA || oy >= K->OyB) && ox >= K->OxA && ox + 1 < K->OxB && p + 1 < Wk->P1) {
			int Pairs = at_sq8_conv_edge_pairs(Arg, K, B, &G, W, oy, ox, gap_min(K->OxB - ox, Wk->P1 - p) >> 1, Small, O);

			if (Pairs > 0) {
				p += 2 * Pairs - 1;
				O += (2 * Pairs - 1) * Arg->OutFeat;
				ox += 2 * Pairs - 1;
				if (++ox == Arg->Wo) {
					ox = 0;
					oy++;
					Done = Next;
					Next = 0;
				}
				continue;
			}
		}
#endif
		if (oy < K->OyA || oy >= K->OyB || ox < K->OxA || ox >= K->OxB) {
#if defined(at_gap_xpulpv2)
			int i = (ColPairs && oy >= K->OyA && oy < K->OyB) ? at_sq8_conv_col_index(K, Arg->Wo, ox) : -1;

			if (i >= 0 && ((Done >> i) & 1))
				goto next;	/* done with the line above */
			if (i >= 0 && oy + 1 < K->OyB && p + Arg->Wo < Wk->P1 &&
			    at_sq8_conv_col_pair(Arg, K, B, W, &Cols, i, oy, ox, InOff, Small, O)) {
				Next |= 1u << i;
				goto next;
			}
#endif
			if (K->RunLen < 8 && K->Size <= AT_SQ8_CONV_COL_MAX)
				at_sq8_conv_border_col(Arg, K, B, oy, ox, c, InOff, O);
			else
				at_sq8_conv_border4(Arg, K, B, oy, ox, c, InOff, O);
		} else if (!PendO) {
			PendX = Arg->In + Base + oy * K->StepY + ox * K->StepX;
			PendO = O;
#if defined(at_gap_xpulpv2)
			if (Fast) {	/* the pairs of this line's interior run from here */
				int Pairs = gap_min(K->OxB - ox, Wk->P1 - p) >> 1;

				while (Pairs > 0 && (PendX - Arg->In) + (2 * Pairs - 1) * K->StepX > End)
					Pairs--;
				at_sq8_conv_pairs_fast(Arg, K, B, &G, B->Inner, G.W, Arg->Fy, PendX, O, Pairs, Small);
				if (Pairs > 0) {
					PendO = 0;
					p += 2 * Pairs - 1;
					O += (2 * Pairs - 1) * Arg->OutFeat;
					ox += 2 * Pairs - 1;
				}
			}
#endif
		} else {
			at_sq8_conv_block(Arg, K, PendX, Arg->In + Base + oy * K->StepY + ox * K->StepX, W, B->Inner, &R);
			at_sq8_conv_store(K, B, &R, 1, PendO, O);
			PendO = 0;
		}
#if defined(at_gap_xpulpv2)
next:
#endif
		if (++ox == Arg->Wo) {
			ox = 0;
			oy++;
#if defined(at_gap_xpulpv2)
			Done = Next;
			Next = 0;
#endif
		}
	}
	if (PendO) {	/* an odd interior pixel: the block with both pixels the same */
		at_sq8_conv_block(Arg, K, PendX, PendX, W, B->Inner, &R);
		at_sq8_conv_store(K, B, &R, 0, PendO, PendO);
	}
}

/* Is every output pixel interior, the pixels StepX apart in the input from pixel 0's tap (0, 0) at
 * the tile's start (a 1x1 convolution of stride 1, without padding): at_sq8_conv_block4_flat. */
static int at_sq8_conv_flat(const KerConv_TFLM_SQ8_T *Arg, const at_sq8_conv_ctx *K)
{
	return K->OyA == 0 && K->OyB == Arg->Ho && K->OxA == 0 && K->OxB == Arg->Wo && Arg->Pad[2] * Arg->W + Arg->PadLeft == 0 &&
	       K->StepY == Arg->Wo * K->StepX;
}

void KerParConv_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg)
{
	at_sq8_conv_ctx K;
	at_sq8_conv_work Wk;
	at_sq8_conv_chans B;
	int c, Flat;

	at_sq8_conv_context(Arg, &K);
	at_sq8_conv_share(Arg, &Wk);
	Flat = at_sq8_conv_flat(Arg, &K);
	for (c = Wk.C0; c < Wk.C1; c += 4) {
		int n = gap_min(4, Wk.C1 - c), p;
		/* the block path reads 4 filters of one group */
		int Group = (K.Off + c) / Arg->GroupOut, OneGroup = Group == (K.Off + c + n - 1) / Arg->GroupOut;

		at_sq8_conv_chans_of(Arg, &K, c, n, &B);
		if (n == 4 && OneGroup && Flat)
			at_sq8_conv_block4_flat(Arg, &K, &Wk, &B, c, Group * Arg->GroupIn);
#if defined(at_gap_xpulpv2)
		else if (n == 4 && at_sq8_conv_cols_apply(Arg, &K, &B))
			at_sq8_conv_block4_cols(Arg, &K, &Wk, &B, c);
#endif
		else if (n == 4 && OneGroup)
			at_sq8_conv_block4(Arg, &K, &Wk, &B, c);
		else
			for (p = Wk.P0; p < Wk.P1; p++)
				at_sq8_conv_general(Arg, &K, &B, p / Arg->Wo, p % Arg->Wo, c, n,
						    Arg->Out + p * Arg->OutFeat + K.Off + c);
	}
	gap_waitbarrier(0);
}
