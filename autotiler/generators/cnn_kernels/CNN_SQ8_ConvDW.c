/*
 * SQ8 depth wise convolutions with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Conv.h,
 * docs/cnn-sq8.md "DEPTHWISE_CONV_2D"): HWC, on one tile of lines.
 *
 * The taps of one channel are InFeat bytes apart in HWC, so the 4-lane dot products do not apply
 * (they would sum four channels). The work is one channel along one output line: the channel's
 * weights stay in registers, and a 3x3 filter of stride 1 or 2 slides along the line reusing the
 * input columns it already read (one or two new columns of three taps per output). Each tap is
 * taken as (x - IN_ZP), so a tap in the padding is 0 (TFLM skips it): a column outside the image
 * reads as zeros, a line outside it gets zero weights.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

/* acc + x y, wrapping. On the cluster core it is Xpulpv2's p.mac (R-type, opcode 0x33, funct3 0,
 * funct7 0x21: rd += rs1 rs2), one instruction where rv32imc needs two. To move to Gap.h. */
#if defined(RV_ISA_RV32) && !defined(AT_GAP_PLAIN_C)
static inline int32_t at_dw_mac(int32_t acc, int32_t x, int32_t y)
{
	__asm__(".insn r 0x33, 0, 0x21, %0, %1, %2" : "+r"(acc) : "r"(x), "r"(y));
	return acc;
}

/* p[o]: p.lb rd, rs2(rs1) (LB_RR, R-type on opcode 0x03, funct3 7, funct7 0), the address sum
 * in the load. The input is not written while the kernel runs, so the asm reads no declared
 * memory. To move to Gap.h. */
static inline int32_t at_dw_lb_rr(const signed char *p, int o)
{
	int32_t v;

	__asm__(".insn r 0x03, 7, 0, %0, %1, %2" : "=r"(v) : "r"(p), "r"(o));
	return v;
}

/* *p, then p += inc: p.lb rd, rs2(rs1!) (LB_RR_POSTINC, R-type on opcode 0x0b, funct3 7, funct7
 * 0). To move to Gap.h. */
static inline int32_t at_dw_lb_postinc(const signed char **p, int inc)
{
	int32_t v;

	__asm__(".insn r 0x0b, 7, 0, %0, %1, %2" : "=r"(v), "+r"(*p) : "r"(inc));
	return v;
}
#else
static inline int32_t at_dw_lb_postinc(const signed char **p, int inc)
{
	int32_t v = **p;

	*p += inc;
	return v;
}

static inline int32_t at_dw_mac(int32_t acc, int32_t x, int32_t y)
{
	return (int32_t) ((uint32_t) acc + (uint32_t) (x * y));
}

static inline int32_t at_dw_lb_rr(const signed char *p, int o)
{
	return p[o];
}
#endif

/* The layer constants every output needs. */
typedef struct {
	int InZp, OutZp, ActMin, ActMax, Mult;
	int32_t Flags;
} at_dw_consts;

/* Output (oy, ox, c) of any filter, stride and dilation: sum w (x - zp) over the in-image taps,
 * ic the input channel of c. */
static inline int32_t at_sq8_convdw_acc(const KerConv_TFLM_SQ8_T *Arg, int c, int ic, int ZeroPoint, int oy, int ox)
{
	int y0 = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft;
	int32_t Acc = 0;
	int ky, kx;

	for (ky = 0; ky < Arg->Fy; ky++) {
		int y = y0 + ky * Arg->Dy;

		if (y < 0 || y >= Arg->H)
			continue;
		for (kx = 0; kx < Arg->Fx; kx++) {
			int x = x0 + kx * Arg->Dx;

			if (x >= 0 && x < Arg->W) {
				int w = Arg->Filter[(ky * Arg->Fx + kx) * Arg->OutFeat + c];
				int v = Arg->In[(y * Arg->W + x) * Arg->InFeat + ic] - ZeroPoint;

				Acc = at_dw_mac(Acc, w, v);	/* wraps as TFLM's int32 sum */
			}
		}
	}
	return Acc;
}

/* Bias, requantisation and clamp of one accumulator of channel c. */
static inline signed char at_dw_out(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int32_t Acc)
{
	Acc = (int32_t) ((uint32_t) Acc + (uint32_t) Arg->Bias[c]);
	return (signed char) at_tflm_requant_int8_mode(Acc, Arg->Scale[c], Arg->ScaleN[c], k->OutZp, k->ActMin, k->ActMax,
						       k->Flags);
}

/* Output line oy of channel c, any filter: one output at a time, every tap tested. */
static __attribute__((noinline)) void at_dw_line_any(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int ic, int oy)
{
	signed char *Out = Arg->Out + oy * Arg->Wo * Arg->OutFeat + c;
	int ox;

	for (ox = 0; ox < Arg->Wo; ox++, Out += Arg->OutFeat)
		*Out = at_dw_out(Arg, k, c, at_sq8_convdw_acc(Arg, c, ic, k->InZp, oy, ox));
}

/* ---- 3x3, dilation 1 ------------------------------------------------------------------------- */

/* Outputs per segment of a line: their accumulators wait on the stack for the requantisation
 * loop (two short loops keep the weights in registers, one long one would spill them). 128: lines
 * of up to 128 outputs are not split (a split re-reads the window's first two columns) and fewer
 * requantisation loops start (GVSoC, MobileNet's 48x48 and 24x24 planes: 6% fewer cycles than 32);
 * 512 bytes of the cluster core's 2 KiB stack (at_dw_lines3x3's frame: 784 bytes). */
#define AT_DW_SEG 128

/* One input column of the window: its top, middle and bottom taps. */
typedef struct {
	int32_t t, m, b;
} at_dw_col;

/* A channel's 3x3 weights on one output line, w[ky][kx], the lines of the window outside the
 * tile with zero weights; Row[ky] the channel's input column 0 on line ky (clamped into the tile,
 * so that reading it is safe); Start = Bias - IN_ZP times the sum of the weights (wrapping). A
 * tap is read as its raw x, IN_ZP where the column is outside the image: Start + sum w x is then
 * TFLM's Bias + sum of w (x - IN_ZP) over the in-image taps (padding taps give w IN_ZP - w IN_ZP;
 * the sum is exact, only the bias's addition wraps, as TFLM's int32). */
typedef struct {
	int32_t w[3][3];
	const signed char *Row[3];
	int32_t Start;
} at_dw_win;

/* Bias - Zp Sum, wrapping (Bias is any int32; |Zp Sum| < 2^18). */
static inline int32_t at_dw_start(int32_t Bias, int Zp, int Sum)
{
	return (int32_t) ((uint32_t) Bias - (uint32_t) (Zp * Sum));
}

/* The channel's weights and Start (every line of the window inside the tile). */
static inline void at_dw_win_weights(const KerConv_TFLM_SQ8_T *Arg, int c, int Zp, at_dw_win *win)
{
	int Sum = 0, ky, kx;

	for (ky = 0; ky < 3; ky++)
		for (kx = 0; kx < 3; kx++) {
			win->w[ky][kx] = Arg->Filter[(ky * 3 + kx) * Arg->OutFeat + c];
			Sum += win->w[ky][kx];
		}
	win->Start = at_dw_start(Arg->Bias[c], Zp, Sum);
}

/* The window's input lines for output line oy; 1 if they are all inside the tile, else 0 and
 * *Edge the window with the weights of the lines outside it zeroed (the first or last lines). */
static inline int at_dw_win_rows(const KerConv_TFLM_SQ8_T *Arg, int c, int ic, int oy, int Zp, const at_dw_win *win,
				 at_dw_win *Edge)
{
	int y0 = oy * Arg->Sy - Arg->Pad[2], Line = Arg->W * Arg->InFeat, Sum = 0, ky, kx;

	if (y0 >= 0 && y0 + 2 < Arg->H) {
		Edge->Row[0] = Arg->In + y0 * Line + ic;
		Edge->Row[1] = Edge->Row[0] + Line;
		Edge->Row[2] = Edge->Row[1] + Line;
		return 1;
	}
	for (ky = 0; ky < 3; ky++) {
		int y = y0 + ky, in = (y >= 0 && y < Arg->H);

		Edge->Row[ky] = Arg->In + ((y < 0) ? 0 : ((y >= Arg->H) ? Arg->H - 1 : y)) * Line + ic;
		for (kx = 0; kx < 3; kx++) {
			Edge->w[ky][kx] = in ? win->w[ky][kx] : 0;
			Sum += Edge->w[ky][kx];
		}
	}
	Edge->Start = at_dw_start(Arg->Bias[c], Zp, Sum);
	return 0;
}

/* Input column x of the window, o = x InFeat its offset in a line, r0 .. r2 the window's lines
 * (values, not read from win in the loops: the stores to Acc would force reloads); IN_ZP outside
 * the image. */
static inline at_dw_col at_dw_col_load(const signed char *r0, const signed char *r1, const signed char *r2, int x,
				       int o, int W, int Zp)
{
	at_dw_col col = {Zp, Zp, Zp};

	if ((unsigned int) x < (unsigned int) W) {
		col.t = at_dw_lb_rr(r0, o);
		col.m = at_dw_lb_rr(r1, o);
		col.b = at_dw_lb_rr(r2, o);
	}
	return col;
}

/* acc + w0 t0 + w1 t1 + w2 t2: one filter column on one input column's three taps. */
static inline int32_t at_dw_col3(int32_t acc, int32_t w0, int32_t w1, int32_t w2, int32_t t0, int32_t t1, int32_t t2)
{
	return at_dw_mac(at_dw_mac(at_dw_mac(acc, w0, t0), w1, t1), w2, t2);
}

/* acc + the column's taps times the weights of filter column kx. */
static inline int32_t at_dw_part(const at_dw_win *win, int kx, at_dw_col col, int32_t acc)
{
	acc = at_dw_mac(acc, win->w[0][kx], col.t);
	acc = at_dw_mac(acc, win->w[1][kx], col.m);
	return at_dw_mac(acc, win->w[2][kx], col.b);
}

/* Accumulators of outputs [o0, o0 + n) of the line, their first window at input column x, stride
 * 1: each input column is read once and meets the three filter columns; a2 and a1 carry the two
 * outputs still open. */
static inline void at_dw_seg_s1(const at_dw_win *win, int x, int n, int W, int Step, int Zp, int32_t *Acc)
{
	const signed char *r0 = win->Row[0], *r1 = win->Row[1], *r2 = win->Row[2];
	int o = x * Step, i;
	at_dw_col col = at_dw_col_load(r0, r1, r2, x, o, W, Zp);
	int32_t a2 = at_dw_part(win, 0, col, win->Start), a1;

	col = at_dw_col_load(r0, r1, r2, x + 1, o + Step, W, Zp);
	a2 = at_dw_part(win, 1, col, a2);
	a1 = at_dw_part(win, 0, col, win->Start);
	for (i = 0, x += 2, o += 2 * Step; i < n; i++, x++, o += Step) {
		col = at_dw_col_load(r0, r1, r2, x, o, W, Zp);
		Acc[i] = at_dw_part(win, 2, col, a2);
		a2 = at_dw_part(win, 1, col, a1);
		a1 = at_dw_part(win, 0, col, win->Start);
	}
}

