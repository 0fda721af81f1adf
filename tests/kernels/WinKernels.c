#include "WinKernels.h"

/* Out tile (W x H) = Value; In tile is (W x (H+Ov)) for horizontal tiles, ((W+Ov) x H) for
 * vertical ones: Out[y][x] += Wt[0] * sum of the Ov+1 inputs along the tiled dimension.
 * Lines of the output are split over the cores. */
#define WIN_BODY(T, S) \
void KerInit_##S(KerInit_##S##_T *Arg) \
{ \
    unsigned int n = Arg->W * Arg->H, chunk = (n + gap_ncore() - 1) / gap_ncore(); \
    unsigned int first = gap_coreid() * chunk, last = first + chunk < n ? first + chunk : n, i; \
    for (i = first; i < last; i++) Arg->Out[i] = (T) Arg->Value; \
    gap_waitbarrier(0); \
} \
void KerWin_##S(KerWin_##S##_T *Arg) \
{ \
    unsigned int W = Arg->W, H = Arg->H, Ov = Arg->Ov, InW = Arg->Vertical ? W + Ov : W; \
    unsigned int chunk = (H + gap_ncore() - 1) / gap_ncore(); \
    unsigned int first = gap_coreid() * chunk, last = first + chunk < H ? first + chunk : H, y, x, k; \
    Wordu32 wt = Arg->Wt[0]; \
    for (y = first; y < last; y++) \
        for (x = 0; x < W; x++) { \
            Wordu32 acc = 0; \
            for (k = 0; k <= Ov; k++) \
                acc += Arg->Vertical ? Arg->In[y * InW + x + k] : Arg->In[(y + k) * InW + x]; \
            Arg->Out[y * W + x] = (T) (Arg->Out[y * W + x] + (T) (wt * acc)); \
        } \
    gap_waitbarrier(0); \
}

WIN_BODY(Wordu8, u8)
WIN_BODY(Wordu16, u16)
WIN_BODY(Wordu32, u32)
