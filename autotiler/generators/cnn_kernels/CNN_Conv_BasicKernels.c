/*
 * Convolutions, regular (single and double precision) and depth wise (single and double
 * precision output), any filter N x Ny, strides S x Sy, dilations D x Dy, zero padding Pad.
 *
 * Geometry (per tile): Wo = (UsedW - (D*(N-1)+1) + Pad[0] + Pad[1]) / S + 1, likewise Ho; output
 * (x, y) reads In[y*Sy - Pad[2] + i*Dy][x*S - Pad[0] + j*D], taps outside [0, UsedH) x [0, UsedW)
 * being zero. Arithmetic: 32-bit wrapping products and sums, then per mode:
 *   SP   (KOP_CONV)      Out = sat(roundnorm((Out << Norm) + conv, Norm))   per input feature
 *   DP   (KOP_CONV_DP)   Out32 += conv
 *   DW   (KOP_CONV_DW)   Out = sat(roundnorm((Bias << TotalInFeatures) + conv, Norm))
 *   DWDP (KOP_CONV_DWDP) Out32 = (Bias << TotalInFeatures) + conv
 * The fixed-geometry names (3x3Stride1, ...) call the generic kernel with their geometry.
 */
#include "Gap.h"
#include "CNN_BasicKernels.h"
#include "CNN_Activation.h"

enum { CONV_SP, CONV_DP, CONV_DW, CONV_DWDP };

typedef struct {
	int W, UsedW, UsedH, Fx, Fy, Sx, Sy, Dx, Dy, PadL, PadT, Wo, Ho;
} ConvGeom_T;

static ConvGeom_T ConvGeom(int W, int UsedW, int UsedH, int Fx, int Fy, int Sx, int Sy, int Dx, int Dy, v4s Pad)
{
	ConvGeom_T G;

	G.W = W; G.UsedW = UsedW; G.UsedH = UsedH; G.Fx = Fx; G.Fy = Fy; G.Sx = Sx; G.Sy = Sy; G.Dx = Dx; G.Dy = Dy;
	G.PadL = Pad[0]; G.PadT = Pad[2];
	G.Wo = (UsedW - (Dx * (Fx - 1) + 1) + Pad[0] + Pad[1]) / Sx + 1;
	G.Ho = (UsedH - (Dy * (Fy - 1) + 1) + Pad[2] + Pad[3]) / Sy + 1;
	return G;
}

/* The convolution sum (mod 2^32) of one output of one (input plane, filter) pair. */
#define CONV_SUM(T) \
static unsigned int ConvSum_##T(const T *In, const T *F, const ConvGeom_T *G, int x, int y) \
{ \
	unsigned int Acc = 0; \
	int X0 = x * G->Sx - G->PadL, Y0 = y * G->Sy - G->PadT, i, j; \
	for (i = 0; i < G->Fy; i++) { \
		int Yi = Y0 + i * G->Dy; \
		if (Yi < 0 || Yi >= G->UsedH) continue; \
		for (j = 0; j < G->Fx; j++) { \
			int Xj = X0 + j * G->Dx; \
			if (Xj < 0 || Xj >= G->UsedW) continue; \
			Acc += (unsigned int) (In[Yi * G->W + Xj] * F[i * G->Fx + j]); \
		} \
	} \
	return Acc; \
}

typedef signed char sc_t;
typedef short int ss_t;
CONV_SUM(ss_t)
CONV_SUM(sc_t)