#if defined(at_gap_xpulpv2)
/* p.lb rd, step(p!) and p.mac rd, w, t, for the asm loops below. */
#define AT_DW_LB_PI(rd, p) ".insn r 0x0b, 7, 0, " rd ", " p ", %[step]\n\t"
#define AT_DW_MAC(rd, w, t) ".insn r 0x33, 0, 0x21, " rd ", " w ", " t "\n\t"

/* at_dw_seg_s2's outputs whose columns are inside the image, two per step of a hardware loop of 34
 * instructions (6 taps by p.lb with post-increment, 9 p.mac, a move and a store per output): xa
 * the open output (its first column done), xb the next one's, their roles swapped every output. */
#define AT_DW_S2_OUT(X, Y)                                                                               \
	AT_DW_LB_PI("t0", "%[r0]") AT_DW_LB_PI("t1", "%[r1]") AT_DW_LB_PI("t2", "%[r2]")                \
	AT_DW_LB_PI("t3", "%[r0]") AT_DW_MAC(X, "%[w01]", "t0") AT_DW_LB_PI("t4", "%[r1]")              \
	AT_DW_MAC(X, "%[w11]", "t1") AT_DW_LB_PI("t5", "%[r2]") AT_DW_MAC(X, "%[w21]", "t2")            \
	AT_DW_MAC(X, "%[w02]", "t3") AT_DW_MAC(X, "%[w12]", "t4") AT_DW_MAC(X, "%[w22]", "t5")          \
	"mv " Y ", %[st]\n\t"                                                                           \
	AT_DW_MAC(Y, "%[w00]", "t3") AT_DW_MAC(Y, "%[w10]", "t4") AT_DW_MAC(Y, "%[w20]", "t5")          \
	".insn s 0x2b, 2, " X ", 4(%[p])\n\t"
#define AT_DW_S2_LOOP(Steps)                                                                            \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 34)                        \
		AT_DW_S2_OUT("%[xa]", "%[xb]") AT_DW_S2_OUT("%[xb]", "%[xa]")                            \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [xa] "+r"(a), [xb] "+r"(b), [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [p] "+r"(Acc)  \
		: [n] "r"(Steps), [step] "r"(Step), [st] "r"(Start), [w00] "r"(w00), [w01] "r"(w01),      \
		  [w02] "r"(w02), [w10] "r"(w10), [w11] "r"(w11), [w12] "r"(w12), [w20] "r"(w20),          \
		  [w21] "r"(w21), [w22] "r"(w22)                                                        \
		: "t0", "t1", "t2", "t3", "t4", "t5", "memory")
#endif

/* The same for stride 2: two new columns per output, the second shared with the next output. */
static __attribute__((noinline)) void at_dw_seg_s2(const at_dw_win *win, int x, int n, int W, int Step, int Zp,
						  int32_t *Acc)
{
	const signed char *r0 = win->Row[0], *r1 = win->Row[1], *r2 = win->Row[2];
	int o = x * Step, i = 0;
	int32_t a = at_dw_part(win, 0, at_dw_col_load(r0, r1, r2, x, o, W, Zp), win->Start);

#if defined(at_gap_xpulpv2)
	{
		/* outputs i whose last column x + 2 + 2 i is inside the image, by twos */
		int m = (W - 3 - x >= 0) ? (W - 3 - x) / 2 + 1 : 0, Steps = ((m < n) ? m : n) >> 1;

		if (Steps > 0) {
			int32_t w00 = win->w[0][0], w01 = win->w[0][1], w02 = win->w[0][2];
			int32_t w10 = win->w[1][0], w11 = win->w[1][1], w12 = win->w[1][2];
			int32_t w20 = win->w[2][0], w21 = win->w[2][1], w22 = win->w[2][2], Start = win->Start, b = 0;

			r0 += o + Step;
			r1 += o + Step;
			r2 += o + Step;
			AT_DW_S2_LOOP(Steps);
			r0 = win->Row[0];
			r1 = win->Row[1];
			r2 = win->Row[2];
			i = 2 * Steps;
			x += 2 * i;
			o += 2 * i * Step;
			Acc -= i;	/* the loop stepped Acc past its outputs */
		}
	}
#endif
	for (; i < n; i++, x += 2, o += 2 * Step) {
		at_dw_col col = at_dw_col_load(r0, r1, r2, x + 2, o + 2 * Step, W, Zp);

		a = at_dw_part(win, 1, at_dw_col_load(r0, r1, r2, x + 1, o + Step, W, Zp), a);
		Acc[i] = at_dw_part(win, 2, col, a);
		a = at_dw_part(win, 0, col, win->Start);
	}
}

#if defined(at_gap_xpulpv2)
/* at_dw_seg2_s1's columns inside the image on a hardware loop of 28 instructions per input column
 * (4 taps by p.lb with post-increment, 18 p.mac, the two finished outputs stored by one pointer,
 * 4 moves): xa, ya / xb, yb the two open outputs of each line (xa the older), St = Start. One asm
 * statement (the compiler knows nothing of the loop); the taps live in t0 .. t3, clobbered. */
#define AT_DW_SEG2_LOOP(Cols)                                                                           \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 28)                        \
		AT_DW_LB_PI("t0", "%[r0]") AT_DW_LB_PI("t1", "%[r1]") AT_DW_LB_PI("t2", "%[r2]")        \
		AT_DW_MAC("%[xa]", "%[w02]", "t0") AT_DW_LB_PI("t3", "%[r3]")                           \
		AT_DW_MAC("%[xa]", "%[w12]", "t1") AT_DW_MAC("%[xa]", "%[w22]", "t2")                   \
		AT_DW_MAC("%[xb]", "%[w02]", "t1") AT_DW_MAC("%[xb]", "%[w12]", "t2")                   \
		AT_DW_MAC("%[xb]", "%[w22]", "t3")                                                      \
		"sw %[xb], 4(%[p])\n\t"                                                                 \
		".insn s 0x2b, 2, %[xa], 8(%[p])\n\t"                                                   \
		"mv %[xa], %[ya]\n\t"                                                                   \
		"mv %[xb], %[yb]\n\t"                                                                   \
		AT_DW_MAC("%[xa]", "%[w01]", "t0") AT_DW_MAC("%[xa]", "%[w11]", "t1")                   \
		AT_DW_MAC("%[xa]", "%[w21]", "t2")                                                      \
		AT_DW_MAC("%[xb]", "%[w01]", "t1") AT_DW_MAC("%[xb]", "%[w11]", "t2")                   \
		AT_DW_MAC("%[xb]", "%[w21]", "t3")                                                      \
		"mv %[ya], %[st]\n\t"                                                                   \
		AT_DW_MAC("%[ya]", "%[w00]", "t0") AT_DW_MAC("%[ya]", "%[w10]", "t1")                   \
		AT_DW_MAC("%[ya]", "%[w20]", "t2")                                                      \
		"mv %[yb], %[st]\n\t"                                                                   \
		AT_DW_MAC("%[yb]", "%[w00]", "t1") AT_DW_MAC("%[yb]", "%[w10]", "t2")                   \
		AT_DW_MAC("%[yb]", "%[w20]", "t3")                                                      \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [xa] "+r"(a2), [ya] "+r"(a1), [xb] "+r"(b2), [yb] "+r"(b1), [r0] "+r"(r0), [r1] "+r"(r1), \
		  [r2] "+r"(r2), [r3] "+r"(r3), [p] "+r"(P)                                              \
		: [n] "r"(Cols), [step] "r"(Step), [st] "r"(Start), [w00] "r"(w00), [w01] "r"(w01),        \
		  [w02] "r"(w02), [w10] "r"(w10), [w11] "r"(w11), [w12] "r"(w12), [w20] "r"(w20),          \
		  [w21] "r"(w21), [w22] "r"(w22)                                                        \
		: "t0", "t1", "t2", "t3", "memory")
#endif

/* Two output lines at stride 1, the second one input line lower (window lines r0 .. r2 and r1 ..
 * r3, all inside the tile): each input column is read once (4 taps) and meets the three filter
 * columns of both lines, the same 9 weights. The accumulators of output i go to P[2 i] (first
 * line) and P[2 i + 1] (second line). The columns inside the image go without a test; the
 * window's first two and those past the image's right edge read IN_ZP where outside. */
static inline void at_dw_seg2_s1(const at_dw_win *win, const signed char *r3, int x, int n, int W, int Step, int Zp,
				 int32_t *P)
{
	const signed char *r0 = win->Row[0], *r1 = win->Row[1], *r2 = win->Row[2];
	int32_t w00 = win->w[0][0], w01 = win->w[0][1], w02 = win->w[0][2];
	int32_t w10 = win->w[1][0], w11 = win->w[1][1], w12 = win->w[1][2];
	int32_t w20 = win->w[2][0], w21 = win->w[2][1], w22 = win->w[2][2], Start = win->Start;
	int32_t a2, a1, b2, b1;
	int o = x * Step, i, m;
	at_dw_col c = at_dw_col_load(r0, r1, r2, x, o, W, Zp);
	int32_t c3 = ((unsigned int) x < (unsigned int) W) ? at_dw_lb_rr(r3, o) : Zp;

	a2 = at_dw_col3(Start, w00, w10, w20, c.t, c.m, c.b);
	b2 = at_dw_col3(Start, w00, w10, w20, c.m, c.b, c3);
	c = at_dw_col_load(r0, r1, r2, x + 1, o + Step, W, Zp);
	c3 = ((unsigned int) (x + 1) < (unsigned int) W) ? at_dw_lb_rr(r3, o + Step) : Zp;
	a2 = at_dw_col3(a2, w01, w11, w21, c.t, c.m, c.b);
	b2 = at_dw_col3(b2, w01, w11, w21, c.m, c.b, c3);
	a1 = at_dw_col3(Start, w00, w10, w20, c.t, c.m, c.b);
	b1 = at_dw_col3(Start, w00, w10, w20, c.m, c.b, c3);
	/* outputs whose last column x + 2 + i is inside the image: no test */
	m = W - (x + 2);
	m = (m < 0) ? 0 : ((m > n) ? n : m);
	r0 += o + 2 * Step;
	r1 += o + 2 * Step;
	r2 += o + 2 * Step;
	r3 += o + 2 * Step;
#if defined(at_gap_xpulpv2)
	if (m > 0)
		AT_DW_SEG2_LOOP(m);
	i = m;
#else
	for (i = 0; i < m; i++, P += 2) {
		int32_t t0 = at_dw_lb_postinc(&r0, Step), t1 = at_dw_lb_postinc(&r1, Step);
		int32_t t2 = at_dw_lb_postinc(&r2, Step), t3 = at_dw_lb_postinc(&r3, Step);

		P[0] = at_dw_col3(a2, w02, w12, w22, t0, t1, t2);
		P[1] = at_dw_col3(b2, w02, w12, w22, t1, t2, t3);
		a2 = at_dw_col3(a1, w01, w11, w21, t0, t1, t2);
		b2 = at_dw_col3(b1, w01, w11, w21, t1, t2, t3);
		a1 = at_dw_col3(Start, w00, w10, w20, t0, t1, t2);
		b1 = at_dw_col3(Start, w00, w10, w20, t1, t2, t3);
	}
#endif
	for (; i < n; i++, P += 2) {	/* the right padding: IN_ZP columns */
		P[0] = at_dw_col3(a2, w02, w12, w22, Zp, Zp, Zp);
		P[1] = at_dw_col3(b2, w02, w12, w22, Zp, Zp, Zp);
		a2 = at_dw_col3(a1, w01, w11, w21, Zp, Zp, Zp);
		b2 = at_dw_col3(b1, w01, w11, w21, Zp, Zp, Zp);
		a1 = at_dw_col3(Start, w00, w10, w20, Zp, Zp, Zp);
		b1 = at_dw_col3(Start, w00, w10, w20, Zp, Zp, Zp);
	}
}

