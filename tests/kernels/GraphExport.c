/* Helper of tests/test_graph_e2e.py (see GraphExport.h). */
#include "Gap.h"
#include "GraphExport.h"

extern void *WAddr;
extern int WLoc;

void AddExported(Word32 * __restrict__ Out, int N)
{
	const Word32 *W = (const Word32 *) WAddr;
	int i;

	for (i = 0; i < N; i++)
		Out[i] = (WLoc == 8) ? Out[i] + W[i] : WLoc;
}
