/* Helper of tests/test_graph_e2e.py (AddGraphArgExportSymbols): an AddCallToNode epilog reading
 * the graph's exported symbols WAddr / WLoc. */
#ifndef GRAPH_EXPORT_H
#define GRAPH_EXPORT_H

#include "Gap.h"

/* Out[i] += W[i] for i < N, W read through the exported address when the exported location is L2
 * (AT_MEM_L2, 8); otherwise Out[i] = Loc, so that a wrong location shows in the output. */
void AddExported(Word32 * __restrict__ Out, int N);

#endif /* GRAPH_EXPORT_H */
