/*
 * Basic kernels of the graph example (examples/graph_net): the 16-bit "double precision"
 * convolution of examples/cnn_conv_v3 (its header and sources, used as they are:
 * KerParSetBias_DP_fp, the CNN library's, ConvV3_KerParConvNxMStrideSxSy_DP_fp and
 * ConvV3_KerDP_fp) and a saturating 16-bit addition (KerAdd16Par).
 *
 * Modelled in model.py as (the conv kernels by examples/cnn_conv_v3/model.py):
 *   LibKernel("KerParSetBias_DP_fp", CALL_PARALLEL, CArgs(6, ...), "KerSetBias_fpd_fp_T")
 *   LibKernel("ConvV3_KerParConvNxMStrideSxSy_DP_fp", CALL_PARALLEL, CArgs(20, ...), "ConvV3_KerConv_DP_fp_T")
 *   LibKernel("ConvV3_KerDP_fp", CALL_PARALLEL, CArgs(10, ...), "ConvV3_KerDP_fp_T")
 *   LibKernel("KerAdd16Par", CALL_PARALLEL, CArgs(5, In1, In2, Out, W, H), "KerAdd16_T")
 *
 * Layout of a conv tile in L1: several feature planes of the same tile one after the other, a
 * plane being the tile's W x H items, row-major.
 */
#ifndef GRAPH_NET_BASIC_KERNELS_H
#define GRAPH_NET_BASIC_KERNELS_H

#include "../cnn_conv_v3/ConvV3BasicKernels.h"	/* the convolution, unchanged */

/* KerAdd16Par */
typedef struct {
	short int * __restrict__ In1;		/* First input tile, W x H */
	short int * __restrict__ In2;		/* Second input tile, W x H */
	short int * __restrict__ Out;		/* Output tile, W x H */
	unsigned int W;				/* Tile width */
	unsigned int H;				/* Tile height */
} KerAdd16_T;

/* Out[i] = clamp(In1[i] + In2[i], -32768, 32767) over the W*H items (the sum on 32 bits).
 * Parallel: the cores split the items. (A node updating a tensor in place still hands three
 * distinct L1 tiles.) */
void KerAdd16Par(KerAdd16_T *Arg);

#endif /* GRAPH_NET_BASIC_KERNELS_H */