/* Out[i Step] for the n accumulators of one channel (the bias is in them): the channel's prepared
 * requantisation (CNN_SQ8_Requant.h), TFLM's double rounding without tests per output. Q and
 * the constants are local copies: the byte stores cannot alias them, they stay in registers. */
static inline void at_dw_requant(const int32_t *Acc, int n, signed char *Out, int Step, const at_tflm_rq_t *q,
				 const at_dw_consts *k)
{
	at_tflm_rq_t Q = *q;
	int32_t OutZp = k->OutZp, ActMin = k->ActMin, ActMax = k->ActMax;
	int i;

	for (i = 0; i < n; i++, Out += Step)
		*Out = (signed char) at_tflm_rq_int8_double(&Q, Acc[i], OutZp, ActMin, ActMax);
}

/* The same through at_tflm_rq_int8_fast (its conditions hold for the channel: f): two outputs per
 * step, both products before either end, hiding the mulh's latency. */
static inline void at_dw_requant_fast(const int32_t *Acc, int n, signed char *Out, int Step,
				      const at_tflm_rq_fast_t *f, const at_dw_consts *k)
{
	at_tflm_rq_fast_t F = *f;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;
	int i;

	for (i = 0; i + 1 < n; i += 2, Out += 2 * Step) {
		int32_t a0 = Acc[i], a1 = Acc[i + 1];
		uint32_t h0 = (uint32_t) gap_mulh_i32(a0, F.M), h1 = (uint32_t) gap_mulh_i32(a1, F.M);
		uint32_t l0 = (uint32_t) a0 * (uint32_t) F.M, l1 = (uint32_t) a1 * (uint32_t) F.M;

		Out[0] = (signed char) at_tflm_rq_fast_end(&F, l0, h0, ActMin, ActMax);
		Out[Step] = (signed char) at_tflm_rq_fast_end(&F, l1, h1, ActMin, ActMax);
	}
	if (i < n)
		*Out = (signed char) at_tflm_rq_int8_fast(&F, Acc[i], ActMin, ActMax);
}

/* The same for any rounding mode (single rounding, or a multiplier of INT32_MIN). */
static __attribute__((noinline)) void at_dw_requant_any(const int32_t *Acc, int n, signed char *Out, int Step,
							 const at_tflm_rq_t *q, const at_dw_consts *k)
{
	int i;

	for (i = 0; i < n; i++, Out += Step)
		*Out = (signed char) at_tflm_rq_int8(q, Acc[i], k->OutZp, k->ActMin, k->ActMax);
}

#if defined(at_gap_xpulpv2)
/* at_tflm_rq_int8_fast2 (CNN_SQ8_Requant.h) of N pairs of accumulators (P[2 i] into OA[i Step],
 * P[2 i + 1] into OB[i Step]) on a hardware loop of 20 instructions per pair: mulh(4 acc, M), the
 * sign twice, the shifted add of K (p.addNr), the clamp, the stores. */
#define AT_DW_RQ2_PAIRS(N)                                                                              \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 20)                        \
		AT_GAP_ASM_PLW_PI("t0", "%[p]") AT_GAP_ASM_PLW_PI("t1", "%[p]")                         \
		"slli t0, t0, 2\n\t" "slli t1, t1, 2\n\t" "mulh t0, t0, %[m]\n\t" "mulh t1, t1, %[m]\n\t"   \
		"srai t2, t0, 31\n\t" "srai t3, t1, 31\n\t" "add t0, t0, t2\n\t" "add t1, t1, t3\n\t"       \
		"add t0, t0, t2\n\t" "add t1, t1, t3\n\t"                                               \
		".insn r 0x5b, 2, 0x20, t0, %[kk], %[sh]\n\t" ".insn r 0x5b, 2, 0x20, t1, %[kk], %[sh]\n\t" \
		".insn r 0x33, 6, 0x02, t0, t0, %[lo]\n\t" ".insn r 0x33, 6, 0x02, t1, t1, %[lo]\n\t"       \
		".insn r 0x33, 4, 0x02, t0, t0, %[hi]\n\t" ".insn r 0x33, 4, 0x02, t1, t1, %[hi]\n\t"       \
		".insn r 0x2b, 4, 0, %[step], %[oa], t0\n\t" ".insn r 0x2b, 4, 0, %[step], %[ob], t1\n\t"   \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [p] "+r"(P), [oa] "+r"(OA), [ob] "+r"(OB)                                              \
		: [n] "r"(N), [m] "r"(F2.M), [kk] "r"(F2.K), [sh] "r"(F2.Right1), [lo] "r"(ActMin),        \
		  [hi] "r"(ActMax), [step] "r"(Step)                                                    \
		: "t0", "t1", "t2", "t3", "memory")
#endif

/* The same through at_tflm_rq_int8_fast2 (its bound and conditions hold for the channel: f2). */
static void at_dw_rq2_pairs(const int32_t *Acc, int n, signed char *OA, signed char *OB, int Step,
			    const at_tflm_rq_fast2_t *f2, const at_dw_consts *k)
{
	at_tflm_rq_fast2_t F2 = *f2;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;
#if defined(at_gap_xpulpv2)
	const int32_t *P = Acc;

	if (n > 0)
		AT_DW_RQ2_PAIRS(n);
#else
	int i;

	for (i = 0; i < n; i++, Acc += 2, OA += Step, OB += Step) {
		*OA = (signed char) at_tflm_rq_int8_fast2(&F2, Acc[0], ActMin, ActMax);
		*OB = (signed char) at_tflm_rq_int8_fast2(&F2, Acc[1], ActMin, ActMax);
	}
#endif
}

/* Channel c's fast requantisation: 2 (f2) where its accumulators, Bias + sum w (x - IN_ZP) over at
 * most 9 taps, within |Bias| + 9 2^15, stay below at_tflm_rq_int8_fast2's 2^29 and its conditions
 * hold (a mulh and 8 simple instructions), else 1 (f) where at_tflm_rq_int8_fast's do, else 0. */
static int at_dw_rq_of(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, const at_tflm_rq_t *q,
		       at_tflm_rq_fast_t *f, at_tflm_rq_fast2_t *f2)
{
	uint32_t Bias = (Arg->Bias[c] < 0) ? 0u - (uint32_t) Arg->Bias[c] : (uint32_t) Arg->Bias[c];

	if (Bias < (1u << 29) - (9u << 15) && at_tflm_rq_fast2_of(q, k->OutZp, f2))
		return 2;
	return at_tflm_rq_fast_of(q, k->OutZp, f);
}

/* Requantises the fill accumulators of Acc into Out, Out[i OutFeat] (consecutive outputs of one
 * channel: the output pixels of a tile are consecutive across its lines). */
static inline void at_dw_flush(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, const at_tflm_rq_t *q,
			       const at_tflm_rq_fast_t *f, const at_tflm_rq_fast2_t *f2, int Fast, const int32_t *Acc,
			       int fill, signed char *Out)
{
	if (Fast == 2) {
		at_dw_rq2_pairs(Acc, fill >> 1, Out, Out + Arg->OutFeat, 2 * Arg->OutFeat, f2, k);
		if (fill & 1)
			Out[(fill - 1) * Arg->OutFeat] =
				(signed char) at_tflm_rq_int8_fast2(f2, Acc[fill - 1], k->ActMin, k->ActMax);
	} else if (Fast)
		at_dw_requant_fast(Acc, fill, Out, Arg->OutFeat, f, k);
	else if (at_tflm_rq_is_double(q))
		at_dw_requant(Acc, fill, Out, Arg->OutFeat, q, k);
	else
		at_dw_requant_any(Acc, fill, Out, Arg->OutFeat, q, k);
}

#if defined(at_gap_xpulpv2)
/* The fast requantisation of N interleaved pairs (P[2 i] into OA[i Step], P[2 i + 1] into OB[i Step])
 * of one channel (constants M, Rnd = Round, Sh = Right1 in registers) on a hardware loop of 26
 * instructions per pair: at_tflm_rq_fast_end instruction by instruction (as AT_DW_RQ_PAIRS). */
#define AT_DW_RQ_LINES(N)                                                                               \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 26)                        \
		AT_GAP_ASM_PLW_PI("t0", "%[p]") AT_GAP_ASM_PLW_PI("t1", "%[p]")                         \
		"mulh t3, t0, %[m]\n\t" "mulh t4, t1, %[m]\n\t" "mul t0, t0, %[m]\n\t" "mul t1, t1, %[m]\n\t" \
		"slli t3, t3, 1\n\t" "slli t4, t4, 1\n\t" "srli t0, t0, 1\n\t" "srli t1, t1, 1\n\t"         \
		".insn r 0x5b, 2, 0x5e, t0, t0, %[c29]\n\t" ".insn r 0x5b, 2, 0x5e, t1, t1, %[c29]\n\t"     \
		"add t3, t3, t0\n\t" "add t4, t4, t1\n\t" "srai t0, t3, 31\n\t" "srai t1, t4, 31\n\t"       \
		".insn r 0x5b, 2, 1, t3, t3, t0\n\t" ".insn r 0x5b, 2, 1, t4, t4, t1\n\t"                   \
		".insn r 0x5b, 2, 0x20, t3, %[rnd], %[sh]\n\t" ".insn r 0x5b, 2, 0x20, t4, %[rnd], %[sh]\n\t" \
		".insn r 0x33, 6, 0x02, t3, t3, %[lo]\n\t" ".insn r 0x33, 6, 0x02, t4, t4, %[lo]\n\t"       \
		".insn r 0x33, 4, 0x02, t3, t3, %[hi]\n\t" ".insn r 0x33, 4, 0x02, t4, t4, %[hi]\n\t"       \
		".insn r 0x2b, 4, 0, %[step], %[oa], t3\n\t" ".insn r 0x2b, 4, 0, %[step], %[ob], t4\n\t"   \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [p] "+r"(P), [oa] "+r"(OA), [ob] "+r"(OB)                                              \
		: [n] "r"(N), [m] "r"(F.M), [rnd] "r"(F.Round), [sh] "r"(F.Right1), [c29] "r"(C29),        \
		  [lo] "r"(ActMin), [hi] "r"(ActMax), [step] "r"(Step)                                  \
		: "t0", "t1", "t3", "t4", "memory")
