/*
 * at_api_emul.h - the SDK's at_api_emul.h (the AT_* runtime macros of its x86 emulation), for
 * sources that include it by name: the harness's at_api.h (the simulated chip's), with Gap.h's
 * timer stubs, which the SDK's file also defined.
 */
#ifndef AT_API_EMUL_H
#define AT_API_EMUL_H

#include "at_api.h"
#include "Gap.h"

#endif
