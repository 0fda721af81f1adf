/*
 * Basic kernels of the 4D matrix addition example ("MyFavoriteKernel" in the AutoTiler guide).
 *
 * Modelled in model.py as:
 *   LibKernel("KerSetZero32", CALL_PARALLEL, CArgs(3, Out, W, H), "KerSetZero32_Arg_T")
 *   LibKernel("MatrixAdd", CALL_PARALLEL, CArgs(6, In1, In2, Out, Bias, W, H), "MatrixAdd_Arg_T")
 */
#ifndef MAT_ADD_4D_BASIC_KERNELS_H
#define MAT_ADD_4D_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of KerSetZero32: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	Word32 * __restrict__ Out;	/* Tile to clear, W x H */
	Wordu32 W;			/* Tile width */
	Wordu32 H;			/* Tile height */
} KerSetZero32_Arg_T;

/* Arguments of MatrixAdd: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	Word32 * __restrict__ In1;	/* First input tile, W x H */
	Word32 * __restrict__ In2;	/* Second input tile, W x H */
	Word32 * __restrict__ Out;	/* Output tile, W x H, accumulated into */
	Word32 Bias;			/* Bias added to each item sum */
	Wordu32 W;			/* Tile width */
	Wordu32 H;			/* Tile height */
} MatrixAdd_Arg_T;

/* Out = 0 on a W x H tile. Parallel over the items. */
void KerSetZero32(KerSetZero32_Arg_T *Arg);

/* Out += In1 + In2 + Bias on a W x H tile. Parallel over the items. */
void MatrixAdd(MatrixAdd_Arg_T *Arg);

#endif /* MAT_ADD_4D_BASIC_KERNELS_H */