#endif

/* Requantises Pairs pairs of lines of Wo outputs, their accumulators interleaved as at_dw_seg2_s1
 * leaves them (line pair j from Acc + 2 j Wo), into the consecutive lines from Out. */
static __attribute__((noinline)) void at_dw_flush2(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k,
						    const at_tflm_rq_t *q, const at_tflm_rq_fast_t *f,
						    const at_tflm_rq_fast2_t *f2, int Fast, const int32_t *Acc, int Pairs,
						    int Wo, signed char *Out)
{
	int Step = Arg->OutFeat, j, i;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;
	at_tflm_rq_fast_t F = *f;

	for (j = 0; j < Pairs; j++, Out += 2 * Wo * Step) {
		signed char *OutA = Out, *OutB = Out + Wo * Step;

		if (Fast == 2) {
			at_dw_rq2_pairs(Acc, Wo, OutA, OutB, Step, f2, k);
			Acc += 2 * Wo;
			continue;
		}

#if defined(at_gap_xpulpv2)
		if (Fast) {
			const int32_t *P = Acc;
			signed char *OA = OutA, *OB = OutB;
			uint32_t C29 = 1u << 29;

			AT_DW_RQ_LINES(Wo);
			Acc += 2 * Wo;
			continue;
		}
#endif
		if (Fast) {
			for (i = 0; i < Wo; i++, Acc += 2, OutA += Step, OutB += Step) {
				int32_t a0 = Acc[0], a1 = Acc[1];
				uint32_t h0 = (uint32_t) gap_mulh_i32(a0, F.M), h1 = (uint32_t) gap_mulh_i32(a1, F.M);
				uint32_t l0 = (uint32_t) a0 * (uint32_t) F.M, l1 = (uint32_t) a1 * (uint32_t) F.M;

				*OutA = (signed char) at_tflm_rq_fast_end(&F, l0, h0, ActMin, ActMax);
				*OutB = (signed char) at_tflm_rq_fast_end(&F, l1, h1, ActMin, ActMax);
			}
		} else {
			for (i = 0; i < Wo; i++, Acc += 2, OutA += Step, OutB += Step) {
				*OutA = (signed char) at_tflm_rq_int8(q, Acc[0], k->OutZp, ActMin, ActMax);
				*OutB = (signed char) at_tflm_rq_int8(q, Acc[1], k->OutZp, ActMin, ActMax);
			}
		}
	}
}

/* Output lines [oy, oy + n) of channel c, 3x3: the channel's weights and requantisation are
 * prepared once; a line reads through win, or through Edge where the window leaves the tile.
 * Both are locals, as Acc: its stores cannot alias them, the weights stay in registers. The
 * accumulators of consecutive outputs, across lines, fill Acc before one requantisation loop
 * (narrow lines share it). */
static void at_dw_lines3x3(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int ic, int oy, int n)
{
	int32_t Acc[AT_DW_SEG];
	at_dw_win win, Edge;
	at_tflm_rq_t q;
	at_tflm_rq_fast_t f = {0, 0, 0};
	at_tflm_rq_fast2_t f2 = {0, 0, 0};
	int Wo = Arg->Wo, fill = 0, Pairs = 0, y, Fast, Line = Arg->W * Arg->InFeat;
	/* two lines per step at stride 1 where both lines' accumulators fit in Acc */
	int Two = Arg->Sx == 1 && Arg->Sy == 1 && 2 * Wo <= AT_DW_SEG;
	signed char *Out = Arg->Out + oy * Wo * Arg->OutFeat + c;	/* the first output not yet stored */

	at_dw_win_weights(Arg, c, k->InZp, &win);
	at_tflm_rq_prep(&q, Arg->Scale[c], Arg->ScaleN[c], k->Flags);
	Fast = at_dw_rq_of(Arg, k, c, &q, &f, &f2);	/* decided once per channel */
	for (y = oy; y < oy + n; y++) {
		const at_dw_win *w = &Edge;
		int o0, m;

		if (at_dw_win_rows(Arg, c, ic, y, k->InZp, &win, &Edge)) {
			win.Row[0] = Edge.Row[0];
			win.Row[1] = Edge.Row[1];
			win.Row[2] = Edge.Row[2];
			w = &win;
			if (Two && y + 1 < oy + n && (y + 1) * Arg->Sy - Arg->Pad[2] + 2 < Arg->H) {
				/* lines y, y + 1 together (both windows inside the tile): Pairs pairs
				 * of lines wait in Acc, never with single lines (fill == 0) */
				if (fill) {
					at_dw_flush(Arg, k, &q, &f, &f2, Fast, Acc, fill, Out);
					Out += fill * Arg->OutFeat;
					fill = 0;
				}
				if (2 * Wo * (Pairs + 1) > AT_DW_SEG) {
					at_dw_flush2(Arg, k, &q, &f, &f2, Fast, Acc, Pairs, Wo, Out);
					Out += 2 * Wo * Pairs * Arg->OutFeat;
					Pairs = 0;
				}
				at_dw_seg2_s1(&win, win.Row[2] + Line, -Arg->PadLeft, Wo, Arg->W, Arg->InFeat, k->InZp,
					      Acc + 2 * Wo * Pairs);
				Pairs++;
				y++;
				continue;
			}
		}
		if (Pairs) {
			at_dw_flush2(Arg, k, &q, &f, &f2, Fast, Acc, Pairs, Wo, Out);
			Out += 2 * Wo * Pairs * Arg->OutFeat;
			Pairs = 0;
		}
		for (o0 = 0; o0 < Wo; o0 += m) {
			m = (Wo - o0 < AT_DW_SEG - fill) ? Wo - o0 : AT_DW_SEG - fill;
			if (Arg->Sx == 1)
				at_dw_seg_s1(w, o0 - Arg->PadLeft, m, Arg->W, Arg->InFeat, k->InZp, Acc + fill);
			else
				at_dw_seg_s2(w, o0 * 2 - Arg->PadLeft, m, Arg->W, Arg->InFeat, k->InZp, Acc + fill);
			fill += m;
			if (fill == AT_DW_SEG) {
				at_dw_flush(Arg, k, &q, &f, &f2, Fast, Acc, fill, Out);
				Out += fill * Arg->OutFeat;
				fill = 0;
			}
		}
	}
	if (Pairs)
		at_dw_flush2(Arg, k, &q, &f, &f2, Fast, Acc, Pairs, Wo, Out);
	if (fill)
		at_dw_flush(Arg, k, &q, &f, &f2, Fast, Acc, fill, Out);
}

/* ---- small planes of many channels: channels inner ------------------------------------------ */

/* On a plane of a few pixels per channel, setting a channel up costs more than its outputs (MobileNet's
 * 6x6 and 3x3 planes of 128-256 channels), so each core takes a run of channels and, pixel by pixel,
 * loops over them: the window's nine input taps are InFeat-strided bases (the padding's taps point to
 * a buffer of IN_ZP, read as x - IN_ZP = 0), a channel is c + offset from each, and its weights are
 * OutFeat apart (p.lb with register post-increment). */

/* Output planes of at most AT_DW_SMALL pixels take the channels-inner form where each core has at
 * least AT_DW_SMALL_CHUNK channels (a pixel's tap bases serve them all). GVSoC: MobileNet's 6x6 and
 * 3x3 planes of 64-256 channels 1.06-2x faster; planes of 12x12 and more slower. */
#define AT_DW_SMALL 36

/* Planes of at most AT_DW_TINY outputs take the channels-inner form rather than the padded plane's
 * (GVSoC: MobileNet's 3x3 planes of 256 channels 27.4k cycles against 35.0k; its 6x6 ones 38.9k
 * against 35.3k). */
#define AT_DW_TINY 16
#define AT_DW_SMALL_CHUNK 8

/* Channels per run (the IN_ZP buffer's and the run constants' size: 14 bytes each, on the stack). */
#define AT_DW_RUN 32

/* The tap bases of the 3 x Cols input window from output pixel (oy, ox) on, T[ky Cols + kx], channel
 * c0 at offset 0 of each. */
static inline void at_dw_taps(const KerConv_TFLM_SQ8_T *Arg, int oy, int ox, int c0, const signed char *ZpBuf,
			      const signed char **T, int Cols)
{
	int y0 = oy * Arg->Sy - Arg->Pad[2], x0 = ox * Arg->Sx - Arg->PadLeft, ky, kx;

	for (ky = 0; ky < 3; ky++)
		for (kx = 0; kx < Cols; kx++) {
			int y = y0 + ky, x = x0 + kx;
			int in = ((unsigned int) y < (unsigned int) Arg->H) && ((unsigned int) x < (unsigned int) Arg->W);

			T[ky * Cols + kx] = in ? Arg->In + (y * Arg->W + x) * Arg->InFeat + c0 : ZpBuf;
		}
}

/* Requantisation of channel c's accumulator (the bias in it) where the fast form does not apply. */
static __attribute__((noinline)) signed char at_dw_out_any(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c,
							   int32_t Acc)
{
	return (signed char) at_tflm_requant_int8_mode(Acc, Arg->Scale[c], Arg->ScaleN[c], k->OutZp, k->ActMin,
						       k->ActMax, k->Flags);
}

/* A run's per-channel constants: Start = Bias - IN_ZP sum w (the padding's taps read IN_ZP, so they
 * add w IN_ZP - w IN_ZP = 0), and at_tflm_rq_int8_fast's M, Round and Right - 1 where its conditions
 * hold (Right1 < 0 where they do not: the general form). Computed once per run, not per pixel. */
typedef struct {
	int32_t Start[AT_DW_RUN], M[AT_DW_RUN], Round[AT_DW_RUN];
	signed char Right1[AT_DW_RUN];
	int AllFast;	/* every channel of the run has its fast constants */
} at_dw_run;

static void at_dw_run_prep(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c0, int n, at_dw_run *R)
{
	int j, t;

	R->AllFast = 1;
	for (j = 0; j < n; j++) {
		int c = c0 + j, Sum = 0;
		at_tflm_rq_t q;
		at_tflm_rq_fast_t f;

		for (t = 0; t < 9; t++)
			Sum += Arg->Filter[t * Arg->OutFeat + c];
		R->Start[j] = at_dw_start(Arg->Bias[c], k->InZp, Sum);
		at_tflm_rq_prep(&q, Arg->Scale[c], Arg->ScaleN[c], k->Flags);
		R->Right1[j] = -1;
		if (at_tflm_rq_fast_of(&q, k->OutZp, &f)) {
			R->M[j] = f.M;
			R->Round[j] = f.Round;
			R->Right1[j] = (signed char) f.Right1;
		}
		R->AllFast = R->AllFast && R->Right1[j] >= 0;
	}
}

