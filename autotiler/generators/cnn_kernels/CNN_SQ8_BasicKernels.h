/*
 * SQ8 basic kernels (issue 23): int8 tensors, int32 accumulation, requantised per output channel.
 * The "_TFLM_SQ8" kernels compute what TensorFlow Lite Micro's int8 reference kernels compute, bit
 * for bit (Scale_DataSize 4: an int32 multiplier and a shift per channel, zero points, activation
 * clamps); semantics in docs/cnn-sq8.md, numpy twin autotiler/generators/sq8_tflm.py. The
 * requantisation primitives are in CNN_SQ8_Requant.h. The code is ours.
 */
#ifndef __CNN_SQ8_BASIC_KERNELS_H__
#define __CNN_SQ8_BASIC_KERNELS_H__

#include "Gap.h"
#include "CNN_SQ8_Infos.h"
#include "CNN_SQ8_Requant.h"
#include "CNN_SQ8_TFLM_Conv.h"
#include "CNN_SQ8_TFLM_Dense.h"
#include "CNN_SQ8_TFLM_Ops.h"
#include "CNN_SQ8_TFLM_Pad.h"
#include "CNN_SQ8_Original.h"

#endif /* __CNN_SQ8_BASIC_KERNELS_H__ */
