/*
 * SQ8 basic kernels, TFLM requantisation: convolutions and pooling (HWC).
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 */
#ifndef __CNN_SQ8_TFLM_CONV_H__
#define __CNN_SQ8_TFLM_CONV_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* ---- Max and average pooling (CNN_SQ8_Pooling.c) ---------------------------------------------
 * TFLM's MAX_POOL_2D / AVERAGE_POOL_2D (sq8_tflm.max_pool2d / average_pool2d), NHWC for one image:
 * In[H][W][C], Out[Ho][Wo][C]. Output (oy, ox) pools the window starting at (oy Sy - PadTop,
 * ox Sx - PadLeft); taps outside the image are skipped (the caller computes SAME/VALID pads). The
 * average divides by the number of in-image taps, rounding half away from zero; then the clamp
 * [ActMin, ActMax]. No rescale: TFLM requires equal input and output quantisation. The output
 * lines are split across the cores. */
typedef struct {
	signed char * __restrict__ In;		/* H x W x C */
	signed char * __restrict__ Out;		/* Ho x Wo x C */
	unsigned short int W;
	unsigned short int H;
	unsigned short int C;
	unsigned short int Wo;
	unsigned short int Ho;
	unsigned char Fx;			/* filter width, height */
	unsigned char Fy;
	unsigned char Sx;			/* strides */
	unsigned char Sy;
	unsigned char PadLeft;			/* < Fx, Fy: every window holds a tap */
	unsigned char PadTop;
	int ActMin;				/* the fused activation's clamp, int8 range */
	int ActMax;
} KerPool_TFLM_SQ8_T;

void KerParMaxPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg);
void KerParAvgPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg);

#endif /* __CNN_SQ8_TFLM_CONV_H__ */
