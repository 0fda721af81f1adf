/*
 * Matrix (tensor) addition, N planes of W x H, planes split across the cores.
 *   KerParMatAdd:        sat(In1 + In2)                 (inputs and output in the same Q)
 *   KerParMatAddReLU:    max(sat(In1 + In2), 0)
 *   KerParMatAddDynAdjust: with A the input of larger Q and B the other, OffIn = |In1_Q - In2_Q|,
 *       OffOut = Out_Q - min(In1_Q, In2_Q): S = (A >> OffIn) + B, then S << OffOut (OffOut >= 0,
 *       wrapping on 32 bits) or S >> -OffOut, clipped to [LB, UB]. Shifts floor (no rounding).
 */
#include "Gap.h"
#include "CNN_BasicKernels.h"
#include "CNN_Activation.h"

#define MAT_ADD(Name, TArg, T, Mode, Bits) \
void Name(TArg *Arg) \
{ \
	int Size = Arg->W * Arg->H, First, Last, i; \
	int Q1 = Arg->In1_Q, Q2 = Arg->In2_Q, OffIn = (Q1 > Q2) ? Q1 - Q2 : Q2 - Q1; \
	int OffOut = Arg->Out_Q - ((Q1 < Q2) ? Q1 : Q2); \
	const T *A = (Q1 >= Q2) ? Arg->In1 : Arg->In2, *B = (Q1 >= Q2) ? Arg->In2 : Arg->In1; \
	CNN_Chunk(Arg->N, &First, &Last); \
	for (i = First * Size; i < Last * Size; i++) { \
		int V; \
		if ((Mode) == 2) { \
			int S = (A[i] >> OffIn) + B[i]; \
			S = CNN_LShift(S, OffOut); \
			V = gap_min(gap_max(S, Arg->LB), Arg->UB); \
		} else { \
			V = CNN_Sat(Arg->In1[i] + Arg->In2[i], Bits); \
			if ((Mode) == 1) V = gap_max(V, 0); \
		} \
		Arg->Out[i] = (T) V; \
	} \
	gap_waitbarrier(0); \
}

MAT_ADD(KerParMatAdd_fp, KerMat3_fp_T, short int, 0, 15)
MAT_ADD(KerParMatAdd_fps, KerMat3_fps_T, signed char, 0, 7)
MAT_ADD(KerParMatAddReLU_fp, KerMat3_fp_T, short int, 1, 15)
MAT_ADD(KerParMatAddReLU_fps, KerMat3_fps_T, signed char, 1, 7)
MAT_ADD(KerParMatAddDynAdjust_fp, KerMat3_fp_T, short int, 2, 15)
MAT_ADD(KerParMatAddDynAdjust_fps, KerMat3_fps_T, signed char, 2, 7)
