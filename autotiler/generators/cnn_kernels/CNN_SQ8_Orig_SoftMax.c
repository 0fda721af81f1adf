/*
 * The original's SQ8 softmax (KerParSoftMax_SQ8, docs/cnn-sq8-original.md "SoftMax"): int8 in,
 * int16 Q15 out, N split across the cores:
 *
 *   M = max(In); E_i = Exp_fp_17_15((In_i - M) << Norm), Norm = Infos[AT_INF_BIASL_SM] (NNTool:
 *   15 + ceil(log2(in_scale)), so the difference is in Q15); InvSum = (32767 << 15) / sum(E);
 *   Out_i = |(E_i * InvSum + 2^14) >> 15|.
 *
 * The exponential is the fp library's (CNN_SoftMax.c), which the original shares: |X| = k + f,
 * f in [-0.5, 0.5), e^f by its Taylor series to order 8 in Q15, times e^k, inverted. Numpy twin:
 * sq8_original.softmax_q15 (cnn_reference.exp_q15).
 */
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Chunk, CNN_Norm */
#include "CNN_SQ8_BasicKernels.h"

/* e^k, k = 0..11: integer part and fraction in Q15; 1/n!, n = 0..8, in Q15 (0x7FFF for 1) */
static const unsigned short int SQ8ExpInt[12] = { 1, 2, 7, 20, 54, 148, 403, 1096, 2980, 8103, 22026, 59874 };
static const unsigned short int SQ8ExpFrac[12] = {
	0, 23537, 12749, 2803, 19600, 13538, 14051, 20747, 31391, 2750, 15263, 4644 };
static const unsigned short int SQ8ExpCoeff[9] = { 32767, 32767, 16384, 5461, 1365, 273, 46, 7, 1 };

/* exp(X) for X <= 0 in Q15, in Q15 (0x8000 for X = 0). */
static unsigned int ExpQ15(int X)
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
		Sum += Z * SQ8ExpCoeff[i];
		Z = (short int) gap_mulsRN(Z, FractX, 15);
	}
	Result = (unsigned short int) (CNN_Norm(Sum, 15) + SQ8ExpCoeff[0]);
	Result = gap_muluRN((int) Result, SQ8ExpFrac[IntX], 15) + Result * SQ8ExpInt[IntX];
	return Result ? ((0x7FFFFFFFu / Result) >> 1) : 0;
}

/* The maximum and the sum are reduced across the cores through one slot per core. The
 * exponentials are kept in Out as 16-bit values: the 32768 of the maximum reads back as -32768,
 * and the absolute value of the product restores it (the same value: 32768 * InvSum is a
 * multiple of 2^15). */
void KerParSoftMax_SQ8(KerSoftMax_SQ8_T *Arg)
{
	static int RedMax[gap_ncore()], RedSum[gap_ncore()];
	int N = Arg->N, Norm = ((unsigned char *) Arg->Infos)[AT_INF_BIASL_SM], CoreId = (int) gap_coreid();
	int First, Last, M, Sum, InvSum, i;

	CNN_Chunk(N, &First, &Last);
	M = -0x7FFFFFFF - 1;
	for (i = First; i < Last; i++) M = gap_max(M, Arg->In[i]);
	RedMax[CoreId] = M;
	gap_waitbarrier(0);
	for (i = 0; i < (int) gap_ncore(); i++) M = gap_max(M, RedMax[i]);
	Sum = 0;
	for (i = First; i < Last; i++) {
		unsigned int E = ExpQ15(at_sq8_lshift(Arg->In[i] - M, Norm));

		Arg->Out[i] = (short int) E;
		Sum += (int) E;
	}
	RedSum[CoreId] = Sum;
	gap_waitbarrier(0);
	Sum = 0;
	for (i = 0; i < (int) gap_ncore(); i++) Sum += RedSum[i];
	InvSum = (32767 << 15) / Sum;
	for (i = First; i < Last; i++) Arg->Out[i] = (short int) gap_abs(gap_roundnorm_reg(Arg->Out[i] * InvSum, 15));
	gap_waitbarrier(0);
}
