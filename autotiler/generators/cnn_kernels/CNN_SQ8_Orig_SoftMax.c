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
#include "CNN_ExpQ15.h"	/* Exp_fp_17_15, the fp library's */

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
		unsigned int E = Exp_fp_17_15(at_sq8_lshift(Arg->In[i] - M, Norm));

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
