/*
 * SQ8 basic kernels, the original's 1-byte requantisation (CHW).
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 */
#ifndef __CNN_SQ8_ORIGINAL_H__
#define __CNN_SQ8_ORIGINAL_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* (none yet) */

#endif /* __CNN_SQ8_ORIGINAL_H__ */