/* Outputs [x0, x1) x [y0, y1) of one output plane from one input plane, in Mode. */
#define CONV_PLANE(T, Bits) \
static void ConvPlane_##T(const T *In, const T *F, void *Out, const ConvGeom_T *G, int x0, int x1, int y0, int y1, \
			  int Mode, int Norm, int Bias) \
{ \
	int x, y; \
	for (y = y0; y < y1; y++) for (x = x0; x < x1; x++) { \
		unsigned int Acc = ConvSum_##T(In, F, G, x, y); \
		int o = y * G->Wo + x; \
		switch (Mode) { \
		case CONV_SP: { \
			T *O = (T *) Out; \
			Acc += (unsigned int) CNN_LShift(O[o], Norm); \
			O[o] = (T) CNN_Sat(CNN_Norm((int) Acc, Norm), Bits); \
			break; \
		} \
		case CONV_DW: \
			((T *) Out)[o] = (T) CNN_Sat(CNN_Norm((int) (Acc + (unsigned int) Bias), Norm), Bits); \
			break; \
		case CONV_DP: \
			((int *) Out)[o] = (int) (Acc + (unsigned int) ((int *) Out)[o]); \
			break; \
		default: \
			((int *) Out)[o] = (int) (Acc + (unsigned int) Bias); \
			break; \
		} \
	} \
}

CONV_PLANE(ss_t, 15)
CONV_PLANE(sc_t, 7)

/* Par kernels: regular convolutions split the output features, each accumulating all
 * InFeatures inputs; depth wise ones split the features (In, Filter, Bias, Out of feature f). */
#define CONV_PAR(Name, TArg, T, TOutElem, Mode) \
void Name(TArg *Arg) \
{ \
	ConvGeom_T G = ConvGeom(Arg->W, Arg->UsedW, Arg->UsedH, Arg->N, Arg->Ny, Arg->S, Arg->Sy, Arg->D, Arg->Dy, Arg->Pad); \
	int Plane = G.Wo * G.Ho, FSize = G.Fx * G.Fy, InPlane = Arg->W * Arg->H, First, Last, f, i; \
	int DW = (Mode == CONV_DW || Mode == CONV_DWDP); \
	CNN_Chunk(Arg->OutFeatures, &First, &Last); \
	for (f = First; f < Last; f++) { \
		TOutElem *O = Arg->Out + Plane * f; \
		if (DW) { \
			int B = CNN_LShift(Arg->Bias[f], Arg->TotalInFeatures); \
			ConvPlane_##T(Arg->In + InPlane * f, Arg->Filter + FSize * f, O, &G, 0, G.Wo, 0, G.Ho, Mode, Arg->Norm, B); \
		} else { \
			for (i = 0; i < Arg->InFeatures; i++) \
				ConvPlane_##T(Arg->In + InPlane * i, Arg->Filter + FSize * (Arg->TotalInFeatures * f + i), O, &G, \
					      0, G.Wo, 0, G.Ho, Mode, Arg->Norm, 0); \
		} \
	} \
	gap_waitbarrier(0); \
}

/* One output feature, its columns (Orientation 1) or lines (0) split across the cores;
 * regular: InFeatures inputs with filters Filter + N*Ny*i; depth wise: one feature, Bias[0]. */
#define CONV_ONE(Name, TArg, T, Mode) \
void Name(TArg *Arg) \
{ \
	ConvGeom_T G = ConvGeom(Arg->W, Arg->UsedW, Arg->UsedH, Arg->N, Arg->Ny, Arg->S, Arg->Sy, Arg->D, Arg->Dy, Arg->Pad); \
	int FSize = G.Fx * G.Fy, InPlane = Arg->W * Arg->H, First, Last, i; \
	int x0 = 0, x1 = G.Wo, y0 = 0, y1 = G.Ho; \
	if (Arg->Orientation) { CNN_Chunk(G.Wo, &First, &Last); x0 = First; x1 = Last; } \
	else { CNN_Chunk(G.Ho, &First, &Last); y0 = First; y1 = Last; } \
	if (Mode == CONV_DW || Mode == CONV_DWDP) \
		ConvPlane_##T(Arg->In, Arg->Filter, Arg->Out, &G, x0, x1, y0, y1, Mode, Arg->Norm, \
			      CNN_LShift(Arg->Bias[0], Arg->TotalInFeatures)); \
	else \
		for (i = 0; i < Arg->InFeatures; i++) \
			ConvPlane_##T(Arg->In + InPlane * i, Arg->Filter + FSize * i, Arg->Out, &G, x0, x1, y0, y1, Mode, \
				      Arg->Norm, 0); \
	gap_waitbarrier(0); \
}

