/*
 * SQ8 activations and global pooling with TensorFlow Lite Micro's arithmetic (CNN_SQ8_TFLM_Ops.h,
 * docs/cnn-sq8.md): QUANTIZE, RELU, RELU6, LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU on items, MEAN
 * and REDUCE_MAX over the pixels of each channel.
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk */
#include "CNN_SQ8_BasicKernels.h"

static inline int at_sq8_clampi(int32_t v, int32_t Lo, int32_t Hi)
{
	return (int) ((v < Lo) ? Lo : ((v > Hi) ? Hi : v));
}

/* ---- Element-wise activations: Item(Infos, x) on the cores' share of the N items */

/* QUANTIZE / RELU / RELU6: requantise then clamp (the zero point's addition wraps as TFLM's int32). */
static inline int at_sq8_act_requant(const signed char *Infos, int x)
{
	return at_tflm_requant_int8(x - at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP), at_inf_tflm(Infos, AT_INF_TFLM_MULT),
				    at_inf_tflm(Infos, AT_INF_TFLM_SHIFT), at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP),
				    at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN), at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX));
}

/* LOGISTIC (Tanh 0) and TANH (Tanh 1): inputs at or beyond the radius saturate; the others go to
 * Q4.27 (MBQM by the input multiplier), through gemmlowp's function, and back to 8 bits: LOGISTIC
 * is 1/256 with zero point -128 (>> 23, - 128), TANH 1/128 with zero point 0 (>> 24). */
static inline int at_sq8_act_sigmoid(const signed char *Infos, int x, int Tanh)
{
	int32_t d = x - at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP);
	int32_t Radius = at_inf_tflm(Infos, AT_INF_TFLM_PARAM);
	int32_t q4, y;

	if (d <= -Radius)
		return -128;
	if (d >= Radius)
		return 127;
	q4 = at_tflm_mbqm(d, at_inf_tflm(Infos, AT_INF_TFLM_MULT), at_inf_tflm(Infos, AT_INF_TFLM_SHIFT));
	y = Tanh ? at_tflm_rdbpot(at_tflm_tanh(q4, 4), 24) : at_tflm_rdbpot(at_tflm_logistic(q4, 4), 23) - 128;
	return at_sq8_clampi(y, -128, 127);
}

/* gemmlowp's 16-bit SaturatingRoundingDoublingHighMul: floor((a b + 2^14) / 2^15) (ties half up). */
static inline int32_t at_sq8_srdhm16(int32_t a, int32_t b)
{
	int32_t ab = a * b;

	if (a == -32768 && b == -32768)
		return 32767;
	return (ab + ((ab >= 0) ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15);
}

/* HARD_SWISH's SaturatingDoublingHighMul: a b / 2^15 truncating toward zero. */
static inline int32_t at_sq8_sdhm16(int32_t a, int32_t b)
{
	if (a == -32768 && b == -32768)
		return 32767;
	return (a * b) / (1 << 15);
}

static inline int32_t at_sq8_sat_shl16(int32_t v, int Amount)
{
	return at_sq8_clampi(v * (1 << Amount), -32768, 32767);
}

static inline int32_t at_sq8_wrap16(int32_t v)
{
	return (int32_t) (int16_t) (uint16_t) (uint32_t) v;
}

/* HARD_SWISH in TFLM's 16-bit fixed point: the input at 1/128 of its scale, its "reluish" part
 * (3.0 -> 32768, then ReLU6-like into [0, 32767]) times the rescaled input. */
static inline int at_sq8_act_hswish(const signed char *Infos, int x)
{
	int32_t v = at_sq8_wrap16((x - at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP)) * 128);
	int32_t PreOut = at_sq8_srdhm16(v, at_inf_tflm(Infos, AT_INF_TFLM_MULT));
	int OutExp = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT), ReluExp = at_inf_tflm(Infos, AT_INF_TFLM_SHIFT2);
	int32_t r = v, o;

	if (ReluExp > 0)
		r = at_sq8_sat_shl16(r, ReluExp - 1);
	r = at_sq8_srdhm16(r, at_inf_tflm(Infos, AT_INF_TFLM_MULT2));
	if (ReluExp > 0)
		r = at_sq8_sat_shl16(r, 1);
	if (ReluExp < 0)
		r = at_tflm_rdbpot(r, -ReluExp);
	r = (r + (1 << 15)) >> 1;
	o = at_sq8_sdhm16(r, PreOut);
	o = at_sq8_wrap16(at_tflm_rdbpot(o, -OutExp) + at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP));
	return at_sq8_clampi(o, -128, 127);
}

/* LEAKY_RELU: the identity rescale for x >= zero point, alpha's for the others. */
static inline int at_sq8_act_leaky(const signed char *Infos, int x)
{
	int32_t d = x - at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP);
	int Neg = d < 0;
	int32_t v = at_tflm_mbqm(d, at_inf_tflm(Infos, Neg ? AT_INF_TFLM_MULT2 : AT_INF_TFLM_MULT),
				 at_inf_tflm(Infos, Neg ? AT_INF_TFLM_SHIFT2 : AT_INF_TFLM_SHIFT));

	return at_sq8_clampi(at_tflm_add(v, at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP)), -128, 127);
}

enum at_sq8_act { AT_SQ8_REQUANT, AT_SQ8_LOGISTIC, AT_SQ8_TANH, AT_SQ8_HSWISH, AT_SQ8_LEAKY };

