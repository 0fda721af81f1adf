/*
 * Basic kernel of the matrix addition generator of the GAP SDK (MatAdd, AutoTiler v3 form).
 *
 * Modelled in model.py (LoadMatAddLibrary) as:
 *   LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, In1, In2, Out, W, H), "MatrixAdd_Arg_T", NULL)
 */
#ifndef MAT_ADD_V3_BASIC_KERNELS_H
#define MAT_ADD_V3_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of MatSumPar: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	int * __restrict__ In1;		/* First input tile, W x H, row-major */
	int * __restrict__ In2;		/* Second input tile, W x H */
	int * __restrict__ Out;		/* Output tile, W x H */
	unsigned int W;			/* Tile width (columns) */
	unsigned int H;			/* Tile height (lines) */
} MatrixAdd_Arg_T;

/* Out = In1 + In2 on a W x H tile; the cores share the columns, each core runs over all lines. */
void MatSumPar(MatrixAdd_Arg_T *Arg);

#endif /* MAT_ADD_V3_BASIC_KERNELS_H */
