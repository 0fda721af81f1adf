/*
 * Basic kernels of the integral image example (port of the GAP SDK generator
 * GenerateIntegralImage).
 *
 * The integral image of a W x H byte image: II[l][c] = sum of In[i][j] for i <= l, j <= c,
 * in unsigned 32-bit arithmetic. The image comes in horizontal tiles of H lines; KerBuffer is
 * an L1 buffer of W unsigned ints that survives from tile to tile: before a tile it holds the
 * column sums of every line above the tile (zero before the first tile, KerPrime).
 *
 * Modelled in model.py as:
 *   LibKernel("KerPrime", CALL_PARALLEL, CArgs(2, KerBuffer, W), "KerPrimeImage_ArgT")
 *   LibKernel("KerProcess", CALL_PARALLEL, CArgs(5, In, W, H, IntegralImage, KerBuffer),
 *             "KerProcessImage_ArgT")
 */
#ifndef INTEGRAL_IMG_BASIC_KERNELS_H
#define INTEGRAL_IMG_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of KerPrime: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	unsigned int * __restrict__ KerBuffer;	/* Column sums carried across tiles, W items */
	unsigned int W;				/* Image width */
} KerPrimeImage_ArgT;

/* Arguments of KerProcess. */
typedef struct {
	unsigned char * __restrict__ In;		/* Image tile, W x H */
	unsigned int W;					/* Tile width (the image width) */
	unsigned int H;					/* Tile height */
	unsigned int * __restrict__ IntegralImage;	/* Integral image tile, W x H */
	unsigned int * __restrict__ KerBuffer;		/* Column sums carried across tiles, W items */
} KerProcessImage_ArgT;

/* KerBuffer[c] = 0. Parallel: the columns split over the cores. */
void KerPrime(KerPrimeImage_ArgT *Arg);

/* The integral image of a tile: column sums seeded by KerBuffer (which then receives the
 * column sums of the tile's last line), then prefix sums along each line. Parallel: the
 * columns split over the cores, then the lines. */
void KerProcess(KerProcessImage_ArgT *Arg);

#endif /* INTEGRAL_IMG_BASIC_KERNELS_H */