/* The fixed-geometry names: the generic kernel on a copy of the arguments with the geometry set
 * (-1 keeps the argument's value). */
#define CONV_FIXED(Name, Generic, TArg, vFx, vFy, vSx, vSy) \
void Name(TArg *Arg) \
{ \
	TArg A = *Arg; \
	if ((vFx) > 0) A.N = (vFx); \
	if ((vFy) > 0) A.Ny = (vFy); else if ((vFy) == -2) A.Ny = A.N; \
	if ((vSx) > 0) A.S = (vSx); \
	if ((vSy) > 0) A.Sy = (vSy); else if ((vSy) == -2) A.Sy = A.S; \
	A.D = 1; A.Dy = 1; \
	Generic(&A); \
}

#define CONV_FAMILY(Pre, Post, TArg, Generic) \
CONV_FIXED(Pre##1x1Stride1##Post, Generic, TArg, 1, 1, 1, 1) \
CONV_FIXED(Pre##1x1Stride2##Post, Generic, TArg, 1, 1, 2, 2) \
CONV_FIXED(Pre##1x1StrideS##Post, Generic, TArg, 1, 1, -1, -2) \
CONV_FIXED(Pre##3x1Stride1x1##Post, Generic, TArg, 3, 1, 1, 1) \
CONV_FIXED(Pre##3x1Stride2x1##Post, Generic, TArg, 3, 1, 2, 1) \
CONV_FIXED(Pre##1x3Stride1x1##Post, Generic, TArg, 1, 3, 1, 1) \
CONV_FIXED(Pre##1x3Stride1x2##Post, Generic, TArg, 1, 3, 1, 2) \
CONV_FIXED(Pre##3x3Stride1##Post, Generic, TArg, 3, 3, 1, 1) \
CONV_FIXED(Pre##3x3Stride2##Post, Generic, TArg, 3, 3, 2, 2) \
CONV_FIXED(Pre##3x3StrideS##Post, Generic, TArg, 3, 3, -1, -2) \
CONV_FIXED(Pre##5x1Stride1x1##Post, Generic, TArg, 5, 1, 1, 1) \
CONV_FIXED(Pre##5x1Stride2x1##Post, Generic, TArg, 5, 1, 2, 1) \
CONV_FIXED(Pre##1x5Stride1x1##Post, Generic, TArg, 1, 5, 1, 1) \
CONV_FIXED(Pre##1x5Stride1x2##Post, Generic, TArg, 1, 5, 1, 2) \
CONV_FIXED(Pre##5x5Stride1##Post, Generic, TArg, 5, 5, 1, 1) \
CONV_FIXED(Pre##5x5Stride2##Post, Generic, TArg, 5, 5, 2, 2) \
CONV_FIXED(Pre##5x5StrideS##Post, Generic, TArg, 5, 5, -1, -2) \
CONV_FIXED(Pre##7x7StrideS##Post, Generic, TArg, 7, 7, -1, -2) \
CONV_FIXED(Pre##NxNStrideS##Post, Generic, TArg, -1, -2, -1, -2) \
CONV_FIXED(Pre##NxMStrideSxSy##Post, Generic, TArg, -1, -1, -1, -1)

CONV_PAR(KerParConvNxMDxDyStrideSxSy_fp, KerConv_fp_T, ss_t, short int, CONV_SP)
CONV_PAR(KerParConvNxMDxDyStrideSxSy_fps, KerConv_fps_T, sc_t, signed char, CONV_SP)
CONV_PAR(KerParConvNxMDxDyStrideSxSy_DP_fp, KerConv_DP_fp_T, ss_t, int, CONV_DP)
CONV_PAR(KerParConvNxMDxDyStrideSxSy_DP_fps, KerConv_DP_fps_T, sc_t, int, CONV_DP)
CONV_PAR(KerParConvDWNxMDxDyStrideSxSy_fp, KerConv_fp_T, ss_t, short int, CONV_DW)
CONV_PAR(KerParConvDWNxMDxDyStrideSxSy_fps, KerConv_fps_T, sc_t, signed char, CONV_DW)
CONV_PAR(KerParConvDWDPNxMDxDyStrideSxSy_fp, KerConv_DP_fp_T, ss_t, int, CONV_DWDP)
CONV_PAR(KerParConvDWDPNxMDxDyStrideSxSy_fps, KerConv_DP_fps_T, sc_t, int, CONV_DWDP)
CONV_ONE(KerConvNxMDxDyStrideSxSy_fp, KerConv_fp_T, ss_t, CONV_SP)
CONV_ONE(KerConvNxMDxDyStrideSxSy_fps, KerConv_fps_T, sc_t, CONV_SP)
CONV_ONE(KerConvNxMDxDyStrideSxSy_DP_fp, KerConv_DP_fp_T, ss_t, CONV_DP)
CONV_ONE(KerConvNxMDxDyStrideSxSy_DP_fps, KerConv_DP_fps_T, sc_t, CONV_DP)
CONV_ONE(KerConvDWNxMDxDyStrideSxSy_fp, KerConv_fp_T, ss_t, CONV_DW)
CONV_ONE(KerConvDWNxMDxDyStrideSxSy_fps, KerConv_fps_T, sc_t, CONV_DW)
CONV_ONE(KerConvDWDPNxMDxDyStrideSxSy_fp, KerConv_DP_fp_T, ss_t, CONV_DWDP)
CONV_ONE(KerConvDWDPNxMDxDyStrideSxSy_fps, KerConv_DP_fps_T, sc_t, CONV_DWDP)

CONV_FAMILY(KerParConv, _fp, KerConv_fp_T, KerParConvNxMDxDyStrideSxSy_fp)
CONV_FAMILY(KerParConv, _fps, KerConv_fps_T, KerParConvNxMDxDyStrideSxSy_fps)
CONV_FAMILY(KerParConv, _DP_fp, KerConv_DP_fp_T, KerParConvNxMDxDyStrideSxSy_DP_fp)
CONV_FAMILY(KerParConv, _DP_fps, KerConv_DP_fps_T, KerParConvNxMDxDyStrideSxSy_DP_fps)
CONV_FAMILY(KerParConvDW, _fp, KerConv_fp_T, KerParConvDWNxMDxDyStrideSxSy_fp)
CONV_FAMILY(KerParConvDW, _fps, KerConv_fps_T, KerParConvDWNxMDxDyStrideSxSy_fps)
CONV_FAMILY(KerParConvDWDP, _fp, KerConv_DP_fp_T, KerParConvDWDPNxMDxDyStrideSxSy_fp)
CONV_FAMILY(KerParConvDWDP, _fps, KerConv_DP_fps_T, KerParConvDWDPNxMDxDyStrideSxSy_fps)
CONV_FAMILY(KerConv, _fp, KerConv_fp_T, KerConvNxMDxDyStrideSxSy_fp)
CONV_FAMILY(KerConv, _fps, KerConv_fps_T, KerConvNxMDxDyStrideSxSy_fps)
CONV_FAMILY(KerConv, _DP_fp, KerConv_DP_fp_T, KerConvNxMDxDyStrideSxSy_DP_fp)
CONV_FAMILY(KerConv, _DP_fps, KerConv_DP_fps_T, KerConvNxMDxDyStrideSxSy_DP_fps)
CONV_FAMILY(KerConvDW, _fp, KerConv_fp_T, KerConvDWNxMDxDyStrideSxSy_fp)
CONV_FAMILY(KerConvDW, _fps, KerConv_fps_T, KerConvDWNxMDxDyStrideSxSy_fps)
CONV_FAMILY(KerConvDWDP, _fp, KerConv_DP_fp_T, KerConvDWDPNxMDxDyStrideSxSy_fp)
CONV_FAMILY(KerConvDWDP, _fps, KerConv_DP_fps_T, KerConvDWDPNxMDxDyStrideSxSy_fps)