/* Outputs of channels [c0, c0 + n) at pixel (oy, ox), n <= AT_DW_RUN. The pointers and constants
 * are locals: the byte stores cannot alias them. */
static inline void at_dw_pixel_run(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, const at_dw_run *R, int oy,
				   int ox, int c0, int n, const signed char *ZpBuf)
{
	const signed char *T[9];
	const signed char *T0, *T1, *T2, *T3, *T4, *T5, *T6, *T7, *T8, *Filter = Arg->Filter + c0;
	signed char *Out = Arg->Out + (oy * Arg->Wo + ox) * Arg->OutFeat + c0;
	int OutFeat = Arg->OutFeat, j;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;

	at_dw_taps(Arg, oy, ox, c0, ZpBuf, T, 3);
	T0 = T[0]; T1 = T[1]; T2 = T[2]; T3 = T[3]; T4 = T[4]; T5 = T[5]; T6 = T[6]; T7 = T[7]; T8 = T[8];
	for (j = 0; j < n; j++) {
		const signed char *w = Filter + j;
		int32_t Acc = R->Start[j];

		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T0, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T1, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T2, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T3, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T4, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T5, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T6, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T7, j));
		Acc = at_dw_mac(Acc, at_dw_lb_postinc(&w, OutFeat), at_dw_lb_rr(T8, j));
		if (R->Right1[j] >= 0) {
			at_tflm_rq_fast_t f;

			f.M = R->M[j];
			f.Round = R->Round[j];
			f.Right1 = R->Right1[j];
			Out[j] = (signed char) at_tflm_rq_int8_fast(&f, Acc, ActMin, ActMax);
		} else {
			Out[j] = at_dw_out_any(Arg, k, c0 + j, Acc);
		}
	}
}

/* Out[0] and Out[Step]: run channel j's accumulators a0 and a1 requantised (both products first). */
static inline void at_dw_out_pair(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, const at_dw_run *R, int j,
				  int c0, int32_t a0, int32_t a1, signed char *Out, int Step, int32_t ActMin, int32_t ActMax)
{
	if (R->Right1[j] >= 0) {
		at_tflm_rq_fast_t f;
		uint32_t h0, h1;

		f.M = R->M[j];
		f.Round = R->Round[j];
		f.Right1 = R->Right1[j];
		h0 = (uint32_t) gap_mulh_i32(a0, f.M);
		h1 = (uint32_t) gap_mulh_i32(a1, f.M);
		Out[0] = (signed char) at_tflm_rq_fast_end(&f, (uint32_t) a0 * (uint32_t) f.M, h0, ActMin, ActMax);
		Out[Step] = (signed char) at_tflm_rq_fast_end(&f, (uint32_t) a1 * (uint32_t) f.M, h1, ActMin, ActMax);
	} else {
		Out[0] = at_dw_out_any(Arg, k, c0 + j, a0);
		Out[Step] = at_dw_out_any(Arg, k, c0 + j, a1);
	}
}

#if defined(at_gap_xpulpv2)
/* at_dw_pair_run's sums on a hardware loop over the run's channels, 44 instructions each: 12 taps
 * (p.lb, the 12 bases post-incremented to the next channel), 9 weights (p.lb, post-incremented by
 * OutFeat, then back to the next channel's), 18 p.mac from Start (read from St); the two sums to
 * P[2 j] and P[2 j + 1]. The bases are read from T into s2 .. s11, a6, a7 (12 pointers as operands
 * would exceed GCC's 30); the sums, taps and weight live in t0 .. t6. All clobbered. */
#define AT_DW_LB1(rd, p) ".insn i 0x0b, 0, " rd ", 1(" p ")\n\t"
#define AT_DW_LBW(rd) ".insn r 0x0b, 7, 0, " rd ", %[w], %[of]\n\t"
#define AT_DW_PAIR_ROW(A, B, C, D)                                                                       \
	AT_DW_LB1("t2", A) AT_DW_LB1("t3", B) AT_DW_LBW("t6") AT_DW_LB1("t4", C)                        \
	AT_DW_MAC("t0", "t6", "t2") AT_DW_MAC("t1", "t6", "t3") AT_DW_LBW("t6") AT_DW_LB1("t5", D)     \
	AT_DW_MAC("t0", "t6", "t3") AT_DW_MAC("t1", "t6", "t4") AT_DW_LBW("t6")                        \
	AT_DW_MAC("t0", "t6", "t4") AT_DW_MAC("t1", "t6", "t5")
#define AT_DW_PAIR_LOOP(N)                                                                              \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN                                                          \
		"lw s2, 0(%[tb])\n\t" "lw s3, 4(%[tb])\n\t" "lw s4, 8(%[tb])\n\t" "lw s5, 12(%[tb])\n\t"   \
		"lw s6, 16(%[tb])\n\t" "lw s7, 20(%[tb])\n\t" "lw s8, 24(%[tb])\n\t" "lw s9, 28(%[tb])\n\t" \
		"lw s10, 32(%[tb])\n\t" "lw s11, 36(%[tb])\n\t" "lw a6, 40(%[tb])\n\t" "lw a7, 44(%[tb])\n\t" \
		AT_GAP_ASM_LP_SETUP0("%[n]", 44)                                                        \
		AT_GAP_ASM_PLW_PI("t0", "%[st]") "mv t1, t0\n\t"                                        \
		AT_DW_PAIR_ROW("s2", "s3", "s4", "s5")                                                  \
		AT_DW_PAIR_ROW("s6", "s7", "s8", "s9")                                                  \
		AT_DW_PAIR_ROW("s10", "s11", "a6", "a7")                                                \
		"add %[w], %[w], %[back]\n\t"                                                            \
		"sw t1, 4(%[p])\n\t"                                                                    \
		".insn s 0x2b, 2, t0, 8(%[p])\n\t"                                                      \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [w] "+r"(w), [st] "+r"(St), [p] "+r"(P)                                                \
		: [n] "r"(N), [of] "r"(OutFeat), [back] "r"(Back), [tb] "r"(T)                           \
		: "t0", "t1", "t2", "t3", "t4", "t5", "t6", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", \
		  "s10", "s11", "a6", "a7", "memory")
#endif

#if defined(at_gap_xpulpv2)
/* The requantisation of a run's pairs (the sums P[2 j], P[2 j + 1] into O[j], O[OutFeat + j]) when
 * every channel has its fast constants (at_tflm_rq_fast_end, instruction by instruction: mulh,
 * mul, the rounded doubling high half, then the rounding shift with the zero point in Round, the
 * clamp) on a hardware loop of 29 instructions per channel, its constants read from Mp, Rp, Sp. */
#define AT_DW_RQ_PAIRS(N)                                                                               \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 29)                        \
		AT_GAP_ASM_PLW_PI("t0", "%[p]") AT_GAP_ASM_PLW_PI("t1", "%[p]")                         \
		AT_GAP_ASM_PLW_PI("t2", "%[mp]") AT_GAP_ASM_PLW_PI("t5", "%[rp]")                       \
		"mulh t3, t0, t2\n\t" "mulh t4, t1, t2\n\t" "mul t0, t0, t2\n\t" "mul t1, t1, t2\n\t"       \
		AT_DW_LB1("t6", "%[sp]")                                                                \
		"slli t3, t3, 1\n\t" "slli t4, t4, 1\n\t" "srli t0, t0, 1\n\t" "srli t1, t1, 1\n\t"         \
		".insn r 0x5b, 2, 0x5e, t0, t0, %[c29]\n\t" ".insn r 0x5b, 2, 0x5e, t1, t1, %[c29]\n\t"     \
		"add t3, t3, t0\n\t" "add t4, t4, t1\n\t" "srai t0, t3, 31\n\t" "srai t1, t4, 31\n\t"       \
		".insn r 0x5b, 2, 1, t3, t3, t0\n\t" ".insn r 0x5b, 2, 1, t4, t4, t1\n\t"                   \
		".insn r 0x5b, 2, 0x20, t3, t5, t6\n\t" ".insn r 0x5b, 2, 0x20, t4, t5, t6\n\t"             \
		".insn r 0x33, 6, 0x02, t3, t3, %[lo]\n\t" ".insn r 0x33, 6, 0x02, t4, t4, %[lo]\n\t"       \
		".insn r 0x33, 4, 0x02, t3, t3, %[hi]\n\t" ".insn r 0x33, 4, 0x02, t4, t4, %[hi]\n\t"       \
		".insn r 0x23, 4, 0, %[of], %[o], t4\n\t"                                               \
		".insn s 0x2b, 0, t3, 1(%[o])\n\t"                                                       \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [p] "+r"(P), [mp] "+r"(Mp), [rp] "+r"(Rp), [sp] "+r"(Sp), [o] "+r"(O)                   \
		: [n] "r"(N), [of] "r"(OutFeat), [c29] "r"(C29), [lo] "r"(ActMin), [hi] "r"(ActMax)         \
		: "t0", "t1", "t2", "t3", "t4", "t5", "t6", "memory")
#endif

/* Outputs of channels [c0, c0 + n) at pixels (oy, ox) and (oy, ox + 1), stride 1: the two windows
 * share two of their four input columns, and a channel's nine weights, read once, serve both. */
