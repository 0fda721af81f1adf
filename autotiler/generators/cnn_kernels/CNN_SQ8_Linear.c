/*
 * SQ8 fully connected layer with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Dense.h,
 * docs/cnn-sq8.md "FULLY_CONNECTED"): the output-parallel kernel, and the input-tiled pair (partial
 * sums per core, then a reduction) for layers whose filter rows do not fit L1.
 */
#include <string.h>
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* Four int8 at any address as one word. Filter rows start at c * InDim, not 4-byte aligned when
 * InDim % 4 != 0. The cluster core loads a word from any address (a misaligned one in two
 * accesses), but rv32imc's gcc turns memcpy into four byte loads: on the target the load is an
 * explicit lw (to move to Gap.h with the other target builtins). memcpy elsewhere (defined C). */
static inline int at_sq8_lin_ld4(const signed char *p)
{
	int v;

#if defined(RV_ISA_RV32) && !defined(AT_GAP_PLAIN_C)
	__asm__("lw %0, 0(%1)" : "=r"(v) : "r"(p), "m"(*(const signed char (*)[4]) p));
#else
	memcpy(&v, p, sizeof(v));
#endif
	return v;
}

/* x - zp in [-255, 255] does not fit the int8 lanes, so sum (x - zp) w is computed as
 * sum (x + 128) w - (zp + 128) sum w: x + 128 is x with its sign bit flipped, an unsigned byte,
 * which the unsigned x signed dot product takes (pv.sdotusp.b). After a ReLU zp is often -128
 * and sum w is not needed (WithSum 0, a constant once inlined). The sums fit int32 (|x w| <= 2^15,
 * n < 2^16); the final difference wraps as TFLM's int32 accumulation would. */
#define AT_SQ8_FLIP 0x80808080u

static inline int32_t at_sq8_lin_result(int d, int s, int zp)
{
	return (int32_t) ((uint32_t) d - (uint32_t) (zp + 128) * (uint32_t) s);
}

/* sum (x[i] - zp) w[i] for i < n: four at a time on the dot-product unit, the tail one by one. */
static inline int32_t at_sq8_dot_zp(const signed char *x, const signed char *w, int n, int zp)
{
	const int ones = 0x01010101;
	int d = 0, s = 0, i;

	for (i = 0; i + 4 <= n; i += 4) {
		int vw = at_sq8_lin_ld4(w + i);

		d = gap_sumdotpus4((int) ((unsigned int) at_sq8_lin_ld4(x + i) ^ AT_SQ8_FLIP), vw, d);
		s = gap_sumdotp4(vw, ones, s);
	}
	for (; i < n; i++) {
		d += (x[i] + 128) * w[i];
		s += w[i];
	}
	return at_sq8_lin_result(d, s, zp);
}

#if defined(at_gap_xpulpv2)
/* The Words whole words of the four rows' dot products on the cluster core: a hardware loop
 * (lp.setup, Gap.h's AT_GAP_ASM_* strings) of p.lw with post-increment and pv.sdotusp.b
 * (".insn r 0x57, 1, 0x54": rd += unsigned rs1 . signed rs2), the input flipped by one xor, and
 * with WithSum four pv.sdotsp.b against ones. The whole loop is one asm statement (the compiler
 * knows nothing of the hardware loop), ordered so that no load feeds the next instruction. */
