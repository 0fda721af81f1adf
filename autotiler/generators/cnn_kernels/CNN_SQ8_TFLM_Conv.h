/*
 * SQ8 basic kernels, TFLM requantisation: convolutions and pooling (HWC).
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 */
#ifndef __CNN_SQ8_TFLM_CONV_H__
#define __CNN_SQ8_TFLM_CONV_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* ---- Convolutions (CNN_SQ8_Conv.c; depth wise CNN_SQ8_ConvDW.c) ---------------------------
 * TFLM's CONV_2D (grouped too) and DEPTHWISE_CONV_2D (sq8_tflm.conv2d / depthwise_conv2d) on one
 * tile of lines of an HWC image: In[H][W][InFeat] (the tile's input lines), Out[Ho][Wo][OutFeat]
 * (the tile's output lines, every channel). Output (oy, ox) reads input line oy Sy - Pad[2] + ky Dy
 * and column ox Sx - PadLeft + kx Dx; taps outside [0, H) x [0, W) are skipped, i.e. they count
 * as (In - IN_ZP) = 0, TFLM's padding. acc = Bias + sum w (In - IN_ZP) in wrapping int32, then
 * at_tflm_requant_int8 with Scale[c], ScaleN[c] and Infos' OUT_ZP, ACT_MIN, ACT_MAX.
 *
 * Regular / grouped (KerParConv_TFLM_SQ8): Filter OHWI [Chunk][Fy][Fx][GroupIn] holds the output
 * channels of this chunk (Bias, Scale, ScaleN likewise); output channel c of the layer reads input
 * channels (c / GroupOut) GroupIn ... + GroupIn. The chunk is channels [Off, Off + Chunk) with
 * Off = ChunkIndex Chunk, except the last of NChunks chunks, which ends at OutFeat (the tiler's
 * chunks are equal but the last).
 * Depth wise (KerParConvDW_TFLM_SQ8): Filter [Fy][Fx][OutFeat], output channel c reads input
 * channel c / (OutFeat / InFeat) (TFLite's depth multiplier); one chunk of every channel. */
typedef struct {
	signed char * __restrict__ In;		/* H x W x InFeat */
	signed char * __restrict__ Filter;	/* Chunk x Fy x Fx x GroupIn; depth wise Fy x Fx x OutFeat */
	int * __restrict__ Bias;		/* Chunk */
	signed char * __restrict__ Out;		/* Ho x Wo x OutFeat */
	int * __restrict__ Scale;		/* Chunk Q31 multipliers */
	signed char * __restrict__ ScaleN;	/* Chunk shifts (> 0 left) */
	signed char * __restrict__ Infos;	/* AT_INF_TFLM_* words: IN_ZP, OUT_ZP, ACT_MIN, ACT_MAX */
	unsigned short int W;			/* input columns */
	unsigned short int H;			/* input lines of this tile */
	unsigned short int InFeat;		/* channels of an input pixel */
	unsigned short int Wo;			/* output columns */
	unsigned short int Ho;			/* output lines of this tile */
	unsigned short int OutFeat;		/* channels of an output pixel */
	unsigned short int GroupIn;		/* input channels of a group (the filter's depth) */
	unsigned short int GroupOut;		/* output channels of a group */
	unsigned short int Chunk;		/* output channels of this chunk */
	unsigned short int ChunkIndex;
	unsigned short int NChunks;
	unsigned char Fx;			/* filter width, height */
	unsigned char Fy;
	unsigned char Sx;			/* strides */
	unsigned char Sy;
	unsigned char Dx;			/* dilations */
	unsigned char Dy;
	unsigned char PadLeft;			/* the layer's left padding (tiles are whole lines) */
	v4s Pad;				/* this tile's (left, right, top, bottom): Pad[2] is read */
} KerConv_TFLM_SQ8_T;

void KerParConv_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg);
void KerParConvDW_TFLM_SQ8(KerConv_TFLM_SQ8_T *Arg);

/* ---- Max and average pooling (CNN_SQ8_Pooling.c) ---------------------------------------------
 * TFLM's MAX_POOL_2D / AVERAGE_POOL_2D (sq8_tflm.max_pool2d / average_pool2d), NHWC, on one tile
 * of lines: In[H][W][C], Out[Ho][Wo][C]. Output (oy, ox) pools the window starting at
 * (oy Sy - Pad[2], ox Sx - PadLeft); taps outside the tile's lines / the image's columns are
 * skipped (the caller computes SAME/VALID pads, and tiles hold every line an inner window reads).
 * The average divides by the number of such taps, rounding half away from zero; then the clamp
 * [ACT_MIN, ACT_MAX] of Infos. No rescale: TFLM requires equal input and output quantisation.
 * The output lines are split across the cores. */
typedef struct {
	signed char * __restrict__ In;		/* H x W x C */
	signed char * __restrict__ Out;		/* Ho x Wo x C */
	signed char * __restrict__ Infos;	/* AT_INF_TFLM_* words: ACT_MIN, ACT_MAX */
	unsigned short int W;
	unsigned short int H;			/* input lines of this tile */
	unsigned short int C;
	unsigned short int Wo;
	unsigned short int Ho;			/* output lines of this tile */
	unsigned char Fx;			/* filter width, height */
	unsigned char Fy;
	unsigned char Sx;			/* strides */
	unsigned char Sy;
	unsigned char PadLeft;			/* < Fx, Fy: every window holds a tap */
	v4s Pad;				/* this tile's (left, right, top, bottom): Pad[2] is read */
} KerPool_TFLM_SQ8_T;

void KerParMaxPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg);
void KerParAvgPool_TFLM_SQ8(KerPool_TFLM_SQ8_T *Arg);

/* ---- A fused chain's line buffer (CNN_SQ8_Fused.c; sq8_gen_tflm_fused.py, KEEP mode) ---------
 * The convolution of KerConv_TFLM_SQ8_T (same fields, same meaning) on tile TileIndex of a fused
 * chain whose output Out is an L1 intermediate kept from tile to tile: its first KeepOut lines
 * were computed by the previous tile and moved to the front of Out, so a tile other than the
 * first computes only the last Ho - KeepOut lines (Out, its input In and top padding advanced
 * to match). Then, unless TileLast, the last KeepIn of its H input lines (an intermediate too)
 * are moved to the front of In for the next tile: the next tile's first KeepIn lines. */
typedef struct {
	signed char * __restrict__ In;		/* H x W x InFeat */
	signed char * __restrict__ Filter;
	int * __restrict__ Bias;
	signed char * __restrict__ Out;		/* Ho x Wo x OutFeat: the whole tile, kept lines first */
	int * __restrict__ Scale;
	signed char * __restrict__ ScaleN;
	signed char * __restrict__ Infos;
	unsigned short int W;
	unsigned short int H;			/* input lines of this tile, all of them */
	unsigned short int InFeat;
	unsigned short int Wo;
	unsigned short int Ho;			/* output lines of this tile, kept ones included */
	unsigned short int OutFeat;
	unsigned short int GroupIn;
	unsigned short int GroupOut;
	unsigned short int Chunk;
	unsigned short int ChunkIndex;
	unsigned short int NChunks;
	unsigned char Fx;
	unsigned char Fy;
	unsigned char Sx;
	unsigned char Sy;
	unsigned char Dx;
	unsigned char Dy;
	unsigned char PadLeft;
	v4s Pad;				/* this tile's, for all its input lines: Pad[2] is read */
	unsigned short int KeepOut;		/* output lines the previous tile left at the front of Out */
	unsigned short int KeepIn;		/* input lines to move to the front of In for the next tile */
	unsigned short int TileIndex;		/* 0: nothing kept yet, every line computed */
	unsigned char TileLast;			/* 1: no next tile, nothing to move */
} KerConvKeep_TFLM_SQ8_T;

void KerParConvKeep_TFLM_SQ8(KerConvKeep_TFLM_SQ8_T *Arg);
void KerParConvDWKeep_TFLM_SQ8(KerConvKeep_TFLM_SQ8_T *Arg);

#endif /* __CNN_SQ8_TFLM_CONV_H__ */
