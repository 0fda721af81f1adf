/*
 * SQ8 basic kernel, TFLM semantics: PAD of an int8 HWC tensor (CNN_SQ8_Pad.c).
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 */
#ifndef __CNN_SQ8_TFLM_PAD_H__
#define __CNN_SQ8_TFLM_PAD_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"

/* TFLM's PAD on int8 (pad.cc; sq8_gen_tflm_pad.pad): the input copied at its place, every other
 * item of the output the Infos' OUT_ZP word (the output zero point: TFLite's int8 PAD keeps the
 * input's quantisation, so the values are copied, never requantised).
 *
 * One tile of output lines: Out[Ho][W + PadLeft + PadRight][Feat + PadFront + PadBack]. Its first
 * Pad[2] lines and its last Pad[3] lines are padding (the tiler gives the layer's top pad to the
 * first tile, its bottom pad to the last, 0 elsewhere); the H lines between are the input tile's
 * In[H][W][Feat]: Ho = Pad[2] + H + Pad[3]. The cores share the output lines. */
typedef struct {
	signed char * __restrict__ In;		/* H x W x Feat: this tile's input lines */
	signed char * __restrict__ Out;		/* Ho x Wo x OutFeat: this tile's output lines */
	signed char * __restrict__ Infos;	/* AT_INF_TFLM_* words: OUT_ZP */
	unsigned short int W;			/* input columns */
	unsigned short int H;			/* input lines of this tile */
	unsigned short int Feat;		/* input channels */
	unsigned short int Ho;			/* output lines of this tile */
	unsigned short int PadLeft;		/* the layer's columns before / after the input's */
	unsigned short int PadRight;
	unsigned short int PadFront;		/* the layer's channels before / after the input's */
	unsigned short int PadBack;
	v4s Pad;				/* this tile's (left, right, top, bottom): [2], [3] read */
} KerPad_TFLM_SQ8_T;

void KerParPad_TFLM_SQ8(KerPad_TFLM_SQ8_T *Arg);

#endif /* __CNN_SQ8_TFLM_PAD_H__ */
