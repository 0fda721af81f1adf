/*
 * SQ8 basic kernels, TFLM requantisation: activations, global pooling, softmax, copies.
 * Included by CNN_SQ8_BasicKernels.h; semantics in docs/cnn-sq8.md. The code is ours.
 */
#ifndef __CNN_SQ8_TFLM_OPS_H__
#define __CNN_SQ8_TFLM_OPS_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"

/* (none yet) */

#endif /* __CNN_SQ8_TFLM_OPS_H__ */
