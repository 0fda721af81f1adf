/* Basic kernels for tests/test_property_spaces.py (unsigned items, wrapping arithmetic).
 *
 * A box in L1 holds planes of one tile (W x H items each, row-major, packed one after the
 * other). The index of a plane along a space is multiplied by a stride given in planes: a box
 * resident over a whole space (buffer promotion, partial promotion) is larger than the chunk
 * the call works on, so the strides come from KER_ARG_LOADEDPARTILE_SIZE.
 *
 *   KerWin_<in>_<out>: for each of NB x NO output planes, each output item (x, y) of the Wo x Ho
 *     tile gets  sum over the NR input planes r of  Wt[o][r] * (sum of the Fx x Fy window of
 *     input plane (b, r) at (x*Sx - PadLeft, y*Sy - PadTop), zero outside the W x H tile)
 *     plus Bias[o] when AddBias; stored (Accumulate 0) or added (Accumulate 1) to the output.
 *     Wt == 0: every weight is 1; Bias == 0: no bias.
 *   KerSet_<out>: NB x NO planes of W x H set to Bias[o] (0 without Bias).
 *   KerNarrow_<out>: NB x NO planes of W x H: Out = Acc >> Shift (32-bit accumulators).
 */
#ifndef __SPACEKERNELS_H__
#define __SPACEKERNELS_H__
#include "Gap.h"

#define SPACE_WIN_KERNEL(TI, SI, TO, SO) \
typedef struct { \
    TI *__restrict__ In; unsigned int W; unsigned int H; v4s Pad; unsigned int InSR; unsigned int InSB; \
    TO *__restrict__ Out; unsigned int Wo; unsigned int Ho; unsigned int OutSO; unsigned int OutSB; \
    Wordu32 *__restrict__ Wt; unsigned int WtSO; unsigned int WtSR; \
    Wordu32 *__restrict__ Bias; unsigned int AddBias; \
    unsigned int NB; unsigned int NO; unsigned int NR; \
    unsigned int Fx; unsigned int Fy; unsigned int Sx; unsigned int Sy; unsigned int Accumulate; \
} KerWin_##SI##_##SO##_T; \
void KerWin_##SI##_##SO(KerWin_##SI##_##SO##_T *Arg);

#define SPACE_OUT_KERNELS(TO, SO) \
typedef struct { \
    TO *__restrict__ Out; unsigned int W; unsigned int H; unsigned int OutSO; unsigned int OutSB; \
    unsigned int NO; unsigned int NB; Wordu32 *__restrict__ Bias; \
} KerSet_##SO##_T; \
typedef struct { \
    Wordu32 *__restrict__ Acc; unsigned int AccSO; unsigned int AccSB; \
    TO *__restrict__ Out; unsigned int OutSO; unsigned int OutSB; \
    unsigned int W; unsigned int H; unsigned int NO; unsigned int NB; unsigned int Shift; \
} KerNarrow_##SO##_T; \
void KerSet_##SO(KerSet_##SO##_T *Arg); \
void KerNarrow_##SO(KerNarrow_##SO##_T *Arg);

SPACE_WIN_KERNEL(Wordu8, u8, Wordu8, u8)
SPACE_WIN_KERNEL(Wordu8, u8, Wordu16, u16)
SPACE_WIN_KERNEL(Wordu8, u8, Wordu32, u32)
SPACE_WIN_KERNEL(Wordu16, u16, Wordu8, u8)
SPACE_WIN_KERNEL(Wordu16, u16, Wordu16, u16)
SPACE_WIN_KERNEL(Wordu16, u16, Wordu32, u32)
SPACE_OUT_KERNELS(Wordu8, u8)
SPACE_OUT_KERNELS(Wordu16, u16)
SPACE_OUT_KERNELS(Wordu32, u32)

#endif
