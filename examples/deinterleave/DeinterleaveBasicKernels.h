/*
 * Basic kernel of the deinterleave example: one channel of a multi-channel interleaved stream.
 *
 * Modelled in model.py (LoadDeinterleaveLibrary) as:
 *   LibKernel("KerSelectChannelPar", CALL_PARALLEL, CArgs(6, In, Out, W, H, Channels, Channel),
 *             "KerSelectChannel_Arg_T", NULL)
 */
#ifndef DEINTERLEAVE_BASIC_KERNELS_H
#define DEINTERLEAVE_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of KerSelectChannelPar: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	int * __restrict__ In;		/* Input tile: H lines of W frames of Channels samples, row-major */
	int * __restrict__ Out;		/* Output tile: H lines of W samples */
	unsigned int W;			/* Frames per line */
	unsigned int H;			/* Lines */
	unsigned int Channels;		/* Samples per frame */
	unsigned int Channel;		/* The channel kept, below Channels */
} KerSelectChannel_Arg_T;

/* Out[i][j] = In[i][j * Channels + Channel] on an H x W tile; the cores share the frames of each
 * line, each core runs over all lines. */
void KerSelectChannelPar(KerSelectChannel_Arg_T *Arg);

#endif /* DEINTERLEAVE_BASIC_KERNELS_H */
