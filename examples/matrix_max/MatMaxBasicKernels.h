/*
 * Basic kernels of the matrix maximum example (AutoTiler guide, illustrative example 2).
 *
 * Modelled in model.py as:
 *   LibKernel("KerMatrixMax", CALL_PARALLEL,
 *             CArgs(6, In, Out, W, H, TileIndex, CompareWithOut), "MatrixMax_Arg_T")
 *   LibKernel("KerMatrixMaxReduction", CALL_SEQUENTIAL,
 *             CArgs(3, In, Out, Ntile), "MatrixMaxReduction_Arg_T")
 */
#ifndef MAT_MAX_BASIC_KERNELS_H
#define MAT_MAX_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of KerMatrixMax: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	Word32 * __restrict__ In;	/* A tile, W x H */
	Word32 * __restrict__ Out;	/* This tile's entry of the vector of maximums */
	unsigned int W;			/* Tile width */
	unsigned int H;			/* Tile height */
	unsigned int TileIndex;		/* Which tile (Out already points at its entry) */
	unsigned int CompareWithOut;	/* *Out already contains a max to compare with */
} MatrixMax_Arg_T;

/* KerMatrixMaxReduction is sequential (plain C arguments); this struct only mirrors its CArgs. */
typedef struct {
	Word32 * __restrict__ In;	/* A vector of maximums */
	Word32 * __restrict__ Out;	/* Pointer to the unique maximum */
	unsigned int Ntile;		/* Number of entries in In */
} MatrixMaxReduction_Arg_T;

/* *Out = max(In[0 .. W*H-1]) (and of the old *Out if CompareWithOut), where Out is the
 * current tile's entry of the TiledOut vector (K_Arg("TiledOut", KER_ARG_TILE)).
 * Parallel: lines are split over the cores, core 0 combines the per-core maxima. */
void KerMatrixMax(MatrixMax_Arg_T *Arg);

/* *Out = max(In[0 .. Ntile-1]). Sequential (core 0). */
void KerMatrixMaxReduction(Word32 * __restrict__ In, Word32 * __restrict__ Out, unsigned int Ntile);

#endif /* MAT_MAX_BASIC_KERNELS_H */
