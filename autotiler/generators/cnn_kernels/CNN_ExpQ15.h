/*
 * exp(X) for X <= 0 in Q15 (Q17.15 in), in Q15: the original's Exp_fp_17_15, shared by the fp
 * library's softmax (CNN_SoftMax.c) and the SQ8 one with the original's requantisation
 * (CNN_SQ8_Orig_SoftMax.c). |X| = k + f, f in [-0.5, 0.5) (f rounded to the nearest integer k);
 * e^f by its Taylor series to order 8, times e^k; the result inverted. Numpy twin:
 * autotiler/generators/cnn_reference.exp_q15.
 */
#ifndef __CNN_EXPQ15_H__
#define __CNN_EXPQ15_H__

#include "Gap.h"
#include "CNN_BasicKernels.h"	/* the KACT_ enum CNN_Activation.h reads */
#include "CNN_Activation.h"	/* CNN_Norm */

static inline unsigned int Exp_fp_17_15(int X)
{
	/* e^k, k = 0..11: integer part and fraction in Q15; 1/n!, n = 0..8, in Q15 (0x7FFF for 1) */
	static const unsigned short int ExpInt[12] = { 1, 2, 7, 20, 54, 148, 403, 1096, 2980, 8103, 22026, 59874 };
	static const unsigned short int ExpFrac[12] = {
		0, 23537, 12749, 2803, 19600, 13538, 14051, 20747, 31391, 2750, 15263, 4644 };
	static const unsigned short int ExpCoeff[9] = { 32767, 32767, 16384, 5461, 1365, 273, 46, 7, 1 };
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

#endif /* __CNN_EXPQ15_H__ */
