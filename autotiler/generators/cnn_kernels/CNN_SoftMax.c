/*
 * Softmax of N values in Q Norm (0..15), output in Q15, N split across the cores.
 *   M = max(In); E_i = exp((In_i - M) in Q15) in Q15 (Exp_fp_17_15 below, E = 32768 at the max);
 *   Sum = sum E_i (32 bits); InvSum = (32767 << 15) / Sum;
 *   Out_i = |roundnorm((short) E_i * InvSum, 15)|   (E_i is kept in Out as a 16-bit value, so the
 *   32768 of the max reads back as -32768; the absolute value restores the sign, as the original).
 */
#include "Gap.h"
#include "CNN_BasicKernels.h"
#include "CNN_Activation.h"

/* e^k, k = 0..11: integer part and fraction in Q15; 1/n!, n = 0..8, in Q15 (0x7FFF for 1) */
static const unsigned short int ExpInt[12] = { 1, 2, 7, 20, 54, 148, 403, 1096, 2980, 8103, 22026, 59874 };
static const unsigned short int ExpFrac[12] = {
	0, 23537, 12749, 2803, 19600, 13538, 14051, 20747, 31391, 2750, 15263, 4644 };
static const unsigned short int ExpCoeff[9] = { 32767, 32767, 16384, 5461, 1365, 273, 46, 7, 1 };

/* exp(X) for X <= 0 in Q15 (Q17.15 in), in Q15. |X| = k + f, f in [-0.5, 0.5) (f rounded to the
 * nearest integer k); e^f by its Taylor series to order 8, times e^k; the result inverted. */
static unsigned int Exp_fp_17_15(int X)
{
	unsigned int Y, Result;
	int IntX, FractX, Z, Sum, i;

	if (X == 0) return 0x8000;
	Y = (unsigned int) (-(long long) X);
	IntX = (int) (Y >> 15);
	FractX = (int) (Y & 0x7FFF);
	if (FractX & 0x4000) { FractX -= 0x8000; IntX++; }
	if (IntX >= 12) return 0;		/* e^-11.5 in Q15 rounds to 0 */
	Z = FractX; Sum = 0;
	for (i = 1; i < 9; i++) {
		Sum += Z * ExpCoeff[i];
		Z = (short int) gap_mulsRN(Z, FractX, 15);
	}
	Result = (unsigned short int) (CNN_Norm(Sum, 15) + ExpCoeff[0]);
	Result = gap_muluRN((int) Result, ExpFrac[IntX], 15) + Result * ExpInt[IntX];
	return Result ? ((0x7FFFFFFFu / Result) >> 1) : 0;
}

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