static inline void at_dw_pair_run(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, const at_dw_run *R, int oy,
				  int ox, int c0, int n, const signed char *ZpBuf)
{
	const signed char *T[12], *Filter = Arg->Filter + c0;
	signed char *Out = Arg->Out + (oy * Arg->Wo + ox) * Arg->OutFeat + c0;
	int OutFeat = Arg->OutFeat, j;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;
#if defined(at_gap_xpulpv2)
	int32_t Acc[2 * AT_DW_RUN], *P = Acc;
	const int32_t *St = R->Start;
	const signed char *w = Filter;
	int Back = 1 - 9 * OutFeat;

	at_dw_taps(Arg, oy, ox, c0, ZpBuf, T, 4);
	AT_DW_PAIR_LOOP(n);
	if (R->AllFast) {
		const int32_t *Mp = R->M, *Rp = R->Round;
		const signed char *Sp = R->Right1;
		signed char *O = Out;
		uint32_t C29 = 1u << 29;

		P = Acc;
		AT_DW_RQ_PAIRS(n);
		return;
	}
	for (j = 0; j < n; j++)
		at_dw_out_pair(Arg, k, R, j, c0, Acc[2 * j], Acc[2 * j + 1], Out + j, OutFeat, ActMin, ActMax);
#else
	at_dw_taps(Arg, oy, ox, c0, ZpBuf, T, 4);
	for (j = 0; j < n; j++) {
		const signed char *w = Filter + j;
		int32_t w00 = at_dw_lb_postinc(&w, OutFeat), w01 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w02 = at_dw_lb_postinc(&w, OutFeat), w10 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w11 = at_dw_lb_postinc(&w, OutFeat), w12 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w20 = at_dw_lb_postinc(&w, OutFeat), w21 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w22 = at_dw_lb_postinc(&w, OutFeat);
		int32_t a0 = R->Start[j], a1 = a0, t0, t1, t2;

		t0 = at_dw_lb_rr(T[0], j); t1 = at_dw_lb_rr(T[4], j); t2 = at_dw_lb_rr(T[8], j);
		a0 = at_dw_col3(a0, w00, w10, w20, t0, t1, t2);
		t0 = at_dw_lb_rr(T[1], j); t1 = at_dw_lb_rr(T[5], j); t2 = at_dw_lb_rr(T[9], j);
		a0 = at_dw_col3(a0, w01, w11, w21, t0, t1, t2);
		a1 = at_dw_col3(a1, w00, w10, w20, t0, t1, t2);
		t0 = at_dw_lb_rr(T[2], j); t1 = at_dw_lb_rr(T[6], j); t2 = at_dw_lb_rr(T[10], j);
		a0 = at_dw_col3(a0, w02, w12, w22, t0, t1, t2);
		a1 = at_dw_col3(a1, w01, w11, w21, t0, t1, t2);
		t0 = at_dw_lb_rr(T[3], j); t1 = at_dw_lb_rr(T[7], j); t2 = at_dw_lb_rr(T[11], j);
		a1 = at_dw_col3(a1, w02, w12, w22, t0, t1, t2);
		at_dw_out_pair(Arg, k, R, j, c0, a0, a1, Out + j, OutFeat, ActMin, ActMax);
	}
#endif
}

/* The same at stride 2: five input columns, the middle one shared. */
static inline void at_dw_pair2_run(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, const at_dw_run *R, int oy,
				   int ox, int c0, int n, const signed char *ZpBuf)
{
	const signed char *T[15], *Filter = Arg->Filter + c0;
	signed char *Out = Arg->Out + (oy * Arg->Wo + ox) * Arg->OutFeat + c0;
	int OutFeat = Arg->OutFeat, j;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;

	at_dw_taps(Arg, oy, ox, c0, ZpBuf, T, 5);
	for (j = 0; j < n; j++) {
		const signed char *w = Filter + j;
		int32_t w00 = at_dw_lb_postinc(&w, OutFeat), w01 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w02 = at_dw_lb_postinc(&w, OutFeat), w10 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w11 = at_dw_lb_postinc(&w, OutFeat), w12 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w20 = at_dw_lb_postinc(&w, OutFeat), w21 = at_dw_lb_postinc(&w, OutFeat);
		int32_t w22 = at_dw_lb_postinc(&w, OutFeat);
		int32_t a0 = R->Start[j], a1 = a0, t0, t1, t2;

		t0 = at_dw_lb_rr(T[0], j); t1 = at_dw_lb_rr(T[5], j); t2 = at_dw_lb_rr(T[10], j);
		a0 = at_dw_col3(a0, w00, w10, w20, t0, t1, t2);
		t0 = at_dw_lb_rr(T[1], j); t1 = at_dw_lb_rr(T[6], j); t2 = at_dw_lb_rr(T[11], j);
		a0 = at_dw_col3(a0, w01, w11, w21, t0, t1, t2);
		t0 = at_dw_lb_rr(T[2], j); t1 = at_dw_lb_rr(T[7], j); t2 = at_dw_lb_rr(T[12], j);
		a0 = at_dw_col3(a0, w02, w12, w22, t0, t1, t2);
		a1 = at_dw_col3(a1, w00, w10, w20, t0, t1, t2);
		t0 = at_dw_lb_rr(T[3], j); t1 = at_dw_lb_rr(T[8], j); t2 = at_dw_lb_rr(T[13], j);
		a1 = at_dw_col3(a1, w01, w11, w21, t0, t1, t2);
		t0 = at_dw_lb_rr(T[4], j); t1 = at_dw_lb_rr(T[9], j); t2 = at_dw_lb_rr(T[14], j);
		a1 = at_dw_col3(a1, w02, w12, w22, t0, t1, t2);
		at_dw_out_pair(Arg, k, R, j, c0, a0, a1, Out + j, OutFeat, ActMin, ActMax);
	}
}

/* Every output of channels [First, Last), in runs. */
static void at_dw_small_range(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int First, int Last,
			      const signed char *ZpBuf)
{
	at_dw_run R;
	int c0, n, oy, ox;

	for (c0 = First; c0 < Last; c0 += n) {
		n = (Last - c0 < AT_DW_RUN) ? Last - c0 : AT_DW_RUN;
		at_dw_run_prep(Arg, k, c0, n, &R);
		for (oy = 0; oy < Arg->Ho; oy++) {
			ox = 0;
			if (Arg->Sx == 1)
				for (; ox + 1 < Arg->Wo; ox += 2)
					at_dw_pair_run(Arg, k, &R, oy, ox, c0, n, ZpBuf);
			else
				for (; ox + 1 < Arg->Wo; ox += 2)
					at_dw_pair2_run(Arg, k, &R, oy, ox, c0, n, ZpBuf);
			for (; ox < Arg->Wo; ox++)
				at_dw_pixel_run(Arg, k, &R, oy, ox, c0, n, ZpBuf);
		}
	}
}

/* Every output of this core's channels (3x3, dilation 1, depth multiplier 1). */
static void at_dw_small(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k)
{
	signed char ZpBuf[AT_DW_RUN];
	int First, Last, i;

	for (i = 0; i < AT_DW_RUN; i++)
		ZpBuf[i] = (signed char) k->InZp;
	CNN_Chunk(Arg->OutFeat, &First, &Last);
	at_dw_small_range(Arg, k, First, Last, ZpBuf);
}

/* ---- narrow planes: a channel's padded plane on the stack, output columns in pairs ---------- */

/* On a narrow plane (DS-CNN's 25x5), a line holds too few outputs to pay for its set-up (the window's
 * first columns, the border tests, a requantisation loop). A core copies a channel's input plane with
 * its padding (IN_ZP) into a buffer on its stack, then slides the window down the output columns, two
 * at a time, on the line pairs' loop (at_dw_seg2_s1 with the buffer's lines as its columns: the
 * weights transposed): every tap is inside the buffer, no border tests. The buffer's bytes and the
 * columns' accumulators (2 Ho) fit the cluster core's 2 KiB stack with room to spare. */
#define AT_DW_PLANE 256
#define AT_DW_PLANE_SLACK 4

/* A channel's 3x3 weights w[ky][kx], each line also packed in a word (bytes w[ky][0..2], 0), and
 * Start = Bias - IN_ZP sum w. */
typedef struct {
	int32_t w[3][3], Packed[3], Start;
} at_dw_pwin;

/* The plane buffer and a column's accumulators share AT_DW_PLANE_WORDS words on the stack (the
 * frame near the line path's, 800 bytes): at stride 2 a plane holds about 4 bytes per output
 * against 1 at stride 1, so it takes the room stride 1's 256 bytes leave (MobileNet's 24x24 ->
 * 12x12: 625 bytes and 12 accumulators). */
#define AT_DW_PLANE_WORDS 192

/* Words of a plane of Wb x Hb bytes with its slack. */
static inline int at_dw_plane_words(int Wb, int Hb)
{
	return (Wb * Hb + AT_DW_PLANE_SLACK + 3) >> 2;
}

/* The padded plane of the output's windows at stride S (1 or 2, both ways): S (Wo - 1) + 3 columns,
 * S (Ho - 1) + 3 lines; a column's accumulators after it (Ho + 2 words). */
static inline int at_dw_plane_fits(const KerConv_TFLM_SQ8_T *Arg)
{
	int S = Arg->Sx, Wb = S * (Arg->Wo - 1) + 3, Hb = S * (Arg->Ho - 1) + 3;

	/* no output (a fused chain's tile may have none): the line path's empty split, no hardware loop of 0 */
	if (Arg->Ho == 0 || Arg->Wo == 0 || S != Arg->Sy || S > 2 || (S == 1 && Wb * Hb > AT_DW_PLANE))
		return 0;
	return at_dw_plane_words(Wb, Hb) + Arg->Ho + 2 <= AT_DW_PLANE_WORDS;
}

#if defined(at_gap_xpulpv2)
/* H lines of W bytes (W >= 2, H > 0): p's pixels InFeat apart, PSkip bytes from a line's end to the
 * next one's start; q's bytes consecutive, QSkip bytes between lines. Two nested hardware loops: 4
 * instructions per 2 bytes (p.lb, p.sb with post-increment, both loads first: no load-use stall), an
 * odd last byte of the line (Odd) behind a branch, 2 adds per line. */
#define AT_DW_COPY_LOOPS(H, W)                                                                           \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP1("%[h]", 11)                        \
		AT_GAP_ASM_LP_SETUP0("%[w]", 4)                                                          \
		AT_DW_LB_PI("t0", "%[p]") AT_DW_LB_PI("t1", "%[p]")                                      \
		".insn s 0x2b, 0, t0, 1(%[q])\n\t" ".insn s 0x2b, 0, t1, 1(%[q])\n\t"                    \
		"beqz %[odd], 1f\n\t"                                                                   \
		AT_DW_LB_PI("t0", "%[p]") "nop\n\t" ".insn s 0x2b, 0, t0, 1(%[q])\n"                     \
		"1:\n\t"                                                                                \
		"add %[p], %[p], %[ps]\n\t" "add %[q], %[q], %[qs]\n\t"                                  \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [p] "+r"(p), [q] "+r"(q)                                                               \
		: [h] "r"(H), [w] "r"((W) >> 1), [odd] "r"((W) & 1), [step] "r"(InFeat), [ps] "r"(PSkip), \
		  [qs] "r"(QSkip)                                                                       \
		: "t0", "t1", "memory")
#endif

/* Input channel ic's pixels into the buffer B (Wb columns, Hb lines), at (y + Pad top, x + PadLeft); the
 * rest of B (the padding) holds IN_ZP from at_dw_plane. */
static void at_dw_plane_copy(const KerConv_TFLM_SQ8_T *Arg, int ic, signed char *B, int Wb, int Hb)
{
	int Pl = Arg->PadLeft, Pt = Arg->Pad[2], InFeat = Arg->InFeat;
	int W = (Arg->W < Wb - Pl) ? Arg->W : Wb - Pl, H = (Arg->H < Hb - Pt) ? Arg->H : Hb - Pt;
	int PSkip = (Arg->W - W) * InFeat, QSkip = Wb - W;
	const signed char *p = Arg->In + ic;
	signed char *q = B + Pt * Wb + Pl;
	int x, y;

#if defined(at_gap_xpulpv2)
	if (H > 0 && W >= 2) {
		AT_DW_COPY_LOOPS(H, W);
		return;
	}
#endif
	for (y = 0; y < H; y++, p += PSkip, q += QSkip)
		for (x = 0; x < W; x++)
			*q++ = (signed char) at_dw_lb_postinc(&p, InFeat);
}