#define AT_SQ8_SDOTUSP_B(rd, rs1, rs2) ".insn r 0x57, 1, 0x54, " rd ", " rs1 ", " rs2 "\n\t"
static inline void at_sq8_dot4_hwloop(const signed char *x, const signed char *w0, const signed char *w1,
				      const signed char *w2, const signed char *w3, int Words, int WithSum, int *d0,
				      int *d1, int *d2, int *d3, int *s0, int *s1, int *s2, int *s3)
{
	int a0 = *d0, a1 = *d1, a2 = *d2, a3 = *d3, b0 = *s0, b1 = *s1, b2 = *s2, b3 = *s3;
	int flip = (int) AT_SQ8_FLIP, one = 0x01010101;

	if (WithSum)
		__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 14)
			AT_GAP_ASM_PLW_PI("t0", "%[x]") AT_GAP_ASM_PLW_PI("t1", "%[w0]") AT_GAP_ASM_PLW_PI("t2", "%[w1]")
			"xor t0, t0, %[flip]\n\t" AT_GAP_ASM_PLW_PI("t3", "%[w2]")
			AT_SQ8_SDOTUSP_B("%[a0]", "t0", "t1") AT_GAP_ASM_PLW_PI("t4", "%[w3]")
			AT_SQ8_SDOTUSP_B("%[a1]", "t0", "t2") AT_SQ8_SDOTUSP_B("%[a2]", "t0", "t3")
			AT_SQ8_SDOTUSP_B("%[a3]", "t0", "t4") AT_GAP_ASM_SDOTSP_B("%[b0]", "%[one]", "t1")
			AT_GAP_ASM_SDOTSP_B("%[b1]", "%[one]", "t2") AT_GAP_ASM_SDOTSP_B("%[b2]", "%[one]", "t3")
			AT_GAP_ASM_SDOTSP_B("%[b3]", "%[one]", "t4")
			AT_GAP_ASM_NORVC_END
			: [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b0] "+r"(b0), [b1] "+r"(b1),
			  [b2] "+r"(b2), [b3] "+r"(b3), [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2),
			  [w3] "+r"(w3)
			: [n] "r"(Words), [flip] "r"(flip), [one] "r"(one)
			: "t0", "t1", "t2", "t3", "t4", "memory");
	else
		__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 10)
			AT_GAP_ASM_PLW_PI("t0", "%[x]") AT_GAP_ASM_PLW_PI("t1", "%[w0]") AT_GAP_ASM_PLW_PI("t2", "%[w1]")
			"xor t0, t0, %[flip]\n\t" AT_GAP_ASM_PLW_PI("t3", "%[w2]")
			AT_SQ8_SDOTUSP_B("%[a0]", "t0", "t1") AT_GAP_ASM_PLW_PI("t4", "%[w3]")
			AT_SQ8_SDOTUSP_B("%[a1]", "t0", "t2") AT_SQ8_SDOTUSP_B("%[a2]", "t0", "t3")
			AT_SQ8_SDOTUSP_B("%[a3]", "t0", "t4")
			AT_GAP_ASM_NORVC_END
			: [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w0] "+r"(w0),
			  [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3)
			: [n] "r"(Words), [flip] "r"(flip)
			: "t0", "t1", "t2", "t3", "t4", "memory");
	*d0 = a0; *d1 = a1; *d2 = a2; *d3 = a3;
	*s0 = b0; *s1 = b1; *s2 = b2; *s3 = b3;
}
#endif

/* The same for four filter rows w, w + Stride, ..: each input word is loaded once for the four. */
static inline void at_sq8_dot4_zp(const signed char *x, const signed char *w, int Stride, int n, int zp, int WithSum,
				  int32_t *Res)
{
	const int ones = 0x01010101;
	const signed char *w1 = w + Stride, *w2 = w1 + Stride, *w3 = w2 + Stride;
	int d0 = 0, d1 = 0, d2 = 0, d3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0, i = 0;

#if defined(at_gap_xpulpv2)
	if (n >= 4) {
		at_sq8_dot4_hwloop(x, w, w1, w2, w3, n / 4, WithSum, &d0, &d1, &d2, &d3, &s0, &s1, &s2, &s3);
		i = n & ~3;
	}
#endif
	for (; i + 4 <= n; i += 4) {
		int vx = (int) ((unsigned int) at_sq8_lin_ld4(x + i) ^ AT_SQ8_FLIP);
		int v0 = at_sq8_lin_ld4(w + i), v1 = at_sq8_lin_ld4(w1 + i);
		int v2 = at_sq8_lin_ld4(w2 + i), v3 = at_sq8_lin_ld4(w3 + i);

		d0 = gap_sumdotpus4(vx, v0, d0);
		d1 = gap_sumdotpus4(vx, v1, d1);
		d2 = gap_sumdotpus4(vx, v2, d2);
		d3 = gap_sumdotpus4(vx, v3, d3);
		if (WithSum) {
			s0 = gap_sumdotp4(v0, ones, s0);
			s1 = gap_sumdotp4(v1, ones, s1);
			s2 = gap_sumdotp4(v2, ones, s2);
			s3 = gap_sumdotp4(v3, ones, s3);
		}
	}
	for (; i < n; i++) {
		int vx = x[i] + 128;

		d0 += vx * w[i];
		d1 += vx * w1[i];
		d2 += vx * w2[i];
		d3 += vx * w3[i];
		s0 += w[i];
		s1 += w1[i];
		s2 += w2[i];
		s3 += w3[i];
	}
	Res[0] = at_sq8_lin_result(d0, s0, zp);
	Res[1] = at_sq8_lin_result(d1, s1, zp);
	Res[2] = at_sq8_lin_result(d2, s2, zp);
	Res[3] = at_sq8_lin_result(d3, s3, zp);
}

