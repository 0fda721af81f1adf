/*
 * KernelLibStdTypes.h - default std-typedefs header included by generated kernel headers.
 * Everything lives in Gap.h (types, builtins) and at_api.h (runtime macros).
 */
#ifndef KERNEL_LIB_STD_TYPES_H
#define KERNEL_LIB_STD_TYPES_H

#include "Gap.h"

#endif /* KERNEL_LIB_STD_TYPES_H */
