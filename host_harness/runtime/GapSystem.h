/*
 * GapSystem.h - the SDK emulation's GapSystem.h, for basic kernels that include it by name: every name
 * of it is in Gap.h (with the chip's semantics, see there), which this includes.
 */
#ifndef GAPSYSTEM_H
#define GAPSYSTEM_H

#include "Gap.h"

#endif