#if defined(at_gap_xpulpv2)
/* at_dw_plane_col's loop, 7 instructions per output: the window's new line as one word (p.lw with
 * post-increment by the buffer's line, at any alignment), its dot products with the filter's three
 * lines (pv.sdotsp.b, the weights' fourth byte 0), the finished output stored; xa the older open
 * output, ya the newer. */
#define AT_DW_COLW_LOOP(Cols)                                                                           \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 7)                         \
		".insn r 0x0b, 7, 0x10, t0, %[r], %[step]\n\t"                                          \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w2]", "t0")                                              \
		".insn s 0x2b, 2, %[xa], 4(%[p])\n\t"                                                   \
		"mv %[xa], %[ya]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w1]", "t0")                                              \
		"mv %[ya], %[st]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[ya]", "%[w0]", "t0")                                              \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [xa] "+r"(a2), [ya] "+r"(a1), [r] "+r"(r), [p] "+r"(P)                                 \
		: [n] "r"(Cols), [step] "r"(Step), [st] "r"(Start), [w0] "r"(win->Packed[0]),             \
		  [w1] "r"(win->Packed[1]), [w2] "r"(win->Packed[2])                                     \
		: "t0", "memory")
#endif

/* The accumulators of the n outputs of one output column, from r, the buffer at the column's first
 * window (its top left tap), Step the buffer's line. The loop starts two outputs early from zero
 * accumulators: P's first two words get partial sums to ignore, then the n outputs. */
static void at_dw_plane_col(const at_dw_pwin *win, const signed char *r, int n, int Step, int32_t *P)
{
	int32_t a2 = 0, a1 = 0, Start = win->Start;
	int Cols = n + 2;

#if defined(at_gap_xpulpv2)
	AT_DW_COLW_LOOP(Cols);
#else
	int i;

	for (i = 0; i < Cols; i++, r += Step) {
		*P++ = at_dw_col3(a2, win->w[2][0], win->w[2][1], win->w[2][2], r[0], r[1], r[2]);
		a2 = at_dw_col3(a1, win->w[1][0], win->w[1][1], win->w[1][2], r[0], r[1], r[2]);
		a1 = at_dw_col3(Start, win->w[0][0], win->w[0][1], win->w[0][2], r[0], r[1], r[2]);
	}
#endif
}

#if defined(at_gap_xpulpv2)
/* at_dw_plane_col2's loop, 7 instructions per output: the window's two new lines as words (p.lw with
 * post-increment by the buffer's line, at any alignment), the middle and bottom lines' dot products,
 * the finished output stored, the next output opened on the bottom line (its top). */
#define AT_DW_COL2W_LOOP(Cols)                                                                          \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("%[n]", 7)                         \
		".insn r 0x0b, 7, 0x10, t0, %[r], %[step]\n\t"                                          \
		".insn r 0x0b, 7, 0x10, t1, %[r], %[step]\n\t"                                          \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w1]", "t0")                                              \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w2]", "t1")                                              \
		".insn s 0x2b, 2, %[xa], 4(%[p])\n\t"                                                   \
		"mv %[xa], %[st]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w0]", "t1")                                              \
		AT_GAP_ASM_NORVC_END                                                                    \
		: [xa] "+r"(a), [r] "+r"(r), [p] "+r"(P)                                                 \
		: [n] "r"(Cols), [step] "r"(Step), [st] "r"(win->Start), [w0] "r"(win->Packed[0]),        \
		  [w1] "r"(win->Packed[1]), [w2] "r"(win->Packed[2])                                     \
		: "t0", "t1", "memory")
#endif

/* The same at stride 2 (n > 0): each output's window starts on the previous one's bottom line, two
 * buffer lines per output; P gets the n outputs, none to ignore. */
static void at_dw_plane_col2(const at_dw_pwin *win, const signed char *r, int n, int Step, int32_t *P)
{
	int32_t a = at_dw_col3(win->Start, win->w[0][0], win->w[0][1], win->w[0][2], r[0], r[1], r[2]);

	r += Step;
#if defined(at_gap_xpulpv2)
	AT_DW_COL2W_LOOP(n);
#else
	int i;

	for (i = 0; i < n; i++, r += 2 * Step) {
		const signed char *b = r + Step;

		a = at_dw_col3(a, win->w[1][0], win->w[1][1], win->w[1][2], r[0], r[1], r[2]);
		*P++ = at_dw_col3(a, win->w[2][0], win->w[2][1], win->w[2][2], b[0], b[1], b[2]);
		a = at_dw_col3(win->Start, win->w[0][0], win->w[0][1], win->w[0][2], b[0], b[1], b[2]);
	}
#endif
}

#if defined(at_gap_xpulpv2)
/* Requantises n interleaved pairs (Acc[2 i] into OA[i Step], Acc[2 i + 1] into OB[i Step]) of one
 * channel through its fast constants: AT_DW_RQ_LINES. */
static void at_dw_rq_pairs_fast(const int32_t *Acc, int n, signed char *OA, signed char *OB, int Step,
				const at_tflm_rq_fast_t *f, const at_dw_consts *k)
{
	at_tflm_rq_fast_t F = *f;
	const int32_t *P = Acc;
	int32_t ActMin = k->ActMin, ActMax = k->ActMax;
	uint32_t C29 = 1u << 29;

	AT_DW_RQ_LINES(n);
}
#endif

/* The same for any requantisation (Fast: f applies). */
static void at_dw_rq_pairs(const int32_t *Acc, int n, signed char *OA, signed char *OB, int Step,
			   const at_tflm_rq_t *q, const at_tflm_rq_fast_t *f, int Fast, const at_dw_consts *k)
{
	int i;

#if defined(at_gap_xpulpv2)
	if (Fast) {
		if (n > 0)	/* a hardware loop runs at least once */
			at_dw_rq_pairs_fast(Acc, n, OA, OB, Step, f, k);
		return;
	}
#endif
	for (i = 0; i < n; i++, Acc += 2, OA += Step, OB += Step) {
		if (Fast) {
			*OA = (signed char) at_tflm_rq_int8_fast(f, Acc[0], k->ActMin, k->ActMax);
			*OB = (signed char) at_tflm_rq_int8_fast(f, Acc[1], k->ActMin, k->ActMax);
		} else {
			*OA = (signed char) at_tflm_rq_int8(q, Acc[0], k->OutZp, k->ActMin, k->ActMax);
			*OB = (signed char) at_tflm_rq_int8(q, Acc[1], k->OutZp, k->ActMin, k->ActMax);
		}
	}
}

#if defined(at_gap_xpulpv2)
/* The part of AT_DW_PLANE_COLS and AT_DW_PLANE2_COLS after a column's accumulators (t0 = the
 * pairs' count): their requantisation in pairs of consecutive outputs (fast2, 20 instructions a
 * pair), an odd last one alone (a branch over it where Ho is even), P back to the accumulators. */
#define AT_DW_PLANE_RQ_ASM                                                                              \
		AT_GAP_ASM_LP_SETUP0("t0", 20)                                                           \
		AT_GAP_ASM_PLW_PI("t0", "%[p]") AT_GAP_ASM_PLW_PI("t1", "%[p]")                         \
		"slli t0, t0, 2\n\t" "slli t1, t1, 2\n\t" "mulh t0, t0, %[m]\n\t" "mulh t1, t1, %[m]\n\t"   \
		"srai %[xa], t0, 31\n\t" "srai %[ya], t1, 31\n\t" "add t0, t0, %[xa]\n\t"                 \
		"add t1, t1, %[ya]\n\t" "add t0, t0, %[xa]\n\t" "add t1, t1, %[ya]\n\t"                   \
		".insn r 0x5b, 2, 0x20, t0, %[kk], %[sh]\n\t" ".insn r 0x5b, 2, 0x20, t1, %[kk], %[sh]\n\t" \
		".insn r 0x33, 6, 0x02, t0, t0, %[lo]\n\t" ".insn r 0x33, 6, 0x02, t1, t1, %[lo]\n\t"       \
		".insn r 0x33, 4, 0x02, t0, t0, %[hi]\n\t" ".insn r 0x33, 4, 0x02, t1, t1, %[hi]\n\t"       \
		".insn r 0x2b, 4, 0, %[os2], %[oa], t0\n\t" ".insn r 0x2b, 4, 0, %[os2], %[ob], t1\n\t"     \
		"beqz %[odd], 1f\n\t"                                                                   \
		AT_GAP_ASM_PLW_PI("t0", "%[p]") "slli t0, t0, 2\n\t" "mulh t0, t0, %[m]\n\t"               \
		"srai t1, t0, 31\n\t" "add t0, t0, t1\n\t" "add t0, t0, t1\n\t"                            \
		".insn r 0x5b, 2, 0x20, t0, %[kk], %[sh]\n\t" ".insn r 0x33, 6, 0x02, t0, t0, %[lo]\n\t"     \
		".insn r 0x33, 4, 0x02, t0, t0, %[hi]\n\t" "sb t0, 0(%[oa])\n"                            \
		"1:\n\t"                                                                                \
		"slli t0, %[n1], 2\n\t" "sub %[p], %[p], t0\n\t"

/* Their operands (Nc columns; N1: the accumulators' count, less one at stride 1). */
#define AT_DW_PLANE_OPERANDS(Nc, N1)                                                                      \
		: [rc] "+r"(rc), [out] "+r"(out), [p] "+r"(P), [r] "=&r"(r), [xa] "=&r"(xa), [ya] "=&r"(ya),  \
		  [oa] "=&r"(oa), [ob] "=&r"(ob)                                                         \
		: [nc] "r"(Nc), [n1] "r"(N1), [step] "r"(Wb), [st] "r"(win.Start), [w0] "r"(win.Packed[0]), \
		  [w1] "r"(win.Packed[1]), [w2] "r"(win.Packed[2]), [m] "r"(f2.M), [kk] "r"(f2.K),          \
		  [sh] "r"(f2.Right1), [lo] "r"(k->ActMin), [hi] "r"(k->ActMax), [os2] "r"(2 * OStep),       \
		  [of] "r"(OutFeat), [odd] "r"(Ho & 1)                                                  \
		: "t0", "t1", "memory"

/* at_dw_plane_chan's columns when the fast2 requantisation applies and Ho >= 2, in one asm
 * statement: an outer hardware loop over the Ncol columns (53 instructions), in it the column's
 * accumulators (AT_DW_COLW_LOOP's 7 instructions per output, from the accumulators the previous
 * column left: its first two outputs are ignored anyway) and their requantisation in pairs of
 * consecutive outputs (AT_DW_RQ2_PAIRS's 20 instructions), an odd last one alone (a branch over
 * it where Ho is even). P returns to Acc after each column; rc
 * and out step to the next column of B and of Out. */
