/*
 * Max and average pooling with optional ReLU/ReLUN, and global pooling.
 *
 * Geometry as the convolutions': Wo = (UsedW - (D*(M-1)+1) + Pad[0] + Pad[1]) / S + 1, likewise
 * Ho with My, Sy, Dy; taps outside [0, UsedH) x [0, UsedW) are zeros that take part in the max
 * and the sum. Max: the largest tap; average: roundnorm(sum * ((1<<16) / (M*My)), 16) (padding
 * counted in the divisor). Oper bit 1: average (else max); bit 0: clip to [LB, UB] (ReLU: LB=0,
 * ReLUN: UB = N << o). The original's 2x2 stride 2 average floors (sum >> 2); here the 2x2
 * kernels are the generic one, rounding.
 */
#include "Gap.h"
#include "CNN_BasicKernels.h"
#include "CNN_Activation.h"

typedef signed char sc_t;
typedef short int ss_t;

typedef struct {
	int W, UsedW, UsedH, Mx, My, Sx, Sy, Dx, Dy, PadL, PadT, Wo, Ho, Oper, LB, UB;
} PoolGeom_T;

static PoolGeom_T PoolGeom(int W, int UsedW, int UsedH, int Mx, int My, int Sx, int Sy, int Dx, int Dy, v4s Pad,
			   int Oper, int LB, int UB)
{
	PoolGeom_T G;

	G.W = W; G.UsedW = UsedW; G.UsedH = UsedH; G.Mx = Mx; G.My = My; G.Sx = Sx; G.Sy = Sy; G.Dx = Dx; G.Dy = Dy;
	G.PadL = Pad[0]; G.PadT = Pad[2]; G.Oper = Oper; G.LB = LB; G.UB = UB;
	G.Wo = (UsedW - (Dx * (Mx - 1) + 1) + Pad[0] + Pad[1]) / Sx + 1;
	G.Ho = (UsedH - (Dy * (My - 1) + 1) + Pad[2] + Pad[3]) / Sy + 1;
	return G;
}

#define POOL_PLANE(T) \
static void PoolPlane_##T(const T *In, T *Out, const PoolGeom_T *G, int x0, int x1, int y0, int y1) \
{ \
	int Avg = (G->Oper & 2) != 0, Factor = (1 << 16) / (G->Mx * G->My), x, y, i, j; \
	for (y = y0; y < y1; y++) for (x = x0; x < x1; x++) { \
		int X0 = x * G->Sx - G->PadL, Y0 = y * G->Sy - G->PadT, Acc = Avg ? 0 : -0x7FFFFFFF - 1, V; \
		for (i = 0; i < G->My; i++) for (j = 0; j < G->Mx; j++) { \
			int Yi = Y0 + i * G->Dy, Xj = X0 + j * G->Dx; \
			int Tap = (Yi < 0 || Yi >= G->UsedH || Xj < 0 || Xj >= G->UsedW) ? 0 : In[Yi * G->W + Xj]; \
			if (Avg) Acc += Tap; else Acc = gap_max(Acc, Tap); \
		} \
		V = Avg ? CNN_Norm(Acc * Factor, 16) : Acc; \
		if (G->Oper & 1) V = gap_min(gap_max(V, G->LB), G->UB); \
		Out[y * G->Wo + x] = (T) V; \
	} \
}

POOL_PLANE(ss_t)
POOL_PLANE(sc_t)

/* Par: features split across the cores. One (no Par): one feature, columns (Orientation 1) or
 * lines (0) split. Fixed names force the geometry on a copy of the arguments. */
#define POOL_PAR(Name, TArg, T) \
void Name(TArg *Arg) \
{ \
	PoolGeom_T G = PoolGeom(Arg->W, Arg->UsedW, Arg->UsedH, Arg->M, Arg->My, Arg->S, Arg->Sy, Arg->D, Arg->Dy, \
				Arg->Pad, Arg->Oper, Arg->LB, Arg->UB); \
	int First, Last, f; \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (f = First; f < Last; f++) \
		PoolPlane_##T(Arg->In + Arg->W * Arg->H * f, Arg->Out + G.Wo * G.Ho * f, &G, 0, G.Wo, 0, G.Ho); \
	gap_waitbarrier(0); \
}

#define POOL_ONE(Name, TArg, T) \
void Name(TArg *Arg) \
{ \
	PoolGeom_T G = PoolGeom(Arg->W, Arg->UsedW, Arg->UsedH, Arg->M, Arg->My, Arg->S, Arg->Sy, Arg->D, Arg->Dy, \
				Arg->Pad, Arg->Oper, Arg->LB, Arg->UB); \
	int First, Last; \
	if (Arg->Orientation) { \
		CNN_Chunk(G.Wo, &First, &Last); \
		PoolPlane_##T(Arg->In, Arg->Out, &G, First, Last, 0, G.Ho); \
	} else { \
		CNN_Chunk(G.Ho, &First, &Last); \
		PoolPlane_##T(Arg->In, Arg->Out, &G, 0, G.Wo, First, Last); \
	} \
	gap_waitbarrier(0); \
}

#define POOL_FIXED(Name, Generic, TArg, vM, vS) \
void Name(TArg *Arg) \
{ \
	TArg A = *Arg; \
	if ((vM) > 0) A.M = (vM); \
	A.My = A.M; \
	if ((vS) > 0) A.S = (vS); \
	A.Sy = A.S; A.D = 1; A.Dy = 1; \
	Generic(&A); \
}

