/*
 * Softmax of N values in Q Norm (0..15), output in Q15, N split across the cores.
 *   M = max(In); E_i = exp((In_i - M) in Q15) in Q15 (Exp_fp_17_15 of CNN_ExpQ15.h, E = 32768 at the max);
 *   Sum = sum E_i (32 bits); InvSum = (32767 << 15) / Sum;
 *   Out_i = |roundnorm((short) E_i * InvSum, 15)|   (E_i is kept in Out as a 16-bit value, so the
 *   32768 of the max reads back as -32768; the absolute value restores the sign, as the original).
 */
#include "Gap.h"
#include "CNN_BasicKernels.h"
#include "CNN_Activation.h"
#include "CNN_ExpQ15.h"

#define SOFTMAX(Name, TArg) \
void Name(TArg *Arg) \
{ \
	static int RedMax[gap_ncore()], RedSum[gap_ncore()]; \
	int N = Arg->N, Norm = Arg->Norm, CoreId = (int) gap_coreid(), First, Last, M, Sum, InvSum, i; \
	CNN_Chunk(N, &First, &Last); \
	M = -0x7FFFFFFF - 1; \
	for (i = First; i < Last; i++) M = gap_max(M, Arg->In[i]); \
	RedMax[CoreId] = M; \
	gap_waitbarrier(0); \
	for (i = 0; i < (int) gap_ncore(); i++) M = gap_max(M, RedMax[i]); \
	Sum = 0; \
	for (i = First; i < Last; i++) { \
		int D = Arg->In[i] - M; \
		unsigned int E = Exp_fp_17_15((Norm <= 15) ? (int) ((unsigned int) D << (15 - Norm)) : (D >> (Norm - 15))); \
		Arg->Out[i] = (short int) E; \
		Sum += (int) E; \
	} \
	RedSum[CoreId] = Sum; \
	gap_waitbarrier(0); \
	Sum = 0; \
	for (i = 0; i < (int) gap_ncore(); i++) Sum += RedSum[i]; \
	InvSum = (32767 << 15) / Sum; \
	for (i = First; i < Last; i++) Arg->Out[i] = (short int) gap_abs(CNN_Norm(Arg->Out[i] * InvSum, 15)); \
	gap_waitbarrier(0); \
}

SOFTMAX(KerParSoftMax_fp, KerSoftMax_fp_T)
SOFTMAX(KerParSoftMax_fps, KerSoftMax_fps_T)
