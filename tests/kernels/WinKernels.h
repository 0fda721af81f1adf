/* Basic kernels for the property tests: a window sum along the tiled dimension, weighted and
 * accumulated across input planes, for 1-, 2- and 4-byte unsigned items (wrapping arithmetic). */
#ifndef __WINKERNELS_H__
#define __WINKERNELS_H__
#include "Gap.h"

#define WIN_KERNELS(T, S) \
typedef struct { T *__restrict__ Out; unsigned int W; unsigned int H; unsigned int Value; } KerInit_##S##_T; \
typedef struct { T *__restrict__ In; T *__restrict__ Out; Wordu32 *__restrict__ Wt; unsigned int W; unsigned int H; \
                 unsigned int Ov; unsigned int Vertical; } KerWin_##S##_T; \
void KerInit_##S(KerInit_##S##_T *Arg); \
void KerWin_##S(KerWin_##S##_T *Arg);

WIN_KERNELS(Wordu8, u8)
WIN_KERNELS(Wordu16, u16)
WIN_KERNELS(Wordu32, u32)

#endif
