/*
 * Basic kernels of the CNN 5x5 convolution example (AutoTiler guide, GenerateCnnConv5x5).
 *
 * Modelled in model.py as:
 *   LibKernel("KerSetInBias", CALL_PARALLEL, CArgs(4, Out, W, H, Bias), "KerSetInBiasT")
 *   LibKernel("KerDirectConv5x5_fp", CALL_PARALLEL,
 *             CArgs(6, In, W, H, Filter, Out, Norm), "KerConv_fpT")
 */
#ifndef CONV5X5_BASIC_KERNELS_H
#define CONV5X5_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of KerSetInBias: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	short int * __restrict__ Out;	/* Tile to initialise, W x H */
	int W;				/* Tile width */
	int H;				/* Tile height */
	short int Bias;			/* Value copied in every item */
} KerSetInBiasT;

/* Arguments of KerDirectConv5x5_fp: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	short int * __restrict__ In;	/* Input tile, W x H */
	int W;				/* Input tile width */
	int H;				/* Input tile height */
	short int * __restrict__ Filter;	/* The 25 coefficients, row-major 5x5 */
	short int * __restrict__ Out;	/* Output tile, (W-4) x (H-4), accumulated into */
	unsigned int Norm;		/* Fixed point format: right shift of the sum */
} KerConv_fpT;

/* Out[0 .. W*H-1] = Bias. Parallel: lines split over the cores. */
void KerSetInBias(KerSetInBiasT *Arg);

/* 5x5 valid convolution of In (W x H) accumulated into Out ((W-4) x (H-4)):
 *   Out[y][x] = clip16(Out[y][x] + (sum_{i,j<5} In[y+i][x+j] * Filter[i][j]) >> Norm)
 * with a 32-bit sum and an arithmetic shift. Parallel: output lines split over the cores. */
void KerDirectConv5x5_fp(KerConv_fpT *Arg);

#endif /* CONV5X5_BASIC_KERNELS_H */
