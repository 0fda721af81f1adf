/*
 * Basic kernels of the 2D FFT example (AutoTiler guide, user kernel group FFT2D).
 *
 * Complex samples are v2s pairs (I, Q) of Q15 shorts; seen as Word16, sample k of a
 * sequence is Data[2*k] (I) and Data[2*k+1] (Q).
 *
 * Fixed point radix-2 decimation in frequency, every stage scaled by 1/2 (no overflow; an
 * N-point FFT is divided by N). For the butterfly on samples a, b with twiddle w = (C, S)
 * (C = cos, S = -sin of 2*pi*k/N in Q15):
 *   a' = ((a.I + b.I) >> 1, (a.Q + b.Q) >> 1)
 *   d  = ((a.I - b.I) >> 1, (a.Q - b.Q) >> 1)
 *   b' = ((d.I*C - d.Q*S + (1<<14)) >> 15, (d.I*S + d.Q*C + (1<<14)) >> 15)
 * with 32-bit int arithmetic and arithmetic right shifts. Outputs are in bit-reversed order;
 * the SwapSamples kernels put them back in natural order.
 *
 * Modelled in model.py as (all CALL_PARALLEL):
 *   Image2Complex(In, Out, W, H)                              "Image2Complex_Arg_T"
 *   Radix2FFT_DIF_2D_Horizontal(Data, Twiddles, N_fft, Nb)    "FFT_2D_Arg_T"
 *   Radix2FFT_DIF_2D_Vertical(Data, Twiddles, N_fft, Nb)      "FFT_2D_Arg_T"
 *   SwapSamples_2D_Horizontal_Par(Data, SwapTable, Ni, Nb)    "SwapSamples_2D_Arg_T"
 *   SwapSamples_2D_Vertical_Par(Data, SwapTable, Ni, Nb)      "SwapSamples_2D_Arg_T"
 */
#ifndef FFT2D_BASIC_KERNELS_H
#define FFT2D_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of Image2Complex: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	Wordu8 * __restrict__ In;	/* Byte tile, W x H */
	v2s * __restrict__ Out;		/* Complex tile, W x H */
	unsigned int W;			/* Tile width */
	unsigned int H;			/* Tile height */
} Image2Complex_Arg_T;

/* Arguments of Radix2FFT_DIF_2D_Horizontal and Radix2FFT_DIF_2D_Vertical. */
typedef struct {
	Word16 * __restrict__ Data;	/* Complex tile, in place */
	Word16 * __restrict__ Twiddles;	/* N_fft/2 complex Q15 (cos, -sin) */
	unsigned int N_fft;		/* FFT size */
	unsigned int Nb;		/* Number of FFTs (lines or columns of the tile) */
} FFT_2D_Arg_T;

/* Arguments of SwapSamples_2D_Horizontal_Par and SwapSamples_2D_Vertical_Par. */
typedef struct {
	v2s * __restrict__ Data;	/* Complex tile, in place */
	Word16 * __restrict__ SwapTable;	/* Ni bit-reversal indices */
	unsigned int Ni;		/* Samples per FFT */
	unsigned int Nb;		/* Number of FFTs (lines or columns of the tile) */
} SwapSamples_2D_Arg_T;

/* Out[i] = (In[i] << 7, 0): pixel as Q15 I, zero Q. Parallel: lines split over the cores. */
void Image2Complex(Image2Complex_Arg_T *Arg);

/* In-place FFT of each of the Nb lines (N_fft samples each) of a N_fft x Nb tile.
 * Output in bit-reversed order. Parallel: lines split over the cores. */
void Radix2FFT_DIF_2D_Horizontal(FFT_2D_Arg_T *Arg);

/* In-place FFT of each of the Nb columns of a tile of N_fft rows of Nb samples.
 * Output in bit-reversed order. Parallel: columns split over the cores. */
void Radix2FFT_DIF_2D_Vertical(FFT_2D_Arg_T *Arg);

/* Reorder each of the Nb lines (Ni samples) of the tile: swap samples i and SwapTable[i].
 * Parallel: lines split over the cores. */
void SwapSamples_2D_Horizontal_Par(SwapSamples_2D_Arg_T *Arg);

/* Reorder each of the Nb columns of a tile of Ni rows of Nb samples.
 * Parallel: columns split over the cores. */
void SwapSamples_2D_Vertical_Par(SwapSamples_2D_Arg_T *Arg);

#endif /* FFT2D_BASIC_KERNELS_H */