/* Infos's words the outputs need, read once per call (at_inf_tflm assembles each from 4 bytes). */
typedef struct {
	int32_t InZp, OutZp, ActMin, ActMax, Flags;
} at_sq8_lin_consts;

static inline at_sq8_lin_consts at_sq8_lin_read(const signed char *Infos)
{
	at_sq8_lin_consts k;

	k.InZp = at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP);
	k.OutZp = at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP);
	k.ActMin = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN);
	k.ActMax = at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX);
	k.Flags = at_inf_tflm(Infos, AT_INF_TFLM_FLAGS);
	return k;
}

/* The requantised, clamped output of an accumulator (Bias already added). */
static inline signed char at_sq8_linear_out(int32_t acc, int32_t scale, int shift, const at_sq8_lin_consts *k)
{
	return (signed char) at_tflm_requant_int8_mode(acc, scale, shift, k->OutZp, k->ActMin, k->ActMax, k->Flags);
}

/* Output c from its dot product: bias (any int32, TFLM adds in int32: wrap) and requantisation. */
static inline void at_sq8_linear_store(KerLinear_TFLM_SQ8_T *Arg, const at_sq8_lin_consts *k, int c, int32_t dot)
{
	int32_t acc = (int32_t) ((uint32_t) Arg->Bias[c] + (uint32_t) dot);

	Arg->Out[c] = at_sq8_linear_out(acc, Arg->Scale[c], Arg->ScaleN[c], k);
}

/* Outputs [c, c + 4) of this core; WithSum a constant once inlined. */
static inline void at_sq8_linear4(KerLinear_TFLM_SQ8_T *Arg, const at_sq8_lin_consts *k, int c, int WithSum)
{
	int32_t Res[4];
	int j;

	at_sq8_dot4_zp(Arg->In, Arg->Filter + c * Arg->InDim, Arg->InDim, Arg->InDim, k->InZp, WithSum, Res);
	for (j = 0; j < 4; j++)
		at_sq8_linear_store(Arg, k, c + j, Res[j]);
}

void KerParLinear_TFLM_SQ8(KerLinear_TFLM_SQ8_T *Arg)
{
	at_sq8_lin_consts k = at_sq8_lin_read(Arg->Infos);
	int First, Last, c;

	CNN_Chunk(Arg->OutDim, &First, &Last);
	for (c = First; c + 4 <= Last; c += 4) {
		if (k.InZp == -128)
			at_sq8_linear4(Arg, &k, c, 0);
		else
			at_sq8_linear4(Arg, &k, c, 1);
	}
	for (; c < Last; c++)
		at_sq8_linear_store(Arg, &k, c, at_sq8_dot_zp(Arg->In, Arg->Filter + c * Arg->InDim, Arg->InDim, k.InZp));
	gap_waitbarrier(0);
}

/* Each core adds its share of this tile to its own partial sum (a fresh one on tile 0). */
void KerLinearDP_TFLM_SQ8(KerLinearDP_TFLM_SQ8_T *Arg)
{
	int CoreId = (int) gap_coreid();
	int First, Last;
	uint32_t acc = Arg->Tile ? (uint32_t) Arg->Reduct[CoreId] : 0u;

	CNN_Chunk(Arg->InSize, &First, &Last);
	acc += (uint32_t) at_sq8_dot_zp(Arg->In + First, Arg->Filter + First, Last - First,
					at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP));
	Arg->Reduct[CoreId] = (int) acc;
	gap_waitbarrier(0);
}

/* One core: the bias plus every core's partial sum (int32, wrapping), requantised. */
void KerLinearReduct_TFLM_SQ8(KerLinearReduct_TFLM_SQ8_T *Arg)
{
	at_sq8_lin_consts k = at_sq8_lin_read(Arg->Infos);
	uint32_t acc = (uint32_t) Arg->Bias[0];
	int c;

	for (c = 0; c < (int) gap_ncore(); c++)
		acc += (uint32_t) Arg->Reduct[c];
	Arg->Out[0] = at_sq8_linear_out((int32_t) acc, Arg->Scale[0], Arg->ScaleN[0], &k);
}
