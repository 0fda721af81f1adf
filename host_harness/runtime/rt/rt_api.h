/*
 * rt/rt_api.h - the 2019 GAP runtime's API header, for basic kernels of that era that include
 * it: the runtime names a basic kernel uses (rt_core_id(), rt_nb_pe(), rt_team_barrier(),
 * rt_team_fork(), the RT_* placement attributes, the gap8_* builtins) are those of Gap8.h, which
 * this includes. The runtime's devices, events and rt_dma_memcpy are not provided (generated code
 * moves data with at_api.h's AT_* macros).
 */
#ifndef RT_RT_API_H
#define RT_RT_API_H

#include "Gap8.h"

#endif