static inline int at_sq8_act_one(const signed char *Infos, int x, enum at_sq8_act Act)
{
	switch (Act) {
	case AT_SQ8_LOGISTIC:
		return at_sq8_act_sigmoid(Infos, x, 0);
	case AT_SQ8_TANH:
		return at_sq8_act_sigmoid(Infos, x, 1);
	case AT_SQ8_HSWISH:
		return at_sq8_act_hswish(Infos, x);
	case AT_SQ8_LEAKY:
		return at_sq8_act_leaky(Infos, x);
	default:
		return at_sq8_act_requant(Infos, x);
	}
}

/* The cores share the items. */
static void at_sq8_act_all(KerAct_TFLM_SQ8_T *Arg, enum at_sq8_act Act)
{
	int First, Last, i;

	CNN_Chunk((int) Arg->N, &First, &Last);
	for (i = First; i < Last; i++)
		Arg->Out[i] = (signed char) at_sq8_act_one(Arg->Infos, Arg->In[i], Act);
	gap_waitbarrier(0);
}

void KerParActRequant_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg)
{
	at_sq8_act_all(Arg, AT_SQ8_REQUANT);
}

void KerParLogistic_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg)
{
	at_sq8_act_all(Arg, AT_SQ8_LOGISTIC);
}

void KerParTanh_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg)
{
	at_sq8_act_all(Arg, AT_SQ8_TANH);
}

void KerParHSwish_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg)
{
	at_sq8_act_all(Arg, AT_SQ8_HSWISH);
}

void KerParLeakyRelu_TFLM_SQ8(KerAct_TFLM_SQ8_T *Arg)
{
	at_sq8_act_all(Arg, AT_SQ8_LEAKY);
}

/* ---- A unary operator by its 256-entry table: a load, an indexed load and a store per item */

void KerParActLUT_SQ8(KerActLUT_SQ8_T *Arg)
{
	const signed char *Table = Arg->Table + 128;	/* Table[x] for x in [-128, 127] */
	int First, Last, i;

	CNN_Chunk((int) Arg->N, &First, &Last);
	for (i = First; i < Last; i++)
		Arg->Out[i] = Table[Arg->In[i]];
	gap_waitbarrier(0);
}

/* ---- Global pooling: the cores share the channels, each walks every pixel of its channels */

void KerParGlobalSumRequant_TFLM_SQ8(KerGlobalPool_TFLM_SQ8_T *Arg)
{
	const signed char *Infos = Arg->Infos;
	int Feat = Arg->Feat, Pixels = (int) Arg->Pixels;
	/* MEAN subtracts the zero point once per sum, in int32 (wrapping as TFLM's) */
	int32_t Offset = (int32_t) ((uint32_t) at_inf_tflm(Infos, AT_INF_TFLM_IN_ZP) * (uint32_t) Pixels);
	int First, Last, c, p;

	CNN_Chunk(Feat, &First, &Last);
	for (c = First; c < Last; c++) {
		uint32_t Sum = 0;

		for (p = 0; p < Pixels; p++)
			Sum += (uint32_t) (int32_t) Arg->In[p * Feat + c];
		Arg->Out[c] = (signed char) at_tflm_requant_int8_mode(at_tflm_sub((int32_t) Sum, Offset),
			at_inf_tflm(Infos, AT_INF_TFLM_MULT), at_inf_tflm(Infos, AT_INF_TFLM_SHIFT),
			at_inf_tflm(Infos, AT_INF_TFLM_OUT_ZP), at_inf_tflm(Infos, AT_INF_TFLM_ACT_MIN),
			at_inf_tflm(Infos, AT_INF_TFLM_ACT_MAX), at_inf_tflm(Infos, AT_INF_TFLM_FLAGS));
	}
	gap_waitbarrier(0);
}

/* Channels [c, c + 4) at once on the vector unit: the lane-wise max over the pixels (row stride Feat). */
static inline v4s at_sq8_max4_channels(const signed char *In, int Pixels, int Feat, int c)
{
	v4s m = at_tflm_load4(In + c);
	int p;

	for (p = 1; p < Pixels; p++)
		m = gap_max4(m, at_tflm_load4(In + p * Feat + c));
	return m;
}

static inline int at_sq8_max_channel(const signed char *In, int Pixels, int Feat, int c)
{
	int m = -128, p;

	for (p = 0; p < Pixels; p++)
		m = (In[p * Feat + c] > m) ? In[p * Feat + c] : m;
	return m;
}

/* Each core takes its channels four at a time, the rest one by one (no load past its channels). */
void KerParGlobalMaxPool_TFLM_SQ8(KerGlobalPool_TFLM_SQ8_T *Arg)
{
	int Feat = Arg->Feat, Pixels = (int) Arg->Pixels;
	int32_t Lo = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MIN), Hi = at_inf_tflm(Arg->Infos, AT_INF_TFLM_ACT_MAX);
	int First, Last, c, k;

	CNN_Chunk(Feat, &First, &Last);
	for (c = First; c + 4 <= Last; c += 4) {
		v4s m = at_sq8_max4_channels(Arg->In, Pixels, Feat, c);

		for (k = 0; k < 4; k++)
			Arg->Out[c + k] = (signed char) at_sq8_clampi(m[k], Lo, Hi);
	}
	for (; c < Last; c++)
		Arg->Out[c] = (signed char) at_sq8_clampi(at_sq8_max_channel(Arg->In, Pixels, Feat, c), Lo, Hi);
	gap_waitbarrier(0);
}
