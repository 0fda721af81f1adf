/*
 * The Infos vectors of the SQ8 layers (issue 23): one per-layer constant, signed char Infos[].
 *
 * Scale_DataSize 4 (TensorFlow Lite Micro's requantisation): AT_INF_TFLM_WORDS little-endian
 * int32 words, read with at_inf_tflm(Infos, AT_INF_TFLM_*). Python twin, word by word:
 * autotiler/generators/sq8_infos.py.
 *
 * Scale_DataSize 1 (the original's): the byte layout of the original's CNN_Infos_SQ8.h, the
 * offsets below (docs/cnn-sq8-original.md, autotiler/generators/sq8_original.py).
 */
#ifndef __CNN_SQ8_INFOS_H__
#define __CNN_SQ8_INFOS_H__

#include <stdint.h>

/* ---- TFLM (word indices) */
#define AT_INF_TFLM_IN_ZP	0	/* input (first input) zero point */
#define AT_INF_TFLM_OUT_ZP	1	/* output zero point */
#define AT_INF_TFLM_ACT_MIN	2	/* the fused activation's clamp */
#define AT_INF_TFLM_ACT_MAX	3
#define AT_INF_TFLM_IN2_ZP	4	/* second input's zero point */
#define AT_INF_TFLM_MULT	5	/* per-tensor Q31 multiplier (see sq8_infos.py for who reads what) */
#define AT_INF_TFLM_SHIFT	6
#define AT_INF_TFLM_LEFT_SHIFT	7	/* ADD/SUB's 20; SOFTMAX, LOGISTIC/TANH input left shift */
#define AT_INF_TFLM_MULT2	8	/* ADD/SUB input 1; HARD_SWISH reluish; LEAKY_RELU alpha */
#define AT_INF_TFLM_SHIFT2	9
#define AT_INF_TFLM_MULT3	10	/* ADD/SUB input 2 */
#define AT_INF_TFLM_SHIFT3	11
#define AT_INF_TFLM_PARAM	12	/* SOFTMAX diff_min; LOGISTIC/TANH input range radius */
#define AT_INF_TFLM_FLAGS	13	/* the arithmetic's mode bits below (0: TFLM's) */
#define AT_INF_TFLM_WORDS	16
#define AT_INF_TFLM_DIM		(4 * AT_INF_TFLM_WORDS)

/* AT_INF_TFLM_FLAGS bits: onnxruntime's arithmetic (an imported ONNX QDQ model, docs/cnn-sq8.md §5).
 * SINGLE_ROUNDING: the requantisations of CONV, DEPTHWISE, FULLY_CONNECTED, MatMul, ADD, SUB, MUL
 * and MEAN round once (at_tflm_mbqm_single) where TFLM rounds twice (at_tflm_mbqm). */
#define AT_TFLM_FLAG_SINGLE_ROUNDING	1
/* FLOAT_AVERAGE: AVERAGE_POOL_2D as onnxruntime computes a QDQ one, in float: each in-image tap
 * (x - IN_ZP) * s_in summed in order (rows, then columns), divided by the taps' count, divided by
 * s_out, rounded half to even, + OUT_ZP, clamped; s_in, s_out: the float32 bits in MULT, MULT2. */
#define AT_TFLM_FLAG_FLOAT_AVERAGE	2

/* Word k of a TFLM Infos vector, assembled from bytes: no alignment assumed. */
static inline int32_t at_inf_tflm(const signed char *Infos, int word)
{
	const unsigned char *p = (const unsigned char *) Infos + 4 * word;

	return (int32_t) ((uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24));
}

/* ---- The original's 1-byte layout (byte offsets, CNN_Infos_SQ8.h) */
#define AT_INF_BIASL_SM		0	/* softmax: left shift of (In - max) */
#define AT_INF_ACTSCALE		0
#define AT_INF_ACTSCALEN	1
#define AT_INF_A0		2	/* 2 bytes reserved, the SQ8 kernels read the first one */
#define AT_INF_B0		4
#define AT_INF_C0		6
#define AT_INF_BIASN		8
#define AT_INF_IN1SCALE		8
#define AT_INF_SCALE		8
#define AT_INF_GLOBAL_SUM_SCALE	8
#define AT_INF_SCALEN		9
#define AT_INF_IN1SCALEN	9
#define AT_INF_GLOBAL_SUM_SCALEN 9
#define AT_INF_OUTSCALE		10
#define AT_INF_OUTZEROPOINT	10
#define AT_INF_OUTSCALEN	11
#define AT_INF_DIM		12
#define AT_INF_PRENORM		12
#define AT_INF_ADD_BIAS		12
#define AT_INF_SQ16_DIM		13
#define AT_INF_ASYM_ADD_DIM	14

#endif /* __CNN_SQ8_INFOS_H__ */
