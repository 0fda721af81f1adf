/*
 * at_api_pmsis.h - the SDK's at_api_pmsis.h (the AT_* runtime macros on the chip's PMSIS), for
 * sources that include it by name: the harness's at_api.h, on the simulated chip, and pmsis.h's
 * cluster-side names.
 */
#ifndef AT_API_PMSIS_H
#define AT_API_PMSIS_H

#include "at_api.h"
#include "pmsis.h"

#endif
