/*
 * Basic kernels of the matrix addition example (AutoTiler guide, illustrative example 1).
 *
 * Modelled in model.py as:
 *   LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, In1, In2, Out, W, H), "MatrixAdd_Arg_T")
 */
#ifndef MAT_ADD_BASIC_KERNELS_H
#define MAT_ADD_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of MatSumPar: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	Word32 * __restrict__ In1;	/* First input tile, W x H */
	Word32 * __restrict__ In2;	/* Second input tile, W x H */
	Word32 * __restrict__ Out;	/* Output tile, W x H */
	unsigned int W;			/* Tile width */
	unsigned int H;			/* Tile height */
} MatrixAdd_Arg_T;

/* Out = In1 + In2 on a W x H tile, items split evenly over the cluster cores. */
void MatSumPar(MatrixAdd_Arg_T *Arg);

#endif /* MAT_ADD_BASIC_KERNELS_H */