#define AT_DW_PLANE_COLS(Ncol)                                                                          \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP1("%[nc]", 53)                       \
		"mv %[r], %[rc]\n\t"                                                                    \
		AT_GAP_ASM_LP_SETUP0("%[n1]", 7)                                                         \
		".insn r 0x0b, 7, 0x10, t0, %[r], %[step]\n\t"                                          \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w2]", "t0")                                              \
		".insn s 0x2b, 2, %[xa], 4(%[p])\n\t"                                                   \
		"mv %[xa], %[ya]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w1]", "t0")                                              \
		"mv %[ya], %[st]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[ya]", "%[w0]", "t0")                                              \
		"slli t0, %[n1], 2\n\t" "sub %[p], %[p], t0\n\t" "addi %[p], %[p], 8\n\t"                 \
		"mv %[oa], %[out]\n\t" "srli %[ob], %[os2], 1\n\t" "add %[ob], %[ob], %[oa]\n\t"          \
		"srli t0, %[n1], 1\n\t" "addi t0, t0, -1\n\t"                                            \
		AT_DW_PLANE_RQ_ASM                                                                      \
		"addi %[rc], %[rc], 1\n\t" "add %[out], %[out], %[of]\n\t"                                \
		AT_GAP_ASM_NORVC_END                                                                    \
		AT_DW_PLANE_OPERANDS(Ncol, N1))
#endif

#if defined(at_gap_xpulpv2)
/* The same at stride 2 (54 instructions per column): the column's first output opened on the
 * buffer's top line (4 instructions), AT_DW_COL2W_LOOP's 7 per output, the Ho accumulators
 * requantised as above; rc steps two buffer columns. */
#define AT_DW_PLANE2_COLS(Ncol)                                                                         \
	__asm__ volatile(AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP1("%[nc]", 54)                       \
		"mv %[r], %[rc]\n\t"                                                                    \
		".insn r 0x0b, 7, 0x10, t0, %[r], %[step]\n\t"                                          \
		"mv %[xa], %[st]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w0]", "t0")                                              \
		AT_GAP_ASM_LP_SETUP0("%[n1]", 7)                                                         \
		".insn r 0x0b, 7, 0x10, t0, %[r], %[step]\n\t"                                          \
		".insn r 0x0b, 7, 0x10, t1, %[r], %[step]\n\t"                                          \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w1]", "t0")                                              \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w2]", "t1")                                              \
		".insn s 0x2b, 2, %[xa], 4(%[p])\n\t"                                                   \
		"mv %[xa], %[st]\n\t"                                                                   \
		AT_GAP_ASM_SDOTSP_B("%[xa]", "%[w0]", "t1")                                              \
		"slli t0, %[n1], 2\n\t" "sub %[p], %[p], t0\n\t"                                          \
		"mv %[oa], %[out]\n\t" "srli %[ob], %[os2], 1\n\t" "add %[ob], %[ob], %[oa]\n\t"          \
		"srli t0, %[n1], 1\n\t"                                                                 \
		AT_DW_PLANE_RQ_ASM                                                                      \
		"addi %[rc], %[rc], 2\n\t" "add %[out], %[out], %[of]\n\t"                                \
		AT_GAP_ASM_NORVC_END                                                                    \
		AT_DW_PLANE_OPERANDS(Ncol, Ho))
#endif

/* Every output of channel c from its padded plane B (Wb = Wo + 2 columns; AT_DW_PLANE_SLACK bytes
 * after it: a window's line is read as a word, its fourth byte weighted 0), column by column; Acc:
 * Ho + 2 words. */
static inline __attribute__((always_inline)) void at_dw_plane_chan_s(const KerConv_TFLM_SQ8_T *Arg,
									const at_dw_consts *k, int c, const signed char *B,
									int Wb, int32_t *Acc, int S)
{
	at_dw_pwin win;
	at_tflm_rq_t q;
	at_tflm_rq_fast_t f = {0, 0, 0};
	at_tflm_rq_fast2_t f2 = {0, 0, 0};
	int Wo = Arg->Wo, Ho = Arg->Ho, OutFeat = Arg->OutFeat, OStep = Wo * OutFeat, Sum = 0, Fast, Fast2, ox, ky, kx;
	const int32_t *A = (S == 2) ? Acc : Acc + 2;	/* stride 1's columns start two outputs early */
	signed char *Out = Arg->Out + c;

	for (ky = 0; ky < 3; ky++) {
		uint32_t Word = 0;

		for (kx = 0; kx < 3; kx++) {
			int32_t w = Arg->Filter[(ky * 3 + kx) * OutFeat + c];

			win.w[ky][kx] = w;
			Word |= ((uint32_t) w & 0xffu) << (8 * kx);
			Sum += w;
		}
		win.Packed[ky] = (int32_t) Word;
	}
	win.Start = at_dw_start(Arg->Bias[c], k->InZp, Sum);	/* the padding's taps are IN_ZP in B */
	at_tflm_rq_prep(&q, Arg->Scale[c], Arg->ScaleN[c], k->Flags);
	Fast = at_dw_rq_of(Arg, k, c, &q, &f, &f2);
	Fast2 = Fast == 2;
#if defined(at_gap_xpulpv2)
	if (Fast2 && Ho >= 2) {
		const signed char *rc = B, *r;
		signed char *out = Out, *oa, *ob;
		int32_t *P = Acc, xa, ya, N1 = Ho + 2;

		if (S == 2)
			AT_DW_PLANE2_COLS(Wo);
		else
			AT_DW_PLANE_COLS(Wo);
		return;
	}
#endif
	for (ox = 0; ox < Wo; ox++, Out += OutFeat) {
		if (S == 2)
			at_dw_plane_col2(&win, B + 2 * ox, Ho, Wb, Acc);
		else
			at_dw_plane_col(&win, B + ox, Ho, Wb, Acc);
		/* consecutive outputs of the column in pairs, an odd last one alone */
		if (Fast2)
			at_dw_rq2_pairs(A, Ho >> 1, Out, Out + OStep, 2 * OStep, &f2, k);
		else
			at_dw_rq_pairs(A, Ho >> 1, Out, Out + OStep, 2 * OStep, &q, &f, Fast, k);
		if (Ho & 1) {
			int32_t a = A[Ho - 1];
			signed char *o = Out + (Ho - 1) * OStep;

			if (Fast2)
				*o = (signed char) at_tflm_rq_int8_fast2(&f2, a, k->ActMin, k->ActMax);
			else
				*o = Fast ? (signed char) at_tflm_rq_int8_fast(&f, a, k->ActMin, k->ActMax)
					  : at_dw_out_any(Arg, k, c, a);
		}
	}
}

/* at_dw_plane_chan_s for each stride, S a constant: stride 1's code as without stride 2's. */
static __attribute__((noinline)) void at_dw_plane_chan1(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c,
						       const signed char *B, int Wb, int32_t *Acc)
{
	at_dw_plane_chan_s(Arg, k, c, B, Wb, Acc, 1);
}

static __attribute__((noinline)) void at_dw_plane_chan2(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c,
						       const signed char *B, int Wb, int32_t *Acc)
{
	at_dw_plane_chan_s(Arg, k, c, B, Wb, Acc, 2);
}

/* Every output of this core's channels (3x3 of stride 1 or 2, at_dw_plane_fits). */
static void at_dw_plane(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k)
{
	int32_t Bw[AT_DW_PLANE_WORDS];	/* the buffer, word aligned (filled by words), then Acc */
	signed char *B = (signed char *) Bw;
	int Wb = Arg->Sx * (Arg->Wo - 1) + 3, Hb = Arg->Sx * (Arg->Ho - 1) + 3, First, Last, c, i, ic, j;
	int Words = at_dw_plane_words(Wb, Hb);
	int32_t ZpWord = (int32_t) (((uint32_t) k->InZp & 0xffu) * 0x01010101u), *Acc = Bw + Words;

	for (i = 0; i < Words; i++)
		Bw[i] = ZpWord;
	CNN_Chunk(Arg->OutFeat, &First, &Last);
	ic = First / k->Mult;	/* input channel ic serves output channels [ic Mult, ic Mult + Mult) */
	j = First - ic * k->Mult;
	for (c = First; c < Last; c++) {
		if (c == First || j == 0)	/* a depth multiplier's channels share their input */
			at_dw_plane_copy(Arg, ic, B, Wb, Hb);
		if (Arg->Sx == 2)
			at_dw_plane_chan2(Arg, k, c, B, Wb, Acc);
		else
			at_dw_plane_chan1(Arg, k, c, B, Wb, Acc);
		if (++j == k->Mult) {
			j = 0;
			ic++;
		}
	}
}

/* Output lines [oy, oy + n) of channel c. */
static void at_dw_lines(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int oy, int n, int Fast)
{
	int ic = (k->Mult == 1) ? c : c / k->Mult, y;

	if (Fast) {
		at_dw_lines3x3(Arg, k, c, ic, oy, n);
		return;
	}
	for (y = oy; y < oy + n; y++)
		at_dw_line_any(Arg, k, c, ic, y);
}

void KerParConvDW_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg)
{
	at_dw_consts k;
	int Ho = Arg->Ho, First, Last, u, c, oy, n, Small;
	/* the sliding 3x3 (strides 1 and 2 along the line), or any other filter */
	int Fast = (Arg->Fx == 3 && Arg->Fy == 3 && Arg->Dx == 1 && Arg->Dy == 1 && Arg->Sx <= 2);

	k.InZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP);
	k.OutZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	k.ActMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN);
	k.ActMax = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	k.Flags = at_inf_tflm(Arg->Infos, AT_INF_TFLM_FLAGS);
	k.Mult = Arg->OutFeat / Arg->InFeat;
	Small = Fast && k.Mult == 1 && Arg->Wo * Ho <= AT_DW_SMALL && Arg->OutFeat >= AT_DW_SMALL_CHUNK * (int) gap_ncore();
	/* Planes of a few hundred bytes: a channel's padded plane per step, unless channels inner
	 * apply to a plane of at most AT_DW_TINY outputs (the same tests on every core). */
	if (Fast && at_dw_plane_fits(Arg) && !(Small && Arg->Wo * Ho <= AT_DW_TINY)) {
		at_dw_plane(Arg, &k);
		gap_waitbarrier(0);
		return;
	}
	/* Small planes: channels inner (the same test on every core: the work splits alike). */
	if (Small) {
		at_dw_small(Arg, &k);
		gap_waitbarrier(0);
		return;
	}
	/* The units (channel, line), channel major, are shared evenly by the cores: a core keeps a
	 * channel's weights over consecutive lines, and few lines (a tile's last) still use them all. */
	CNN_Chunk(Arg->OutFeat * Ho, &First, &Last);
	/* this core's units: the rest of channel c's lines from oy, the following channels' */
	c = First / Ho;
	oy = First - c * Ho;
	for (u = First; u < Last; u += n, c++, oy = 0) {
		n = (Ho - oy < Last - u) ? Ho - oy : Last - u;
		at_dw_lines(Arg, &k, c, oy, n, Fast);
	}
	gap_waitbarrier(0);
}
