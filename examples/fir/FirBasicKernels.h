/*
 * Basic kernels of the FIR example (port of the GAP SDK generator GeneratorFIR).
 *
 * A FIR filter of NCoeffs taps on 16-bit samples with a delay line:
 *   Out[i] = clip16(roundnorm(sum_{j<NCoeffs} In[i-NCoeffs+1+j] * Coeffs[j], Norm))
 * accumulated in 32 bits (roundnorm: add 2^(Norm-1), arithmetic shift right by Norm).
 *
 * In points at the first sample of the current tile; the NCoeffs items just before it are the
 * delay line (the KerArgPad BottomBuffer of the user kernel argument). The first samples of a
 * tile read up to NCoeffs-1 items below In, so the delay line must hold the NCoeffs-1 samples
 * that precede the tile: zeros before the first tile (KerFirParallelInit), otherwise the last
 * NCoeffs-1 samples of the previous tile, which the filter kernel of that previous tile copied
 * to NextIn[-(NCoeffs-1) .. -1] (NextIn = the other double buffer, KER_ARG_TILE_NEXTDB).
 *
 * Modelled in model.py as:
 *   LibKernel("KerFirParallelInit", CALL_PARALLEL, CArgs(2, In, NCoeffs), "KerFirParallelInit_ArgT")
 *   LibKernel(<filter>, CALL_PARALLEL, CArgs(7, In, NextIn, Coeffs, Out, NSamples, NCoeffs, Norm),
 *             "KerFirParallel_ArgT")
 * with <filter> one of KerFirParallelNTaps, KerFirParallelScalarNTaps, KerFirParallel10Taps,
 * KerFirParallel20Taps (same arithmetic, same result).
 */
#ifndef FIR_BASIC_KERNELS_H
#define FIR_BASIC_KERNELS_H

#include "Gap.h"

/* Arguments of the filter kernels: the fields are the LibKernel's CArgs, in order. */
typedef struct {
	short int * __restrict__ In;		/* Current tile; In[-NCoeffs..-1] is its delay line */
	short int * __restrict__ NextIn;	/* The next tile's buffer (delay line below it), or 0 */
	short int * __restrict__ Coeffs;	/* NCoeffs taps */
	short int * __restrict__ Out;		/* NSamples outputs */
	unsigned int NSamples;			/* Samples in the tile */
	unsigned int NCoeffs;			/* Taps */
	unsigned int Norm;			/* Right shift (with rounding) of the 32-bit sums */
} KerFirParallel_ArgT;

/* Arguments of KerFirParallelInit. */
typedef struct {
	short int * __restrict__ In;		/* First tile; its delay line In[-NCoeffs..-1] is zeroed */
	unsigned int NCoeffs;			/* Size of the delay line */
} KerFirParallelInit_ArgT;

/* In[-NCoeffs .. -1] = 0. Parallel: the items split over the cores. */
void KerFirParallelInit(KerFirParallelInit_ArgT *Arg);

/* The FIR on a tile, then, if NextIn is not 0, core 0 copies In[NSamples-(NCoeffs-1) ..
 * NSamples-1] to NextIn[-(NCoeffs-1) .. -1]. Parallel: the samples split over the cores. */
void KerFirParallelScalarNTaps(KerFirParallel_ArgT *Arg);	/* one tap at a time, any NCoeffs */
void KerFirParallelNTaps(KerFirParallel_ArgT *Arg);		/* two taps at a time (sumdotp2), NCoeffs even */
void KerFirParallel10Taps(KerFirParallel_ArgT *Arg);		/* NCoeffs == 10, taps kept in registers */
void KerFirParallel20Taps(KerFirParallel_ArgT *Arg);		/* NCoeffs == 20, taps kept in registers */

#endif /* FIR_BASIC_KERNELS_H */
