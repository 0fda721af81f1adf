#include "SpaceKernels.h"

/* [*First, *Last) of N rows for this core */
static void CoreRange(unsigned int N, unsigned int *First, unsigned int *Last)
{
    unsigned int Chunk = (N + gap_ncore() - 1) / gap_ncore();
    unsigned int F = gap_coreid() * Chunk;
    *First = F < N ? F : N;
    *Last = F + Chunk < N ? F + Chunk : N;
}

/* Rows of output lines (plane-major) are split over the cores */
#define SPACE_WIN_BODY(TI, SI, TO, SO) \
void KerWin_##SI##_##SO(KerWin_##SI##_##SO##_T *Arg) \
{ \
    unsigned int W = Arg->W, H = Arg->H, Wo = Arg->Wo, Ho = Arg->Ho, NO = Arg->NO, NR = Arg->NR; \
    int PadL = Arg->Pad[0], PadT = Arg->Pad[2]; \
    unsigned int First, Last, Row, x, r, kx, ky; \
    CoreRange(Arg->NB * NO * Ho, &First, &Last); \
    for (Row = First; Row < Last; Row++) { \
        unsigned int y = Row % Ho, o = (Row / Ho) % NO, b = Row / Ho / NO; \
        TO *Out = Arg->Out + (o * Arg->OutSO + b * Arg->OutSB) * Wo * Ho + y * Wo; \
        for (x = 0; x < Wo; x++) { \
            Wordu32 Acc = 0; \
            for (r = 0; r < NR; r++) { \
                TI *In = Arg->In + (r * Arg->InSR + b * Arg->InSB) * W * H; \
                Wordu32 Sum = 0; \
                for (ky = 0; ky < Arg->Fy; ky++) { \
                    int iy = (int) (y * Arg->Sy + ky) - PadT; \
                    if (iy < 0 || iy >= (int) H) continue; \
                    for (kx = 0; kx < Arg->Fx; kx++) { \
                        int ix = (int) (x * Arg->Sx + kx) - PadL; \
                        if (ix >= 0 && ix < (int) W) Sum += In[iy * W + ix]; \
                    } \
                } \
                Acc += (Arg->Wt ? Arg->Wt[o * Arg->WtSO + r * Arg->WtSR] : 1) * Sum; \
            } \
            if (Arg->AddBias && Arg->Bias) Acc += Arg->Bias[o]; \
            Out[x] = Arg->Accumulate ? (TO) (Out[x] + (TO) Acc) : (TO) Acc; \
        } \
    } \
    gap_waitbarrier(0); \
}

/* Items (plane-major) are split over the cores */
#define SPACE_OUT_BODY(TO, SO) \
void KerSet_##SO(KerSet_##SO##_T *Arg) \
{ \
    unsigned int N = Arg->W * Arg->H, First, Last, i; \
    CoreRange(Arg->NB * Arg->NO * N, &First, &Last); \
    for (i = First; i < Last; i++) { \
        unsigned int o = (i / N) % Arg->NO, b = i / N / Arg->NO; \
        Arg->Out[(o * Arg->OutSO + b * Arg->OutSB) * N + i % N] = (TO) (Arg->Bias ? Arg->Bias[o] : 0); \
    } \
    gap_waitbarrier(0); \
} \
void KerNarrow_##SO(KerNarrow_##SO##_T *Arg) \
{ \
    unsigned int N = Arg->W * Arg->H, First, Last, i; \
    CoreRange(Arg->NB * Arg->NO * N, &First, &Last); \
    for (i = First; i < Last; i++) { \
        unsigned int o = (i / N) % Arg->NO, b = i / N / Arg->NO; \
        Arg->Out[(o * Arg->OutSO + b * Arg->OutSB) * N + i % N] = \
            (TO) (Arg->Acc[(o * Arg->AccSO + b * Arg->AccSB) * N + i % N] >> Arg->Shift); \
    } \
    gap_waitbarrier(0); \
}

SPACE_WIN_BODY(Wordu8, u8, Wordu8, u8)
SPACE_WIN_BODY(Wordu8, u8, Wordu16, u16)
SPACE_WIN_BODY(Wordu8, u8, Wordu32, u32)
SPACE_WIN_BODY(Wordu16, u16, Wordu8, u8)
SPACE_WIN_BODY(Wordu16, u16, Wordu16, u16)
SPACE_WIN_BODY(Wordu16, u16, Wordu32, u32)
SPACE_OUT_BODY(Wordu8, u8)
SPACE_OUT_BODY(Wordu16, u16)
SPACE_OUT_BODY(Wordu32, u32)
