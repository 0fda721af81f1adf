/*
 * GapBuiltins.h - the SDK emulation's GapBuiltins.h, for basic kernels that include it by name: every name
 * of it is in Gap.h (with the chip's semantics, see there), which this includes.
 */
#ifndef GAPBUILTINS_H
#define GAPBUILTINS_H

#include "Gap.h"

#endif