POOL_PAR(KerParPoolNxMStrideSxSy_fp, KerReLUPool_fp_T, ss_t)
POOL_PAR(KerParPoolNxMStrideSxSy_fps, KerReLUPool_fps_T, sc_t)
POOL_ONE(KerPoolNxMStrideSxSy_fp, KerReLUPool_fp_T, ss_t)
POOL_ONE(KerPoolNxMStrideSxSy_fps, KerReLUPool_fps_T, sc_t)
POOL_FIXED(KerParPool2x2Stride2_fp, KerParPoolNxMStrideSxSy_fp, KerReLUPool_fp_T, 2, 2)
POOL_FIXED(KerParPoolNxNStrideS_fp, KerParPoolNxMStrideSxSy_fp, KerReLUPool_fp_T, -1, -1)
POOL_FIXED(KerParPool2x2Stride2_fps, KerParPoolNxMStrideSxSy_fps, KerReLUPool_fps_T, 2, 2)
POOL_FIXED(KerParPoolNxNStrideS_fps, KerParPoolNxMStrideSxSy_fps, KerReLUPool_fps_T, -1, -1)
POOL_FIXED(KerPool2x2Stride2_fp, KerPoolNxMStrideSxSy_fp, KerReLUPool_fp_T, 2, 2)
POOL_FIXED(KerPoolNxNStrideS_fp, KerPoolNxMStrideSxSy_fp, KerReLUPool_fp_T, -1, -1)
POOL_FIXED(KerPool2x2Stride2_fps, KerPoolNxMStrideSxSy_fps, KerReLUPool_fps_T, 2, 2)
POOL_FIXED(KerPoolNxNStrideS_fps, KerPoolNxMStrideSxSy_fps, KerReLUPool_fps_T, -1, -1)

/* ---- Global pooling ------------------------------------------------------------------------
 * Per feature: max of the W*H items, or their sum divided by W*H rounded half up
 * (floor((2*Sum + W*H) / (2*W*H))); the output keeps the input's Q (Norm is unused).
 * DP: each tile's max / sum goes into one int32 per feature (TileIndex 0 initialises it), the
 * Reduct kernel then narrows it (W, H: the whole plane). */

static int DivRound(long long Sum, long long Count)
{
	long long n = 2 * Sum + Count, d = 2 * Count, q = n / d;

	if ((n % d) != 0 && n < 0) q--;	/* floor */
	return (int) q;
}

#define GLOBAL_FULL(Name, TArg, T, Avg, Bits) \
void Name(TArg *Arg) \
{ \
	int Size = Arg->W * Arg->H, First, Last, f, i; \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (f = First; f < Last; f++) { \
		const T *I = Arg->In + Size * f; \
		long long Acc = (Avg) ? 0 : I[0]; \
		for (i = 0; i < Size; i++) Acc = (Avg) ? Acc + I[i] : (I[i] > Acc ? I[i] : Acc); \
		Arg->Out[f] = (T) CNN_Sat((Avg) ? DivRound(Acc, Size) : Acc, Bits); \
	} \
	gap_waitbarrier(0); \
}

#define GLOBAL_DP(Name, TArg, T, Avg) \
void Name(TArg *Arg) \
{ \
	int Size = Arg->W * Arg->H, First, Last, f, i; \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (f = First; f < Last; f++) { \
		const T *I = Arg->In + Size * f; \
		int Acc = Arg->TileIndex ? Arg->Out[f] : ((Avg) ? 0 : -0x7FFFFFFF - 1); \
		for (i = 0; i < Size; i++) Acc = (Avg) ? (int) ((unsigned int) Acc + (unsigned int) I[i]) : gap_max(Acc, I[i]); \
		Arg->Out[f] = Acc; \
	} \
	gap_waitbarrier(0); \
}

#define GLOBAL_REDUCT(Name, TArg, T, Avg, Bits) \
void Name(TArg *Arg) \
{ \
	int Size = Arg->W * Arg->H, First, Last, f; \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (f = First; f < Last; f++) \
		Arg->Out[f] = (T) CNN_Sat((Avg) ? DivRound(Arg->In[f], Size) : Arg->In[f], Bits); \
	gap_waitbarrier(0); \
}

GLOBAL_FULL(KerParGlobalMaxPoolFullFeat_fp, KerGlobalPool_fp_T, short int, 0, 15)
GLOBAL_FULL(KerParGlobalAvgPoolFullFeat_fp, KerGlobalPool_fp_T, short int, 1, 15)
GLOBAL_FULL(KerParGlobalMaxPoolFullFeat_fps, KerGlobalPool_fps_T, signed char, 0, 7)
GLOBAL_FULL(KerParGlobalAvgPoolFullFeat_fps, KerGlobalPool_fps_T, signed char, 1, 7)
GLOBAL_DP(KerParGlobalMaxPoolDP_fp, KerGlobalPoolDP_fp_T, short int, 0)
GLOBAL_DP(KerParGlobalAvgPoolDP_fp, KerGlobalPoolDP_fp_T, short int, 1)
GLOBAL_DP(KerParGlobalMaxPoolDP_fps, KerGlobalPoolDP_fps_T, signed char, 0)
GLOBAL_DP(KerParGlobalAvgPoolDP_fps, KerGlobalPoolDP_fps_T, signed char, 1)
GLOBAL_REDUCT(KerParGlobalMaxPoolDPReduct_fp, KerGlobalPoolDPReduct_fp_T, short int, 0, 15)
GLOBAL_REDUCT(KerParGlobalAvgPoolDPReduct_fp, KerGlobalPoolDPReduct_fp_T, short int, 1, 15)
GLOBAL_REDUCT(KerParGlobalMaxPoolDPReduct_fps, KerGlobalPoolDPReduct_fps_T, signed char, 0, 7)
GLOBAL_REDUCT(KerParGlobalAvgPoolDPReduct_fps, KerGlobalPoolDPReduct_fps_T, signed char, 1, 7)
