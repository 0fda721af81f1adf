/* Helpers of tests/test_graph_paths.py.
 *
 *   MatAddScalarPar: basic kernel, Out = In + Val on a W x H tile (items split over the cores).
 *   GraphAddOne: a plain C function (AddCallToNode prolog/epilog): Buf[i] += 1 for i < N.
 *   GraphAccumulate: the same, Dst[i] += Src[i] for i < N.
 */
#ifndef GRAPH_CALLS_H
#define GRAPH_CALLS_H

#include "Gap.h"

typedef struct {
	Word32 * __restrict__ In;
	Word32 * __restrict__ Out;
	unsigned int W;
	unsigned int H;
	int Val;
} MatAddScalar_Arg_T;

void MatAddScalarPar(MatAddScalar_Arg_T *Arg);
void GraphAddOne(Word32 * __restrict__ Buf, int N);
void GraphAccumulate(Word32 * __restrict__ Dst, Word32 * __restrict__ Src, int N);

#endif /* GRAPH_CALLS_H */
