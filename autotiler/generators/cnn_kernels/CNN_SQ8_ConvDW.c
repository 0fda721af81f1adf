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
#else
static inline int32_t at_dw_mac(int32_t acc, int32_t x, int32_t y)
{
	return (int32_t) ((uint32_t) acc + (uint32_t) (x * y));
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
static void at_dw_line_any(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int ic, int oy)
{
	signed char *Out = Arg->Out + oy * Arg->Wo * Arg->OutFeat + c;
	int ox;

	for (ox = 0; ox < Arg->Wo; ox++, Out += Arg->OutFeat)
		*Out = at_dw_out(Arg, k, c, at_sq8_convdw_acc(Arg, c, ic, k->InZp, oy, ox));
}

/* ---- 3x3, dilation 1 ------------------------------------------------------------------------- */

/* Outputs per segment of a line: their accumulators wait on the stack for the requantisation
 * loop (two short loops keep the weights in registers, one long one would spill them). */
#define AT_DW_SEG 32

/* One input column of the window: its top, middle and bottom taps. */
typedef struct {
	int32_t t, m, b;
} at_dw_col;

/* A channel's 3x3 weights on one output line, w[ky][kx], the lines of the window outside the
 * tile with zero weights; Row[ky] the channel's input column 0 on line ky (clamped into the tile,
 * so that reading it is safe); K = IN_ZP times the sum of the weights. A tap is read as its raw
 * x, IN_ZP where the column is outside the image: sum w x - K is then TFLM's sum of w (x - IN_ZP)
 * over the in-image taps (padding taps give w IN_ZP - w IN_ZP), exact in int32. */
typedef struct {
	int32_t w[3][3];
	const signed char *Row[3];
	int32_t K;
} at_dw_win;

/* The channel's weights and K (every line of the window inside the tile). */
static inline void at_dw_win_weights(const KerConv_TFLM_SQ8_T *Arg, int c, int Zp, at_dw_win *win)
{
	int Sum = 0, ky, kx;

	for (ky = 0; ky < 3; ky++)
		for (kx = 0; kx < 3; kx++) {
			win->w[ky][kx] = Arg->Filter[(ky * 3 + kx) * Arg->OutFeat + c];
			Sum += win->w[ky][kx];
		}
	win->K = Zp * Sum;
}

/* The window's input lines for output line oy; 1 if they are all inside the tile, else 0 and
 * *Edge the window with the weights of the lines outside it zeroed (the first or last lines). */
static inline int at_dw_win_rows(const KerConv_TFLM_SQ8_T *Arg, int ic, int oy, int Zp, const at_dw_win *win,
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
	Edge->K = Zp * Sum;
	return 0;
}

/* Input column x of the window (IN_ZP outside the image). */
static inline at_dw_col at_dw_col_load(const at_dw_win *win, int x, int W, int Step, int Zp)
{
	at_dw_col col = {Zp, Zp, Zp};

	if ((unsigned int) x < (unsigned int) W) {
		int o = x * Step;

		col.t = win->Row[0][o];
		col.m = win->Row[1][o];
		col.b = win->Row[2][o];
	}
	return col;
}

/* acc + the column's taps times the weights of filter column kx. */
static inline int32_t at_dw_part(const at_dw_win *win, int kx, at_dw_col col, int32_t acc)
{
	acc = at_dw_mac(acc, win->w[0][kx], col.t);
	acc = at_dw_mac(acc, win->w[1][kx], col.m);
	return at_dw_mac(acc, win->w[2][kx], col.b);
}

/* Accumulators of outputs [o0, o0 + n) of the line, stride 1: each input column is read once and
 * meets the three filter columns; a2 and a1 carry the two outputs still open. */
static inline void at_dw_seg_s1(const at_dw_win *win, int x, int n, int W, int Step, int Zp, int32_t *Acc)
{
	at_dw_col col = at_dw_col_load(win, x, W, Step, Zp);
	int32_t a2 = at_dw_part(win, 0, col, -win->K), a1;
	int i;

	col = at_dw_col_load(win, x + 1, W, Step, Zp);
	a2 = at_dw_part(win, 1, col, a2);
	a1 = at_dw_part(win, 0, col, -win->K);
	for (i = 0; i < n; i++) {
		col = at_dw_col_load(win, x + 2 + i, W, Step, Zp);
		Acc[i] = at_dw_part(win, 2, col, a2);
		a2 = at_dw_part(win, 1, col, a1);
		a1 = at_dw_part(win, 0, col, -win->K);
	}
}

/* The same for stride 2: two new columns per output, the second shared with the next output. */
static inline void at_dw_seg_s2(const at_dw_win *win, int x, int n, int W, int Step, int Zp, int32_t *Acc)
{
	int32_t a = at_dw_part(win, 0, at_dw_col_load(win, x, W, Step, Zp), -win->K);
	int i;

	for (i = 0; i < n; i++, x += 2) {
		at_dw_col col = at_dw_col_load(win, x + 2, W, Step, Zp);

		a = at_dw_part(win, 1, at_dw_col_load(win, x + 1, W, Step, Zp), a);
		Acc[i] = at_dw_part(win, 2, col, a);
		a = at_dw_part(win, 0, col, -win->K);
	}
}

/* Out[i Step] for the n accumulators of one channel: bias, requantisation, clamp; Flags a
 * constant once inlined (the rounding mode's test leaves the loop). */
static inline void at_dw_requant(const int32_t *Acc, int n, signed char *Out, int Step, int32_t Bias, int32_t Scale,
				 int Shift, const at_dw_consts *k, int32_t Flags)
{
	int i;

	for (i = 0; i < n; i++, Out += Step)
		*Out = (signed char) at_tflm_requant_int8_mode((int32_t) ((uint32_t) Acc[i] + (uint32_t) Bias), Scale, Shift,
							       k->OutZp, k->ActMin, k->ActMax, Flags);
}

/* Output line oy of channel c with the window win, 3x3 of stride 1 or 2, in segments of
 * AT_DW_SEG outputs. */
static void at_dw_line3x3(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int oy, const at_dw_win *Win)
{
	int32_t Acc[AT_DW_SEG];
	at_dw_win win = *Win;	/* a local copy: the stores to Acc cannot alias it, it stays in registers */
	int Sx = Arg->Sx, Step = Arg->InFeat, OutFeat = Arg->OutFeat, o0;
	signed char *Out = Arg->Out + oy * Arg->Wo * OutFeat + c;

	for (o0 = 0; o0 < Arg->Wo; o0 += AT_DW_SEG) {
		int n = (Arg->Wo - o0 < AT_DW_SEG) ? Arg->Wo - o0 : AT_DW_SEG, x = o0 * Sx - Arg->PadLeft;

		if (Sx == 1)
			at_dw_seg_s1(&win, x, n, Arg->W, Step, k->InZp, Acc);
		else
			at_dw_seg_s2(&win, x, n, Arg->W, Step, k->InZp, Acc);
		if (k->Flags & AT_TFLM_FLAG_SINGLE_ROUNDING)
			at_dw_requant(Acc, n, Out + o0 * OutFeat, OutFeat, Arg->Bias[c], Arg->Scale[c], Arg->ScaleN[c], k,
				      AT_TFLM_FLAG_SINGLE_ROUNDING);
		else
			at_dw_requant(Acc, n, Out + o0 * OutFeat, OutFeat, Arg->Bias[c], Arg->Scale[c], Arg->ScaleN[c], k, 0);
	}
}

/* Output lines [oy, oy + n) of channel c: the channel's weights are read once. */
static void at_dw_lines(const KerConv_TFLM_SQ8_T *Arg, const at_dw_consts *k, int c, int oy, int n, int Fast)
{
	int ic = c / k->Mult, y;
	at_dw_win win, Edge;

	if (!Fast) {
		for (y = oy; y < oy + n; y++)
			at_dw_line_any(Arg, k, c, ic, y);
		return;
	}
	at_dw_win_weights(Arg, c, k->InZp, &win);
	for (y = oy; y < oy + n; y++) {
		if (at_dw_win_rows(Arg, ic, y, k->InZp, &win, &Edge)) {
			win.Row[0] = Edge.Row[0];
			win.Row[1] = Edge.Row[1];
			win.Row[2] = Edge.Row[2];
			at_dw_line3x3(Arg, k, c, y, &win);
		} else {
			at_dw_line3x3(Arg, k, c, y, &Edge);
		}
	}
}

void KerParConvDW_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg)
{
	at_dw_consts k;
	int Ho = Arg->Ho, First, Last, u, c, oy, n;
	/* the sliding 3x3 (strides 1 and 2 along the line), or any other filter */
	int Fast = (Arg->Fx == 3 && Arg->Fy == 3 && Arg->Dx == 1 && Arg->Dy == 1 && Arg->Sx <= 2);

	k.InZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_IN_ZP);
	k.OutZp = at_inf_tflm(Arg->Infos, AT_INF_TFLM_OUT_ZP);
	k.ActMin = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN);
	k.ActMax = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	k.Flags = at_inf_tflm(Arg->Infos, AT_INF_TFLM_FLAGS);
	k.Mult = Arg->OutFeat / Arg->InFeat;
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
